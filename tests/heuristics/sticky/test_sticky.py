"""Tests of heuristics.sticky.sticky: KIP-54 + KIP-341, KAFKA-12464 and KAFKA-9987."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import heuristics.sticky.sticky as sticky
import models.sticky.flow as flow
from models.options import SolveOptions
from peers.kafka_python import PeerStickyGroup
from problems import evaluate, is_kip54_balanced, load_problem, previous_owners
from support.problem_strategies import groups
from support.sticky_strategies import equal_groups, rebalances

EXAMPLES = Path(__file__).parents[3] / "examples" / "group"


def named(problem, owner) -> dict[str, list[str]]:
    """``{member: ["t1p0", ...]}`` of an owner array (partitions in global id order)."""
    out: dict[str, list[str]] = {m: [] for m in problem.members}
    for g in np.flatnonzero(owner >= 0):
        out[problem.members[owner[g]]].append(problem.partition_name(int(g)).replace("-", "p"))
    return out


# ------------------------------------------------------- the seed's example
def test_kafka_9987_worked_example_phase_by_phase():
    """Tests the seed's four-phase example: C0, C1 own t1p0-t1p9, C2 joins; C0 gives up t1p3 in phase 3."""
    problem = load_problem(EXAMPLES / "kafka-12464-c2-joins.json")
    phases: list[np.ndarray] = []
    sticky._four_phase(problem, previous_owners(problem), phases)
    after = [named(problem, owner) for owner in phases]
    assert after[0] == {
        "C0": ["t1p0", "t1p1", "t1p2", "t1p3"],
        "C1": ["t1p5", "t1p6", "t1p7", "t1p8"],
        "C2": [],
    }
    assert after[1] == {
        "C0": ["t1p0", "t1p1", "t1p2", "t1p3"],
        "C1": ["t1p5", "t1p6", "t1p7", "t1p8"],
        "C2": ["t1p4", "t1p9"],
    }
    assert after[2] == {
        "C0": ["t1p0", "t1p1", "t1p2"],
        "C1": ["t1p5", "t1p6", "t1p7", "t1p8"],
        "C2": ["t1p3", "t1p4", "t1p9"],
    }
    assert after[3] == after[2]  # phase 4 has nothing left to hand out
    result = sticky.assign(problem, variant="kafka-9987")
    assert result.info == {"algorithm": "kafka-9987"}
    assert named(problem, result.answer) == after[3]


def test_kafka_9987_fills_round_robin_where_kafka_12464_fills_in_blocks():
    """Tests phase 2 of both: B and C join A (t0-t4); 9987 deals t3-t6 in turns, 12464 gives B t3, t4 then C t5, t6."""
    problem = load_problem(
        {
            "topics": {"t": 7},
            "members": [
                {"id": "A", "topics": ["t"], "owned": {"t": [0, 1, 2, 3, 4]}, "generation": 1},
                {"id": "B", "topics": ["t"]},
                {"id": "C", "topics": ["t"]},
            ],
        }
    )
    assert sticky.assign(problem, variant="kafka-9987").assignment == {
        "A": {"t": [0, 1, 2]},
        "B": {"t": [3, 5]},
        "C": {"t": [4, 6]},
    }
    assert sticky.assign(problem, variant="kafka-12464").assignment == {
        "A": {"t": [0, 1, 2]},
        "B": {"t": [3, 4]},
        "C": {"t": [5, 6]},
    }
    assert sticky.assign(problem).assignment == {
        "A": {"t": [0, 1, 2]},
        "B": {"t": [3, 5]},
        "C": {"t": [4, 6]},
    }


def test_kafka_9987_phase_four_hands_leftovers_to_the_min_capacity_queue():
    """Tests phase 4: A and B sit at C_f = 2 (queued first), C fills to 2 in phase 2, so t6 goes to A."""
    problem = load_problem(
        {
            "topics": {"t": 7},
            "members": [
                {"id": "A", "topics": ["t"], "owned": {"t": [0, 1]}, "generation": 1},
                {"id": "B", "topics": ["t"], "owned": {"t": [2, 3]}, "generation": 1},
                {"id": "C", "topics": ["t"], "owned": {"t": [4]}, "generation": 1},
            ],
        }
    )
    phases: list[np.ndarray] = []
    sticky._four_phase(problem, previous_owners(problem), phases)
    assert (
        phases[1][5] == 2 and phases[2][6] == -1
    )  # C took t5 in phase 2, nothing stolen in phase 3
    assert named(problem, phases[3]) == {
        "A": ["tp0", "tp1", "tp6"],
        "B": ["tp2", "tp3"],
        "C": ["tp4", "tp5"],
    }


