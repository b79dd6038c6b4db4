"""Tests of the exact lag-aware search for small groups (models.lag_aware.search) and its use by the exact solvers."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings

import heuristics.lag_aware as heuristic
import models.lag_aware.cpsat as cpsat
import models.lag_aware.mip as mip
from experiments.scenarios import Scenario, build_problem
from models.lag_aware.bounds import lower_bound
from models.lag_aware.search import search
from models.options import SolveOptions
from problems import evaluate, load_problem
from support.exhaustive import lag_aware_optimum
from support.lag_strategies import lag_groups

SMALL = dict(max_members=3, max_partitions=4, shapes=("uniform", "skewed", "ties", "equal", "zero"))

#: The default suite's 24 partitions x 4 members, two topics, uniform lags in [0, 100,000).
UNIFORM_24_X_4 = Scenario("group", "lag-aware", "fresh", 24, 4, 2, 1, lags="uniform")


@settings(max_examples=60)
@given(lag_groups(**SMALL))
def test_search_equals_brute_force_on_both_levels(problem):
    """Tests that the search proves the lexicographic optimum of enumeration, from KIP-169's answer."""
    start = heuristic.assign(problem).answer
    owner, proven = search(problem, start, lower_bound(problem), 20)
    result = evaluate(problem, owner, "lag-aware")
    assert proven and result.valid
    assert tuple(result.objective) == lag_aware_optimum(problem)


@settings(max_examples=30)
@given(lag_groups(max_members=5, max_partitions=6))
def test_search_out_of_time_keeps_a_valid_answer_never_worse(problem):
    """Tests that a search without time returns the start (or better), valid, and proves nothing
    unless the start meets the bounds."""
    start = heuristic.assign(problem)
    bound = lower_bound(problem)
    owner, proven = search(problem, start.answer, bound, 0.0)
    result = evaluate(problem, owner, "lag-aware")
    assert result.valid and tuple(result.objective) <= tuple(start.objective)
    assert not proven or tuple(result.objective) == bound


def test_search_proves_level_one_above_its_bound_on_the_default_24_x_4_group():
    """Tests the proof the bounds cannot give: 24 x 4 uniform, level 1 314,105 over the size-free
    bound 314,086 (no answer reaches it), level 2 proven too, within a second."""
    problem = load_problem(build_problem(UNIFORM_24_X_4))
    bound = lower_bound(problem)
    started = time.perf_counter()
    owner, proven = search(problem, heuristic.assign(problem).answer, bound, 10)
    assert time.perf_counter() - started < 5
    result = evaluate(problem, owner, "lag-aware")
    assert proven and result.valid
    assert tuple(result.objective) == (314_105, 394_599_434_315)
    assert bound[0] == 314_086 < result.objective[0]


@pytest.mark.parametrize("solver", [cpsat, mip], ids=["cpsat", "mip"])
def test_solvers_report_the_search_proof_as_optimal(solver):
    """Tests that both exact solvers answer the 24 x 4 group `optimal` with the proven optimum as
    bound (method "search"), well within the default suite's 10 s."""
    problem = load_problem(build_problem(UNIFORM_24_X_4))
    started = time.perf_counter()
    result = solver.solve(problem, SolveOptions.of(time_limit=10))
    assert time.perf_counter() - started < 8
    assert result.status == "optimal" and result.valid
    assert result.objective == [314_105, 394_599_434_315] == list(result.bound)
    assert result.info["method"] == "search"


def test_search_does_not_apply_beyond_small_groups():
    """Tests that a member with too many choices to enumerate makes the search give up at once:
    200 partitions over 10 members, each member's 20 of 200 (lags all distinct)."""
    lags = [(7919 * i) % 10_007 + 1 for i in range(200)]
    problem = load_problem(
        {
            "topics": {"t": 200},
            "members": [{"id": f"c{m}", "topics": ["t"]} for m in range(10)],
            "lags": {"t": lags},
        }
    )
    start = heuristic.assign(problem).answer
    started = time.perf_counter()
    owner, proven = search(problem, start, lower_bound(problem), 10)
    assert time.perf_counter() - started < 1
    assert not proven and np.array_equal(owner, start)
