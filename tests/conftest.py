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
    from experiments.results import results_folder, write_batch
    from experiments.runs import scenario_frame, solve_frame
    from experiments.scenarios import suite

    out = tmp_path_factory.mktemp("out")
    folder = results_folder(out, "smoke", "test")
    write_batch(folder, solve_frame(scenario_frame(suite("smoke")), time_limit=2))
    return folder
