"""Tests of problems.evaluate, the one evaluator, on hand-checked instances."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

from problems import (
    Result,
    assignment_json,
    evaluate,
    is_kip54_balanced,
    join_partition_count,
    load_problem,
    owner_from_assignment,
    previous_number_owners,
    previous_owners,
    replica_levels,
)
from support.problem_builders import group, member
from support.problem_strategies import groups


# ------------------------------------------------------------ KIP-341 ownership
def test_highest_generation_wins_a_conflicting_claim():
    """Tests that of two claimants the one with the higher generation keeps the partition."""
    problem = group(
        {"t": 2}, member("old", ["t"], {"t": [0, 1]}, 3), member("new", ["t"], {"t": [0]}, 4)
    )
    assert previous_owners(problem).tolist() == [1, 0]


def test_equal_generations_keep_neither():
    """Tests that two claimants of the same generation both lose the stickiness credit."""
    problem = group(
        {"t": 2}, member("a", ["t"], {"t": [0]}, 2), member("b", ["t"], {"t": [0, 1]}, 2)
    )
    assert previous_owners(problem).tolist() == [-1, 1]


def test_missing_generation_counts_as_minus_one():
    """Tests that a claim without a generation loses to generation 0 and ties with another without one."""
    problem = group(
        {"t": 2},
        member("none", ["t"], {"t": [0, 1]}),
        member("zero", ["t"], {"t": [0]}, 0),
        member("none2", ["t"], {"t": [1]}),
    )
    assert previous_owners(problem).tolist() == [1, -1]


def test_generation_tie_below_a_higher_claim_does_not_matter():
    """Tests that a tie among lower generations does not void the highest claim."""
    problem = group(
        {"t": 1},
        member("a", ["t"], {"t": [0]}, 1),
        member("b", ["t"], {"t": [0]}, 1),
        member("c", ["t"], {"t": [0]}, 5),
    )
    assert previous_owners(problem).tolist() == [2]


def test_claims_on_unsubscribed_deleted_or_missing_partitions_are_dropped():
    """Tests that claims on a topic no longer subscribed, a deleted topic or a lost index count for nothing."""
    problem = group({"t": 2, "u": 1}, member("a", ["t"], {"u": [0], "gone": [0], "t": [5, 1]}, 1))
    assert previous_owners(problem).tolist() == [-1, 0, -1]


# ----------------------------------------------------------- sticky objective
def test_sticky_objective_counts_squares_and_moves():
    """Tests that level 1 is the sum of squared counts and level 2 the validly owned partitions moved."""
    problem = group(
        {"t": 5}, member("a", ["t"], {"t": [0, 1, 2]}, 1), member("b", ["t"], {"t": [3]}, 1)
    )
    evaluation = evaluate(problem, np.array([0, 0, 1, 1, 1]), "sticky")
    assert evaluation.valid
    assert evaluation.objective == (2 * 2 + 3 * 3, 1)  # t-2 moved from a to b; t-4 was nobody's
    assert evaluation.as_dict() == {"sum_sq_counts": 13, "moves": 1}


def test_group_validity_finds_each_broken_rule():
    """Tests that unassigned partitions, non-subscribers and unsubscribed topics are all reported."""
    problem = group({"t": 2, "u": 1, "orphan": 1}, member("a", ["t"]), member("b", ["u"]))
    assert evaluate(problem, np.array([0, 0, 1, -1]), "sticky").valid
    verdict = evaluate(problem, np.array([0, -1, 0, 1]), "sticky")
    assert not verdict.valid
    text = " | ".join(verdict.violations)
    assert "t-1 is not assigned" in text
    assert "orphan-0 has no subscriber but is assigned" in text
    assert "u-0 goes to a, who does not subscribe its topic" in text
    assert not evaluate(problem, np.array([0, 0, 1]), "sticky").valid
    assert not evaluate(problem, np.array([0, 0, 7, -1]), "sticky").valid


def test_kip54_balance_condition():
    """Tests KIP-54's condition: counts within one, or the poorer member cannot take the richer's partitions."""
    problem = group({"t0": 1, "t1": 4}, member("a", ["t0"]), member("b", ["t0", "t1"]))
    # a has 1, b has 4, but a cannot take t1 partitions: balanced.
    assert is_kip54_balanced(problem, np.array([0, 1, 1, 1, 1]))
    # a has 0, b has 5 including t0-0, which a could take: not balanced.
    assert not is_kip54_balanced(problem, np.array([1, 1, 1, 1, 1]))
    even = group({"t": 3}, member("a", ["t"]), member("b", ["t"]))
    assert is_kip54_balanced(even, np.array([0, 1, 1]))
    assert not is_kip54_balanced(even, np.array([1, 1, 1]))


# -------------------------------------------------------------- lag-aware
def test_kip169_example_tables():
    """Tests the KIP-169 example: range's 160,000 vs 50,000 and the lag-aware 100,000 vs 110,000."""
    problem = group(
        {"t0": 3},
        member("c_0", ["t0"]),
        member("c_1", ["t0"]),
        lags={"t0": [100_000, 60_000, 50_000]},
    )
    lag_aware = evaluate(problem, np.array([0, 1, 1]), "lag-aware")
    assert lag_aware.valid and lag_aware.objective == (110_000, 100_000**2 + 110_000**2)
    ranged = evaluate(problem, np.array([0, 0, 1]), "lag-aware")
    assert ranged.valid and ranged.objective == (160_000, 160_000**2 + 50_000**2)
    lopsided = evaluate(problem, np.array([0, 0, 0]), "lag-aware")
    assert (
        not lopsided.valid and "c_0 gets 3 partitions of t0, not 1 or 2" in lopsided.violations[0]
    )


