"""Kafka's benchmark groups two ways: the lab's generator and Kafka's own group-coordinator classes.

:mod:`experiments.kafka_grid` writes a benchmark cell as a problem document, the assignor's previous
output computed by the lab's copies of Kafka's assignors; :mod:`peers.kafka_benchmark` builds the
same cell with Kafka 4.4.0's classes as ``ConsumerAssignorBenchmark.setup`` does (metadata image
from records, ``GroupSpecImpl`` of ``MemberSubscriptionAndAssignmentImpl``\\ s, the previous
assignment Kafka's assignor's own output on the group before the event).  The cells cover every
distribution, subscription, rack setting, event and assignor; the groups (topics, ids, partition
counts, replica racks, members, subscriptions, racks, current assignments) must be equal, and so
must Kafka's answers on both and the lab's copy's answer.
"""

from __future__ import annotations

import numpy as np
import pytest

import heuristics.server_range as server_range
import heuristics.uniform as uniform
from experiments.kafka_grid import benchmark_document
from peers import kafka_benchmark, kafka_java
from problems import load_problem

# (event, members, topics, partitions, distribution, subscription, racks, assignor)
CELLS = [
    ("fresh", 23, 12, 200, "equal", "equal", True, "uniform"),
    ("stable", 40, 30, 300, "skewed", "nested", True, "uniform"),
    ("member-joins", 17, 9, 120, "equal", "disjoint", False, "range"),
    ("join-many", 31, 14, 250, "skewed", "equal", True, "range"),
    ("member-leaves", 26, 20, 180, "skewed", "disjoint", True, "uniform"),
    ("leave-many", 45, 11, 150, "equal", "nested", False, "uniform"),
    ("partitions-grow", 19, 25, 210, "skewed", "nested", True, "range"),
    ("partitions-grow", 12, 40, 400, "equal", "disjoint", False, "uniform"),
    ("leave-many", 60, 7, 90, "skewed", "disjoint", False, "range"),
    ("stable", 8, 6, 60, "equal", "equal", False, "range"),
]


def _held(spec, member: str) -> dict[str, list[int]]:
    held = spec.memberSubscription(member).partitions()
    return {str(t.toString()): sorted(int(p) for p in ps) for t, ps in held.entrySet()}


@pytest.mark.parametrize("cell", CELLS, ids=lambda c: "-".join(map(str, c)))
def test_the_lab_builds_the_benchmark_group_kafka_builds_and_kafka_answers_alike(cell):
    """Tests one cell: the same group both ways, and the same answers from Kafka and the lab."""
    event, members, topics, partitions, distribution, pattern, racks, assignor = cell
    shape = dict(distribution=distribution, pattern=pattern, racks=racks)
    group, instance = kafka_benchmark.benchmark_input(
        event, members, topics, partitions, assignor_name=assignor, **shape
    )
    document = benchmark_document(event, members, topics, partitions, assignor=assignor, **shape)
    problem = load_problem(document)
    # Topics: names, ids (java.util.Random(42)), partition counts and replica racks.
    ids = [str(u.toString()) for u in group.topic_ids]
    assert ids == [document["topic_ids"][t] for t in document["topics"]]
    describer = group.describer
    for topic_id, (name, count) in zip(group.topic_ids, document["topics"].items()):
        assert describer.numPartitions(topic_id) == count
        for p in range(count):
            expected = {f"rack{p % 3}", f"rack{(p + 1) % 3}"}
            assert {str(r) for r in describer.racksForPartition(topic_id, p)} == expected
            if racks:
                assert set(document["partition_racks"][name][p]) == expected
    # Members: the same ids, subscriptions, racks and current assignments.
    spec = group.spec
    assert sorted(str(m) for m in spec.memberIds()) == sorted(problem.members)
    by_id = dict(zip(document["topics"], ids))
    for member in document["members"]:
        java_member = spec.memberSubscription(member["id"])
        subscribed = {str(t.toString()) for t in java_member.subscribedTopicIds()}
        assert subscribed == {by_id[t] for t in member["topics"]}
        rack = java_member.rackId()
        assert (str(rack.get()) if rack.isPresent() else None) == member.get("rack")
        owned = {by_id[t]: ps for t, ps in member.get("owned", {}).items()}
        assert _held(spec, member["id"]) == owned
    assert (str(spec.subscriptionType().name()) == "HOMOGENEOUS") == (pattern == "equal")
    # Kafka's answer on its own construction, on the lab's document, and the lab's copy's answer.
    answer = instance.assign(spec, describer)
    peers = kafka_java.start()
    kafka_owner = np.array(
        peers.serverOwners(
            answer,
            kafka_java._topic_ids(problem),
            kafka_java._longs(problem.topic_start),
            kafka_java._strings(problem.members),
        )
    )
    assert np.array_equal(kafka_owner, kafka_java.server_assign(problem, assignor))
    lab = (uniform if assignor == "uniform" else server_range).assign(problem).answer
    assert np.array_equal(kafka_owner, lab)
    if event != "fresh":
        assert any(member.get("owned") for member in document["members"])
