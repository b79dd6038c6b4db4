"""Kafka's own assignor unit-test scenarios, replayed against our ports.

Every scenario below (topics, partition counts, member ids, group.instance.ids
and expected assignments) comes from Apache Kafka's test suite or from the
javadoc of the assignor classes, in the apache/kafka repository:

* clients/src/test/java/org/apache/kafka/clients/consumer/RangeAssignorTest.java
  (the KIP-881 version at 1763e549c98ffc6b0d298c0a29dd1223f8d22133, checked
  against the pre-rack version at 5d1767e639f605b3218ed4d869ccd6aba8f90d94)
* clients/src/test/java/org/apache/kafka/clients/consumer/RoundRobinAssignorTest.java
  (static-membership versions at 10c1f976010193030409a3b22f9dd8f415b4831c and
  a later JUnit 5 version; pre-static version at 6c6f5903d409cc5cbf896f71ccce65158d2ca4dc)
*
  clients/src/test/java/org/apache/kafka/clients/consumer/internals/AbstractPartitionAssignorTest.java
  (member ordering: static members by group.instance.id, then dynamic members by member.id)
* the class javadoc of RangeAssignor.java and RoundRobinAssignor.java

Rack-aware scenarios (KIP-881 partition racks) are not ported: our problem
format has no partition racks. From Kafka's rack-aware Range tests we keep only
the assignments that Kafka checks with rack-aware logic not used.

Kafka passes members in a HashMap, so the assignment must not depend on the order
of members in the input. ``assign`` below runs every scenario twice, with the
members in the order given and reversed, and checks that both runs agree.
"""

from __future__ import annotations

import random

import pytest

import heuristics.range as range_assignor
import heuristics.roundrobin as roundrobin_assignor
from problems import load_problem
from support.problem_builders import member

# --------------------------------------------------------------------------- helpers


def parts(*partitions) -> dict[str, list[int]]:
    """Kafka-style partitions ("t1-0" or ("t1", 0)) -> {topic: ascending partition list}."""
    shaped: dict[str, list[int]] = {}
    for p in partitions:
        if isinstance(p, str):
            topic, _, index = p.rpartition("-")
            topic_partition = (topic, int(index))
        else:
            topic_partition = (p[0], int(p[1]))
        shaped.setdefault(topic_partition[0], []).append(topic_partition[1])
    return {topic: sorted(indices) for topic, indices in shaped.items()}


def parse(listing: str) -> dict[str, list[int]]:
    """Kafka's verifyRackAssignment notation "t1-0, t1-1, t2-0" -> our shape."""
    return parts(*[p.strip() for p in listing.split(",") if p.strip()])


def assign(
    assignor, topics: dict[str, int], members: list[dict]
) -> dict[str, dict[str, list[int]]]:
    """Assign with the members in the given order and reversed; both must agree."""
    forward = assignor.assign(
        load_problem({"topics": dict(topics), "members": list(members)})
    ).assignment
    backward = assignor.assign(
        load_problem({"topics": dict(topics), "members": list(reversed(members))})
    ).assignment
    assert forward == backward, "assignment depends on the order of members in the input"
    return forward


def by_instance(assignment: dict, members: list[dict]) -> dict[str, dict[str, list[int]]]:
    """Re-key the assignment of the static members by their group.instance.id."""
    return {m["instance_id"]: assignment[m["id"]] for m in members if "instance_id" in m}


# =================================================================== RangeAssignorTest

TOPIC1, TOPIC2 = "topic1", "topic2"


def test_range_one_consumer_no_topic():
    """Tests that a consumer subscribed to nothing is present with an empty assignment
    (RangeAssignorTest.testOneConsumerNoTopic)."""
    assert assign(range_assignor, {}, [member("consumer1", [])]) == {"consumer1": {}}


def test_range_one_consumer_nonexistent_topic():
    """Tests that subscribing to a topic that does not exist assigns nothing
    (RangeAssignorTest.testOneConsumerNonexistentTopic)."""
    assert assign(range_assignor, {}, [member("consumer1", [TOPIC1])]) == {"consumer1": {}}


