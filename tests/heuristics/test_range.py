"""Tests of heuristics.range, Kafka's RangeAssignor."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import heuristics.range as range_assignor
from peers.kafka_python import peer_assignment
from problems import load_problem
from support.problem_strategies import group_documents, groups

EXAMPLES = Path(__file__).parents[2] / "examples" / "group"


def test_kip315_range_table():
    """Tests that range gives KIP-315's valid table: A 0-2, B 3-5, C 6-7, D 8-9 on both topics."""
    result = range_assignor.assign(load_problem(EXAMPLES / "kip-315-four-consumers.json"))
    expected = {"A": [0, 1, 2], "B": [3, 4, 5], "C": [6, 7], "D": [8, 9]}
    assert result.assignment == {m: {"impressions": p, "clicks": p} for m, p in expected.items()}
    assert result.status == "heuristic" and result.valid


def test_kip315_range_after_d_leaves_moves_three_and_six():
    """Tests KIP-315's table after D leaves: A 0-3, B 4-6, C 7-9 (partitions 3 and 6 move)."""
    result = range_assignor.assign(load_problem(EXAMPLES / "kip-315-d-leaves.json"))
    expected = {"A": [0, 1, 2, 3], "B": [4, 5, 6], "C": [7, 8, 9]}
    assert result.assignment == {m: {"impressions": p, "clicks": p} for m, p in expected.items()}
    # Sticky objective: 4 moves (3 and 6, on each of the two topics).
    assert result.objective == [8 * 8 + 6 * 6 + 6 * 6, 4]


def test_kip169_range_table():
    """Tests KIP-169's example: range gives c_0 t0p0, t0p1 (160,000) and c_1 t0p2 (50,000)."""
    result = range_assignor.assign(load_problem(EXAMPLES / "kip-169-three-lags.json"))
    assert result.assignment == {"c_0": {"t0": [0, 1]}, "c_1": {"t0": [2]}}


def test_kafka12464_example_is_not_sticky():
    """Tests that range ignores the previous assignment in KAFKA-12464's example (C2 joins)."""
    result = range_assignor.assign(load_problem(EXAMPLES / "kafka-12464-c2-joins.json"))
    assert result.assignment == {
        "C0": {"t1": [0, 1, 2, 3]},
        "C1": {"t1": [4, 5, 6]},
        "C2": {"t1": [7, 8, 9]},
    }
    assert result.objective == [
        16 + 9 + 9,
        4,
    ]  # t1p4 leaves C0; t1p5, p6 stay with C1; t1p7-9 leave C1


def test_java_string_order_of_member_ids():
    """Tests that member ids are compared as Java compares them (UTF-16 code units), not by code point."""
    problem = load_problem(
        {
            "topics": {"t": 2},
            "members": [{"id": "\uffff", "topics": ["t"]}, {"id": "\U0001f600", "topics": ["t"]}],
        }
    )
    # Python orders U+FFFF first; Java sees the surrogate 0xD83D < 0xFFFF and orders the emoji
    # first.
    assert range_assignor.assign(problem).assignment == {
        "\uffff": {"t": [1]},
        "\U0001f600": {"t": [0]},
    }


@given(groups())
def test_output_is_valid(problem):
    """Tests that every output on a random valid group is a valid assignment."""
    assert range_assignor.assign(problem).valid


@given(group_documents(), st.randoms(use_true_random=False))
def test_member_order_in_the_input_does_not_matter(doc, random):
    """Tests that shuffling the members in the document leaves the assignment unchanged."""
    shuffled = dict(doc, members=random.sample(doc["members"], len(doc["members"])))
    assert (
        range_assignor.assign(load_problem(doc)).assignment
        == range_assignor.assign(load_problem(shuffled)).assignment
    )


@given(group_documents())
def test_equals_kafka_python_peer(doc):
    """Tests that the output equals kafka-python's RangePartitionAssignor on dynamic members."""
    for member in doc["members"]:
        member.pop("instance_id", None)
    problem = load_problem(json.loads(json.dumps(doc)))
    assert range_assignor.assign(problem).assignment == peer_assignment(problem, "range")
