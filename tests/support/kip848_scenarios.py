"""Kafka's own test scenarios for the KIP-848 server assignors, as documents with their expected answers.

Ported from Apache Kafka 4.0's ``group-coordinator`` tests:
``OptimizedUniformAssignmentBuilderTest`` (the homogeneous uniform builder),
``UniformHeterogeneousAssignmentBuilderTest`` and the server ``RangeAssignorTest``.  Members ``A``,
``B``, ``C`` iterate in that order in Java's ``HashMap`` as in the tests' ``TreeMap``; the topic ids
are the tests' own.  Where a Kafka test builds a ``GroupSpec`` the coordinator never builds, the
port says how it differs:

* a subscription to a topic id missing from the metadata makes Kafka's assignors throw; the
  coordinator never passes one (``TopicIds`` skips names missing from the cluster), and here, as
  in docs/formats.md, such a topic contributes no partitions (``expected`` is then empty);
* a test that forces the subscription type against the subscriptions gets one more, missing,
  topic name in a member's subscription, which gives the type Kafka's coordinator would compute;
* ``mkOrderedAssignment`` (a ``LinkedHashMap``) fixes the order in which the homogeneous builder
  visits a member's topics, and so which partitions an over-quota member keeps; the
  coordinator's map is a ``HashMap`` (``Assignment.fromRecord``), which visits these tests' topic
  ids the other way round in two scenarios: :data:`COORDINATOR_ANSWERS` holds Kafka's answer on
  the coordinator's structures there (the Java class gives it too:
  ``tests/peers/test_server_assignors.py``), beside the test's own expectation.

Used by ``tests/heuristics/test_uniform.py``, ``tests/heuristics/test_server_range.py`` (ours) and
``tests/peers/test_server_assignors.py`` (Kafka's Java classes on the same documents).
"""

from __future__ import annotations

#: The topic ids of Kafka's uniform builder tests.
TOPIC_IDS = {
    "topic1": "T1-A4s3VTwiI5CTbEp6POw",
    "topic2": "T2-B4s3VTwiI5YHbPp6YUe",
    "topic3": "T3-CU8fVTLCz5YMkLoDQsa",
    "topic4": "T4-Tw9fVTLCz5HbPp6YQsa",
}


def group(topics: dict, members: list, ids: bool = True) -> dict:
    """A document: ``members`` as ``(id, subscription, owned)`` or ``(id, subscription, owned, instance_id)``."""
    docs = []
    for member in members:
        member_id, subscription, owned = member[:3]
        doc = {"id": member_id, "topics": list(subscription)}
        if owned:
            doc["owned"] = owned
        if len(member) > 3:
            doc["instance_id"] = member[3]
        docs.append(doc)
    result = {"topics": topics, "members": docs}
    if ids:
        result["topic_ids"] = {t: TOPIC_IDS[t] for t in topics}
    return result


T12 = ["topic1", "topic2"]
T13 = ["topic1", "topic3"]
T123 = ["topic1", "topic2", "topic3"]