def test_range_one_consumer_one_topic():
    """Tests that a lone consumer gets every partition of its topic
    (RangeAssignorTest.testOneConsumerOneTopic)."""
    got = assign(range_assignor, {TOPIC1: 3}, [member("consumer1", [TOPIC1])])
    assert got == {"consumer1": parts("topic1-0", "topic1-1", "topic1-2")}


def test_range_only_assigns_partitions_from_subscribed_topics():
    """Tests that partitions of a topic nobody subscribes to stay unassigned
    (RangeAssignorTest.testOnlyAssignsPartitionsFromSubscribedTopics)."""
    got = assign(range_assignor, {TOPIC1: 3, "other": 3}, [member("consumer1", [TOPIC1])])
    assert got == {"consumer1": parts("topic1-0", "topic1-1", "topic1-2")}


def test_range_one_consumer_multiple_topics():
    """Tests that a lone consumer gets every partition of all its topics
    (RangeAssignorTest.testOneConsumerMultipleTopics)."""
    got = assign(range_assignor, {TOPIC1: 1, TOPIC2: 2}, [member("consumer1", [TOPIC1, TOPIC2])])
    assert got == {"consumer1": parts("topic1-0", "topic2-0", "topic2-1")}


def test_range_two_consumers_one_topic_one_partition():
    """Tests that with one partition the first consumer gets it and the second gets nothing
    (RangeAssignorTest.testTwoConsumersOneTopicOnePartition)."""
    got = assign(
        range_assignor, {TOPIC1: 1}, [member("consumer1", [TOPIC1]), member("consumer2", [TOPIC1])]
    )
    assert got == {"consumer1": parts("topic1-0"), "consumer2": {}}


def test_range_two_consumers_one_topic_two_partitions():
    """Tests that two partitions are split one each between two consumers
    (RangeAssignorTest.testTwoConsumersOneTopicTwoPartitions)."""
    got = assign(
        range_assignor, {TOPIC1: 2}, [member("consumer1", [TOPIC1]), member("consumer2", [TOPIC1])]
    )
    assert got == {"consumer1": parts("topic1-0"), "consumer2": parts("topic1-1")}


def test_range_multiple_consumers_mixed_topics():
    """Tests that each topic is ranged over its own subscribers only
    (RangeAssignorTest.testMultipleConsumersMixedTopics)."""
    members = [
        member("consumer1", [TOPIC1]),
        member("consumer2", [TOPIC1, TOPIC2]),
        member("consumer3", [TOPIC1]),
    ]
    got = assign(range_assignor, {TOPIC1: 3, TOPIC2: 2}, members)
    assert got == {
        "consumer1": parts("topic1-0"),
        "consumer2": parts("topic1-1", "topic2-0", "topic2-1"),
        "consumer3": parts("topic1-2"),
    }


def test_range_two_consumers_two_topics_six_partitions():
    """Tests that the first consumer takes the extra partition of every topic
    (RangeAssignorTest.testTwoConsumersTwoTopicsSixPartitions)."""
    members = [member("consumer1", [TOPIC1, TOPIC2]), member("consumer2", [TOPIC1, TOPIC2])]
    got = assign(range_assignor, {TOPIC1: 3, TOPIC2: 3}, members)
    assert got == {
        "consumer1": parts("topic1-0", "topic1-1", "topic2-0", "topic2-1"),
        "consumer2": parts("topic1-2", "topic2-2"),
    }


def test_range_two_static_consumers_two_topics_six_partitions():
    """Tests that static members are ordered by group.instance.id, not by member.id
    (RangeAssignorTest.testTwoStaticConsumersTwoTopicsSixPartitions)."""
    members = [
        member("consumer-b", [TOPIC1, TOPIC2], instance="instance1"),
        member("consumer-a", [TOPIC1, TOPIC2], instance="instance2"),
    ]
    got = assign(range_assignor, {TOPIC1: 3, TOPIC2: 3}, members)
    assert got == {
        "consumer-b": parts("topic1-0", "topic1-1", "topic2-0", "topic2-1"),
        "consumer-a": parts("topic1-2", "topic2-2"),
    }


