"""Tests of models.stream_join.mip, the PuLP model of KIP-315's objective (HiGHS and CBC)."""

from __future__ import annotations

import numpy as np
import pytest

import models.stream_join.flow as flow
import models.stream_join.mip as mip
from models.options import SolveOptions
from support.stream_join_strategies import medium_join


@pytest.mark.parametrize("backend", ["highs", "cbc"])
def test_skewed_ownership_optimum(backend):
    """Tests a seeded 600-number, 48-member join: both backends prove the flow optimum (7512, 279)."""
    problem = medium_join(seed=0)
    result = mip.solve(problem, SolveOptions.of(time_limit=30, backend=backend))
    assert result.status == "optimal" and result.valid
    assert result.objective == [7512, 279] and result.bound == (7512, 279)
    assert flow.solve(problem, SolveOptions()).objective == result.objective


def test_deterministic():
    """Tests that the same problem and seed give the same answer twice."""
    problem = medium_join(seed=2)
    assert np.array_equal(
        mip.solve(problem, SolveOptions.of(seed=1)).answer,
        mip.solve(problem, SolveOptions.of(seed=1)).answer,
    )


def test_unknown_backend_is_refused():
    """Tests that a backend other than highs and cbc is an error, not a silent default."""
    with pytest.raises(ValueError, match="unknown MIP backend"):
        mip.solve(medium_join(numbers=20, members=3, joiners=1), SolveOptions.of(backend="gurobi"))