#: OptimizedUniformAssignmentBuilderTest: name -> (document, expected assignment).
UNIFORM_HOMOGENEOUS = {
    "testOneMemberNoTopicSubscription": (group({"topic1": 3}, [("A", [], None)]), {"A": {}}),
    "testOneMemberSubscribedToNonexistentTopic": (  # Kafka: PartitionAssignorException (see above)
        group({"topic1": 3}, [("A", ["topic2"], None)], ids=False),
        {"A": {}},
    ),
    "testFirstAssignmentTwoMembersTwoTopicsNoMemberRacks": (
        group({"topic1": 3, "topic3": 2}, [("A", T13, None), ("B", T13, None)]),
        {"A": {"topic3": [0, 1]}, "B": {"topic1": [0, 1, 2]}},
    ),
    "testFirstAssignmentNumMembersGreaterThanTotalNumPartitions": (
        group(
            {"topic3": 2},
            [("A", ["topic3"], None), ("B", ["topic3"], None), ("C", ["topic3"], None)],
        ),
        {"A": {}, "B": {"topic3": [0]}, "C": {"topic3": [1]}},
    ),
    "testReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment": (
        group(
            {"topic1": 3, "topic2": 3},
            [
                ("A", T12, {"topic1": [0, 1], "topic2": [0, 1]}),
                ("B", T12, {"topic1": [2], "topic2": [2]}),
            ],
        ),
        {"A": {"topic1": [0, 1], "topic2": [0]}, "B": {"topic1": [2], "topic2": [1, 2]}},
    ),
    "testReassignmentWhenPartitionsAreAddedForTwoMembersTwoTopics": (
        group(
            {"topic1": 6, "topic2": 5},
            [
                ("A", T12, {"topic1": [0, 2], "topic2": [0]}),
                ("B", T12, {"topic1": [1], "topic2": [1, 2]}),
            ],
        ),
        {
            "A": {"topic1": [0, 2], "topic2": [0, 3, 4]},
            "B": {"topic1": [1, 3, 4, 5], "topic2": [1, 2]},
        },
    ),
    "testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics": (
        group(
            {"topic1": 3, "topic2": 3},
            [
                ("A", T12, {"topic1": [0, 2], "topic2": [0]}),
                ("B", T12, {"topic1": [1], "topic2": [1, 2]}),
                ("C", T12, None),
            ],
        ),
        {"A": {"topic1": [0, 2]}, "B": {"topic1": [1], "topic2": [1]}, "C": {"topic2": [0, 2]}},
    ),
    "testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersTwoTopics": (
        group(
            {"topic1": 3, "topic2": 3},
            [
                ("A", T12, {"topic1": [0], "topic2": [0]}),
                ("B", T12, {"topic1": [1], "topic2": [1]}),
            ],
        ),
        {"A": {"topic1": [0], "topic2": [0, 2]}, "B": {"topic1": [1, 2], "topic2": [1]}},
    ),
    "testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics": (
        group(
            {"topic1": 2, "topic2": 2},
            [
                ("A", ["topic2"], {"topic1": [0], "topic2": [0]}),
                ("B", ["topic2"], {"topic1": [1], "topic2": [1]}),
            ],
        ),
        {"A": {"topic2": [0]}, "B": {"topic2": [1]}},
    ),
    "testReassignmentStickinessWhenAlreadyBalanced": (  # every member on topic1 and a missing topic
        group(
            {"topic1": 5},
            [
                ("A", ["topic1", "topic2"], {"topic1": [0, 3]}),
                ("B", ["topic1", "topic2"], {"topic1": [1]}),
                ("C", ["topic1", "topic2"], {"topic1": [2, 4]}),
            ],
        ),
        {"A": {"topic1": [0, 3]}, "B": {"topic1": [1]}, "C": {"topic1": [2, 4]}},
    ),
}

#: Where OptimizedUniformAssignmentBuilderTest's LinkedHashMap decides the answer: Kafka's answer
#: when the member's assignment is the coordinator's HashMap (topic2's id iterates before topic1's).
COORDINATOR_ANSWERS = {
    "testReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment": {
        "A": {"topic1": [0], "topic2": [0, 1]},
        "B": {"topic1": [1, 2], "topic2": [2]},
    },
    "testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics": {
        "A": {"topic1": [0], "topic2": [0]},
        "B": {"topic2": [1, 2]},
        "C": {"topic1": [1, 2]},
    },
}