def test_range_one_static_and_one_dynamic_consumer_two_topics_six_partitions():
    """Tests that a static member sorts before a dynamic one whatever their member.ids
    (RangeAssignorTest.testOneStaticConsumerAndOneDynamicConsumerTwoTopicsSixPartitions)."""
    members = [
        member("consumer-b", [TOPIC1, TOPIC2], instance="instance1"),
        member("consumer-a", [TOPIC1, TOPIC2]),
    ]
    got = assign(range_assignor, {TOPIC1: 3, TOPIC2: 3}, members)
    assert got == {
        "consumer-b": parts("topic1-0", "topic1-1", "topic2-0", "topic2-1"),
        "consumer-a": parts("topic1-2", "topic2-2"),
    }


def test_range_static_member_assignment_persistent():
    """Tests that static members keep their partitions when the dynamic member is replaced
    (RangeAssignorTest.testStaticMemberRangeAssignmentPersistent)."""
    topics = {TOPIC1: 5, TOPIC2: 4}
    static = [member(f"consumer{i}", [TOPIC1, TOPIC2], instance=f"instance{i}") for i in (1, 2, 3)]
    expected_static = {
        "consumer1": parts("topic1-0", "topic1-1", "topic2-0"),
        "consumer2": parts("topic1-2", "topic2-1"),
        "consumer3": parts("topic1-3", "topic2-2"),
    }

    got = assign(range_assignor, topics, static + [member("consumer4", [TOPIC1, TOPIC2])])
    assert got == {**expected_static, "consumer4": parts("topic1-4", "topic2-3")}

    # Replace dynamic member 4 with a new dynamic member 5.
    got = assign(range_assignor, topics, static + [member("consumer5", [TOPIC1, TOPIC2])])
    assert got == {**expected_static, "consumer5": parts("topic1-4", "topic2-3")}


def test_range_static_member_assignment_persistent_after_member_id_changes():
    """Tests that static members keep their partitions when their member.ids change
    (RangeAssignorTest.testStaticMemberRangeAssignmentPersistentAfterMemberIdChanges)."""
    topics = {TOPIC1: 5, TOPIC2: 5}
    expected = {
        "instance1": parts("topic1-0", "topic1-1", "topic2-0", "topic2-1"),
        "instance2": parts("topic1-2", "topic1-3", "topic2-2", "topic2-3"),
        "instance3": parts("topic1-4", "topic2-4"),
    }
    before = [
        member("consumer1", [TOPIC1, TOPIC2], instance="instance1"),
        member("consumer2", [TOPIC1, TOPIC2], instance="instance2"),
        member("consumer3", [TOPIC1, TOPIC2], instance="instance3"),
    ]
    assert by_instance(assign(range_assignor, topics, before), before) == expected

    # consumer3 comes back as consumer4 and consumer2 as consumer5.
    after = [
        member("consumer1", [TOPIC1, TOPIC2], instance="instance1"),
        member("consumer5", [TOPIC1, TOPIC2], instance="instance2"),
        member("consumer4", [TOPIC1, TOPIC2], instance="instance3"),
    ]
    assert by_instance(assign(range_assignor, topics, after), after) == expected