def test_huge_lags_are_exact():
    """Tests that lag sums and squares beyond 2**53 and 2**63 stay exact integers."""
    big = 2**62
    problem = group({"t": 3}, member("a", ["t"]), member("b", ["t"]), lags={"t": [big, big, 1]})
    assert evaluate(problem, np.array([0, 1, 1]), "lag-aware").objective == (
        big + 1,
        big**2 + (big + 1) ** 2,
    )


# ------------------------------------------------------------- stream join
JOIN = {"impressions": 10, "clicks": 10}


def join_owner(problem, table):
    return owner_from_assignment(
        problem, {m: {"impressions": i, "clicks": c} for m, (i, c) in table.items()}
    )


def test_kip315_round_robin_table_is_not_co_partitioned():
    """Tests that KIP-315's round-robin table is rejected: a partition number split across consumers."""
    problem = group(JOIN, *(member(c, ["impressions", "clicks"]) for c in "ABCD"))
    table = {
        "A": ([0, 4, 8], [2, 6]),
        "B": ([1, 5, 9], [3, 7]),
        "C": ([2, 6], [0, 4, 8]),
        "D": ([3, 7], [1, 5, 9]),
    }
    verdict = evaluate(problem, join_owner(problem, table), "stream-join")
    assert not verdict.valid
    assert any("not co-partitioned" in v for v in verdict.violations)


def test_kip315_range_table_is_accepted():
    """Tests that KIP-315's range table is co-partitioned, scored on partition numbers."""
    problem = group(JOIN, *(member(c, ["impressions", "clicks"]) for c in "ABCD"))
    table = {"A": ([0, 1, 2],) * 2, "B": ([3, 4, 5],) * 2, "C": ([6, 7],) * 2, "D": ([8, 9],) * 2}
    verdict = evaluate(problem, join_owner(problem, table), "stream-join")
    assert verdict.valid and verdict.objective == (9 + 9 + 4 + 4, 0)


def test_kip315_d_leaves_range_moves_two_numbers_better_moves_none():
    """Tests KIP-315's D-leaves tables: range moves numbers 3 and 6, the better assignment moves none."""
    owned = {"A": [0, 1, 2], "B": [3, 4, 5], "C": [6, 7]}
    problem = group(
        JOIN,
        *(
            member(c, ["impressions", "clicks"], {"impressions": o, "clicks": o}, 1)
            for c, o in owned.items()
        ),
    )
    assert previous_number_owners(problem).tolist() == [0, 0, 0, 1, 1, 1, 2, 2, -1, -1]
    ranged = {"A": ([0, 1, 2, 3],) * 2, "B": ([4, 5, 6],) * 2, "C": ([7, 8, 9],) * 2}
    better = {"A": ([0, 1, 2, 9],) * 2, "B": ([3, 4, 5],) * 2, "C": ([6, 7, 8],) * 2}
    assert evaluate(problem, join_owner(problem, ranged), "stream-join").objective == (34, 2)
    assert evaluate(problem, join_owner(problem, better), "stream-join").objective == (34, 0)


def test_stream_join_only_numbers_below_k_and_subscribed_topics():
    """Tests that numbers >= K stay unassigned and a non-subscriber's share of a topic stays unassigned."""
    problem = group({"a": 2, "b": 3}, member("x", ["a", "b"]), member("y", ["a"]))
    assert join_partition_count(problem) == 2
    # x owns number 0 (a-0, b-0), y owns number 1 (a-1 only; y does not subscribe b); b-2
    # unassigned.
    good = np.array([0, 1, 0, -1, -1])
    assert evaluate(problem, good, "stream-join").valid
    for bad in ([0, 1, 0, -1, 0], [0, 1, 0, 0, -1], [0, 1, 1, -1, -1], [0, -1, 0, -1, -1]):
        assert not evaluate(problem, np.array(bad), "stream-join").valid, bad


