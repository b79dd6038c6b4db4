"""Tests of traces in the harness: the rows a trace run writes (plain pandas and through the Spark
job), the results store, the trace gap analysis, the report's table and figure, and the gate over
trace totals."""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import pandas as pd
import pytest

import heuristics.sticky.sticky as sticky_assignor
from experiments import gate
from experiments.cli import main
from experiments.experiment import expand, load_suite
from experiments.gap import gaps
from experiments.plots import MAX_SERIES, TRACE_PLOTS
from experiments.report import write_report
from experiments.results import ROW_KEY, TRACE_COLUMNS, load_results, results_folder, write_batch
from experiments.runs import RESULT_COLUMNS, scenario_frame, solve_frame
from experiments.trace_gap import STEP_OPTIMAL, trace_gaps, trace_numbers
from experiments.trace_runs import solve_trace_frame, trace_frame, trace_runs_for
from experiments.trace_scenarios import TraceScenario
from problems import Result

#: A rolling restart of three members (2 slices: two restart together, then one) and a
#: decommission of two brokers one at a time: every strategy of both families, solved in seconds.
TINY = [
    TraceScenario("group", "sticky", "rolling-restart", 12, 3, 2, 2, 1),
    TraceScenario(
        "placement", "sticky-replica", "decommission-one-by-one", 6, 4, 2, 2, 1, replication=2
    ),
]


@pytest.fixture(scope="module")
def trace_rows() -> pd.DataFrame:
    return solve_trace_frame(trace_frame(TINY), time_limit=5)


def test_a_trace_run_writes_a_row_per_step_and_one_per_trace(trace_rows):
    """Tests the rows of every run through a trace: steps 0..T then the trace (``step`` missing), the
    trace's total moves the sum of its steps', its levels the sums of theirs, nothing failed."""
    assert list(trace_rows.columns) == [*RESULT_COLUMNS, *TRACE_COLUMNS]
    assert not trace_rows["status"].isin(["error", "unknown"]).any(), trace_rows["error"].dropna()
    for scenario in TINY:
        mine = trace_rows[trace_rows["scenario_id"] == scenario.scenario_id]
        runs = trace_runs_for(scenario.judged_on, {})
        assert [s for s in runs if s[2] != "heuristic"] == [
            (scenario.judged_on, None, "step"),
            (scenario.judged_on, None, "horizon"),
        ]
        assert len(mine) == len(runs) * (scenario.steps + 2)
        for _, run in mine.groupby(["strategy", "variant", "solver"]):
            steps, total = run[run["step"].notna()], run[run["step"].isna()]
            assert list(steps["step"]) == list(range(scenario.steps + 1))
            assert len(total) == 1 and steps["moves"].iloc[0] == 0
            assert total["moves"].iloc[0] == steps["moves"].sum()
            assert total["level1"].iloc[0] == steps["level1"].sum()
            assert (run["trace"] == scenario.trace).all() and (run["steps"] == scenario.steps).all()
    horizon = trace_rows[(trace_rows["solver"] == "horizon") & trace_rows["step"].isna()]
    assert set(horizon["status"]) <= {"optimal", "feasible"}


def test_trace_gaps_compare_totals_only_where_every_step_ties(trace_rows):
    """Tests the trace gap rules: a run's excess moves over the horizon optimum where its levels tie
    the optimum's at every step; the per-step optimum ties by construction; the horizon's total is
    never above the per-step optimum's (it may plan ahead)."""
    found = trace_gaps(trace_rows)
    assert set(found["scenario_id"]) == {s.scenario_id for s in TINY}
    assert "horizon" not in set(found["heuristic"])
    step = found[found["heuristic"] == STEP_OPTIMAL]
    assert step["levels_tie"].all()
    assert (step["moves"] >= step["horizon_moves"]).all()
    tied = found[found["levels_tie"] & (found["horizon_status"] == "optimal")]
    assert len(tied) and (tied["gap_moves"] == tied["moves"] - tied["horizon_moves"]).all()
    assert (tied["gap_moves"] >= 0).all()  # nothing beats a proven optimum
    untied = found[~found["levels_tie"]]
    assert untied["gap_moves"].isna().all()
    numbers = trace_numbers(found)
    assert set(numbers["trace"]) == {"rolling-restart", "decommission-one-by-one"}
    assert (numbers["levels_tie"] <= numbers["traces"]).all()