# Non-rack-aware baselines of Kafka's rack-aware Range tests. Kafka checks each of
# these lists with the rack-aware logic not used (in verifyNonRackAwareAssignment
# first with no broker racks at all, in testRackAwareAssignmentWithCoPartitioning
# as the list it names nonRackAwareAssignment), so they are plain range outputs.
# Members are named consumer0, consumer1, ... as in Kafka's verifyRackAssignment.
ALL3 = ["t1", "t2", "t3"]
RANGE_NON_RACK_BASELINES = [
    pytest.param(
        {"t1": 6, "t2": 7, "t3": 2},
        [ALL3, ALL3, ALL3],
        [
            "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0",
            "t1-2, t1-3, t2-3, t2-4, t3-1",
            "t1-4, t1-5, t2-5, t2-6",
        ],
        id="testRackAwareAssignmentWithUniformSubscription",
    ),
    pytest.param(
        {"t1": 6, "t2": 7, "t3": 2},
        [ALL3, ALL3, ["t1", "t3"]],
        [
            "t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0",
            "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1",
            "t1-4, t1-5",
        ],
        id="testRackAwareAssignmentWithNonEqualSubscription",
    ),
    pytest.param(
        {"t1": 5, "t2": 5, "t3": 5},
        [ALL3, ALL3, ALL3],
        [
            "t1-0, t1-1, t2-0, t2-1, t3-0, t3-1",
            "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3",
            "t1-4, t2-4, t3-4",
        ],
        id="testRackAwareAssignmentWithUniformPartitions",
    ),
    pytest.param(
        {"t1": 5, "t2": 5, "t3": 5},
        [ALL3, ALL3, ["t1", "t3"]],
        [
            "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1",
            "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3",
            "t1-4, t3-4",
        ],
        id="testRackAwareAssignmentWithUniformPartitionsNonEqualSubscription",
    ),
    pytest.param(
        {"t1": 6, "t2": 6, "t3": 2, "t4": 2},
        [["t1", "t2"], ["t1", "t2"], ["t3", "t4"], ["t3", "t4"]],
        [
            "t1-0, t1-1, t1-2, t2-0, t2-1, t2-2",
            "t1-3, t1-4, t1-5, t2-3, t2-4, t2-5",
            "t3-0, t4-0",
            "t3-1, t4-1",
        ],
        id="testRackAwareAssignmentWithCoPartitioning-disjointSubscriptions",
    ),
    pytest.param(
        {"t1": 6, "t2": 6, "t3": 2, "t4": 2},
        [["t1", "t2", "t3", "t4"]] * 4,
        [
            "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0",
            "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1",
            "t1-4, t2-4",
            "t1-5, t2-5",
        ],
        id="testRackAwareAssignmentWithCoPartitioning-allTopics",
    ),
    pytest.param(
        # t7, t8 and t9 are subscribed but do not exist.
        {"t1": 6, "t2": 6, "t3": 2, "t4": 2, "t5": 4, "t6": 4},
        [["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"]] * 3,
        [
            "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0, t5-0, t5-1, t6-0, t6-1",
            "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1, t5-2, t6-2",
            "t1-4, t1-5, t2-4, t2-5, t5-3, t6-3",
        ],
        id="testCoPartitionedAssignmentWithSameSubscription",
    ),
]


@pytest.mark.parametrize("topics, subscriptions, expected", RANGE_NON_RACK_BASELINES)
def test_range_non_rack_aware_baselines(topics, subscriptions, expected):
    """Tests that, without racks, range matches the non-rack-aware assignment Kafka expects in
    RangeAssignorTest.testRackAwareAssignmentWithUniformSubscription, ...WithNonEqualSubscription,
    ...WithUniformPartitions, ...WithUniformPartitionsNonEqualSubscription, ...WithCoPartitioning
    and testCoPartitionedAssignmentWithSameSubscription (the parameter id names which)."""
    members = [
        member(f"consumer{i}", list(subscribed)) for i, subscribed in enumerate(subscriptions)
    ]
    got = assign(range_assignor, topics, members)
    assert got == {f"consumer{i}": parse(listing) for i, listing in enumerate(expected)}


# ------------------------------------------------------------ RangeAssignor javadoc


def test_range_javadoc_example():
    """Tests that two consumers over two 3-partition topics get the split shown in the
    RangeAssignor class javadoc (C0: [t0p0, t0p1, t1p0, t1p1], C1: [t0p2, t1p2])."""
    got = assign(
        range_assignor, {"t0": 3, "t1": 3}, [member("C0", ["t0", "t1"]), member("C1", ["t0", "t1"])]
    )
    assert got == {
        "C0": parts("t0-0", "t0-1", "t1-0", "t1-1"),
        "C1": parts("t0-2", "t1-2"),
    }


def test_range_javadoc_rolling_bounce_dynamic_members_shuffle():
    """Tests that, without group.instance.id, new member.ids after a rolling bounce
    (C0 -> C3, C1 -> C2) shuffle the assignment as the RangeAssignor javadoc shows:
    C3 (was C0): [t0p2, t1p2], C2 (was C1): [t0p0, t0p1, t1p0, t1p1]."""
    got = assign(
        range_assignor, {"t0": 3, "t1": 3}, [member("C3", ["t0", "t1"]), member("C2", ["t0", "t1"])]
    )
    assert got == {
        "C3": parts("t0-2", "t1-2"),
        "C2": parts("t0-0", "t0-1", "t1-0", "t1-1"),
    }