def test_stream_join_zombie_with_older_epoch_loses_its_claims():
    """Tests that a member claiming numbers with a stale epoch loses them to the current owner."""
    problem = group(
        {"a": 3}, member("live", ["a"], {"a": [0, 1]}, 7), member("zombie", ["a"], {"a": [1, 2]}, 3)
    )
    assert previous_number_owners(problem).tolist() == [0, 0, 1]


def test_stream_join_group_without_members():
    """Tests that a group with partitions but no members scores the empty answer (it used to raise IndexError)."""
    problem = group({"t": 2})
    verdict = evaluate(problem, np.array([-1, -1]), "stream-join")
    assert verdict.valid and verdict.objective == (0, 0)


# ---------------------------------------------------------------- replicas
TWO_MOVE = {
    "brokers": [
        {"id": 1, "rack": "r1"},
        {"id": 2, "rack": "r1"},
        {"id": 3, "rack": "r2"},
        {"id": 4, "rack": "r2"},
    ],
    "partitions": [
        {"topic": "A", "partition": 0, "replicas": [1, 2]},
        {"topic": "B", "partition": 0, "replicas": [3, 4]},
    ],
}


def test_replica_levels_of_the_two_move_case():
    """Tests PR 18903's two-move case: levels (4, 8, 2, 0) as placed, (4, 4, 2, 2) after the swap."""
    problem = load_problem(TWO_MOVE)
    assert replica_levels(problem, problem.replica_brokers) == (4, 8, 2, 0)
    swapped = evaluate(problem, np.array([1, 3, 2, 4]), "replica")
    assert swapped.valid and swapped.objective == (4, 4, 2, 2)
    reordered = evaluate(
        problem, np.array([2, 1, 4, 3]), "replica"
    )  # leadership change only: no move
    assert reordered.objective == (4, 8, 2, 0)


def test_replica_validity():
    """Tests that dead brokers, a broker twice in a partition and a changed replication factor are invalid."""
    problem = load_problem({**TWO_MOVE, "brokers": TWO_MOVE["brokers"][:3]})  # broker 4 removed
    assert not evaluate(problem, problem.replica_brokers, "replica").valid
    assert "not live" in evaluate(problem, np.array([1, 2, 3, 4]), "replica").violations[0]
    assert "twice" in evaluate(problem, np.array([1, 1, 3, 2]), "replica").violations[0]
    assert not evaluate(problem, np.array([1, 2, 3]), "replica").valid
    assert evaluate(problem, np.array([1, 2, 3, 1]), "replica").objective == (
        4 + 1 + 1,
        4 + 2,
        2,
        1,
    )


# ------------------------------------------------------------- result JSON
@given(groups())
def test_assignment_json_round_trips(problem):
    """Tests that assignment JSON and owner arrays convert both ways, every member present, lists sorted."""
    rng = np.random.default_rng(len(problem.members))
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    for g in range(problem.num_partitions):
        subscribers = problem.topic_subscribers[problem.partition_topic[g]]
        if len(subscribers):
            owner[g] = rng.choice(subscribers)
    doc = assignment_json(problem, owner)
    assert list(doc) == list(problem.members)
    assert all(lst == sorted(lst) and lst for topics in doc.values() for lst in topics.values())
    assert owner_from_assignment(problem, doc).tolist() == owner.tolist()
    assert evaluate(problem, owner, "sticky").valid


def test_result_reports_status_and_rescores():
    """Tests that a Result re-scores its answer and rejects unknown statuses."""
    problem = group({"t": 2}, member("a", ["t"]))
    result = Result(
        problem, "sticky", np.array([0, 0]), status="optimal", bound=(4, 0), objective_name="sticky"
    )
    assert result.to_json() == {
        "assignment": {"a": {"t": [0, 1]}},
        "status": "optimal",
        "objective": [4, 0],
        "bound": [4, 0],
    }
    assert Result(problem, "sticky", None, status="unknown").to_json()["assignment"] is None
    with pytest.raises(ValueError):
        Result(problem, "sticky", None, status="great")
    with pytest.raises(ValueError, match="names no objective"):
        _ = Result(problem, "sticky", np.array([0, 0])).objective


def test_outside_assignments_are_checked():
    """Tests that an assignment JSON naming unknown members, topics or partitions, or doubles, is refused."""
    problem = group({"t": 2}, member("a", ["t"]), member("b", ["t"]))
    from problems import ProblemError

    for doc in (
        {"z": {}},
        {"a": {"u": [0]}},
        {"a": {"t": [2]}},
        {"a": {"t": [0]}, "b": {"t": [0]}},
        [],
    ):
        with pytest.raises(ProblemError):
            owner_from_assignment(problem, doc)
