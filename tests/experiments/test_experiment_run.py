"""An experiment file run on Spark end to end: killed with SIGKILL, resumed, every row exactly once,
rows carrying the experiment's name and file digest, the report faceted by the varied factors."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from experiments.cli import main
from experiments.experiment import load_experiment
from experiments.results import done_scenarios, load_results, results_folder

KEY = ["scenario_id", "strategy", "variant", "solver"]
ROOT = Path(__file__).parents[2]
EXPERIMENT = """\
name = "killed-trial"
description = "Sticky after a member leaves, two seeds, two time limits, against the flow optimum."
tier = "smoke"
time_limit = 2

[[scenarios]]
judged_on = "sticky"
churn = ["member-leaves", "member-joins"]
size = [12, 3, 2]
seed = [1, 2]
time_limit = [1, 2]
solvers = ["heuristic", "flow"]
"""


@pytest.mark.spark
def test_an_experiment_killed_with_sigkill_resumes_with_every_row_once(spark, tmp_path, capsys):
    """Tests kill -9 mid-run then --run-id: nothing lost, duplicated or recomputed; name, digest, facets."""
    path = tmp_path / "killed.toml"
    path.write_text(EXPERIMENT)
    experiment = load_experiment(path)
    assert len(experiment.scenarios) == 8
    out = tmp_path / "out"
    arguments = ["compare", "--experiment", str(path), "--out", str(out), "--run-id", "killed"]
    process = subprocess.Popen(
        [sys.executable, "-m", "experiments.cli", *arguments]
        + ["--batch-size", "1", "--master", "local[1]", "--no-progress"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    folder = results_folder(out, "killed-trial", "killed")
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None:
        if list(folder.glob("*.parquet")):
            break
        time.sleep(0.1)
    os.killpg(process.pid, signal.SIGKILL)  # the driver and its Spark JVM, mid-run
    process.wait()
    first = {p.name: p.stat().st_mtime_ns for p in folder.glob("*.parquet")}
    assert 1 <= len(first) < len(experiment.scenarios), "the run should be killed part-way"
    done = done_scenarios(folder)

    assert main([*arguments, "--master", "local[2]", "--no-progress"]) == 0
    err = capsys.readouterr().err
    solved = len(experiment.scenarios) - len(done)
    assert f"{solved} scenarios solved now, {len(done)} already done, 8 in killed-trial" in err
    for name, mtime in first.items():  # earlier batches untouched: nothing recomputed
        assert (folder / name).stat().st_mtime_ns == mtime
    rows = load_results(folder)
    assert sorted(rows["scenario_id"].unique()) == sorted(
        s.scenario_id for s in experiment.scenarios
    )
    assert not rows.duplicated(KEY).any()
    assert set(rows["experiment"]) == {"killed-trial"}
    assert set(rows["experiment_digest"]) == {experiment.digest}
    assert set(rows["solver"]) == {"heuristic", "flow"}
    assert sorted(rows["time_limit_s"].unique()) == [1.0, 2.0]
    report = (out / "report" / "killed-trial-killed" / "report.md").read_text()
    assert "## By seed (scenarios with a proven optimum)" in report
    assert "## By time limit (s) (scenarios with a proven optimum)" in report

    # The file changed since the run began: resuming it is refused, one line, nothing written.
    path.write_text(EXPERIMENT.replace("seed = [1, 2]", "seed = [1, 3]"))
    assert main([*arguments, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "was made from another version of this file" in err
