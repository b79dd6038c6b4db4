"""Tests of the min-cost-flow solvers: models.common.min_cost_flow and models.sticky.flow."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import heuristics.sticky.sticky as heuristic
import models.sticky.flow as flow
from models.common.classes import split_pools
from models.common.min_cost_flow import solve_convex_assignment
from models.options import SolveOptions
from problems import load_problem


def objective(result, keep, members):
    cls, member, count = result
    keep = np.asarray(keep)
    n = np.bincount(member, weights=count, minlength=members).astype(np.int64)
    moved = int(count[(keep[cls] >= 0) & (member != keep[cls])].sum())
    return int(n @ n), moved


def brute(sizes, eligible, keep, members):
    items = [c for c, size in enumerate(sizes) for _ in range(size)]
    best = None
    for combo in itertools.product(*(eligible[c] for c in items)):
        n = np.bincount(np.asarray(combo, dtype=np.int64), minlength=members)
        moved = sum(1 for c, m in zip(items, combo) if keep[c] >= 0 and m != keep[c])
        value = (int(n @ n), moved)
        best = value if best is None or value < best else best
    return best


@st.composite
def instances(draw, max_items=7):
    members = draw(st.integers(1, 4))
    classes = draw(st.integers(1, 4))
    sizes = draw(
        st.lists(st.integers(0, 3), min_size=classes, max_size=classes).filter(
            lambda s: sum(s) <= max_items
        )
    )
    # Member lists in any order (the solver sorts them when needed).
    eligible = [
        draw(st.permutations(sorted(draw(st.sets(st.integers(0, members - 1), min_size=1)))))
        for _ in range(classes)
    ]
    keep = [draw(st.integers(-1, members - 1)) for _ in range(classes)]
    return sizes, eligible, keep, members


@settings(max_examples=150)
@given(instances())
def test_convex_assignment_matches_exhaustive_search(instance):
    """Tests both levels against every item-to-member map, and that rows respect sizes and eligibility."""
    sizes, eligible, keep, members = instance
    start = np.concatenate(([0], np.cumsum([len(e) for e in eligible])))
    result = solve_convex_assignment(sizes, start, np.concatenate(eligible), keep, members)
    cls, member, count = result
    assert np.all(count > 0)
    assert np.bincount(cls, weights=count, minlength=len(sizes)).tolist() == sizes
    assert all(m in eligible[c] for c, m in zip(cls, member))
    assert objective(result, keep, members) == brute(sizes, eligible, keep, members)


def test_windows_widen_when_the_first_guess_is_far_off():
    """Tests a member forced to 100 items (window guessed at 37): the re-solve still finds 100, 5, 5."""
    cls, member, count = solve_convex_assignment([100, 10], [0, 1, 4], [0, 0, 1, 2], [-1, -1], 3)
    n = np.bincount(member, weights=count, minlength=3)
    assert n.tolist() == [100, 5, 5]


def test_keep_outside_the_eligible_set_counts_as_no_owner():
    """Tests that an owner who may not take its class is ignored (its items move whatever happens)."""
    cls, member, count = solve_convex_assignment([2, 2], [0, 1, 2], [1, 0], [0, 0], 2)
    assert sorted(zip(cls.tolist(), member.tolist(), count.tolist())) == [(0, 1, 2), (1, 0, 2)]


def test_class_without_eligible_member_is_refused():
    """Tests the ValueError for items that nobody may take."""
    with pytest.raises(ValueError, match="class 1"):
        solve_convex_assignment([1, 2], [0, 1, 1], [0], [-1, -1], 1)


def test_split_pools_matches_classes_and_members_in_order():
    """Tests the deterministic pool split: classes ascending fill the pool's edges in order."""
    cls, member, count = split_pools([0, 0, 1], [2, 3, 1], [4, 5, 6], [1, 4, 1])
    assert list(zip(cls.tolist(), member.tolist(), count.tolist())) == [
        (0, 4, 1),
        (0, 5, 1),
        (1, 5, 3),
        (2, 6, 1),
    ]


def test_sticky_flow_on_a_churned_group_of_twenty_thousand():
    """Tests 20,000 partitions x 200 members after a leave and a subscription change: optimal, <= heuristic."""
    names = [f"t{i}" for i in range(20)]
    doc = {
        "topics": {t: 1000 for t in names},
        "members": [{"id": f"m{i:03d}", "topics": names} for i in range(200)],
    }
    first = heuristic.assign(load_problem(doc)).assignment
    members = [{**m, "owned": first[m["id"]], "generation": 1} for m in doc["members"][1:]]
    members[-1] = {**members[-1], "topics": names[:1]}
    problem = load_problem({"topics": doc["topics"], "members": members})
    result = flow.solve(problem, SolveOptions())
    assert result.valid and result.status == "optimal"
    assert tuple(result.objective) == tuple(result.bound)
    assert tuple(result.objective) <= tuple(heuristic.assign(problem).objective)
    assert np.array_equal(result.answer, flow.solve(problem, SolveOptions()).answer)