#: UniformHeterogeneousAssignmentBuilderTest: name -> (document, expected assignment).
UNIFORM_HETEROGENEOUS = {
    "testTwoMembersNoTopicSubscription": (
        group({"topic1": 3}, [("A", [], None), ("B", [], None)]),
        {"A": {}, "B": {}},
    ),
    "testTwoMembersSubscribedToNonexistentTopics": (  # Kafka: PartitionAssignorException (see above)
        group({"topic1": 3}, [("A", ["topic3"], None), ("B", ["topic2"], None)], ids=False),
        {"A": {}, "B": {}},
    ),
    "testFirstAssignmentTwoMembersTwoTopics": (
        group({"topic1": 3, "topic3": 6}, [("A", T13, None), ("B", ["topic3"], None)]),
        {"A": {"topic1": [0, 1, 2], "topic3": [4]}, "B": {"topic3": [0, 1, 2, 3, 5]}},
    ),
    "testFirstAssignmentNumMembersGreaterThanTotalNumPartitions": (
        group(
            {"topic3": 1, "topic1": 2},
            [("A", ["topic3"], None), ("B", ["topic3"], None), ("C", ["topic1"], None)],
        ),
        {"A": {"topic3": [0]}, "B": {}, "C": {"topic1": [0, 1]}},
    ),
    "testReassignmentForTwoMembersThreeTopicsGivenUnbalancedPrevAssignment": (
        group(
            {"topic1": 6, "topic2": 4, "topic3": 4},
            [
                ("A", ["topic1"], {"topic1": [0, 1, 2]}),
                ("B", T12, {"topic1": [3], "topic2": [0]}),
                ("C", T123, {"topic1": [4, 5], "topic2": [1, 2, 3], "topic3": [0, 1, 2, 3]}),
            ],
        ),
        {
            "A": {"topic1": [0, 1, 2, 5]},
            "B": {"topic1": [3], "topic2": [0, 1, 2, 3]},
            "C": {"topic1": [4], "topic3": [0, 1, 2, 3]},
        },
    ),
    "testReassignmentWhenPartitionsAreAddedForTwoMembers": (
        group(
            {"topic1": 6, "topic2": 5, "topic3": 3, "topic4": 3},
            [
                ("A", T13, {"topic1": [0, 1, 2, 3], "topic3": [0, 1]}),
                (
                    "B",
                    ["topic1", "topic2", "topic3", "topic4"],
                    {"topic2": [0, 1, 2], "topic4": [0, 1, 2]},
                ),
            ],
        ),
        {
            "A": {"topic1": [0, 1, 2, 3, 4, 5], "topic3": [0, 1, 2]},
            "B": {"topic2": [0, 1, 2, 3, 4], "topic4": [0, 1, 2]},
        },
    ),
    "testReassignmentWhenOneMemberAddedAndPartitionsAddedTwoMembersTwoTopics": (
        group(
            {"topic1": 6, "topic2": 7},
            [
                ("A", ["topic1"], {"topic1": [0, 2], "topic2": [0]}),
                ("B", T12, {"topic1": [1], "topic2": [1, 2]}),
                ("C", T12, None),
            ],
        ),
        {
            "A": {"topic1": [0, 2, 3, 4, 5]},
            "B": {"topic1": [1], "topic2": [1, 2, 6]},
            "C": {"topic2": [0, 3, 4, 5]},
        },
    ),
    "testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersThreeTopics": (
        group(
            {"topic1": 3, "topic2": 8, "topic3": 3},
            [
                ("A", T13, {"topic1": [0, 1, 2], "topic3": [0, 1]}),
                ("B", ["topic2"], {"topic2": [3, 4, 5, 6]}),
            ],
        ),
        {
            "A": {"topic1": [0, 1, 2], "topic3": [0, 1, 2]},
            "B": {"topic2": [0, 1, 2, 3, 4, 5, 6, 7]},
        },
    ),
    "testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics": (
        group(
            {"topic1": 3, "topic2": 5},
            [
                ("A", ["topic1"], {"topic1": [0, 2], "topic2": [1, 3]}),
                ("B", T12, {"topic1": [1], "topic2": [0, 2, 4]}),
            ],
        ),
        {"A": {"topic1": [0, 1, 2]}, "B": {"topic2": [0, 1, 2, 3, 4]}},
    ),
    "testReassignmentWhenTopicPartitionsRunOutAndMembersHaveNoPartitions": (  # B: + a missing topic
        group(
            {"topic1": 2, "topic2": 2, "topic3": 2},
            [
                ("A", T123, {"topic1": [0, 1], "topic2": [0, 1], "topic3": [0, 1]}),
                ("B", [*T123, "topic4"], None),
            ],
        ),
        {"A": {"topic2": [0], "topic3": [0, 1]}, "B": {"topic1": [0, 1], "topic2": [1]}},
    ),
    "testFirstAssignmentWithTwoMembersIncludingOneWithoutSubscriptions": (
        group({"topic1": 3}, [("A", ["topic1"], None), ("B", [], None)]),
        {"A": {"topic1": [0, 1, 2]}, "B": {}},
    ),
}

