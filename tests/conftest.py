"""Shared fixtures: one local Spark session and one smoke run for the whole test run, deterministic hypothesis."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Deterministic property tests: the same code gives the same examples on every run.
settings.register_profile(
    "deterministic",
    derandomize=True,
    deadline=None,
    max_examples=int(os.environ.get("HYPOTHESIS_MAX_EXAMPLES", "100")),
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile("deterministic")

# Under pytest-xdist (`make test`), the tests that start a Kafka or Spark cluster run in one worker.
pytest_plugins = ["support.cluster_worker"]

# The test run's short-lived Spark JVMs (the `spark` fixture's driver, the `rebalance-lab` processes
# tests start, a standalone cluster's daemons and executors) compile with C1 only and collect with
# the serial GC, as the test Kafka brokers do (support/kraft_cluster.py JVM): C2 and the parallel
# GC's threads spend more CPU than tiny jobs save (measured: a local[2] session's start and first
# lags job 43 s CPU -> 26 s).  Flags of the JVM only; a value the caller set is kept.
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
os.environ.setdefault("SPARK_SUBMIT_OPTS", QUICK_JVM)  # drivers (spark-submit, PySpark's gateway)
os.environ.setdefault("SPARK_DAEMON_JAVA_OPTS", QUICK_JVM)  # standalone Master and Workers
os.environ.setdefault(
    "PYSPARK_SUBMIT_ARGS", f"--conf 'spark.executor.extraJavaOptions={QUICK_JVM}' pyspark-shell"
)


@pytest.fixture(scope="session")
def spark():
    """A ``local[2]`` Spark session shared by every Spark test (chispa style)."""
    from experiments.spark import spark_session

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    session = spark_session("local[2]", app_name="rebalance-lab-tests")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def kafka_java():
    """Kafka's own Java code (``peers/kafka_java.py``), its JVM started once for the whole run."""
    from peers import kafka_java as peer

    peer.start()
    return peer


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory) -> Path:
    """The smoke suite solved once per test run (plain pandas), written as OUT/results/suite=smoke/run_id=test."""
    from experiments.experiment import load_suite
    from experiments.results import results_folder, write_batch
    from experiments.runs import scenario_frame, solve_frame

    smoke = load_suite("smoke")
    out = tmp_path_factory.mktemp("out")
    folder = results_folder(out, "smoke", "test")
    # marked as `compare` marks its rows: the experiment's name and file digest
    write_batch(folder, smoke.stamp(solve_frame(scenario_frame(smoke.scenarios), time_limit=2)))
    return folder