def test_kafka_12464_worked_example_two_phases():
    """Tests the seed's example with the two-phase algorithm: C0 keeps C_c = 4, C1 keeps C_f = 3, C2 fills to 3."""
    problem = load_problem(EXAMPLES / "kafka-12464-c2-joins.json")
    phases: list[np.ndarray] = []
    sticky._constrained(problem, previous_owners(problem), phases)
    after = [named(problem, owner) for owner in phases]
    assert after[0] == {
        "C0": ["t1p0", "t1p1", "t1p2", "t1p3"],
        "C1": ["t1p5", "t1p6", "t1p7"],
        "C2": [],
    }
    assert after[1] == {
        "C0": ["t1p0", "t1p1", "t1p2", "t1p3"],
        "C1": ["t1p5", "t1p6", "t1p7"],
        "C2": ["t1p4", "t1p8", "t1p9"],
    }
    result = sticky.assign(problem, variant="kafka-12464")
    assert result.info == {"algorithm": "kafka-12464"}
    assert named(problem, result.answer) == after[1]
    assert result.objective == [16 + 9 + 9, 3]


def test_one_member_leaves_a_balanced_group_fills_a_member_at_c_f():
    """Tests the gap in the seed's pseudo-code: every survivor keeps C_f = 2, so Kafka's exactly-C_f list takes t0p6."""
    problem = load_problem(EXAMPLES / "kafka-12464-one-member-leaves.json")
    phases: list[np.ndarray] = []
    sticky._constrained(problem, previous_owners(problem), phases)
    # The seed's two phases alone leave t0p6 unassigned: nobody is below C_f.
    assert phases[0][6] == -1
    result = sticky.assign(problem, variant="kafka-12464")
    assert result.assignment == {"A": {"t0": [0, 1, 6]}, "B": {"t0": [2, 3]}, "C": {"t0": [4, 5]}}
    assert result.objective == [9 + 4 + 4, 0]


def test_only_c_r_members_keep_c_c():
    """Tests phase 1's quota: of A and B (3 owned each, C_c = 3, C_r = 1) only A, first by id, keeps 3."""
    problem = load_problem(
        {
            "topics": {"t": 7},
            "members": [
                {"id": "B", "topics": ["t"], "owned": {"t": [3, 4, 5]}, "generation": 1},
                {"id": "A", "topics": ["t"], "owned": {"t": [0, 1, 2]}, "generation": 1},
                {"id": "C", "topics": ["t"], "owned": {"t": [6]}, "generation": 1},
            ],
        }
    )
    result = sticky.assign(problem, variant="kafka-12464")
    assert result.assignment == {"B": {"t": [3, 4]}, "A": {"t": [0, 1, 2]}, "C": {"t": [5, 6]}}
    assert result.objective == [9 + 4 + 4, 1]


def test_kip54_three_consumers_fresh_follows_the_seed_partition_order():
    """Tests a fresh group of three on t0-t3 (2 each): blocks of the order t0p0, t1p0, t2p0, t3p0, t0p1, ..."""
    result = sticky.assign(
        load_problem(EXAMPLES / "kip-54-three-consumers.json"), variant="kafka-12464"
    )
    assert result.assignment == {
        "C0": {"t0": [0], "t1": [0], "t2": [0]},
        "C1": {"t0": [1], "t1": [1], "t3": [0]},
        "C2": {"t2": [1], "t3": [1]},
    }


# ------------------------------------- Kafka's own StickyAssignorTest expectations
def _kafka_test_group(partitions: int, owned: dict[str, list[int]]) -> dict:
    return {
        "topics": {"topic": partitions},
        "members": [
            {"id": c, "topics": ["topic"], "owned": {"topic": owned.get(c, [])}, "generation": 1}
            for c in ("consumer1", "consumer2", "consumer3")
        ],
    }


