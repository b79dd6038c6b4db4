"""KIP-848's server ``RangeAssignor``: Kafka's own tests (pinned) and co-partitioning.

Equality with Kafka's Java class on random groups is in ``tests/peers/test_server_assignors.py``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings

import heuristics.range as client_range
import heuristics.server_range as server_range
from problems import load_problem
from support.kip848_scenarios import SERVER_RANGE, SERVER_RANGE_STATIC, group
from support.problem_strategies import groups


@pytest.mark.parametrize("name", sorted(SERVER_RANGE))
def test_kafka_range_assignor_scenarios(name):
    """Tests the server RangeAssignorTest's scenarios give Kafka's expected answers."""
    doc, expected = SERVER_RANGE[name]
    assert server_range.assign(load_problem(doc)).assignment == expected


@pytest.mark.parametrize("name", sorted(SERVER_RANGE_STATIC))
def test_kafka_static_members_keep_their_ranges(name):
    """Tests testStaticMembership / testMixedStaticMembership: a static member rejoining under a new
    member id gets the partitions it had."""
    topics, before, after, renamed = SERVER_RANGE_STATIC[name]
    first = server_range.assign(load_problem(group(topics, before, ids=False))).assignment
    second = server_range.assign(load_problem(group(topics, after, ids=False))).assignment
    for member, partitions in first.items():
        assert second[renamed.get(member, member)] == partitions


def test_equal_subscriptions_and_counts_are_co_partitioned():
    """Tests the class javadoc's example: M0 gets partitions 0 and 1 of both topics, M1 partition 2."""
    doc = group(
        {"T1": 3, "T2": 3}, [("M0", ["T1", "T2"], None), ("M1", ["T2", "T1"], None)], ids=False
    )
    assert server_range.assign(load_problem(doc)).assignment == {
        "M0": {"T1": [0, 1], "T2": [0, 1]},
        "M1": {"T1": [2], "T2": [2]},
    }


@settings(max_examples=100)
@given(problem=groups(max_members=7, max_partitions=9))
def test_equals_the_client_range_assignor_without_racks(problem):
    """Tests that the server range assignor cuts each topic as the client one does when racks play no part."""
    assert (server_range.assign(problem).answer == client_range.assign(problem).answer).all()
