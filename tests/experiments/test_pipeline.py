"""Tests of experiments.pipeline: the Spark job end to end, resuming, atomic batches."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from experiments.experiment import load_suite, suite
from experiments.gap import single
from experiments.pipeline import run_suite
from experiments.results import done_scenarios, load_results, results_folder, write_batch
from experiments.runs import RESULT_COLUMNS, scenario_frame, solve_frame

KEY = ["scenario_id", "strategy", "variant", "solver"]
ROW = [*KEY, "step"]  # a trace's rows: one per step
ROOT = Path(__file__).parents[2]


@pytest.mark.spark
def test_smoke_suite_end_to_end_matches_plain_pandas(spark, tmp_path, smoke_run):
    """Tests that the Spark job writes one row per run of every smoke scenario, equal to the plain function."""
    info = run_suite("smoke", tmp_path, run_id="e2e", master="local[2]", progress=False)
    rows = load_results(info.folder)
    assert info.computed == len(suite("smoke")) and info.skipped == 0
    assert info.traces_computed == info.traces == len(load_suite("smoke").traces) > 0
    assert single(rows)["scenario_id"].nunique() == len(suite("smoke"))
    assert not rows.duplicated(ROW).any()
    assert set(rows["suite"]) == {"smoke"} and set(rows["run_id"]) == {"e2e"}
    # The workers ran the same code as a plain pandas call (runtimes aside).
    plain = load_results(smoke_run)  # the smoke suite through solve_frame, once per test run
    heuristic = ["scenario_id", "strategy", "variant", "solver", "valid", "level1", "level2"]
    ours = (
        single(rows)[single(rows)["role"] == "heuristic"][heuristic]
        .sort_values(KEY)
        .reset_index(drop=True)
    )
    theirs = plain[plain["role"] == "heuristic"][heuristic].sort_values(KEY).reset_index(drop=True)
    assert ours.astype(str).equals(theirs.astype(str))
    # Resuming a finished run computes nothing.
    again = run_suite("smoke", tmp_path, run_id="e2e", progress=False)
    assert again.computed == 0 and again.skipped == len(suite("smoke"))


def test_batches_are_written_atomically_and_leftovers_ignored(tmp_path):
    """Tests that a half-written temporary file is neither read nor kept, and a batch appears whole."""
    folder = results_folder(tmp_path, "smoke", "atomic")
    rows = solve_frame(scenario_frame(suite("smoke")[:1]), time_limit=1)
    written = write_batch(folder, rows)
    (folder / "batch-crashed.parquet.tmp").write_bytes(b"PAR1 half a file")
    assert done_scenarios(folder) == {suite("smoke")[0].scenario_id}
    assert not list(folder.glob("*.tmp")) and written.exists()
    assert len(load_results(folder)) == len(rows)


@pytest.mark.spark
def test_kill_9_then_resume_never_duplicates_or_recomputes(tmp_path):
    """Tests that a run killed with SIGKILL and restarted with its run id finishes with every row exactly once."""
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "experiments.cli",
        "compare",
        "--suite",
        "smoke",
        "--out",
        str(out),
        "--run-id",
        "killed",
        "--batch-size",
        "1",
        "--master",
        "local[1]",
        "--no-progress",
        "--no-report",
    ]
    folder = results_folder(out, "smoke", "killed")
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 240
    while (
        time.monotonic() < deadline
        and len(list(folder.glob("*.parquet"))) < 2
        and process.poll() is None
    ):
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)  # the driver and its Spark JVM, mid-run
    process.wait()
    first = {p.name: p.stat().st_mtime_ns for p in folder.glob("*.parquet")}
    assert 1 <= len(first) < len(suite("smoke")), "the run should be killed part-way"
    done = done_scenarios(folder)
    info = run_suite("smoke", out, run_id="killed", master="local[2]", progress=False)
    traces = len(load_suite("smoke").traces)
    assert info.skipped + info.traces_skipped == len(done)
    assert info.computed + info.traces_computed == len(suite("smoke")) + traces - len(done)
    for name, mtime in first.items():  # earlier batches untouched: nothing recomputed
        assert (folder / name).stat().st_mtime_ns == mtime
    rows = load_results(folder)
    assert rows["scenario_id"].nunique() == len(suite("smoke")) + traces
    assert not rows.duplicated(ROW).any()
    assert list(rows.columns[: len(RESULT_COLUMNS)]) == list(RESULT_COLUMNS)