@pytest.mark.parametrize(("partitions", "consumer1"), [(3, [1]), (4, [1, 3])])
def test_kafka_partition_claimed_twice_in_one_generation_is_invalidated(partitions, consumer1):
    """Tests StickyAssignorTest.testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumers...:
    consumer1 and consumer2 both claim topic-0 at the same generation, so consumer3 gets it."""
    problem = load_problem(
        _kafka_test_group(partitions, {"consumer1": [0, 1], "consumer2": [0, 2]})
    )
    assert sticky.assign(problem).assignment == {
        "consumer1": {"topic": consumer1},
        "consumer2": {"topic": [2]},
        "consumer3": {"topic": [0]},
    }


@pytest.mark.parametrize("equal", [True, False])
def test_kafka_conflicting_previous_generations(equal):
    """Tests StickyAssignorTest.testAssignmentWithConflictingPreviousGenerations: 4 each, and consumer2 and
    consumer3 (generation 2) keep only partitions they owned."""
    every = ["topic", "topic2", "topic3"]
    c1 = {"topic": [0, 1, 2], "topic2": [2, 3], "topic3": [0]} if equal else {"topic": [0, 1, 2, 3]}
    c2 = {"topic": [0, 1], "topic2": [0, 1, 2, 3]}
    c3 = {"topic": [2, 3], "topic3": [0, 1, 2, 3]}
    problem = load_problem(
        {
            "topics": {t: 4 for t in every},
            "members": [
                {
                    "id": "consumer1",
                    "topics": every if equal else ["topic"],
                    "owned": c1,
                    "generation": 1,
                },
                {
                    "id": "consumer2",
                    "topics": every if equal else ["topic", "topic2"],
                    "owned": c2,
                    "generation": 2,
                },
                {"id": "consumer3", "topics": every, "owned": c3, "generation": 2},
            ],
        }
    )
    got = sticky.assign(problem).assignment
    assert [sum(map(len, got[c].values())) for c in got] == [4, 4, 4]
    for member, before in (("consumer2", c2), ("consumer3", c3)):
        assert all(set(indices) <= set(before.get(t, [])) for t, indices in got[member].items())


# ---------------------------------------------------- the general algorithm
KIP54_UNEQUAL = {
    "topics": {"t0": 1, "t1": 2, "t2": 3},
    "members": [
        {"id": "C0", "topics": ["t0"]},
        {"id": "C1", "topics": ["t0", "t1"]},
        {"id": "C2", "topics": ["t0", "t1", "t2"]},
    ],
}


def test_general_kip54_unequal_subscriptions():
    """Tests KIP-54's unequal example: C0 t0p0, C1 t1p0 t1p1, C2 t2p0-t2p2 (topics with fewest subscribers first)."""
    result = sticky.assign(load_problem(KIP54_UNEQUAL))
    assert result.info == {"algorithm": "kafka-general"}
    assert result.assignment == {"C0": {"t0": [0]}, "C1": {"t1": [0, 1]}, "C2": {"t2": [0, 1, 2]}}


def test_general_kip54_after_c0_leaves_keeps_everything():
    """Tests KIP-54's follow-up: C0 leaves; C1 takes t0p0 and nothing else moves."""
    doc = {
        "topics": KIP54_UNEQUAL["topics"],
        "members": [
            {"id": "C1", "topics": ["t0", "t1"], "owned": {"t1": [0, 1]}, "generation": 1},
            {"id": "C2", "topics": ["t0", "t1", "t2"], "owned": {"t2": [0, 1, 2]}, "generation": 1},
        ],
    }
    result = sticky.assign(load_problem(doc))
    assert result.assignment == {"C1": {"t0": [0], "t1": [0, 1]}, "C2": {"t2": [0, 1, 2]}}
    assert result.objective == [18, 0]


def test_general_returns_partitions_to_their_earlier_owner_first():
    """Tests that balancing hands A's surplus back to B, its owner of an older generation, before anyone else."""
    members = [
        {"id": "A", "topics": ["t"], "owned": {"t": [0, 1, 2, 3, 4, 5]}, "generation": 2},
        {"id": "B", "topics": ["t"], "owned": {"t": [0, 1]}, "generation": 1},
        {"id": "X", "topics": ["t", "u"]},
    ]
    result = sticky.assign(load_problem({"topics": {"t": 6, "u": 0}, "members": members}))
    assert result.assignment == {"A": {"t": [4, 5]}, "B": {"t": [0, 1]}, "X": {"t": [2, 3]}}
    # Without B's old claim the least-loaded rule alternates B, X.
    members[1] = {"id": "B", "topics": ["t"]}
    result = sticky.assign(load_problem({"topics": {"t": 6, "u": 0}, "members": members}))
    assert result.assignment == {"A": {"t": [4, 5]}, "B": {"t": [0, 2]}, "X": {"t": [1, 3]}}