def test_range_javadoc_rolling_bounce_static_members_stick():
    """Tests that with group.instance.ids the assignment survives the rolling bounce of
    the RangeAssignor javadoc: always I0: [t0p0, t0p1, t1p0, t1p1], I1: [t0p2, t1p2]."""
    topics = {"t0": 3, "t1": 3}
    expected = {"I0": parts("t0-0", "t0-1", "t1-0", "t1-1"), "I1": parts("t0-2", "t1-2")}
    before = [member("C0", ["t0", "t1"], instance="I0"), member("C1", ["t0", "t1"], instance="I1")]
    after = [member("C3", ["t0", "t1"], instance="I0"), member("C2", ["t0", "t1"], instance="I1")]
    assert by_instance(assign(range_assignor, topics, before), before) == expected
    assert by_instance(assign(range_assignor, topics, after), after) == expected


# ============================================================== RoundRobinAssignorTest

TOPIC = "topic"
CONSUMER = "consumer"


def test_roundrobin_one_consumer_no_topic():
    """Tests that a consumer subscribed to nothing is present with an empty assignment
    (RoundRobinAssignorTest.testOneConsumerNoTopic)."""
    assert assign(roundrobin_assignor, {}, [member(CONSUMER, [])]) == {CONSUMER: {}}


def test_roundrobin_one_consumer_nonexistent_topic():
    """Tests that subscribing to a topic that does not exist assigns nothing
    (RoundRobinAssignorTest.testOneConsumerNonexistentTopic)."""
    assert assign(roundrobin_assignor, {}, [member(CONSUMER, [TOPIC])]) == {CONSUMER: {}}


def test_roundrobin_one_consumer_one_topic():
    """Tests that a lone consumer gets every partition of its topic
    (RoundRobinAssignorTest.testOneConsumerOneTopic)."""
    got = assign(roundrobin_assignor, {TOPIC: 3}, [member(CONSUMER, [TOPIC])])
    assert got == {CONSUMER: parts("topic-0", "topic-1", "topic-2")}


def test_roundrobin_only_assigns_partitions_from_subscribed_topics():
    """Tests that partitions of a topic nobody subscribes to stay unassigned
    (RoundRobinAssignorTest.testOnlyAssignsPartitionsFromSubscribedTopics)."""
    got = assign(roundrobin_assignor, {TOPIC: 3, "other": 3}, [member(CONSUMER, [TOPIC])])
    assert got == {CONSUMER: parts("topic-0", "topic-1", "topic-2")}


def test_roundrobin_one_consumer_multiple_topics():
    """Tests that a lone consumer gets every partition of all its topics
    (RoundRobinAssignorTest.testOneConsumerMultipleTopics)."""
    got = assign(roundrobin_assignor, {TOPIC1: 1, TOPIC2: 2}, [member(CONSUMER, [TOPIC1, TOPIC2])])
    assert got == {CONSUMER: parts("topic1-0", "topic2-0", "topic2-1")}


def test_roundrobin_two_consumers_one_topic_one_partition():
    """Tests that with one partition the first consumer gets it and the second gets nothing
    (RoundRobinAssignorTest.testTwoConsumersOneTopicOnePartition)."""
    got = assign(
        roundrobin_assignor,
        {TOPIC: 1},
        [member("consumer1", [TOPIC]), member("consumer2", [TOPIC])],
    )
    assert got == {"consumer1": parts("topic-0"), "consumer2": {}}


def test_roundrobin_two_consumers_one_topic_two_partitions():
    """Tests that two partitions are dealt one each to two consumers
    (RoundRobinAssignorTest.testTwoConsumersOneTopicTwoPartitions)."""
    got = assign(
        roundrobin_assignor,
        {TOPIC: 2},
        [member("consumer1", [TOPIC]), member("consumer2", [TOPIC])],
    )
    assert got == {"consumer1": parts("topic-0"), "consumer2": parts("topic-1")}


def test_roundrobin_multiple_consumers_mixed_topics():
    """Tests that the dealer skips members not subscribed to a partition's topic
    (RoundRobinAssignorTest.testMultipleConsumersMixedTopics)."""
    members = [
        member("consumer1", [TOPIC1]),
        member("consumer2", [TOPIC1, TOPIC2]),
        member("consumer3", [TOPIC1]),
    ]
    got = assign(roundrobin_assignor, {TOPIC1: 3, TOPIC2: 2}, members)
    assert got == {
        "consumer1": parts("topic1-0"),
        "consumer2": parts("topic1-1", "topic2-0", "topic2-1"),
        "consumer3": parts("topic1-2"),
    }


