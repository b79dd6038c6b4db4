"""The rack-aware cases of Kafka's client ``RangeAssignorTest`` (Kafka 4.x), ported as pinned tests.

Each ``verifyRackAssignment(assignor, topics, replicationFactor, brokerRacks, consumerRacks,
consumerTopics, expected, mismatches)`` line is one case; ``mismatches`` (when >= 0) is checked
against the evaluator's level 2 of ``rack-aware``.  The lines that first call
``preferRackAwareLogic(assignor, true)`` (a test-only switch of Kafka's that forces the rack path
even when every partition has replicas on every rack) are left out: no document reaches it.
"""

from __future__ import annotations

import numpy as np
import pytest

import heuristics.range as range_assignor
from problems import load_problem
from support.rack_builders import ALL_RACKS, kafka_rack_group, null_racks, racks, sorted_strings

ALL3 = ["t1", "t2", "t3"]


def _check(
    topics, replication, broker_racks, consumer_racks, consumer_topics, expected, mismatches
):
    problem = load_problem(
        kafka_rack_group(topics, replication, broker_racks, consumer_racks, consumer_topics)
    )
    result = range_assignor.assign(problem)
    assert sorted_strings(result.assignment) == expected
    if mismatches >= 0:
        assert int(problem.rack_mismatches(result.answer).sum()) == mismatches
        assert result.objective[1] == mismatches


def _non_rack_aware(topics, consumer_topics, expected):
    """``verifyNonRackAwareAssignment`` (without its ``preferRackAwareLogic`` line)."""
    _check(topics, 3, null_racks(3), racks(3), consumer_topics, expected, -1)
    _check(topics, 3, racks(3), null_racks(3), consumer_topics, expected, -1)
    _check(topics, 3, racks(3), racks(3), consumer_topics, expected, 0)
    _check(topics, 4, racks(4), racks(3), consumer_topics, expected, 0)
    _check(topics, 3, racks(3), ["d", "e", "f"], consumer_topics, expected, -1)
    _check(topics, 3, racks(3), [None, "e", "f"], consumer_topics, expected, -1)


def test_rack_aware_static_member_assignment_persists_after_member_id_changes():
    """Tests testRackAwareStaticMemberRangeAssignmentPersistentAfterMemberIdChanges (RF 2 on 3 racks)."""
    doc = kafka_rack_group(
        {"topic1": 5, "topic2": 5},
        2,
        racks(3) * 2,
        racks(3),
        [["topic1", "topic2"]] * 3,
        cumulative=False,
    )
    for member, instance in zip(doc["members"], ["instance1", "instance2", "instance3"]):
        member["instance_id"] = instance
    expected = [
        "topic1-0, topic1-2, topic2-0, topic2-2",
        "topic1-1, topic1-3, topic2-1, topic2-3",
        "topic1-4, topic2-4",
    ]
    assert sorted_strings(range_assignor.assign(load_problem(doc)).assignment) == expected
    doc["members"][1]["id"], doc["members"][2]["id"] = "consumer5", "consumer4"
    assert sorted_strings(range_assignor.assign(load_problem(doc)).assignment) == expected


def test_rack_aware_assignment_with_uniform_subscription():
    """Tests testRackAwareAssignmentWithUniformSubscription."""
    topics, consumer_topics = {"t1": 6, "t2": 7, "t3": 2}, [ALL3] * 3
    _non_rack_aware(
        topics,
        consumer_topics,
        [
            "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0",
            "t1-2, t1-3, t2-3, t2-4, t3-1",
            "t1-4, t1-5, t2-5, t2-6",
        ],
    )
    _check(
        topics,
        1,
        racks(3),
        racks(3),
        consumer_topics,
        [
            "t1-0, t1-3, t2-0, t2-3, t2-6",
            "t1-1, t1-4, t2-1, t2-4, t3-0",
            "t1-2, t1-5, t2-2, t2-5, t3-1",
        ],
        0,
    )
    _check(
        topics,
        2,
        racks(3),
        racks(3),
        consumer_topics,
        [
            "t1-0, t1-2, t2-0, t2-2, t2-3, t3-1",
            "t1-1, t1-3, t2-1, t2-4, t3-0",
            "t1-4, t1-5, t2-5, t2-6",
        ],
        1,
    )
    _check(
        topics,
        3,
        racks(2),
        racks(3),
        consumer_topics,
        [
            "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0",
            "t1-2, t1-3, t2-3, t2-4, t3-1",
            "t1-4, t1-5, t2-5, t2-6",
        ],
        4,
    )


