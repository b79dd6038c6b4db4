"""Tests of models.sticky.cpsat and the count bounds it relies on."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings

import heuristics.sticky.sticky as heuristic
import models.sticky.cpsat as cpsat
import models.sticky.flow as flow
from models.common.classes import count_bounds, partition_classes
from models.options import SolveOptions
from problems import load_problem, member_counts
from support.problem_strategies import groups
from support.sticky_strategies import rebalances


def kafka_shape(topics: int, partitions: int, members: int) -> dict:
    names = [f"t{i:02d}" for i in range(topics)]
    return {
        "topics": {t: partitions for t in names},
        "members": [{"id": f"m{i:03d}", "topics": names} for i in range(members)],
    }


def churned(doc: dict) -> object:
    """The group after its first sticky answer: the last member now subscribes only the first topic."""
    first = heuristic.assign(load_problem(doc)).assignment
    members = [{**m, "owned": first[m["id"]], "generation": 1} for m in doc["members"]]
    members[-1] = {**members[-1], "topics": members[-1]["topics"][:1]}
    return load_problem({"topics": doc["topics"], "members": members})


def test_proves_two_thousand_partitions_times_one_hundred_members():
    """Tests CP-SAT's aggregated model at 2,000 x 100 after churn: proven optimal, equal to the flow optimum."""
    problem = churned(kafka_shape(20, 100, 100))
    result = cpsat.solve(problem, SolveOptions.of(time_limit=60))
    assert result.status == "optimal" and result.valid
    assert (
        tuple(result.objective)
        == tuple(result.bound)
        == tuple(flow.solve(problem, SolveOptions()).objective)
    )


def test_short_time_limit_is_honest():
    """Tests that a time limit too short to prove anything never yields 'optimal' without the flow optimum."""
    problem = churned(kafka_shape(20, 100, 100))
    result = cpsat.solve(problem, SolveOptions.of(time_limit=0.01))
    optimum = tuple(flow.solve(problem, SolveOptions()).objective)
    if result.status == "optimal":
        assert tuple(result.objective) == optimum
    else:
        assert result.status in ("feasible", "unknown")
    if result.status == "feasible":
        assert result.valid
        assert tuple(result.bound) <= optimum <= tuple(result.objective)


@settings(max_examples=30)
@given(problem=rebalances())
def test_deterministic_for_a_fixed_seed(problem):
    """Tests that the same problem and seed give the same answer."""
    first, second = (
        cpsat.solve(problem, SolveOptions.of(seed=3)),
        cpsat.solve(problem, SolveOptions.of(seed=3)),
    )
    assert first.status == second.status
    assert (first.answer is None and second.answer is None) or np.array_equal(
        first.answer, second.answer
    )


@settings(max_examples=150)
@given(problem=groups(max_members=7, max_partitions=9))
def test_count_bounds_hold_at_the_optimum(problem):
    """Tests the Frank-Murota cuts: the flow optimum's counts lie within the bounds taken from the heuristic."""
    lo, hi = count_bounds(problem, partition_classes(problem), heuristic.assign(problem).answer)
    counts = member_counts(problem, flow.solve(problem, SolveOptions()).answer)
    assert np.all(counts >= lo) and np.all(counts <= hi)