def test_roundrobin_two_dynamic_consumers_two_topics_six_partitions():
    """Tests that partitions are dealt across topic boundaries, not restarted per topic
    (RoundRobinAssignorTest.testTwoDynamicConsumersTwoTopicsSixPartitions, called
    testTwoConsumersTwoTopicsSixPartitions before static membership)."""
    members = [member("consumer1", [TOPIC1, TOPIC2]), member("consumer2", [TOPIC1, TOPIC2])]
    got = assign(roundrobin_assignor, {TOPIC1: 3, TOPIC2: 3}, members)
    assert got == {
        "consumer1": parts("topic1-0", "topic1-2", "topic2-1"),
        "consumer2": parts("topic1-1", "topic2-0", "topic2-2"),
    }


def test_roundrobin_two_static_consumers_two_topics_six_partitions():
    """Tests that static members are ordered by group.instance.id, not by member.id
    (RoundRobinAssignorTest.testTwoStaticConsumersTwoTopicsSixPartitions)."""
    members = [
        member("consumer-b", [TOPIC1, TOPIC2], instance="instance1"),
        member("consumer-a", [TOPIC1, TOPIC2], instance="instance2"),
    ]
    got = assign(roundrobin_assignor, {TOPIC1: 3, TOPIC2: 3}, members)
    assert got == {
        "consumer-b": parts("topic1-0", "topic1-2", "topic2-1"),
        "consumer-a": parts("topic1-1", "topic2-0", "topic2-2"),
    }


def test_roundrobin_one_static_and_one_dynamic_consumer_two_topics_six_partitions():
    """Tests that a static member sorts before a dynamic one whatever their member.ids
    (RoundRobinAssignorTest.testOneStaticConsumerAndOneDynamicConsumerTwoTopicsSixPartitions)."""
    members = [
        member("consumer-b", [TOPIC1, TOPIC2], instance="instance1"),
        member("consumer-a", [TOPIC1, TOPIC2]),
    ]
    got = assign(roundrobin_assignor, {TOPIC1: 3, TOPIC2: 3}, members)
    assert got == {
        "consumer-b": parts("topic1-0", "topic1-2", "topic2-1"),
        "consumer-a": parts("topic1-1", "topic2-0", "topic2-2"),
    }


def test_roundrobin_static_member_assignment_persistent():
    """Tests that static members keep their partitions when the dynamic member is replaced
    (RoundRobinAssignorTest.testStaticMemberRoundRobinAssignmentPersistent, called
    testStaticMemberAssignmentPersistent in earlier versions)."""
    topics = {TOPIC1: 3, TOPIC2: 3}
    static = [member(f"consumer{i}", [TOPIC1, TOPIC2], instance=f"instance{i}") for i in (1, 2, 3)]
    expected_static = {
        "consumer1": parts("topic1-0", "topic2-1"),
        "consumer2": parts("topic1-1", "topic2-2"),
        "consumer3": parts("topic1-2"),
    }

    got = assign(roundrobin_assignor, topics, static + [member("consumer4", [TOPIC1, TOPIC2])])
    assert got == {**expected_static, "consumer4": parts("topic2-0")}

    # Replace dynamic member 4 with a new dynamic member 5.
    got = assign(roundrobin_assignor, topics, static + [member("consumer5", [TOPIC1, TOPIC2])])
    assert got == {**expected_static, "consumer5": parts("topic2-0")}


def test_roundrobin_static_member_assignment_persistent_after_member_id_changes():
    """Tests that static members keep their partitions when their member.ids change
    (RoundRobinAssignorTest.testStaticMemberRoundRobinAssignmentPersistentAfterMemberIdChanges,
    current version with two 5-partition topics)."""
    topics = {TOPIC1: 5, TOPIC2: 5}
    expected = {
        "instance1": parts("topic1-0", "topic1-3", "topic2-1", "topic2-4"),
        "instance2": parts("topic1-1", "topic1-4", "topic2-2"),
        "instance3": parts("topic1-2", "topic2-0", "topic2-3"),
    }
    before = [
        member("consumer1", [TOPIC1, TOPIC2], instance="instance1"),
        member("consumer2", [TOPIC1, TOPIC2], instance="instance2"),
        member("consumer3", [TOPIC1, TOPIC2], instance="instance3"),
    ]
    assert by_instance(assign(roundrobin_assignor, topics, before), before) == expected

    # consumer3 comes back as consumer4 and consumer2 as consumer5.
    after = [
        member("consumer1", [TOPIC1, TOPIC2], instance="instance1"),
        member("consumer5", [TOPIC1, TOPIC2], instance="instance2"),
        member("consumer4", [TOPIC1, TOPIC2], instance="instance3"),
    ]
    assert by_instance(assign(roundrobin_assignor, topics, after), after) == expected


