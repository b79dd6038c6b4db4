# The README's first two commands.  Each creates .venv/ when it is missing,
# installs the project into it (editable, with the test extras) and runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test

## run: the main job (until the comparison harness lands: every example through range and round robin)
run: $(STAMP)
	@for f in examples/group/*.json; do for s in range roundrobin; do \
	  echo "== rebalance-lab assign --strategy $$s $$f"; \
	  $(BIN)/rebalance-lab assign --strategy $$s "$$f" || exit $$?; \
	done; done

## test: the whole test suite (pytest's "no tests collected", exit 5, counts as success)
test: $(STAMP)
	@$(BIN)/python -m pytest; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest: no tests collected"; rc=0; fi; exit $$rc

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "rebalance-lab needs Python 3.11 or newer (PYTHON=$(PYTHON))"; exit 1; }
	@java -version >/dev/null 2>&1 || echo "warning: no java on PATH; Spark (experiments/) needs Java 17+"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $@