#: The server RangeAssignorTest: name -> (document, expected assignment).  Its topic ids are random.
SERVER_RANGE = {
    "testOneMemberNoTopic": (group({"topic1": 3}, [("A", [], None)], ids=False), {"A": {}}),
    "testOneMemberSubscribedToNonExistentTopic": (  # Kafka: PartitionAssignorException (see above)
        group({"topic1": 3}, [("A", ["topic2"], None)], ids=False),
        {"A": {}},
    ),
    "testFirstAssignmentTwoMembersTwoTopicsSameSubscriptions": (
        group({"topic1": 3, "topic3": 2}, [("A", T13, None), ("B", T13, None)], ids=False),
        {"A": {"topic1": [0, 1], "topic3": [0]}, "B": {"topic1": [2], "topic3": [1]}},
    ),
    "testFirstAssignmentThreeMembersThreeTopicsDifferentSubscriptions": (
        group(
            {"topic1": 3, "topic2": 3, "topic3": 2},
            [("A", T12, None), ("B", ["topic3"], None), ("C", ["topic2", "topic3"], None)],
            ids=False,
        ),
        {
            "A": {"topic1": [0, 1, 2], "topic2": [0, 1]},
            "B": {"topic3": [0]},
            "C": {"topic2": [2], "topic3": [1]},
        },
    ),
    "testFirstAssignmentNumMembersGreaterThanNumPartitions": (
        group(
            {"topic1": 3, "topic3": 2},
            [("A", T13, None), ("B", T13, None), ("C", T13, None)],
            ids=False,
        ),
        {
            "A": {"topic1": [0], "topic3": [0]},
            "B": {"topic1": [1], "topic3": [1]},
            "C": {"topic1": [2]},
        },
    ),
    "testReassignmentNumMembersGreaterThanNumPartitionsWhenOneMemberAdded": (
        group(
            {"topic1": 2, "topic2": 2},
            [
                ("A", T12, {"topic1": [0], "topic2": [0]}),
                ("B", T12, {"topic1": [1], "topic2": [1]}),
                ("C", T12, None),
            ],
            ids=False,
        ),
        {"A": {"topic1": [0], "topic2": [0]}, "B": {"topic1": [1], "topic2": [1]}, "C": {}},
    ),
    "testReassignmentWhenOnePartitionAddedForTwoMembersTwoTopics": (
        group(
            {"topic1": 4, "topic2": 4},
            [
                ("A", T12, {"topic1": [0, 1], "topic2": [0, 1]}),
                ("B", T12, {"topic1": [2], "topic2": [2]}),
            ],
            ids=False,
        ),
        {"A": {"topic1": [0, 1], "topic2": [0, 1]}, "B": {"topic1": [2, 3], "topic2": [2, 3]}},
    ),
    "testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics": (
        group(
            {"topic1": 3, "topic2": 3},
            [
                ("A", T12, {"topic1": [0, 1], "topic2": [0, 1]}),
                ("B", T12, {"topic1": [2], "topic2": [2]}),
                ("C", T12, None),
            ],
            ids=False,
        ),
        {
            "A": {"topic1": [0], "topic2": [0]},
            "B": {"topic1": [1], "topic2": [1]},
            "C": {"topic1": [2], "topic2": [2]},
        },
    ),
    "testReassignmentWhenOneMemberAddedAndOnePartitionAfterInitialAssignmentWithTwoMembersTwoTopics": (
        group(
            {"topic1": 4, "topic2": 3},
            [
                ("A", T12, {"topic1": [0, 1], "topic2": [0, 1]}),
                ("B", T12, {"topic1": [2], "topic2": [2]}),
                ("C", ["topic1"], None),
            ],
            ids=False,
        ),
        {
            "A": {"topic1": [0, 1], "topic2": [0, 1]},
            "B": {"topic1": [2], "topic2": [2]},
            "C": {"topic1": [3]},
        },
    ),
    "testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithTwoMembersTwoTopics": (
        group({"topic1": 3, "topic2": 3}, [("B", T12, {"topic1": [2], "topic2": [2]})], ids=False),
        {"B": {"topic1": [0, 1, 2], "topic2": [0, 1, 2]}},
    ),
    "testReassignmentWhenMultipleSubscriptionsRemovedAfterInitialAssignmentWithThreeMembersTwoTopics": (
        group(
            {"topic1": 3, "topic2": 3, "topic3": 2},
            [
                ("A", ["topic1"], {"topic1": [0, 1, 2], "topic2": [0]}),
                ("B", T123, {"topic2": [1]}),
                ("C", ["topic2"], {"topic2": [2], "topic3": [0, 1]}),
            ],
            ids=False,
        ),
        {
            "A": {"topic1": [0, 1]},
            "B": {"topic1": [2], "topic2": [0, 1], "topic3": [0, 1]},
            "C": {"topic2": [2]},
        },
    ),
}

#: RangeAssignorTest's static-membership cases: (topics, members before, members after); a static
#: member that rejoins under a new member id keeps its partitions.
SERVER_RANGE_STATIC = {
    "testStaticMembership": (
        {"topic1": 3},
        [("A", ["topic1"], None, "instanceA"), ("B", ["topic1"], None, "instanceB")],
        [("B", ["topic1"], None, "instanceB"), ("memberA1", ["topic1"], None, "instanceA")],
        {"A": "memberA1"},
    ),
    "testMixedStaticMembership": (
        {"topic1": 5},
        [
            ("A", ["topic1"], None, "instanceA"),
            ("C", ["topic1"], None, "instanceC"),
            ("B", ["topic1"], None),
        ],
        [
            ("C", ["topic1"], None, "instanceC"),
            ("B", ["topic1"], None),
            ("memberA1", ["topic1"], None, "instanceA"),
        ],
        {"A": "memberA1"},
    ),
}