def test_roundrobin_static_member_assignment_persistent_after_member_ids_rotate():
    """Tests that each static member keeps partition i of both topics when member.ids rotate
    (RoundRobinAssignorTest.testStaticMemberAssignmentPersistentAfterMemberIdChanges,
    earlier version with two 3-partition topics)."""
    topics = {TOPIC1: 3, TOPIC2: 3}
    expected = {f"instance{i + 1}": parts((TOPIC1, i), (TOPIC2, i)) for i in range(3)}
    before = [
        member("consumer1", [TOPIC1, TOPIC2], instance="instance1"),
        member("consumer2", [TOPIC1, TOPIC2], instance="instance2"),
        member("consumer3", [TOPIC1, TOPIC2], instance="instance3"),
    ]
    assert by_instance(assign(roundrobin_assignor, topics, before), before) == expected

    # Kafka's switch: consumer4 -> instance1, consumer5 -> instance2, consumer1 -> instance3.
    after = [
        member("consumer4", [TOPIC1, TOPIC2], instance="instance1"),
        member("consumer5", [TOPIC1, TOPIC2], instance="instance2"),
        member("consumer1", [TOPIC1, TOPIC2], instance="instance3"),
    ]
    assert by_instance(assign(roundrobin_assignor, topics, after), after) == expected


# -------------------------------------------------------- RoundRobinAssignor javadoc


def test_roundrobin_javadoc_identical_subscriptions():
    """Tests that two consumers over two 3-partition topics get the deal shown in the
    RoundRobinAssignor class javadoc (C0: [t0p0, t0p2, t1p1], C1: [t0p1, t1p0, t1p2])."""
    got = assign(
        roundrobin_assignor,
        {"t0": 3, "t1": 3},
        [member("C0", ["t0", "t1"]), member("C1", ["t0", "t1"])],
    )
    assert got == {
        "C0": parts("t0-0", "t0-2", "t1-1"),
        "C1": parts("t0-1", "t1-0", "t1-2"),
    }


def test_roundrobin_javadoc_differing_subscriptions():
    """Tests that differing subscriptions give the imbalanced deal shown in the
    RoundRobinAssignor class javadoc (C0: [t0p0], C1: [t1p0], C2: [t1p1, t2p0, t2p1, t2p2])."""
    members = [member("C0", ["t0"]), member("C1", ["t0", "t1"]), member("C2", ["t0", "t1", "t2"])]
    got = assign(roundrobin_assignor, {"t0": 1, "t1": 2, "t2": 3}, members)
    assert got == {
        "C0": parts("t0-0"),
        "C1": parts("t1-0"),
        "C2": parts("t1-1", "t2-0", "t2-1", "t2-2"),
    }


def test_roundrobin_javadoc_rolling_bounce_dynamic_members_shuffle():
    """Tests the RoundRobinAssignor javadoc rolling bounce without group.instance.id:
    C0, C1, C2 get [t0pi, t1pi]; after C0 -> C5, C1 -> C3, C2 -> C4 the partitions move
    (C3 (was C1): [t0p0, t1p0], C4 (was C2): [t0p1, t1p1], C5 (was C0): [t0p2, t1p2])."""
    topics = {"t0": 3, "t1": 3}
    before = assign(
        roundrobin_assignor, topics, [member(c, ["t0", "t1"]) for c in ("C0", "C1", "C2")]
    )
    assert before == {f"C{i}": parts(("t0", i), ("t1", i)) for i in range(3)}

    after = assign(
        roundrobin_assignor, topics, [member(c, ["t0", "t1"]) for c in ("C5", "C3", "C4")]
    )
    assert after == {
        "C3": parts("t0-0", "t1-0"),
        "C4": parts("t0-1", "t1-1"),
        "C5": parts("t0-2", "t1-2"),
    }


