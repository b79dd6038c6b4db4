"""Tests of experiments.gap on hand-made rows."""

from __future__ import annotations

import numpy as np
import pytest

from experiments.gap import disagreements, gaps, headline, tied_above, tied_gap
from support.result_rows import frame, row


def test_gap_against_an_optimal_reference():
    """Tests absolute and relative gaps per level and the 'heuristic is optimal' flag."""
    rows = frame(
        row("a", "sticky", "heuristic", "heuristic", [110, 5]),
        row("a", "sticky", "heuristic", "heuristic", [100, 2], variant="kafka-9987"),
        row("a", "sticky", "cpsat", "optimal", [100, 2], bound=[100, 2]),
        row("a", "sticky", "mip", "optimal", [100, 2], bound=[100, 2]),
    )
    out = gaps(rows).set_index("heuristic")
    assert out.loc["sticky", "gap1"] == 10 and out.loc["sticky", "rel_gap1"] == 0.1
    assert out.loc["sticky", "gap2"] == 3
    assert (
        not out.loc["sticky", "heuristic_optimal"]
        and out.loc["sticky[kafka-9987]", "heuristic_optimal"]
    )
    assert disagreements(rows).empty


def test_optimal_heuristic_is_recognised_beside_objectives_with_more_levels():
    """Tests that a two-level objective's heuristic equal to its optimum counts as optimal next to 4-level rows."""
    rows = frame(
        row("a", "sticky", "heuristic", "heuristic", [100, 2]),
        row("a", "sticky", "flow", "optimal", [100, 2]),
        row("r", "sticky-replica", "heuristic", "heuristic", [4, 8, 2, 0]),
        row("r", "sticky-replica", "cpsat", "optimal", [4, 4, 2, 2]),
    )
    out = gaps(rows).set_index("scenario_id")
    assert out.loc["a", "heuristic_optimal"] and not out.loc["r", "heuristic_optimal"]


def test_feasible_reference_gives_an_interval_from_its_bound():
    """Tests that a merely feasible exact side turns the level-1 gap into [H - E, H - B]."""
    rows = frame(
        row("b", "sticky", "heuristic", "heuristic", [120, 0]),
        row("b", "sticky", "cpsat", "feasible", [110, 3], bound=[95]),
    )
    out = gaps(rows).iloc[0]
    assert (out["gap1_low"], out["gap1_high"]) == (10, 25)
    assert not out["heuristic_optimal"]


def test_optimal_solvers_that_disagree_are_flagged():
    """Tests that two 'optimal' exact rows with different values are reported."""
    rows = frame(
        row("c", "sticky", "cpsat", "optimal", [50, 1]),
        row("c", "sticky", "flow", "optimal", [50, 2]),
    )
    assert set(disagreements(rows)["solver"]) == {"cpsat", "flow"}


def test_headline_and_no_reference():
    """Tests that a heuristic without any exact reference has no gap, and the headline counts it."""
    rows = frame(
        row("d", "range", "heuristic", "heuristic", [40, 0]),
        row("e", "range", "heuristic", "heuristic", [30, 0]),
        row("e", "sticky", "cpsat", "optimal", [27, 0]),
    )
    table = headline(gaps(rows)).set_index("heuristic")
    assert table.loc["range", "scenarios"] == 2
    assert np.isclose(table.loc["range", "mean_rel_gap1"], 3 / 27)


def test_level_two_gaps_count_only_where_level_one_ties():
    """Tests the tie rule: a level-2 gap under an unequal level 1 is left out of level-2 statistics."""
    rows = frame(
        row("a", "sticky", "heuristic", "heuristic", [100, 9]),  # level 1 ties: +7 counts
        row("a", "sticky", "flow", "optimal", [100, 2]),
        row("b", "sticky", "heuristic", "heuristic", [120, 0]),  # level 1 worse: -5 means nothing
        row("b", "sticky", "flow", "optimal", [110, 5]),
    )
    gap_rows = gaps(rows).set_index("scenario_id")
    assert list(tied_above(gap_rows, 1)) == [True, True]
    assert list(tied_above(gap_rows, 2)) == [True, False]
    assert tied_gap(gap_rows, 2).to_dict() == {"a": 7.0, "b": pytest.approx(np.nan, nan_ok=True)}
    assert tied_gap(gap_rows, 2, relative=True)["a"] == 3.5
    assert headline(gaps(rows))["mean_gap2"].tolist() == [7.0]  # not (7 - 5) / 2
    assert headline(gaps(rows))["compared"].tolist() == [2]
    assert not tied_above(gap_rows, 3).any()  # sticky has no level 3


def test_certified_interval_columns_when_only_a_bound_exists():
    """Tests the interval columns: [H - E, H - B] with H = 110, E = 100, B = 95; relative high over B; width E - B."""
    rows = frame(
        row("b", "sticky", "heuristic", "heuristic", [110, 3]),
        row("b", "sticky", "cpsat", "feasible", [100, 3], bound=[95]),
    )
    gap = gaps(rows).iloc[0]
    assert (gap["gap1_low"], gap["gap1_high"], gap["certified_width1"]) == (10, 15, 5)
    assert gap["rel_gap1_high"] == pytest.approx(15 / 95)


def test_an_optimal_beaten_by_another_answer_is_flagged():
    """Tests an `equal-hot` case: the MIP's `optimal` level 2 beaten by CP-SAT's feasible answer
    (and a heuristic beating an `optimal` one); an optimal equal to the best answer is not flagged."""
    rows = frame(
        row("h", "lag-aware", "mip", "optimal", [1000333, 1000683024780]),
        row("h", "lag-aware", "cpsat", "feasible", [1000333, 1000682996020]),
        row("g", "sticky", "cpsat", "optimal", [50, 3]),
        row("g", "sticky", "heuristic", "heuristic", [50, 2]),
        row("k", "sticky", "cpsat", "optimal", [50, 2]),
        row("k", "sticky", "heuristic", "heuristic", [50, 2]),
    )
    found = disagreements(rows).set_index("scenario_id")
    assert sorted(found.index) == ["g", "h"]
    assert found.loc["h", "reason"] == "beaten by lag-aware/cpsat [1000333, 1000682996020]"
    assert found.loc["g", "reason"].startswith("beaten by sticky/heuristic")
