"""Tests of heuristics.roundrobin, Kafka's RoundRobinAssignor."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import heuristics.roundrobin as roundrobin_assignor
from peers.kafka_python import peer_assignment
from problems import load_problem
from support.problem_strategies import group_documents, groups

EXAMPLES = Path(__file__).parents[2] / "examples" / "group"


def test_kip54_three_consumers_four_topics():
    """Tests KIP-54's first example: C0 t0p0 t1p1 t3p0, C1 t0p1 t2p0 t3p1, C2 t1p0 t2p1."""
    result = roundrobin_assignor.assign(load_problem(EXAMPLES / "kip-54-three-consumers.json"))
    assert result.assignment == {
        "C0": {"t0": [0], "t1": [1], "t3": [0]},
        "C1": {"t0": [1], "t2": [0], "t3": [1]},
        "C2": {"t1": [0], "t2": [1]},
    }


def test_kip54_round_robin_table():
    """Tests KIP-54's round-robin table for three consumers on t0, t1 (two partitions each)."""
    problem = load_problem(
        {
            "topics": {"t0": 2, "t1": 2},
            "members": [{"id": c, "topics": ["t0", "t1"]} for c in ("C0", "C1", "C2")],
        }
    )
    assert roundrobin_assignor.assign(problem).assignment == {
        "C0": {"t0": [0], "t1": [1]},
        "C1": {"t0": [1]},
        "C2": {"t1": [0]},
    }


def test_kip169_round_robin_table():
    """Tests KIP-169's example: round robin gives c_0 t0p0, t0p2 and c_1 t0p1 (as listed for range)."""
    result = roundrobin_assignor.assign(load_problem(EXAMPLES / "kip-169-three-lags.json"))
    # KIP-169 lists one table for both assignors; round robin's is c_0 p0, p2 (150,000), c_1 p1.
    assert result.assignment == {"c_0": {"t0": [0, 2]}, "c_1": {"t0": [1]}}


def test_kip315_round_robin_is_not_co_partitioned():
    """Tests that round robin over KIP-315's join topics splits partition numbers across consumers."""
    problem = load_problem(EXAMPLES / "kip-315-four-consumers.json")
    result = roundrobin_assignor.assign(problem)
    assert result.valid  # a valid consumer-group assignment ...
    from problems import evaluate

    assert not evaluate(problem, result.answer, "stream-join").valid  # ... but not a stream join


def test_circle_carries_over_between_topics_and_skips_non_subscribers():
    """Tests the hand-dealt case: static c2 first, then c0, c1; c2 skipped on t0; the circle carries over."""
    problem = load_problem(
        {
            "topics": {"t0": 3, "t1": 3},
            "members": [
                {"id": "c1", "topics": ["t0", "t1"]},
                {"id": "c0", "topics": ["t0", "t1"]},
                {"id": "c2", "topics": ["t1"], "instance_id": "z"},
            ],
        }
    )
    # Circle: c2, c0, c1.  t0-0 c0, t0-1 c1, (skip c2) t0-2 c0; t1-0 c1, t1-1 c2, t1-2 c0.
    assert roundrobin_assignor.assign(problem).assignment == {
        "c1": {"t0": [1], "t1": [0]},
        "c0": {"t0": [0, 2], "t1": [2]},
        "c2": {"t1": [1]},
    }


def test_topics_are_dealt_in_name_order_not_input_order():
    """Tests that topics are visited by name (Java order), whatever their order in the document."""
    problem = load_problem(
        {
            "topics": {"b": 1, "a": 1},
            "members": [{"id": "x", "topics": ["a", "b"]}, {"id": "y", "topics": ["a", "b"]}],
        }
    )
    assert roundrobin_assignor.assign(problem).assignment == {"x": {"a": [0]}, "y": {"b": [0]}}


def _dealt_one_by_one(problem):
    """Kafka's member-by-member loop, written plainly, as the reference for the vectorised version."""
    import numpy as np

    from heuristics.kafka_orders import member_rank, topics_in_name_order

    circle = list(np.argsort(member_rank(problem)))
    owner = [-1] * problem.num_partitions
    at = 0
    for t in topics_in_name_order(problem):
        if not problem.subscribes[:, t].any():
            continue
        for g in range(problem.topic_start[t], problem.topic_start[t + 1]):
            while not problem.subscribes[circle[at % len(circle)], t]:
                at += 1
            owner[g] = int(circle[at % len(circle)])
            at += 1
    return owner


@given(groups())
def test_vectorised_dealing_equals_the_plain_loop(problem):
    """Tests that the per-topic vectorised dealing equals Kafka's one-partition-at-a-time loop."""
    result = roundrobin_assignor.assign(problem)
    assert result.answer.tolist() == _dealt_one_by_one(problem)
    assert result.valid


@given(group_documents(), st.randoms(use_true_random=False))
def test_member_order_in_the_input_does_not_matter(doc, random):
    """Tests that shuffling the members in the document leaves the assignment unchanged."""
    shuffled = dict(doc, members=random.sample(doc["members"], len(doc["members"])))
    assert (
        roundrobin_assignor.assign(load_problem(doc)).assignment
        == roundrobin_assignor.assign(load_problem(shuffled)).assignment
    )


@given(group_documents())
def test_equals_kafka_python_peer_on_equal_subscriptions(doc):
    """Tests equality with kafka-python's RoundRobinPartitionAssignor where every member subscribes every topic."""
    topics = list(doc["topics"])
    for member in doc["members"]:
        member.pop("instance_id", None)
        member["topics"] = topics
    problem = load_problem(doc)
    assert roundrobin_assignor.assign(problem).assignment == peer_assignment(problem, "roundrobin")
