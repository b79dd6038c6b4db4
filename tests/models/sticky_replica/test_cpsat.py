"""CP-SAT specifics of the exact replica model.

The behaviour every backend shares is tested in tests/models/sticky_replica/test_backends.py.
"""

from __future__ import annotations

import numpy as np

from models.options import SolveOptions
from models.sticky_replica import cpsat as sticky_replica
from models.sticky_replica.cpsat import _best_leaders
from models.sticky_replica.data import balanced_level1, build_answer, count_bounds
from problems import load_problem

TWO_MOVE = "examples/placement/pr-18903-two-move-limit.json"


def medium_cluster():
    """40 partitions x RF 3 on 9 brokers, 3 racks, everything packed on rack a (a hard start)."""
    brokers = [{"id": b, "rack": "abc"[b % 3]} for b in range(9)]
    parts = [
        {"topic": f"t{i // 10}", "partition": i % 10, "replicas": [0, 3, 6]} for i in range(40)
    ]
    return load_problem({"brokers": brokers, "partitions": parts})


def test_a_time_out_is_never_reported_optimal():
    """Tests honest statuses: with almost no time the answer is feasible with a bound, or unknown."""
    problem = medium_cluster()
    result = sticky_replica.solve(problem, SolveOptions.of(time_limit=0.05))
    assert result.status in ("feasible", "unknown")
    if result.status == "feasible":
        assert result.valid
        assert (
            result.bound is not None and list(result.bound) <= result.objective[: len(result.bound)]
        )


def test_level_1_is_the_balanced_value():
    """Tests the level-1 shortcut: the optimum is the closed-form balanced value, and the bound says so."""
    problem = medium_cluster()
    result = sticky_replica.solve(problem, SolveOptions.of(time_limit=30))
    assert (
        result.objective[0] == balanced_level1(problem) == 6 * 13**2 + 3 * 14**2
    )  # 120 replicas on 9 brokers
    assert result.bound[0] == balanced_level1(problem)
    counts = np.bincount(result.answer, minlength=9)
    assert counts.max() - counts.min() <= 1


def test_same_answer_twice():
    """Tests determinism: one worker and a fixed seed give the same answer on the same problem."""
    problem = load_problem(TWO_MOVE)
    first = sticky_replica.solve(problem, SolveOptions.of(time_limit=10, workers=1, seed=3))
    assert (
        first.answer.tolist()
        == sticky_replica.solve(
            problem, SolveOptions.of(time_limit=10, workers=1, seed=3)
        ).answer.tolist()
    )


def test_count_bounds():
    """Tests the count bounds: {q, q+1} unbounded, current +- k with a move limit, sqrt of level 1 to beat."""
    problem = load_problem(TWO_MOVE)
    assert count_bounds(problem, None, None) == [(1, 1)] * 4
    assert count_bounds(problem, 1, None) == [(0, 2)] * 4
    assert count_bounds(problem, None, (4, 8, 2)) == [(0, 2)] * 4


def test_build_answer_keeps_slots_and_puts_the_leader_first():
    """Tests the answer layout: kept replicas stay in place, newcomers fill the gaps, the leader swaps to the front."""
    problem = load_problem(
        {
            "brokers": [{"id": b} for b in (5, 6, 7, 8)],
            "partitions": [{"topic": "t", "partition": 0, "replicas": [5, 9, 6]}],
        }
    )
    # Positions: 5 -> 0, 6 -> 1, 7 -> 2, 8 -> 3.  Keep 5 and 6, bring 8 into 9's slot, 6 leads.
    assert build_answer(problem, [[0, 1, 3]], [1]).tolist() == [6, 8, 5]


def test_hint_leaders_come_from_a_min_cost_flow():
    """Tests the hint's leader choice: reordering only, and level 3 at its minimum (one leader per broker)."""
    problem = load_problem("examples/placement/leaders-by-reordering.json")
    reordered = _best_leaders(problem, problem.replica_brokers)
    assert sorted(reordered[:2].tolist()) == sorted(reordered[2:].tolist()) == [1, 2]
    assert sorted([reordered[0], reordered[2]]) == [1, 2]
