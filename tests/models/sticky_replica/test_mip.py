"""PuLP specifics of the exact replica model (the shared behaviour is tests/models/sticky_replica/test_backends.py)."""

from __future__ import annotations

import pytest

from heuristics import sticky_replica as heuristic
from models.options import SolveOptions
from models.sticky_replica import mip as sticky_replica
from problems import load_problem

TWO_MOVE = "examples/placement/pr-18903-two-move-limit.json"


def test_unknown_backend_is_refused():
    """Tests that a backend other than highs or cbc is an error, not a silent default."""
    with pytest.raises(ValueError, match="unknown MIP backend"):
        sticky_replica.solve(load_problem(TWO_MOVE), SolveOptions.of(backend="gurobi"))


def test_big_m_lexicographic_target_accepts_an_equal_placement():
    """Tests the big-M 'match or beat' rows: the placement itself (0 moves) satisfies them, on both backends."""
    problem = load_problem(TWO_MOVE)
    for backend in ("highs", "cbc"):
        result = sticky_replica.fewest_moves(
            problem, problem.replica_brokers, SolveOptions.of(backend=backend, time_limit=20)
        )
        assert result.status == "optimal"
        assert result.objective[3] == 0
        assert result.objective[:3] <= heuristic.assign(problem).objective[:3]


def test_invalid_placement_to_beat_is_refused():
    """Tests that a placement to beat must itself be valid (live brokers, no broker twice)."""
    problem = load_problem(TWO_MOVE)
    with pytest.raises(ValueError, match="not valid"):
        sticky_replica.fewest_moves(problem, [1, 1, 3, 4], SolveOptions())
