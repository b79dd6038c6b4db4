"""Tests of experiments.gate: it passes on an unchanged heuristic and fails on a degraded one."""

from __future__ import annotations

import json

import numpy as np

import heuristics.range as range_assignor
from experiments import gate
from experiments.cli import main
from problems import Result


def test_gate_passes_unchanged_and_fails_on_a_degraded_heuristic(tmp_path, monkeypatch, capsys):
    """Tests that the gate exits 0 against its own baseline and 1, with a diff table, once range gets worse."""
    baseline = tmp_path / "gate.json"
    # In this process: the degraded heuristic below is patched here, not in worker processes.
    common = [
        "gate",
        "--suite",
        "smoke",
        "--baseline",
        str(baseline),
        "--no-progress",
        "--processes",
        "1",
    ]
    assert main([*common, "--update"]) == 0
    recorded = json.loads(baseline.read_text())["heuristics"]
    assert "sticky/range" in recorded
    assert main(common) == 0

    real = range_assignor.assign

    def degraded(problem):
        """Range, but every partition it gives the last member moves to the first member instead."""
        result = real(problem)
        owner = result.answer.copy()
        if problem.num_members > 1:
            owner[owner == problem.num_members - 1] = 0
        return Result(problem, "range", owner)

    monkeypatch.setattr(range_assignor, "assign", degraded)
    capsys.readouterr()
    assert main(common) == 1
    report = capsys.readouterr().err
    assert "FAILED" in report and "sticky/range" in report


def test_regressions_table_names_each_worse_statistic_and_missing_heuristics():
    """Tests the comparison rules: higher gaps, lower validity or optimality, and a vanished heuristic."""
    before = {
        "a/x": {
            "valid": 1.0,
            "mean_rel_gap1": 0.1,
            "max_rel_gap1": 0.2,
            "mean_gap2": 1.0,
            "share_optimal": 0.5,
        },
        "a/gone": {
            "valid": 1.0,
            "mean_rel_gap1": 0.0,
            "max_rel_gap1": 0.0,
            "mean_gap2": 0.0,
            "share_optimal": 1.0,
        },
    }
    now = {
        "a/x": {
            "valid": 0.9,
            "mean_rel_gap1": 0.1 + 1e-12,
            "max_rel_gap1": 0.1,
            "mean_gap2": 2.0,
            "share_optimal": 0.5,
        }
    }
    table = gate.regressions(before, now)
    assert set(map(tuple, table[["heuristic", "statistic"]].to_numpy())) == {
        ("a/x", "valid"),
        ("a/x", "mean_gap2"),
        ("a/gone", "(missing)"),
    }
    assert np.isclose(gate.TOLERANCE, 1e-9)


def test_bad_baseline_is_exit_2_before_any_solving(tmp_path, monkeypatch, capsys):
    """Tests that an unreadable baseline, or an --update into a folder that cannot be written, is exit 2
    with one line before the suite is solved (`--out` and friends are checked before solving)."""
    from experiments import gate
    from experiments.cli import main

    def no_solving(*args, **kwargs):
        raise AssertionError("solved before the baseline was checked")

    monkeypatch.setattr(gate, "gate_rows", no_solving)
    assert main(["gate", "--baseline", str(tmp_path / "missing.json")]) == 2
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert main(["gate", "--update", "--baseline", str(blocked / "sub" / "gate.json")]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and all(line.startswith("error: ") for line in lines), lines


def test_recorded_optima_keep_the_counted_scenarios_whatever_the_solvers_proved():
    """Tests the gate's recorded optima: a scenario whose solver ran out of time (feasible) still counts against
    its recorded optimum, giving the same statistics as when proven; a scenario proven now but not
    recorded
    is not counted."""
    from support.result_rows import frame, row

    proven = frame(
        row("a", "sticky", "heuristic", "heuristic", [110, 3]),
        row("a", "sticky", "cpsat", "optimal", [100, 3], bound=[100, 3]),
        row("b", "sticky", "heuristic", "heuristic", [50, 0]),
        row("b", "sticky", "cpsat", "optimal", [40, 0], bound=[40, 0]),
    )
    timed_out = proven.copy()
    timed_out.loc[1, ["status", "level1", "bound1"]] = ["feasible", 105, 90]
    optima = {"a": [100, 3]}
    assert gate.proven_optima(proven) == {"a": [100, 3], "b": [40, 0]}
    on_proven = gate.statistics(gate.with_recorded_optima(proven, optima), optima)["sticky/sticky"]
    on_timed_out = gate.statistics(gate.with_recorded_optima(timed_out, optima), optima)[
        "sticky/sticky"
    ]
    assert on_proven == on_timed_out
    assert (
        on_proven["compared"] == 1 and on_proven["mean_rel_gap1"] == 0.1
    )  # b (proven, unrecorded) left out
    assert gate.statistics(proven)["sticky/sticky"]["compared"] == 2


def test_a_recorded_optimum_contradicted_now_is_a_disagreement():
    """Tests that an optimum proven now that differs from the recorded one, or an answer beating a recorded
    optimum, shows up in the disagreements (the gate fails on them)."""
    from experiments.gap import disagreements
    from support.result_rows import frame, row

    rows = frame(
        row("a", "sticky", "heuristic", "heuristic", [110, 3]),
        row("a", "sticky", "cpsat", "optimal", [100, 2], bound=[100, 2]),
        row("c", "sticky", "heuristic", "heuristic", [90, 0]),
    )
    found = disagreements(gate.with_recorded_optima(rows, {"a": [100, 3], "c": [95, 0]}))
    assert set(found["scenario_id"]) == {"a", "c"}
    assert set(found[found["solver"] == gate.RECORDED]["scenario_id"]) == {"a", "c"}
