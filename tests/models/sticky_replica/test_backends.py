"""One behaviour suite for every exact replica model (PyJobShop style): CP-SAT, PuLP-HiGHS, PuLP-CBC, flow.

Each backend module has the same three public functions, ``solve``,
``fewest_moves`` and ``frontier``; every test below runs against each, and the
last ones check that the backends agree with each other and beat the heuristic.
"""

from __future__ import annotations

import random
import time

import numpy as np
import pytest
from hypothesis import given, settings

from heuristics import kafka_default
from heuristics import sticky_replica as heuristic
from models.common.mip_ranked import GRACE_SECONDS
from models.options import SolveOptions
from models.sticky_replica import cpsat, flow, mip
from problems import load_problem
from support.cluster_strategies import clusters

TWO_MOVE = "examples/placement/pr-18903-two-move-limit.json"


class Backend:
    """A backend's three functions with its own solver (``backend``) set in the options."""

    def __init__(self, module, backend=None):
        self.module, self.backend = module, backend

    def solve(self, problem, options):
        return self.module.solve(problem, options.with_extra(backend=self.backend))

    def fewest_moves(self, problem, placement, options):
        return self.module.fewest_moves(
            problem, placement, options.with_extra(backend=self.backend)
        )

    def frontier(self, problem, max_k, options):
        return self.module.frontier(problem, max_k, options.with_extra(backend=self.backend))


BACKENDS = {
    "cpsat": Backend(cpsat),
    "mip-highs": Backend(mip, "highs"),
    "mip-cbc": Backend(mip, "cbc"),
    "flow": Backend(flow),
}
backends = pytest.mark.parametrize("backend", BACKENDS.values(), ids=BACKENDS.keys())


def moves(result) -> int:
    return result.objective[3]


@backends
def test_two_move_case_finds_the_swap(backend):
    """Tests the PR's limitation case: level 1 unchanged, level 2 strictly better, exactly 2 moves."""
    problem = load_problem(TWO_MOVE)
    result = backend.solve(problem, SolveOptions.of(time_limit=20))
    before = heuristic.assign(problem).objective
    assert result.status == "optimal" and result.valid
    assert result.objective[0] == before[0] == 4
    assert result.objective[1] == 4 < before[1] == 8
    assert moves(result) == 2
    assert result.bound == tuple(result.objective)


@backends
def test_frontier_shows_the_swap_at_k_2_not_at_k_1(backend):
    """Tests the moves/quality frontier of the two-move case: nothing better within 1 move, the swap at 2."""
    problem = load_problem(TWO_MOVE)
    points = backend.frontier(problem, 3, SolveOptions.of(time_limit=20))
    assert [r.status for r in points] == ["optimal"] * 4
    assert [r.objective[:3] for r in points] == [[4, 8, 2], [4, 8, 2], [4, 4, 2], [4, 4, 2]]
    assert [moves(r) for r in points] == [0, 0, 2, 2]
    assert [r.info["max_moves"] for r in points] == [0, 1, 2, 3]


def _random_cluster(partitions: int, brokers: int, seed: int = 0):
    rng = random.Random(seed)
    return load_problem(
        {
            "brokers": [{"id": b, "rack": f"r{b % 3}"} for b in range(brokers)],
            "partitions": [
                {
                    "topic": f"t{p % 4}",
                    "partition": p // 4,
                    "replicas": rng.sample(range(brokers), 3),
                }
                for p in range(partitions)
            ],
        }
    )


@backends
def test_frontier_shares_one_deadline_and_stays_honest(backend):
    """Tests that time_limit bounds the whole frontier (was: each point): 31 points of a 12-partition
    cluster with 0.5 s end near 0.5 s (measured: a few points optimal or feasible, the rest not
    solved); a point past the deadline is not solved (no answer, unknown), and every later one too;
    a point said
    optimal is beaten by no answer found at any budget up to its own, nor by the heuristic's."""
    problem = _random_cluster(12, 6)
    started = time.perf_counter()
    points = backend.frontier(problem, 30, SolveOptions.of(time_limit=0.5))
    elapsed = time.perf_counter() - started
    assert elapsed < 0.5 + GRACE_SECONDS + 2, f"{elapsed:.1f} s"  # the last point's grace, scoring
    assert [p.info["max_moves"] for p in points] == list(range(31))
    skipped = [bool(p.info.get("not_solved")) for p in points]
    assert skipped == sorted(skipped)  # once the time is spent, nothing more starts
    found = [(p.objective, k) for k, p in enumerate(points) if p.answer is not None]
    found.append((heuristic.assign(problem).objective, moves(heuristic.assign(problem))))
    for k, point in enumerate(points):
        if point.answer is None:
            assert point.status in ("unknown", "infeasible") and point.objective == []
            continue
        assert point.status in ("optimal", "feasible") and point.valid and moves(point) <= k
        if point.bound is not None:
            assert tuple(point.bound) <= tuple(point.objective)
        if point.status == "optimal":
            assert all(
                other[:3] + [other[3]] >= point.objective for other, _ in found if other[3] <= k
            )