def test_rack_aware_assignment_with_non_equal_subscription():
    """Tests testRackAwareAssignmentWithNonEqualSubscription."""
    topics, consumer_topics = {"t1": 6, "t2": 7, "t3": 2}, [ALL3, ALL3, ["t1", "t3"]]
    _non_rack_aware(
        topics,
        consumer_topics,
        [
            "t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0",
            "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1",
            "t1-4, t1-5",
        ],
    )
    _check(
        topics,
        1,
        racks(3),
        racks(3),
        consumer_topics,
        [
            "t1-0, t1-3, t2-0, t2-2, t2-3, t2-6",
            "t1-1, t1-4, t2-1, t2-4, t2-5, t3-0",
            "t1-2, t1-5, t3-1",
        ],
        2,
    )
    _check(
        topics,
        2,
        racks(3),
        racks(3),
        consumer_topics,
        [
            "t1-0, t1-2, t2-0, t2-2, t2-3, t2-5, t3-1",
            "t1-1, t1-3, t2-1, t2-4, t2-6, t3-0",
            "t1-4, t1-5",
        ],
        0,
    )
    _check(
        topics,
        3,
        racks(2),
        racks(3),
        consumer_topics,
        [
            "t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0",
            "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1",
            "t1-4, t1-5",
        ],
        2,
    )


def test_rack_aware_assignment_with_uniform_partitions():
    """Tests testRackAwareAssignmentWithUniformPartitions: co-partitioning before rack alignment."""
    topics, consumer_topics = {"t1": 5, "t2": 5, "t3": 5}, [ALL3] * 3
    plain = [
        "t1-0, t1-1, t2-0, t2-1, t3-0, t3-1",
        "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3",
        "t1-4, t2-4, t3-4",
    ]
    _non_rack_aware(topics, consumer_topics, plain)
    _check(topics, 1, racks(3), racks(3), consumer_topics, plain, 10)
    _check(topics, 2, racks(3), racks(3), consumer_topics, plain, 5)
    _check(topics, 3, racks(2), racks(3), consumer_topics, plain, 3)


def test_rack_aware_assignment_with_uniform_partitions_non_equal_subscription():
    """Tests testRackAwareAssignmentWithUniformPartitionsNonEqualSubscription."""
    topics, consumer_topics = {"t1": 5, "t2": 5, "t3": 5}, [ALL3, ALL3, ["t1", "t3"]]
    _non_rack_aware(
        topics,
        consumer_topics,
        [
            "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1",
            "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3",
            "t1-4, t3-4",
        ],
    )
    _check(
        topics,
        1,
        racks(3),
        racks(3),
        consumer_topics,
        [
            "t1-0, t1-1, t2-0, t2-1, t2-4, t3-0, t3-1",
            "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3",
            "t1-4, t3-4",
        ],
        9,
    )
    _check(
        topics,
        2,
        racks(3),
        racks(3),
        consumer_topics,
        [
            "t1-2, t2-0, t2-1, t2-3, t3-2",
            "t1-0, t1-3, t2-2, t2-4, t3-0, t3-3",
            "t1-1, t1-4, t3-1, t3-4",
        ],
        0,
    )
    _check(
        topics,
        3,
        racks(2),
        racks(3),
        consumer_topics,
        [
            "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1",
            "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3",
            "t1-4, t3-4",
        ],
        2,
    )


