"""Tests of the rack-aware flow model (models.flow.rack_aware): pinned cases, the exhaustive reference, heuristics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings

import models
from models.flow import rack_aware as flow
from models.flow._common import check_cost_range
from models.registry import STRATEGIES
from problems import ProblemError, evaluate, load_problem
from support import exhaustive
from support.rack_strategies import rack_groups


def test_alignment_ranks_below_balance_and_above_moves():
    """Tests a hand-checked group: c0 (rack a) owns both partitions, whose replicas are on rack b; c1 is on b.

    Balance first: one partition each (level 1 = 2).  Then alignment: c0 gets a partition not on its
    rack whatever happens (1 mismatch).  Then moves: c0 keeps one, one moves (1 move)."""
    problem = load_problem({"topics": {"t": 2},
                            "members": [{"id": "c0", "topics": ["t"], "rack": "a", "owned": {"t": [0, 1]}},
                                        {"id": "c1", "topics": ["t"], "rack": "b"}],
                            "partition_racks": {"t": [["b"], ["b", "c"]]}})
    result = flow.solve(problem)
    assert result.status == "optimal" and result.valid
    assert result.objective == [2, 1, 1] and result.bound == (2, 1, 1)


def test_alignment_beats_stickiness():
    """Tests that c0 (rack a) gives up its partition on rack b for the one on rack a: 2 moves, 0 mismatches."""
    problem = load_problem({"topics": {"t": 2},
                            "members": [{"id": "c0", "topics": ["t"], "rack": "a", "owned": {"t": [0]}},
                                        {"id": "c1", "topics": ["t"], "rack": "b", "owned": {"t": [1]}}],
                            "partition_racks": {"t": [["b"], ["a"]]}})
    result = flow.solve(problem)
    assert result.assignment == {"c0": {"t": [1]}, "c1": {"t": [0]}}
    assert result.objective == [2, 0, 2]


def test_members_without_a_rack_never_count_and_no_racks_is_sticky():
    """Tests that a rackless member takes anything at no mismatch; a partition without replica racks counts
    for every member with one; without partition_racks level 2 is 0 and levels 1, 3 are the sticky flow's."""
    problem = load_problem({"topics": {"t": 2},
                            "members": [{"id": "c0", "topics": ["t"], "rack": "a"}, {"id": "c1", "topics": ["t"]}],
                            "partition_racks": {"t": [[], ["a"]]}})
    assert flow.solve(problem).objective == [2, 0, 0]
    doc = {"topics": {"t": 5}, "members": [{"id": "c0", "topics": ["t"], "rack": "a", "owned": {"t": [0, 1, 2, 3]}},
                                          {"id": "c1", "topics": ["t"], "rack": "b"}]}
    result = flow.solve(load_problem(doc))
    sticky = models.solve(load_problem(doc), "sticky", "flow")
    assert result.status == "optimal" and result.objective == [13, 0, 1] and sticky.objective == [13, 1]


def test_empty_group():
    """Tests that nothing to assign is optimal at (0, 0, 0)."""
    result = flow.solve(load_problem({"topics": {"t": 2}, "members": [], "partition_racks": {"t": [["a"], []]}}))
    assert result.status == "optimal" and result.objective == [0, 0, 0] and result.answer.tolist() == [-1, -1]


@settings(max_examples=80, deadline=None)
@given(rack_groups())
def test_levels_equal_the_exhaustive_optimum(problem):
    """Tests all three levels against enumeration of every assignment (tiny groups), and the bound."""
    assume(exhaustive.count(problem) <= 5_000)
    result = flow.solve(problem)
    assert result.status == "optimal" and result.valid, result.evaluation.violations
    assert tuple(result.objective) == exhaustive.optimum(problem, "rack-aware") == result.bound


def heuristic_objectives(problem) -> dict[str, list[int]]:
    """Every heuristic judged on rack-aware: the strategy's own and its baselines (and sticky's variants)."""
    entry = STRATEGIES["rack-aware"]
    found = {name: models.solve(problem, name) for name in ("rack-aware", *entry.baselines)}
    for variant in STRATEGIES["sticky"].heuristic.variants:
        found[f"sticky/{variant}"] = models.solve(problem, "sticky", variant=variant)
    return {name: list(evaluate(problem, r.answer, "rack-aware").objective) for name, r in found.items()}


@settings(max_examples=40, deadline=None)
@given(rack_groups(max_members=8, max_topics=4, max_partitions=12))
def test_never_worse_than_any_heuristic(problem):
    """Tests exact <= every heuristic lexicographically (so level k <= theirs whenever the levels above tie)."""
    result = flow.solve(problem)
    assert result.status == "optimal" and result.valid
    for name, objective in heuristic_objectives(problem).items():
        assert result.objective <= objective, name


def test_cost_range_is_checked():
    """Tests that weights beyond the exact 64-bit range are refused, not solved inexactly."""
    with pytest.raises(ProblemError, match="64-bit"):
        check_cost_range(2**40, 2**30, 10, "members", "partitions")


def test_one_member_joins_a_racked_group():
    """Tests a mid-size incremental case (300 members x 5 partitions, 3 racks, RF 2): proven, level 1 the
    sticky flow's, moves at least the sticky flow's (alignment ranks above them), mismatches as Kafka counts."""
    members, topics, per = 300, 30, 50
    racks = ["a", "b", "c"]
    owned: dict[int, dict[str, list[int]]] = {}
    for i in range(topics * per):
        owned.setdefault(i % (members - 1), {}).setdefault(f"t{i // per}", []).append(i % per)
    doc = {"topics": {f"t{t}": per for t in range(topics)},
           "members": [{"id": f"m{m:03d}", "topics": [f"t{t}" for t in range(topics)], "rack": racks[m % 3],
                        **({"owned": owned[m], "generation": 1} if m in owned else {})} for m in range(members)],
           "partition_racks": {f"t{t}": [[racks[(p + t) % 3], racks[(p + t + 1) % 3]] for p in range(per)]
                               for t in range(topics)}}
    problem = load_problem(doc)
    result = flow.solve(problem)
    assert result.status == "optimal" and result.valid and result.bound == tuple(result.objective)
    assert result.objective[0] == members * 5**2  # 1,500 partitions, 5 each
    sticky = models.solve(problem, "sticky", "flow")
    assert result.objective[0] == sticky.objective[0] and result.objective[2] >= sticky.objective[1]
    assert np.count_nonzero(problem.rack_mismatches(result.answer)) == result.objective[1]