def test_frontier_with_no_time_left_solves_nothing():
    """Tests a frontier given no time: every point not solved, none with an answer."""
    for module in (cpsat, mip, flow):
        points = module.frontier(load_problem(TWO_MOVE), 2, SolveOptions.of(time_limit=0))
        assert [(p.status, p.answer, p.info["max_moves"]) for p in points] == [
            ("unknown", None, k) for k in range(3)
        ]
        assert all(p.info["not_solved"] for p in points)


@backends
def test_fewest_moves_to_match_a_placement(backend):
    """Tests question (a): the heuristic's placement needs 0 moves, kafka-default's spread one needs 2."""
    problem = load_problem(TWO_MOVE)
    same = backend.fewest_moves(
        problem, heuristic.assign(problem).answer, SolveOptions.of(time_limit=20)
    )
    assert same.status == "optimal" and moves(same) == 0
    spread = kafka_default.assign(problem, seed=3)  # levels (4, 4, 2)
    result = backend.fewest_moves(problem, spread.answer, SolveOptions.of(time_limit=20))
    assert result.status == "optimal" and moves(result) == 2
    assert result.objective[:3] <= spread.objective[:3]
    assert result.info["moves_bound"] == 2


@backends
def test_reordering_replicas_costs_no_move(backend):
    """Tests that leadership changes without data movement are free: two partitions led by broker 1."""
    problem = load_problem(
        {
            "brokers": [{"id": 1}, {"id": 2}],
            "partitions": [
                {"topic": "a", "partition": 0, "replicas": [1, 2]},
                {"topic": "b", "partition": 0, "replicas": [1, 2]},
            ],
        }
    )
    result = backend.solve(problem, SolveOptions.of(time_limit=20))
    assert result.status == "optimal"
    assert result.objective == [8, 8, 2, 0]  # the heuristic cannot do this: no move helps
    assert heuristic.assign(problem).objective == [8, 8, 4, 0]


@backends
def test_removed_brokers_force_moves_and_a_smaller_limit_is_infeasible(backend):
    """Tests that replicas on removed brokers must move: below that many moves there is no placement."""
    problem = load_problem(
        {
            "brokers": [{"id": 1, "rack": "a"}, {"id": 2, "rack": "b"}, {"id": 3, "rack": "b"}],
            "partitions": [
                {"topic": "t", "partition": 0, "replicas": [9, 1]},
                {"topic": "t", "partition": 1, "replicas": [8, 9]},
            ],
        }
    )
    assert (
        backend.solve(problem, SolveOptions.of(time_limit=20, max_moves=2)).status == "infeasible"
    )
    result = backend.solve(problem, SolveOptions.of(time_limit=20, max_moves=3))
    assert result.status == "optimal" and moves(result) == 3 and result.objective[:2] == [6, 4]


@backends
def test_max_moves_zero_keeps_every_replica_set(backend):
    """Tests that max_moves = 0 keeps every partition's broker set (only reordering)."""
    problem = load_problem(
        {
            "brokers": [{"id": b} for b in range(1, 5)],
            "partitions": [{"topic": "t", "partition": i, "replicas": [1, 2]} for i in range(3)],
        }
    )
    result = backend.solve(problem, SolveOptions.of(time_limit=20, max_moves=0))
    assert result.status == "optimal"
    assert [sorted(result.answer[2 * i : 2 * i + 2].tolist()) for i in range(3)] == [[1, 2]] * 3
    assert result.objective == [18, 12, 5, 0]


@settings(max_examples=12)
@given(
    clusters(
        max_brokers=5, max_racks=3, max_topics=3, max_partitions=3, max_factor=3, max_removed=2
    )
)
def test_exact_is_never_worse_than_the_heuristic_and_backends_agree(problem):
    """Tests exact <= heuristic lexicographically, and cpsat = mip (both backends) when all are optimal."""
    best = heuristic.assign(problem).objective
    found = {}
    for name, backend in BACKENDS.items():
        result = backend.solve(problem, SolveOptions.of(time_limit=20))
        assert result.status == "optimal", name
        assert result.valid
        assert result.objective <= best
        found[name] = result.objective
    assert found["cpsat"] == found["mip-highs"] == found["mip-cbc"] == found["flow"]


@settings(max_examples=8)
@given(
    clusters(
        max_brokers=5, max_racks=3, max_topics=3, max_partitions=3, max_factor=3, max_removed=1
    )
)
def test_frontier_is_monotone_and_ends_at_the_optimum(problem):
    """Tests the frontier: levels 1-3 never get worse with more moves, moves stay within k, and it meets solve."""
    forced = int(np.count_nonzero(problem.replica_positions < 0))
    optimum = cpsat.solve(problem, SolveOptions.of(time_limit=20))
    points = cpsat.frontier(problem, optimum.objective[3], SolveOptions.of(time_limit=20))
    assert all(r.status == "infeasible" for r in points[:forced])
    feasible = points[forced:]
    assert all(r.status == "optimal" and moves(r) <= r.info["max_moves"] for r in feasible)
    assert all(a.objective[:3] >= b.objective[:3] for a, b in zip(feasible, feasible[1:]))
    assert feasible[-1].objective == optimum.objective
