"""The harness through Spark Connect: a Connect server started from the installed PySpark.

The server (``spark-submit --class org.apache.spark.sql.connect.service.SparkConnectServer``,
``local[2]``, on a free loopback port, its Python workers importing this checkout) is started and
stopped by the test.  ``compare --suite smoke --limit 2 --master sc://127.0.0.1:PORT`` (a separate
client process; Connect has no RDD API, and the job needs none: ``createDataFrame`` and
``mapInPandas``) must write the same rows as the test run's own smoke run for those two scenarios,
apart from timings (and an exact solver's status, levels and bounds where it hit its time limit in
either run), and the server's log must show the jobs.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from experiments.results import load_results, results_folder
from support.kraft_cluster import free_ports
from support.result_rows import assert_same_rows

pytestmark = [pytest.mark.spark, pytest.mark.spark_cluster]

ROOT = Path(__file__).resolve().parents[2]
SERVER = "org.apache.spark.sql.connect.service.SparkConnectServer"
READY_TIMEOUT = 150.0
SCENARIOS = 2


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    """``sc://127.0.0.1:PORT`` of a running Spark Connect server, and its log; stopped afterwards."""
    folder = tmp_path_factory.mktemp("spark-connect")
    port = free_ports(1)[0]
    env = {
        **os.environ,
        "SPARK_HOME": str(_spark_home()),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        # The server's Python workers run the mapped functions: they import this checkout.
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    command = [
        str(_spark_home() / "bin" / "spark-submit"),
        "--class",
        SERVER,
        "--master",
        "local[2]",
        "--driver-memory",
        "512m",
        "--conf",
        f"spark.connect.grpc.binding.port={port}",
        "--conf",
        "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        f"spark.executorEnv.PYSPARK_PYTHON={sys.executable}",
    ]
    log = folder / "server.log"
    with open(log, "wb") as out:
        server = subprocess.Popen(
            command,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=folder,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + READY_TIMEOUT
        while "Spark Connect server started at" not in log.read_text(errors="replace"):
            assert server.poll() is None, (
                f"the Connect server exited ({server.returncode}); log {log}"
            )
            assert time.monotonic() < deadline, (
                f"the Connect server did not start in {READY_TIMEOUT:g} s; log {log}"
            )
            time.sleep(0.5)
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        yield f"sc://127.0.0.1:{port}", log
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def test_compare_through_spark_connect_equals_local(connect_server, smoke_run, tmp_path):
    remote, log = connect_server
    command = [
        sys.executable,
        "-m",
        "experiments.cli",
        "compare",
        "--suite",
        "smoke",
        "--master",
        remote,
        "--limit",
        str(SCENARIOS),
        "--out",
        str(tmp_path),
        "--run-id",
        "connect",
        "--no-progress",
        "--no-report",
    ]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(
        r"DAGScheduler: Got job \d+ \(Spark Connect", log.read_text(errors="replace")
    ), "no job ran on the server"

    connected = load_results(results_folder(tmp_path, "smoke", "connect"))
    assert connected["scenario_id"].nunique() == SCENARIOS
    here = load_results(smoke_run)
    assert_same_rows(connected, here[here["scenario_id"].isin(connected["scenario_id"])])
