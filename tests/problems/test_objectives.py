"""Tests of problems.objectives: the catalogue of objectives, how the report reads each, and the
objective a Kafka baseline is judged on."""

from __future__ import annotations

import pytest

from problems import evaluate, load_problem
from problems.objectives import LEVELS, OBJECTIVES, READINGS, above_moves, baseline_objective


def test_every_objective_has_a_reading_and_levels_fit_every_objective():
    """Tests that the report reads every objective, a moves level is one of its levels, and LEVELS
    is the widest objective."""
    assert set(READINGS) == set(OBJECTIVES)
    for name, reading in READINGS.items():
        assert reading.moves is None or 1 <= reading.moves <= len(OBJECTIVES[name]), name
        if reading.moves is not None:
            assert "moves" in OBJECTIVES[name][reading.moves - 1] or name == "streams", name
    assert LEVELS == len(OBJECTIVES["streams"]) == 6


def test_levels_above_moves():
    """Tests above_moves: the levels before the moves level, or all of them where none counts moves."""
    assert above_moves("sticky") == 1 and above_moves("rack-aware") == 2
    assert above_moves("replica") == 3 and above_moves("lag-aware") == 2


def test_the_evaluator_scores_on_the_objective_it_is_named():
    """Tests that evaluate names the levels of the objective it is given (one catalogue, read by the evaluator)."""
    problem = load_problem(
        {"topics": {"t": 2}, "members": [{"id": "c0", "topics": ["t"]}], "lags": {"t": [3, 4]}}
    )
    for objective in ("sticky", "lag-aware", "stream-join", "rack-aware", "share"):
        assert evaluate(problem, [0, 0], objective).names == OBJECTIVES[objective]
    with pytest.raises(ValueError, match="not an objective"):
        evaluate(problem, [0, 0], "range")


def test_a_baseline_is_judged_on_rack_aware_only_where_the_problem_has_racks():
    """Tests baseline_objective on a document with and without partition_racks."""
    plain = {"topics": {"t": 1}, "members": [{"id": "c0", "topics": ["t"], "rack": "r1"}]}
    racked = {**plain, "partition_racks": {"t": [["r1"]]}}
    assert baseline_objective(load_problem(plain)) == "sticky"
    assert baseline_objective(load_problem(racked)) == "rack-aware"