# ------------------------------------------------------------- KIP-341
@pytest.mark.parametrize("variant", [None, "kafka-9987"])
def test_kip341_highest_generation_wins_and_ties_keep_nothing(variant):
    """Tests KIP-341: A (generation 5) beats a stale B (3) on t0; A and C tie on t2 so neither keeps it."""
    problem = load_problem(
        {
            "topics": {"t": 3},
            "members": [
                {"id": "A", "topics": ["t"], "owned": {"t": [0, 2]}, "generation": 5},
                {"id": "B", "topics": ["t"], "owned": {"t": [0, 1]}, "generation": 3},
                {"id": "C", "topics": ["t"], "owned": {"t": [2]}, "generation": 5},
            ],
        }
    )
    assert previous_owners(problem).tolist() == [0, 1, -1]
    result = sticky.assign(problem, variant=variant)
    assert result.objective == [3, 0]
    assert result.answer[0] == 0 and result.answer[1] == 1


def test_kip341_no_generation_counts_as_minus_one_and_unsubscribed_claims_drop():
    """Tests that a member without a generation loses to generation 0 and a claim on an unsubscribed topic is void."""
    problem = load_problem(
        {
            "topics": {"t": 2, "u": 2},
            "members": [
                {"id": "A", "topics": ["t"], "owned": {"t": [0, 1]}},
                {"id": "B", "topics": ["t"], "owned": {"t": [0], "u": [0, 1]}, "generation": 0},
                {"id": "C", "topics": ["u"]},
            ],
        }
    )
    assert previous_owners(problem).tolist() == [1, 0, -1, -1]
    result = sticky.assign(problem)
    assert result.assignment == {"A": {"t": [1]}, "B": {"t": [0]}, "C": {"u": [0, 1]}}


def test_unknown_variant_is_refused():
    """Tests that a misspelt variant raises instead of silently running the default."""
    with pytest.raises(ValueError, match="kafka-9987"):
        sticky.assign(load_problem(KIP54_UNEQUAL), variant="kafka-99")


# ----------------------------------------------------------- properties
@given(groups(max_members=7, max_partitions=9), st.sampled_from([None, "kafka-9987"]))
def test_valid_and_kip54_balanced(problem, variant):
    """Tests that every answer is valid and meets KIP-54's balance condition (random groups, both variants)."""
    result = sticky.assign(problem, variant=variant)
    assert result.valid, result.evaluation.violations
    assert is_kip54_balanced(problem, result.answer)


@given(rebalances())
def test_valid_and_balanced_through_joins_leaves_and_deleted_topics(problem):
    """Tests validity and KIP-54 balance when members join, leave, change subscriptions and topics disappear."""
    for variant in (None, "kafka-9987"):
        result = sticky.assign(problem, variant=variant)
        assert result.valid, result.evaluation.violations
        assert is_kip54_balanced(problem, result.answer)


@given(equal_groups())
def test_kafka_12464_reaches_the_flow_optimum_with_equal_subscriptions(problem):
    """Tests that with equal subscriptions KAFKA-12464 is optimal on both levels and KAFKA-9987 is never better."""
    best = tuple(flow.solve(problem, SolveOptions()).objective)
    assert tuple(sticky.assign(problem, variant="kafka-12464").objective) == best
    assert tuple(sticky.assign(problem, variant="kafka-9987").objective) >= best


@given(groups(max_members=6, max_partitions=8))
def test_deterministic(problem):
    """Tests that the same problem gives the same answer."""
    assert np.array_equal(sticky.assign(problem).answer, sticky.assign(problem).answer)


@settings(max_examples=15)
@given(equal_groups(max_members=5, max_partitions=6))
def test_equal_or_better_than_kafka_python(problem):
    """Tests that with equal subscriptions the answer is never worse than kafka-python's StickyPartitionAssignor."""
    peer = evaluate(problem, PeerStickyGroup().assign(problem), "sticky")
    assert peer.valid
    assert tuple(sticky.assign(problem).objective) <= peer.objective