def test_roundrobin_javadoc_rolling_bounce_static_members_stick():
    """Tests that with group.instance.ids the assignment survives the rolling bounce of the
    RoundRobinAssignor javadoc: always I0: [t0p0, t1p0], I1: [t0p1, t1p1], I2: [t0p2, t1p2]."""
    topics = {"t0": 3, "t1": 3}
    expected = {f"I{i}": parts(("t0", i), ("t1", i)) for i in range(3)}
    before = [member(f"C{i}", ["t0", "t1"], instance=f"I{i}") for i in range(3)]
    after = [
        member("C5", ["t0", "t1"], instance="I0"),
        member("C3", ["t0", "t1"], instance="I1"),
        member("C4", ["t0", "t1"], instance="I2"),
    ]
    assert by_instance(assign(roundrobin_assignor, topics, before), before) == expected
    assert by_instance(assign(roundrobin_assignor, topics, after), after) == expected


# ===================================================== AbstractPartitionAssignorTest
# Kafka checks the member order directly (MemberInfo sorting). Both assignors walk
# members in that order, so with one topic of as many partitions as members, the
# member in sorted position k receives exactly partition k.

ASSIGNORS = [
    pytest.param(range_assignor, id="range"),
    pytest.param(roundrobin_assignor, id="roundrobin"),
]


def order_seen_by(assignor, members: list[dict]) -> list[str]:
    """The member order the assignor used: who got partition 0, 1, 2, ..."""
    got = assign(assignor, {TOPIC: len(members)}, members)
    owner = {p: m for m, topics in got.items() for p in topics.get(TOPIC, [])}
    assert sorted(owner) == list(range(len(members)))
    return [owner[p] for p in range(len(members))]


@pytest.mark.parametrize("assignor", ASSIGNORS)
def test_static_ordering_without_group_instance_id(assignor):
    """Tests that dynamic members are ordered by member.id
    (AbstractPartitionAssignorTest.testMemberInfoSortingWithoutGroupInstanceId)."""
    members = [member("a", [TOPIC]), member("b", [TOPIC]), member("c", [TOPIC])]
    assert order_seen_by(assignor, members) == ["a", "b", "c"]


@pytest.mark.parametrize("assignor", ASSIGNORS)
def test_static_ordering_with_all_group_instance_ids(assignor):
    """Tests that static members are ordered by group.instance.id, ignoring member.id
    (AbstractPartitionAssignorTest.testMemberInfoSortingWithAllGroupInstanceId)."""
    members = [
        member("a", [TOPIC], instance="y"),
        member("b", [TOPIC], instance="z"),
        member("c", [TOPIC], instance="x"),
    ]
    assert order_seen_by(assignor, members) == ["c", "a", "b"]


@pytest.mark.parametrize("assignor", ASSIGNORS)
def test_static_ordering_with_some_group_instance_ids(assignor):
    """Tests that static members come before dynamic ones
    (AbstractPartitionAssignorTest.testMemberInfoSortingSomeGroupInstanceId)."""
    members = [
        member("a", [TOPIC]),
        member("b", [TOPIC], instance="y"),
        member("c", [TOPIC], instance="x"),
    ]
    assert order_seen_by(assignor, members) == ["c", "b", "a"]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("assignor", ASSIGNORS)
def test_static_ordering_many_members(assignor, seed):
    """Tests that 100 shuffled members are ordered statics first, then dynamics, each by id
    (AbstractPartitionAssignorTest.testMergeSortManyMemberInfo, with Kafka's unseeded
    Random replaced by fixed seeds)."""
    rng = random.Random(seed)
    members = []
    for i in range(100):
        member_id = str(i + 100)  # three digits, so string order is numeric order
        is_static = rng.randrange(2) == 0
        members.append(member(member_id, [TOPIC], instance=member_id if is_static else None))
    expected = [m["id"] for m in members if "instance_id" in m] + [
        m["id"] for m in members if "instance_id" not in m
    ]
    rng.shuffle(members)
    assert order_seen_by(assignor, members) == expected
