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
    common = ["gate", "--suite", "smoke", "--baseline", str(baseline), "--no-progress"]
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
    before = {"a/x": {"valid": 1.0, "mean_rel_gap1": 0.1, "max_rel_gap1": 0.2, "mean_gap2": 1.0,
                      "share_optimal": 0.5},
              "a/gone": {"valid": 1.0, "mean_rel_gap1": 0.0, "max_rel_gap1": 0.0, "mean_gap2": 0.0,
                         "share_optimal": 1.0}}
    now = {"a/x": {"valid": 0.9, "mean_rel_gap1": 0.1 + 1e-12, "max_rel_gap1": 0.1, "mean_gap2": 2.0,
                   "share_optimal": 0.5}}
    table = gate.regressions(before, now)
    assert set(map(tuple, table[["heuristic", "statistic"]].to_numpy())) == {
        ("a/x", "valid"), ("a/x", "mean_gap2"), ("a/gone", "(missing)")}
    assert np.isclose(gate.TOLERANCE, 1e-9)


def test_bad_baseline_is_exit_2_before_any_solving(tmp_path, monkeypatch, capsys):
    """Tests that an unreadable baseline, or an --update into a folder that cannot be written, is exit 2
    with one line before the suite is solved (issue 11: `--out` and friends checked before solving)."""
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
