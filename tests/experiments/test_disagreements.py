"""The exact solvers' cross-check is run by the report and the gate (and compare)."""

from __future__ import annotations

import pandas as pd

from experiments import gate
from experiments.cli import main
from experiments.results import results_folder, write_batch
from experiments.runs import RESULT_COLUMNS
from support.result_rows import frame, row


def rows_with_a_disagreement() -> pd.DataFrame:
    """An `equal-hot` case: the MIP's `optimal` level 2 beaten by CP-SAT, beside a clean scenario."""
    rows = frame(
        row("hot", "lag-aware", "mip", "optimal", [1000333, 1000683024780]),
        row("hot", "lag-aware", "cpsat", "feasible", [1000333, 1000682996020]),
        row("hot", "lag-aware", "heuristic", "heuristic", [1000333, 1000700000000]),
        row("ok", "sticky", "cpsat", "optimal", [50, 2]),
        row("ok", "sticky", "heuristic", "heuristic", [52, 2]),
    )
    rows["judged_on"] = ["lag-aware"] * 3 + ["sticky"] * 2
    rows = rows.assign(
        pattern="equal-hot",
        lags="hot",
        partitions=16,
        members=4,
        topics=2,
        replication=0,
        seed=2,
        suite_version=1,
        time_limit_s=5.0,
        peak_rss_mb=100.0,
        versions="{}",
        error="",
    )
    return rows.reindex(columns=list(RESULT_COLUMNS)).astype(RESULT_COLUMNS)


def test_report_lists_the_disagreement_of_a_results_folder(tmp_path):
    """Tests that `report` on a results folder holding a contradicted `optimal` lists it with its reason."""
    folder = results_folder(tmp_path, "default", "run1")
    write_batch(folder, rows_with_a_disagreement())
    assert (
        main(["report", str(folder), "--format", "markdown", "--out", str(tmp_path / "report")])
        == 0
    )
    text = (tmp_path / "report" / "report.md").read_text()
    section = text.split("## Exact solvers that disagree", 1)[1]
    assert "hot" in section and "beaten by lag-aware/cpsat [1000333, 1000682996020]" in section
    assert "| ok" not in section.split("##", 1)[0]


def test_gate_fails_on_any_disagreement(monkeypatch, capsys, tmp_path):
    """Tests that the gate exits 1 naming the scenario before comparing any statistic (the committed
    baseline is read first: a missing one is exit 2 before any solving)."""
    monkeypatch.setattr(gate, "gate_rows", lambda *args, **kwargs: rows_with_a_disagreement())
    assert main(["gate", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "exact solvers disagree on 1 scenarios" in err and "hot" in err and "beaten by" in err
