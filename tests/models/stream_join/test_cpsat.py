"""Tests of models.stream_join.cpsat, the CP-SAT model of KIP-315's objective."""

from __future__ import annotations

import numpy as np

import heuristics.stream_join as heuristic
import models.stream_join.cpsat as cpsat
import models.stream_join.flow as flow
from models.options import SolveOptions
from support.stream_join_strategies import medium_join


def test_skewed_ownership_optimum_beats_the_draft():
    """Tests a seeded 600-number, 48-member join: CP-SAT proves (7512, 279); the KIP's draft moves 369 numbers."""
    problem = medium_join(seed=0)
    result = cpsat.solve(problem, SolveOptions.of(time_limit=20))
    assert result.status == "optimal" and result.valid
    assert result.objective == [7512, 279] and result.bound == (7512, 279)
    assert heuristic.assign(problem).objective == [7512, 369]
    assert flow.solve(problem, SolveOptions()).objective == result.objective


def test_deterministic_and_independent_of_workers():
    """Tests that a fixed seed gives the same answer twice, and two workers the same optimum."""
    problem = medium_join(seed=1)
    first, second = (
        cpsat.solve(problem, SolveOptions.of(seed=3)),
        cpsat.solve(problem, SolveOptions.of(seed=3)),
    )
    assert np.array_equal(first.answer, second.answer)
    assert cpsat.solve(problem, SolveOptions.of(workers=2)).objective == first.objective
