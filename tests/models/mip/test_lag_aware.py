"""Tests of models.mip.lag_aware: the MIP's numeric bound, backends and time-out reporting."""

from __future__ import annotations

import random

import pytest

import models.cpsat.lag_aware as cpsat
import models.mip.lag_aware as mip
from heuristics import lag_aware as heuristic
from models.lag_bounds import lower_bound
from models.options import SolveOptions
from problems import ProblemError, load_problem


def one_topic(lags, members=2):
    docs = [{"id": f"c{m}", "topics": ["t0"]} for m in range(members)]
    return load_problem({"topics": {"t0": len(lags)}, "members": docs, "lags": {"t0": lags}})


@pytest.mark.parametrize("backend", ["highs", "cbc"])
def test_both_backends_solve_the_greedy_counterexample(backend):
    """Tests that HiGHS and CBC both prove 60,000 (both members at 60,000) where the greedy gives 70,000."""
    result = mip.solve(
        one_topic([30_000, 30_000, 20_000, 20_000, 20_000]), SolveOptions.of(backend=backend)
    )
    assert result.status == "optimal" and result.objective == [60_000, 2 * 60_000**2]


def test_beyond_double_precision_fails_clearly():
    """Tests that a level-2 square beyond 2**53 raises a ProblemError naming the bound, where CP-SAT still solves."""
    problem = one_topic([10**8, 10**8 + 1])
    with pytest.raises(
        ProblemError,
        match=r"lags: total lag 200,000,001 .* MIP lag-aware model: its square "
        r"must be at most 9,007,199,254,740,992; use --solver heuristic",
    ):
        mip.solve(problem, SolveOptions())
    assert cpsat.solve(problem, SolveOptions()).status == "optimal"
    sticky = mip.solve(problem, SolveOptions.of(variant="sticky"))
    assert sticky.status == "optimal" and sticky.objective[0] == 10**8 + 1


def test_time_out_reports_the_proven_bound():
    """Tests that a time-out never claims optimality: feasible with a bound below the answer."""
    rng = random.Random(1)
    problem = one_topic([rng.randint(1, 10**6) for _ in range(30)], members=3)
    result = mip.solve(problem, SolveOptions.of(time_limit=0.5))
    assert (
        result.status == "feasible"
    )  # at worst the best heuristic answer with the size-free bounds
    assert result.valid and result.bound[0] <= result.objective[0]
    assert result.objective[0] <= heuristic.assign(problem).objective[0]  # the hint is never lost
    assert result.bound[1] == lower_bound(problem)[1]  # level 2 never started
