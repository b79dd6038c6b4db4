"""The harness on a Spark standalone cluster: a master and two workers started from the installed PySpark.

``compare --suite smoke --master spark://127.0.0.1:PORT`` (a separate driver process, as a user runs
it) must write the same rows as the test run's own smoke run (``smoke_run``: the same
``solve_frame`` that a ``local[2]`` job maps, solved once per test run; that a ``local[2]`` job
writes those rows is ``tests/experiments/test_pipeline.py``'s check), apart from timings:
``runtime_s``, ``peak_rss_mb`` and the run id, and, where an exact solver stopped at its time limit
in either run (a status other than ``optimal``), its status, levels and bounds (a 2-second limit is
reached or not depending on the machine's load).  The "Use it with a real cluster" section of docs/live-clusters.md
shows the same commands.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request

import pytest

from experiments.gap import single
from experiments.results import load_results, results_folder
from support.result_rows import assert_same_rows
from support.spark_standalone import ROOT, StandaloneCluster

pytestmark = [pytest.mark.spark, pytest.mark.spark_cluster]


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    cluster = StandaloneCluster(tmp_path_factory.mktemp("spark-standalone")).start()
    try:
        yield cluster
    finally:
        cluster.stop()


def test_compare_on_a_standalone_cluster_equals_local(standalone, smoke_run, tmp_path):
    command = [
        sys.executable,
        "-m",
        "experiments.cli",
        "compare",
        "--suite",
        "smoke",
        "--master",
        standalone.master,
        "--out",
        str(tmp_path),
        "--run-id",
        "standalone",
        "--no-progress",
        "--no-report",
    ]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "| heuristic" in done.stdout  # the headline tables, printed
    assert not (tmp_path / "report").exists()  # --no-report: the rows only
    with urllib.request.urlopen(f"http://127.0.0.1:{standalone.ui}/json/", timeout=5) as answer:
        assert json.load(answer)["completedapps"], "the job did not run on the cluster"

    standalone_rows = load_results(results_folder(tmp_path, "smoke", "standalone"))
    assert standalone_rows["trace"].notna().any()  # the smoke suite's traces ran too
    assert_same_rows(single(standalone_rows), load_results(smoke_run))
