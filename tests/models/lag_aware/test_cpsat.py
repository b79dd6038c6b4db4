"""Tests of models.lag_aware.cpsat: the CP-SAT model's bounds, scaling and time-out reporting."""

from __future__ import annotations

import math
import random

import pytest

import heuristics.lag_aware as heuristic
import models.lag_aware.cpsat as cpsat
from models.lag_aware.bounds import lower_bound
from models.options import SolveOptions
from problems import load_problem


def one_topic(lags, members=2):
    docs = [{"id": f"c{m}", "topics": ["t0"]} for m in range(members)]
    return load_problem({"topics": {"t0": len(lags)}, "members": docs, "lags": {"t0": lags}})


def test_lags_are_divided_by_their_gcd_exactly():
    """Tests that lags of 10**12 scale (gcd 10**12) give the answer and exact levels of the small instance."""
    small = cpsat.solve(one_topic([3, 3, 2, 2, 2]), SolveOptions())
    big = cpsat.solve(
        one_topic([3 * 10**12, 3 * 10**12, 2 * 10**12, 2 * 10**12, 2 * 10**12]), SolveOptions()
    )
    assert small.objective == [6, 72] and small.status == big.status == "optimal"
    assert big.answer.tolist() == small.answer.tolist()
    assert big.objective == [6 * 10**12, 72 * 10**24] and list(big.bound) == big.objective


def test_beyond_64_bits_keeps_level_one_exact_and_bounds_level_two():
    """Tests that 4 x S**2 beyond 2**62 (two members) is answered, not refused: level 1 exact, level
    2 the answer's with the size-free bound (optimal here because the answer meets it); sticky
    too."""
    problem = one_topic([2**29, 2**29 + 1])
    result = cpsat.solve(problem, SolveOptions())
    assert result.info["level2"] == "bounded"
    assert result.status == "optimal" and list(result.bound) == result.objective
    assert result.objective == [2**29 + 1, 2**58 + (2**29 + 1) ** 2]
    sticky = cpsat.solve(problem, SolveOptions.of(variant="sticky"))
    assert sticky.status == "optimal" and sticky.objective[0] == 2**29 + 1


def test_at_the_bound_levels_stay_exact():
    """Tests S = 2**30 on two members and S near sqrt(2**62 / 5) on four: solved, levels exact beyond 2**53."""
    total = 2**30
    result = cpsat.solve(
        one_topic([total // 4, total // 4, total // 4, total // 4, 0]), SolveOptions()
    )
    assert result.status == "optimal" and result.objective == [total // 2, 2 * (total // 2) ** 2]
    total = math.isqrt(2**62 // 5) - 10
    lags = [total // 4] * 3 + [total - 3 * (total // 4), 0]
    result = cpsat.solve(one_topic(lags, members=4), SolveOptions())
    assert result.status == "optimal"
    assert list(result.bound) == result.objective == [max(lags), sum(v * v for v in lags)]
    assert result.objective[1] > 2**53  # where a double objective_value would be off


def test_time_out_reports_the_proven_bound():
    """Tests that a time-out ends with status feasible, a valid answer and bounds below it (at worst the hint
    with the size-free bounds of models.lag_aware.bounds)."""
    rng = random.Random(1)
    lags = [rng.randint(1, 10**12) for _ in range(60)]  # too many bits for an even split
    problem = one_topic(lags, members=4)
    result = cpsat.solve(
        problem, SolveOptions.of(time_limit=2.0)
    )  # building counts: leave CP-SAT time for its LP bound
    assert result.status == "feasible" and result.valid
    assert result.bound[1] == lower_bound(problem)[1]  # level 2 never started: the size-free bound
    assert math.ceil(sum(lags) / 4) <= result.bound[0] <= result.objective[0]
    assert (
        result.objective[0] <= heuristic.assign(problem).objective[0]
    )  # never worse than the hint


def test_symmetric_members_and_partitions_keep_the_optimum():
    """Tests four identical members and equal lags (8 x 5, 4 x 1): optimal, every member at 11."""
    result = cpsat.solve(one_topic([5] * 8 + [1] * 4, members=4), SolveOptions())
    assert result.status == "optimal" and result.objective == [11, 4 * 11**2]


def test_unknown_variant_is_refused():
    """Tests that an unknown variant raises rather than solving something else."""
    with pytest.raises(ValueError, match="unknown lag-aware variant"):
        cpsat.solve(one_topic([1]), SolveOptions.of(variant="cumulative"))


def test_sticky_variant_up_to_its_level_one_bound():
    """Tests the sticky variant at 3 S <= 2**62 (two members): solved exactly; one more unit gets
    the best heuristic answer with the size-free bound, `feasible`."""
    total = 2**62 // 3
    lags = [total // 2, total - total // 2 - 1, 1]
    result = cpsat.solve(one_topic(lags), SolveOptions.of(variant="sticky"))
    assert (
        result.status == "optimal" and result.objective[0] == list(result.bound)[0] == lags[0] + 1
    )
    beyond = cpsat.solve(
        one_topic([total // 2, total - total // 2 + 1, 1]), SolveOptions.of(variant="sticky")
    )
    assert beyond.status == "feasible" and beyond.info["method"] == "bounds"
    assert beyond.valid and list(beyond.bound)[0] <= beyond.objective[0]