def test_rack_aware_assignment_with_co_partitioning():
    """Tests testRackAwareAssignmentWithCoPartitioning (two subscription groups, then one)."""
    topics = {"t1": 6, "t2": 6, "t3": 2, "t4": 2}
    consumer_racks = [ALL_RACKS[0], ALL_RACKS[1], ALL_RACKS[1], ALL_RACKS[0]]
    consumer_topics = [["t1", "t2"], ["t1", "t2"], ["t3", "t4"], ["t3", "t4"]]
    plain = [
        "t1-0, t1-1, t1-2, t2-0, t2-1, t2-2",
        "t1-3, t1-4, t1-5, t2-3, t2-4, t2-5",
        "t3-0, t4-0",
        "t3-1, t4-1",
    ]
    _check(topics, 3, racks(2), consumer_racks, consumer_topics, plain, -1)
    _check(topics, 2, racks(2), consumer_racks, consumer_topics, plain, 0)
    _check(
        topics,
        1,
        racks(2),
        consumer_racks,
        consumer_topics,
        [
            "t1-0, t1-2, t1-4, t2-0, t2-2, t2-4",
            "t1-1, t1-3, t1-5, t2-1, t2-3, t2-5",
            "t3-1, t4-1",
            "t3-0, t4-0",
        ],
        0,
    )
    consumer_topics = [list(topics)] * 4
    plain = [
        "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0",
        "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1",
        "t1-4, t2-4",
        "t1-5, t2-5",
    ]
    _check(topics, 3, racks(2), consumer_racks, consumer_topics, plain, -1)
    _check(topics, 2, racks(2), consumer_racks, consumer_topics, plain, 0)
    _check(
        topics,
        1,
        racks(2),
        consumer_racks,
        consumer_topics,
        [
            "t1-0, t1-2, t2-0, t2-2, t3-0, t4-0",
            "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1",
            "t1-5, t2-5",
            "t1-4, t2-4",
        ],
        0,
    )
    _check(
        topics,
        1,
        racks(3),
        consumer_racks,
        consumer_topics,
        [
            "t1-0, t1-3, t2-0, t2-3, t3-0, t4-0",
            "t1-1, t1-4, t2-1, t2-4, t3-1, t4-1",
            "t1-2, t2-2",
            "t1-5, t2-5",
        ],
        6,
    )


def test_co_partitioned_assignment_with_same_subscription():
    """Tests testCoPartitionedAssignmentWithSameSubscription (its null-rack line; the rest needs
    ``preferRackAwareLogic``)."""
    topics = {"t1": 6, "t2": 6, "t3": 2, "t4": 2, "t5": 4, "t6": 4}
    consumer_topics = [["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"]] * 3
    plain = [
        "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0, t5-0, t5-1, t6-0, t6-1",
        "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1, t5-2, t6-2",
        "t1-4, t1-5, t2-4, t2-5, t5-3, t6-3",
    ]
    _check(topics, 3, null_racks(3), racks(3), consumer_topics, plain, -1)
    _check(topics, 3, racks(3), racks(3), consumer_topics, plain, 0)


@pytest.mark.parametrize("rack", [None, "a"])
def test_without_partition_racks_member_racks_change_nothing(rack):
    """Tests that member racks without partition_racks leave range as without racks (Kafka: no partition racks)."""
    doc = kafka_rack_group({"t1": 5}, 1, racks(3), [rack, "b"], [["t1"], ["t1"]])
    with_racks = load_problem(doc)
    doc.pop("partition_racks")
    plain = load_problem(doc)
    assert np.array_equal(range_assignor.assign(plain).answer, [0, 0, 0, 1, 1])
    assert (
        not np.array_equal(range_assignor.assign(with_racks).answer, [0, 0, 0, 1, 1])
        or rack is None
    )


def test_co_partitioned_topics_of_rackless_subscribers_are_left_to_plain_ranges():
    """Tests Kafka's grouping when racks are on elsewhere: t3, t4 (same rackless subscribers, 2 partitions
    each) form a group keyed by an empty rack map and get plain ranges."""
    doc = kafka_rack_group(
        {"t1": 4, "t3": 2, "t4": 2},
        1,
        racks(2),
        ["a", "b", None, None],
        [["t1"], ["t1"], ["t3", "t4"], ["t3", "t4"]],
    )
    result = range_assignor.assign(load_problem(doc))
    assert sorted_strings(result.assignment) == [
        "t1-0, t1-2",
        "t1-1, t1-3",
        "t3-0, t4-0",
        "t3-1, t4-1",
    ]
