"""The exact share models (CP-SAT, min-cost flow, MIP) against every feasible answer of tiny groups.

Each tiny share group (up to 4 members, up to 4 partitions, random subscriptions and previous
pairs, several members per partition) has at most 12 allowed pairs: every subset of them is
enumerated, the evaluator keeps the valid ones, and the lexicographic minimum of their levels is
the optimum the models must reach (``optimal``, bound equal to it).  Kafka's heuristic is never
better.  A CP-SAT run cut short returns a bound no higher than its answer.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from heuristics import share as heuristic
from models.options import SolveOptions
from models.share import cpsat as cpsat_share
from models.share import flow as flow_share
from models.share import mip as mip_share
from models.share.pairs import share_pairs
from problems import Status, evaluate, load_problem
from problems.share import pairs_array


def tiny_document(seed: int) -> dict:
    """A random share group with at most 12 allowed pairs."""
    rng = np.random.default_rng(seed)
    while True:
        topics = {f"t{i}": int(rng.integers(0, 3)) for i in range(int(rng.integers(1, 3)))}
        names = [*topics, "gone"]
        members = []
        for m in range(int(rng.integers(1, 5))):
            member: dict = {"id": f"m{m}", "topics": [t for t in names if rng.random() < 0.6]}
            if rng.random() < 0.6:
                member["owned"] = {
                    t: [p for p in range(n) if rng.random() < 0.5] for t, n in topics.items()
                }
            members.append(member)
        doc = {"topics": topics, "members": members}
        if share_pairs(load_problem(doc)).count <= 12:
            return doc


def optimum(problem) -> tuple[int, ...]:
    """The lexicographic minimum of the levels over every valid subset of the allowed pairs."""
    pairs = share_pairs(problem)
    best: tuple[int, ...] | None = None
    for chosen in itertools.product((False, True), repeat=pairs.count):
        mask = np.array(chosen, dtype=bool)
        answer = pairs_array(pairs.member[mask], pairs.partition[mask])
        verdict = evaluate(problem, answer, "share")
        if verdict.valid and (best is None or verdict.objective < best):
            best = verdict.objective
    assert best is not None, "choosing every allowed pair is always valid"
    return best


SEEDS = range(40)


@pytest.mark.parametrize("seed", SEEDS)
def test_cpsat_and_flow_equal_the_enumerated_optimum(seed):
    """Tests that CP-SAT and the flow prove the enumerated optimum, and the heuristic is not better."""
    problem = load_problem(tiny_document(seed))
    best = optimum(problem)
    for backend in (cpsat_share, flow_share):
        result = backend.solve(problem, SolveOptions())
        assert result.status == Status.OPTIMAL
        assert result.valid, result.evaluation.violations
        assert tuple(result.objective) == best
        assert result.bound == best
    kafka = heuristic.assign(problem)
    if kafka.valid:
        assert tuple(kafka.objective) >= best


@pytest.mark.parametrize("seed", range(0, 40, 4))
def test_mip_equals_the_enumerated_optimum(seed):
    """Tests that the MIP (HiGHS) proves the enumerated optimum."""
    problem = load_problem(tiny_document(seed))
    result = mip_share.solve(problem, SolveOptions())
    assert result.status == Status.OPTIMAL
    assert tuple(result.objective) == optimum(problem)
    assert result.bound == tuple(result.objective)


def test_bounds_never_above_the_answer():
    """Tests a CP-SAT run cut short on a larger group: its bound never exceeds its answer."""
    rng = np.random.default_rng(7)
    doc = {
        "topics": {f"t{i}": 12 for i in range(4)},
        "members": [
            {
                "id": f"m{m}",
                "topics": [f"t{i}" for i in range(4) if rng.random() < 0.7] or ["t0"],
                "owned": {f"t{i}": rng.permutation(12)[:3].tolist() for i in range(4)},
            }
            for m in range(30)
        ],
    }
    problem = load_problem(doc)
    result = cpsat_share.solve(problem, SolveOptions(time_limit=0.5))
    assert result.status in (Status.OPTIMAL, Status.FEASIBLE)
    assert result.valid
    assert result.bound is not None
    assert result.bound <= tuple(result.objective)[: len(result.bound)]
    exact = flow_share.solve(problem, SolveOptions())
    assert exact.status == Status.OPTIMAL
    assert tuple(exact.objective) <= tuple(result.objective)
    assert result.bound <= tuple(exact.objective)[: len(result.bound)]


def test_flow_equals_cpsat_on_a_medium_group():
    """Tests the flow's weights beyond tiny groups: on 24 members, 3 topics of 5 partitions,
    random subscriptions and previous pairs, the flow and CP-SAT prove the same levels."""
    rng = np.random.default_rng(3)
    doc = {
        "topics": {f"t{i}": 5 for i in range(3)},
        "members": [
            {
                "id": f"m{m}",
                "topics": [f"t{i}" for i in range(3) if rng.random() < 0.5] or ["t1"],
                "owned": {
                    f"t{i}": rng.permutation(5)[: rng.integers(0, 3)].tolist() for i in range(3)
                },
            }
            for m in range(24)
        ],
    }
    problem = load_problem(doc)
    flow = flow_share.solve(problem, SolveOptions())
    exact = cpsat_share.solve(problem, SolveOptions(time_limit=20))
    assert flow.status == exact.status == Status.OPTIMAL
    assert flow.objective == exact.objective


@pytest.mark.parametrize(
    ("members", "partitions", "stale"),
    [(1, 1, False), (3, 8, False), (8, 3, True), (6, 4, False), (5, 5, True), (12, 2, False)],
)
def test_complete_groups_closed_form_equals_the_network(members, partitions, stale):
    """Tests the flow's closed form (every reader may read every partition, nothing allowed held):
    proven optimal, valid, and the levels of the min-cost flow network and of CP-SAT; a held pair
    that stays allowed sends the group to the network."""
    topics = {"t0": partitions - partitions // 2, "t1": partitions // 2} if partitions > 1 else {}
    topics = topics or {"t0": 1}
    doc = {
        "topics": {**topics, "gone": 2, "left": 2},
        "members": [
            {
                "id": f"m{m}",
                "topics": [*topics, "gone"],
                **({"owned": {"left": [m % 2]}} if stale else {}),
            }
            for m in range(members)
        ]
        + [{"id": "idle", "topics": ["gone"]}],
    }
    doc["topics"].pop("gone")
    problem = load_problem(doc)
    closed = flow_share.complete_optimum(problem)
    assert closed is not None and closed.status == Status.OPTIMAL and closed.valid
    network = flow_share.network_optimum(problem)
    exact = cpsat_share.solve(problem, SolveOptions(time_limit=10))
    assert tuple(closed.objective) == tuple(network.objective) == tuple(exact.objective)
    assert closed.bound == tuple(closed.objective)
    held = {**doc, "members": [{**doc["members"][0], "owned": {"t0": [0]}}, *doc["members"][1:]]}
    assert flow_share.complete_optimum(load_problem(held)) is None


def test_tiny_complete_groups_closed_form_equals_the_network():
    """Tests that wherever the closed form applies to the tiny groups, the network agrees."""
    applied = 0
    for seed in SEEDS:
        problem = load_problem(tiny_document(seed))
        closed = flow_share.complete_optimum(problem)
        if closed is not None:
            applied += 1
            assert closed.objective == flow_share.network_optimum(problem).objective
    assert applied > 0
