# The README's first two commands.  Each creates .venv/ when it is missing,
# installs the project into it (editable, with the test extras) and runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# Other implementations (peers/): the Java assignors and replica placement of Kafka release
# KAFKA_VERSION (Maven; with the broker, Kafka's tools and slf4j-simple for the live-cluster tests
# of tests/clients/) and the lab's JVM assignor program (`java:` plugins), franz-go's balancers and
# Sarama's strategies (Go programs) and KafkaJS's round robin (Node), the last three also the
# harness's shipped foreign strategies.  Built when missing or changed (a stamp in target/ named
# after the release, so that `make peers KAFKA_VERSION=4.2.2` rebuilds; the binaries; node_modules).
KAFKA_VERSION ?= 4.4.0
PEER_JAVA := peers/java/target/.built-$(KAFKA_VERSION)
PEER_GO := peers/franz_go/franz-go-peer
PEER_SARAMA := peers/sarama/sarama-peer
PEER_KAFKAJS := peers/kafkajs/node_modules/kafkajs/package.json
# The live client matrix's drivers (peers/client_matrix.py), each library pinned: Kafka's Java
# client (the release above), franz-go and Sarama (Go modules, go.sum), KafkaJS (the KafkaJS
# program's node_modules), kafka-python and confluent-kafka (PyPI, peers/drivers/requirements.txt).
DRIVER_JAVA := peers/java/driver/classes/.built-$(KAFKA_VERSION)
DRIVER_KGO := peers/kgo_driver/kgo-driver
DRIVER_SARAMA := peers/sarama/sarama-driver
DRIVER_PYTHON := $(VENV)/.drivers-installed

# pytest's workers (pytest-xdist): one per core, and one more for the tests that drive a Kafka
# cluster (they mostly wait for consumers to rebalance); those tests run in one worker, the Spark
# tests in another (tests/support/cluster_worker.py).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))

.PHONY: run test peers kafka-release test-setup lint docs

## run: the main job: the default suite on local Spark; the report lands in results/report/
## (the peers are the tests' and benchmarks': not built for it)
run: $(STAMP)
	$(BIN)/rebalance-lab compare --suite default --out results

## test: lint and types, the documentation site, the whole test suite on every core, then the
## regression gate on heuristic quality (pytest's "no tests collected", exit 5, counts as
## success).  What does not depend on each other runs side by side: the venv, the peers' builds
## and the system programs; then the linters and the site.
test:
	@$(MAKE) --no-print-directory -j4 -Otarget $(STAMP) peers test-setup
	@$(MAKE) --no-print-directory -j2 -Otarget lint docs
	@$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest: no tests collected"; rc=0; fi; \
	if [ $$rc -ne 0 ]; then exit $$rc; fi; \
	$(BIN)/rebalance-lab gate --no-progress

## lint: ruff's lint and format checks on the whole tree, mypy --strict on every product package
## (problems, heuristics, models, clients, experiments: [tool.mypy] in pyproject.toml)
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

## docs: the documentation site (MkDocs, Material theme) into site/; --strict fails on any warning,
## a broken link among them.  The command-line reference is generated from the parser while it builds.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -q -d site

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "rebalance-lab needs Python 3.11 or newer (PYTHON=$(PYTHON))"; exit 1; }
	@java -version >/dev/null 2>&1 || echo "warning: no java on PATH; Spark (experiments/) needs Java 17+"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $@

## peers: build Kafka's Java peer (Maven; KAFKA_VERSION=4.x.y for another release, 4.4.0 by
## default), the franz-go and Sarama programs (Go), KafkaJS (npm) and the live client matrix's
## drivers if missing or changed
peers: $(PEER_JAVA) $(PEER_GO) $(PEER_SARAMA) $(PEER_KAFKAJS) $(DRIVER_JAVA) $(DRIVER_KGO) $(DRIVER_SARAMA) $(DRIVER_PYTHON)

$(DRIVER_JAVA): $(PEER_JAVA) $(wildcard peers/java/driver/src/rebalancelab/driver/*.java)
	rm -rf peers/java/driver/classes
	javac -d peers/java/driver/classes -cp 'peers/java/target/lib/*' peers/java/driver/src/rebalancelab/driver/*.java
	@touch $@

$(DRIVER_KGO): peers/kgo_driver/go.mod peers/kgo_driver/go.sum peers/kgo_driver/main.go
	cd peers/kgo_driver && go build -o kgo-driver .

$(DRIVER_SARAMA): peers/sarama/go.mod peers/sarama/go.sum peers/sarama/driver/main.go
	cd peers/sarama && go build -o sarama-driver ./driver

$(DRIVER_PYTHON): $(STAMP) peers/drivers/requirements.txt
	$(BIN)/python -m pip install --quiet -r peers/drivers/requirements.txt
	@touch $@

## kafka-release: another Kafka release's jars alone (KAFKA_VERSION=4.0.2) in
## peers/java/target/kafka-KAFKA_VERSION/, for `--plugin NAME=java:CLASS --classpath` that folder
kafka-release:
	cd peers/java && mvn -q -B -Dkafka.version=$(KAFKA_VERSION) -Dpeers.lib=target/kafka-$(KAFKA_VERSION) \
	  dependency:copy-dependencies -DincludeGroupIds=org.apache.kafka

$(PEER_JAVA): peers/java/pom.xml $(wildcard peers/java/src/main/java/rebalancelab/peers/*.java)
	@command -v mvn >/dev/null 2>&1 || { echo "the Java peer (peers/java) needs Maven 3.8+ (mvn) and Java 17+"; exit 1; }
	rm -rf peers/java/target/.built peers/java/target/.built-* peers/java/target/lib peers/java/target/classes
	cd peers/java && mvn -q -B -Dkafka.version=$(KAFKA_VERSION) package dependency:copy-dependencies
	@touch $@

$(PEER_GO): peers/franz_go/go.mod peers/franz_go/go.sum $(wildcard peers/franz_go/*.go)
	@command -v go >/dev/null 2>&1 || { echo "the franz-go peer (peers/franz_go) needs Go 1.26+ (go; franz-go 1.22 requires it)"; exit 1; }
	cd peers/franz_go && go build -o franz-go-peer .

$(PEER_SARAMA): peers/sarama/go.mod peers/sarama/go.sum peers/sarama/main.go
	@command -v go >/dev/null 2>&1 || { echo "the Sarama program (peers/sarama) needs Go 1.26+ (go)"; exit 1; }
	cd peers/sarama && go build -o sarama-peer .

$(PEER_KAFKAJS): peers/kafkajs/package.json peers/kafkajs/package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "the KafkaJS program (peers/kafkajs) needs Node 20+ (npm)"; exit 1; }
	cd peers/kafkajs && npm ci --no-audit --no-fund --silent
	@touch $@

## test-setup: the system programs the tests use, installed from Debian when missing (as root):
## headless Chromium (the report as a browser shows it) and pdflatex with booktabs (the LaTeX tables)
test-setup:
	@command -v chromium >/dev/null && command -v pdflatex >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	      chromium texlive-latex-recommended; \
	  else echo "the tests need chromium and pdflatex: sudo apt-get install chromium texlive-latex-recommended"; \
	    exit 1; fi; }