def test_trace_rows_live_in_the_store_beside_the_others(tmp_path, trace_rows):
    """Tests the results store with trace rows: per-step rows kept apart by their step, a batch
    without trace columns (written before traces) reading with empty ones, and the single-rebalance
    gap analysis leaving trace rows out."""
    folder = results_folder(tmp_path, "tiny", "r")
    single = solve_frame(scenario_frame(load_suite("smoke").scenarios[:1]), time_limit=1)
    write_batch(folder, single)  # no trace columns: as before traces
    write_batch(folder, trace_rows)
    rows = load_results(folder)
    assert len(rows) == len(single) + len(trace_rows)
    assert rows.duplicated(ROW_KEY).any() and not rows.duplicated([*ROW_KEY, "step"]).any()
    assert str(rows["step"].dtype) == "Int64" and rows["trace"].isna().sum() == len(single)
    assert set(gaps(rows)["scenario_id"]) == set(single["scenario_id"])


def test_report_has_the_trace_table_and_the_cumulative_moves_figure(tmp_path, trace_rows):
    """Tests the report of rows with traces: a trace table per objective (Markdown, HTML), the
    figure of cumulative moves (the horizon as a reference line, at most MAX_SERIES lines a panel),
    traces.csv, and summary.json counting traces apart from scenarios."""
    single = solve_frame(scenario_frame(load_suite("smoke").scenarios[:2]), time_limit=1)
    rows = pd.concat([single, trace_rows], ignore_index=True).assign(run_id="r")
    folder = tmp_path / "report"
    write_report(rows, folder, "tiny", formats=("html", "markdown"))
    text = (folder / "report.md").read_text()
    assert "## Over a trace: total moves against the horizon optimum" in text
    assert "### sticky (traces)" in text and "### sticky-replica (traces)" in text
    assert "![Moves over a trace](trace_moves.png)" in text
    page = (folder / "report.html").read_text()
    assert "id='traces'" in page and "mean excess moves [95% CI]" in page
    assert (folder / "trace_moves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = pd.read_csv(folder / "traces.csv")
    assert {"rolling-restart", "decommission-one-by-one"} == set(table["trace"])
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["scenarios"] == 2 and summary["traces"] == 2 and summary["trace_moves"]
    figure = TRACE_PLOTS["trace_moves"](rows, gaps(rows))
    panels = [a for a in figure.axes if a.get_visible()]
    assert len(panels) == 2
    for axes in panels:
        labels = [line.get_label() for line in axes.get_lines()]
        assert any(label.startswith("horizon optimum") for label in labels)
        assert len(labels) <= MAX_SERIES and axes.get_xlabel() == "step"
    plt.close(figure)


def _swapped(real):
    """The sticky heuristic, but members 0 and 1 swap their partitions (as balanced, more moves)."""

    def assign(problem, **options):
        result = real(problem, **options)
        owner = result.answer.copy()
        if problem.num_members > 1:
            first, second = owner == 0, owner == 1
            owner[first], owner[second] = 1, 0
        return Result(problem, "sticky", owner)

    return assign


def test_gate_fails_when_a_trace_total_gets_worse(tmp_path, monkeypatch, capsys):
    """Tests the gate over traces: it records trace statistics and optima with --update, passes
    against them, and fails naming the trace statistic once sticky moves more through a rolling
    restart (its levels still tie: the same balance)."""
    smoke = load_suite("smoke")
    restart = [t for t in smoke.traces if t.trace == "rolling-restart"]
    monkeypatch.setattr(
        gate,
        "gate_rows",
        lambda *a, **k: solve_frame(scenario_frame(smoke.scenarios[:1]), time_limit=2),
    )
    monkeypatch.setattr(
        gate,
        "gate_trace_rows",
        lambda *a, **k: solve_trace_frame(trace_frame(restart), time_limit=5),
    )
    baseline = tmp_path / "gate.json"
    common = ["gate", "--suite", "smoke", "--baseline", str(baseline), "--no-progress"]
    assert main([*common, "--update"]) == 0
    document = json.loads(baseline.read_text())
    name = "sticky/rolling-restart/sticky"
    assert document["traces"][name]["mean_excess_moves"] == 0.0
    assert list(document["trace_optima"]) == [restart[0].scenario_id]
    assert main(common) == 0
    monkeypatch.setattr(sticky_assignor, "assign", _swapped(sticky_assignor.assign))
    capsys.readouterr()
    assert main(common) == 1
    report = capsys.readouterr().err
    assert "FAILED" in report and name in report and "mean_excess_moves" in report


def test_a_baseline_from_before_traces_still_judges_the_scenarios(tmp_path):
    """Tests that a baseline of the suite version before traces reads (its scenarios are unchanged)
    with no trace statistics, and that malformed trace parts are one line naming the field."""
    document = json.loads(gate.BASELINE.read_text())
    document.update(suite_version=gate.SCENARIOS_SINCE)
    document.pop("traces", None)
    document.pop("trace_optima", None)
    baseline = gate.parse_baseline(json.dumps(document).encode(), "b.json", "gate")
    assert baseline.optima and baseline.traces == {} and baseline.trace_optima == {}
    document["traces"] = {"sticky/flapping/range": {"share_tied": "x"}}
    with pytest.raises(Exception) as caught:
        gate.parse_baseline(json.dumps(document).encode(), "b.json", "gate")
    assert str(caught.value).startswith("b.json: traces.sticky/flapping/range.share_tied: ")


@pytest.mark.spark
def test_the_spark_job_writes_trace_rows_and_resumes_them(spark, tmp_path):
    """Tests an experiment with one scenario and one trace through the Spark job: both kinds of rows,
    typed; resuming computes nothing."""
    from experiments.pipeline import run_suite

    experiment = expand(
        {
            "name": "tiny",
            "description": "a scenario and a trace",
            "time_limit": 2.0,
            "scenarios": [
                {"judged_on": "sticky", "churn": "member-leaves", "size": [12, 3, 2], "seed": 1},
                {
                    "judged_on": "sticky",
                    "trace": "scale-out",
                    "steps": 2,
                    "size": [12, 3, 2],
                    "seed": 1,
                },
            ],
        }
    )
    info = run_suite(experiment, tmp_path, run_id="t", master="local[2]", progress=False)
    assert (info.computed, info.traces_computed) == (1, 1)
    rows = load_results(info.folder)
    traced = rows[rows["trace"].notna()]
    assert len(traced) == len(trace_runs_for("sticky", {})) * 4
    assert str(traced["moves"].dtype) == "Int64" and traced["step"].isna().sum() == 10
    again = run_suite(experiment, tmp_path, run_id="t", master="local[2]", progress=False)
    assert (again.computed, again.traces_computed, again.traces_skipped) == (0, 0, 1)


def test_the_notebook_shows_the_trace_section(tmp_path, monkeypatch, trace_rows):
    """Tests that notebooks/analysis.ipynb, on a results folder with traces, shows the trace table
    per objective and the cumulative moves figure, without errors."""
    import nbformat
    from nbclient import NotebookClient

    from experiments.experiment import load_suite

    folder = results_folder(tmp_path, "tiny", "test")
    single = solve_frame(scenario_frame(load_suite("smoke").scenarios[:2]), time_limit=1)
    write_batch(folder, single)
    write_batch(folder, trace_rows)
    monkeypatch.setenv("REBALANCE_LAB_RESULTS", str(folder.parents[1]))
    path = gate.BASELINE.parents[1] / "notebooks" / "analysis.ipynb"
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    last = notebook.cells[-1].outputs
    assert "2 traces" in "".join(o.get("text", "") for o in last)
    shown = "".join(o.get("data", {}).get("text/markdown", "") for o in last)
    assert "### sticky (traces)" in shown and TRACE_PLOTS["trace_moves"].caption in shown
    assert sum("image/png" in o.get("data", {}) for o in last) == 1
