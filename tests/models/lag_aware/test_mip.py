"""Tests of models.lag_aware.mip: the MIP's numeric bound, backends and time-out reporting."""

from __future__ import annotations

import random

import pytest

import models.lag_aware.cpsat as cpsat
import models.lag_aware.mip as mip
from heuristics import lag_aware as heuristic
from models.lag_aware.bounds import lower_bound
from models.options import SolveOptions
from problems import load_problem


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


def test_beyond_double_precision_keeps_level_one_exact_and_bounds_level_two():
    """Tests that a level-2 square beyond 2**53 is answered, not refused: level 1 as CP-SAT's, level
    2 the answer's with the size-free bound; sticky too."""
    problem = one_topic([10**8, 10**8 + 1])
    result = mip.solve(problem, SolveOptions())
    by_cpsat = cpsat.solve(problem, SolveOptions())
    assert result.info["level2"] == "bounded" and by_cpsat.status == "optimal"
    assert result.objective == by_cpsat.objective and list(result.bound)[1] <= result.objective[1]
    assert result.status in ("optimal", "feasible")
    sticky = mip.solve(problem, SolveOptions.of(variant="sticky"))
    assert sticky.status == "optimal" and sticky.objective[0] == 10**8 + 1


def test_time_out_reports_the_proven_bound():
    """Tests that a time-out never claims optimality: feasible with a bound below the answer."""
    rng = random.Random(1)
    # Lags of too many bits for an even split: level 1 or level 2 stays above its bound.
    problem = one_topic([rng.randint(1, 10**12) for _ in range(30)], members=3)
    result = mip.solve(problem, SolveOptions.of(time_limit=0.5))
    assert (
        result.status == "feasible"
    )  # at worst the best heuristic answer with the size-free bounds
    assert result.valid and result.bound[0] <= result.objective[0]
    assert result.objective[0] <= heuristic.assign(problem).objective[0]  # the hint is never lost
    assert result.bound[1] == lower_bound(problem)[1]  # level 2 never started
