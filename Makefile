# The README's first two commands.  Each creates .venv/ when it is missing,
# installs the project into it (editable, with the test extras) and runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test

## run: the main job: the default suite on local Spark; the report lands in results/report/
run: $(STAMP)
	$(BIN)/rebalance-lab compare --suite default --out results

## test: the whole test suite, then the regression gate on heuristic quality
## (pytest's "no tests collected", exit 5, counts as success)
test: $(STAMP)
	@$(BIN)/python -m pytest; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest: no tests collected"; rc=0; fi; \
	if [ $$rc -ne 0 ]; then exit $$rc; fi; \
	$(BIN)/rebalance-lab gate --no-progress

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "rebalance-lab needs Python 3.11 or newer (PYTHON=$(PYTHON))"; exit 1; }
	@java -version >/dev/null 2>&1 || echo "warning: no java on PATH; Spark (experiments/) needs Java 17+"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $@
