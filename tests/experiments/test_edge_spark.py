"""Spark endpoints and failures: a bounded wait for every endpoint, one line (and Spark's log) for every
failure to start Spark or to run its job, in `compare` and `lags`; never a Python or Java traceback."""

from __future__ import annotations

import http.server
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import experiments.pipeline
from experiments import spark as spark_module
from experiments.cli import main
from support.kraft_cluster import free_ports
from support.lag_snapshots import SNAPSHOT

ROOT = Path(__file__).resolve().parents[2]
#: The endpoint wait in these tests (seconds), instead of the default 10.
WAIT = 1.0


@pytest.fixture
def silent_port():
    """A port where a listener accepts connections and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener.getsockname()[1]


@pytest.fixture
def http_port():
    """A port where an HTTP/1 server answers (not gRPC, not Spark)."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def one_line(capsys) -> str:
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


def compare(tmp_path, master: str) -> int:
    return main(
        ["compare", "--suite", "smoke", "--out", str(tmp_path), "--no-progress", "--master", master]
    )


@pytest.mark.parametrize("endpoint", ["nothing", "silent", "http"])
def test_compare_and_lags_wait_a_bounded_time_for_a_connect_server(
    endpoint, tmp_path, monkeypatch, capsys, silent_port, http_port
):
    """Tests `compare` and `lags` with `--master sc://127.0.0.1:PORT` where nothing listens, a listener
    never answers, or an HTTP server answers: exit 2 and one line naming the master, within the wait."""
    monkeypatch.setattr(spark_module, "ENDPOINT_TIMEOUT", WAIT)
    port = {"nothing": free_ports(1)[0], "silent": silent_port, "http": http_port}[endpoint]
    master = f"sc://127.0.0.1:{port}"
    for run in (
        lambda: compare(tmp_path, master),
        lambda: main(["lags", str(SNAPSHOT), "--master", master]),
    ):
        started = time.perf_counter()
        assert run() == 2
        assert time.perf_counter() - started < WAIT + 5
        line = one_line(capsys)
        assert line.startswith(
            f"error: {master}: --master: no Spark Connect server answered within {WAIT:g} s ("
        ), line


def test_a_standalone_master_that_is_not_there_is_one_line_at_once(tmp_path, capsys):
    """Tests `compare --master spark://127.0.0.1:PORT` with nothing there: refused before Spark starts
    (Spark itself retries for a minute), one line, exit 2."""
    master = f"spark://127.0.0.1:{free_ports(1)[0]}"
    started = time.perf_counter()
    assert compare(tmp_path, master) == 2
    assert time.perf_counter() - started < 5
    line = one_line(capsys)
    assert line.startswith(f"error: {master}: --master: no standalone master accepted a connection")


def test_a_python_for_the_workers_that_cannot_run_is_one_line(tmp_path, monkeypatch, capsys):
    """Tests `PYSPARK_PYTHON=/nonexistent` for `compare` and `lags` on local Spark: refused before Spark
    starts, one line naming the variable."""
    monkeypatch.setenv("PYSPARK_PYTHON", "/nonexistent")
    expected = (
        "error: <environment>: PYSPARK_PYTHON: '/nonexistent' is not a program that can be run "
        "(the Python workers' interpreter)"
    )
    assert compare(tmp_path, "local[1]") == 2
    assert one_line(capsys) == expected
    assert main(["lags", str(SNAPSHOT), "--master", "local[1]"]) == 2
    assert one_line(capsys) == expected


@pytest.mark.spark
def test_a_spark_job_failing_is_one_line_naming_the_log(spark, tmp_path, monkeypatch, capsys):
    """Tests that Spark refusing `compare`'s job (here: a result schema it cannot parse, raised through
    Py4J) is exit 2 and one line naming the run and Spark's log, which is kept."""
    monkeypatch.setattr(experiments.pipeline, "RESULT_SCHEMA", "not a schema ((")
    assert (
        main(
            [
                "compare",
                "--suite",
                "smoke",
                "--out",
                str(tmp_path),
                "--no-progress",
                "--limit",
                "1",
                "--master",
                "local[2]",
                "--run-id",
                "r",
            ]
        )
        == 2
    )
    line = one_line(capsys)
    match = re.fullmatch(r"error: (\S+): the Spark job failed: .+ \(Spark's log: (\S+)\)", line)
    assert match, line
    assert match[1].endswith("run_id=r") and Path(match[2]).is_file()
    os.unlink(match[2])


def test_a_bogus_master_is_one_line_from_a_real_process(tmp_path):
    """Tests `rebalance-lab compare --master bogus://` in its own process (Spark's launcher refuses the
    URL): exit 2, one line with Spark's reason and its log, no Python or Java trace."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "experiments.cli",
            "compare",
            "--suite",
            "smoke",
            "--out",
            str(tmp_path),
            "--no-progress",
            "--master",
            "bogus://",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr[-3000:]
    match = re.fullmatch(r"error: \S+: the Spark job failed: (.+) \(Spark's log: (\S+)\)", lines[0])
    # Spark's own reason, from its log ("Master must either be yarn or start with spark, ...").
    assert match and "master" in match[1].lower() and Path(match[2]).is_file(), lines[0]
    os.unlink(match[2])
