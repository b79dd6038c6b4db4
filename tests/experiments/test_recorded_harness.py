"""Tests of a folder of recorded traces as an experiment (experiments/recorded_traces.py):
``compare --recorded DIR`` on local Spark runs every heuristic and the optima through each
recording's events, and ``observed`` is a row of the results, the trace gaps and the report."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from experiments.cli import main
from experiments.experiment import load_experiment
from experiments.recorded_traces import recorded_scenarios
from experiments.results import load_results
from experiments.trace_gap import trace_gaps
from experiments.trace_runs import solve_trace_frame, trace_frame, trace_runs_for
from problems import ProblemError

#: Two recordings: ``shop`` (range, one member joins then the first leaves: the observed moves
#: are the optimum's) and ``billing`` (cooperative-sticky, two rounds a step, whose second step
#: moves 5 partitions where 2 keep the balance).
RECORDED = Path(__file__).parents[1] / "data" / "recorded"


def test_each_recorded_file_is_a_trace_scenario_judged_on_sticky():
    scenarios = recorded_scenarios(RECORDED)
    assert [s.scenario_id for s in scenarios] == [
        "trace/sticky/recorded/billing/p6-m2-t2-T2/s0",
        "trace/sticky/recorded/shop/p4-m1-t1-T2/s0",
    ]
    assert [(s.partitions, s.members, s.topics, s.steps) for s in scenarios] == [
        (6, 2, 2, 2),
        (4, 1, 1, 2),
    ]


def test_a_folder_without_recordings_is_refused(tmp_path, capsys):
    assert main(["compare", "--recorded", str(tmp_path / "none"), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {tmp_path / 'none'}: not a folder of recorded traces\n"
    with pytest.raises(ProblemError, match="holds no recorded trace"):
        recorded_scenarios(tmp_path)
    (tmp_path / "plain.json").write_text(
        '{"kind": "group-trace", "problem": {"topics": {"t": 1}, "members": []}, "steps": []}'
    )
    with pytest.raises(ProblemError, match="recorded: missing"):
        recorded_scenarios(tmp_path)


def test_compare_recorded_runs_every_strategy_beside_the_observed_row(spark, tmp_path, capsys):
    """Tests ``compare --recorded`` on local Spark: per recording, every heuristic, ``step`` and
    ``horizon`` and ``observed`` (per step and per trace), the observed rounds and settle times
    summed from the recording, its moves against the horizon optimum, and the report's table."""
    out = tmp_path / "out"
    code = main(
        ["compare", "--recorded", str(RECORDED), "--master", "local[2]", "--out", str(out),
         "--run-id", "r", "--time-limit", "5", "--no-progress"]
    )  # fmt: skip
    assert code == 0
    (folder,) = (out / "results").glob("suite=*/run_id=r")
    rows = load_results(folder)
    totals = rows[rows["step"].isna()].set_index(["scenario_id", "strategy", "variant", "solver"])
    runs = len(trace_runs_for("sticky", {})) + 1
    assert len(totals) == 2 * runs and len(rows) == 2 * runs * 4
    seen = totals.xs(("observed", "", "recorded"), level=(1, 2, 3))
    assert seen.loc[
        "trace/sticky/recorded/shop/p4-m1-t1-T2/s0", ["moves", "rounds", "settle_ms"]
    ].tolist() == [
        4,
        2,
        210,
    ]
    assert seen.loc[
        "trace/sticky/recorded/billing/p6-m2-t2-T2/s0",
        ["moves", "rounds", "settle_ms", "unowned_partition_ms"],
    ].tolist() == [7, 4, 550, 550]
    assert seen["valid"].all() and set(seen["role"]) == {"observed"}
    gaps = trace_gaps(rows).set_index(["scenario_id", "heuristic"])
    observed = gaps.xs("observed", level=1)
    # the balance ties the per-step optimum at every step; the moves: 0 and 3 above the horizon
    assert observed["levels_tie"].all()
    assert observed["horizon_moves"].tolist() == [4.0, 4.0]
    assert observed["gap_moves"].tolist() == [3.0, 0.0]
    (report_folder,) = (out / "report").glob("*-r")
    report = (report_folder / "report.md").read_text()
    assert "observed" in report and "recorded" in report
    table = pd.read_csv(report_folder / "traces.csv")
    assert "observed" in set(table["heuristic"])


def test_an_experiment_block_reads_a_folder_of_recordings(tmp_path):
    """Tests ``recorded = "DIR"`` in an experiment file (relative to the file): each recording a
    trace of the experiment, the block's solvers selecting the runs, the observed row always."""
    (tmp_path / "runs").mkdir()
    for path in RECORDED.glob("*.json"):
        (tmp_path / "runs" / path.name).write_bytes(path.read_bytes())
    file = tmp_path / "lived.toml"
    file.write_text(
        'name = "lived"\ndescription = "what our groups lived"\ntier = "smoke"\n'
        '[[scenarios]]\nrecorded = "runs"\nsolvers = ["heuristic", "horizon"]\n'
        'strategies = ["sticky", "range"]\n'
    )
    experiment = load_experiment(file)
    assert experiment.scenarios == [] and len(experiment.traces) == 2
    rows = solve_trace_frame(trace_frame(experiment.traces[1:]), time_limit=5)
    totals = rows[rows["step"].isna()]
    assert sorted(zip(totals["strategy"], totals["variant"], totals["solver"])) == [
        ("observed", "", "recorded"),
        ("range", "", "heuristic"),
        ("sticky", "", "heuristic"),
        ("sticky", "", "horizon"),
        ("sticky", "kafka-12464", "heuristic"),
        ("sticky", "kafka-9987", "heuristic"),
    ]


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ('recorded = "nowhere"', "scenarios[0].recorded: "),
        ("recorded = 3", "scenarios[0].recorded: must be a folder's path"),
        ('recorded = "."\nseed = 1', "scenarios[0]"),
    ],
)
def test_a_bad_recorded_block_is_refused_naming_it(tmp_path, block, expected):
    file = tmp_path / "bad.toml"
    file.write_text(f'name = "bad"\ndescription = "d"\n[[scenarios]]\n{block}\n')
    with pytest.raises(ProblemError) as error:
        load_experiment(file)
    assert expected in str(error.value) and "\n" not in str(error.value)
