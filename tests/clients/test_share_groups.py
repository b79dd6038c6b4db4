"""Share groups (KIP-932) on the live cluster: the broker's ``SimpleAssignor`` against heuristics/share.py.

Kafka's own share consumers (``KafkaShareConsumer``, in this process through the JPype peer) join
one share group on the test cluster; the broker's group coordinator runs ``SimpleAssignor`` (the
``group.share.assignors`` default) each time one joins, and the Admin API's
``describeShareGroups`` reads the assignment back.  Which member joins when, and so the current
assignment each run of the assignor starts from, is up to the broker's timing: the test cannot
fix it.  What is determined is checked instead:

* the broker's assignment is a valid share answer with the balance heuristics/share.py gives the
  same group fresh (the same partition counts per member and reader counts per partition, as
  multisets: which member gets which count follows the ``HashMap`` order of the broker's random
  member ids);
* it is a fixed point of heuristics/share.py: the same members (the broker's ids), topics (the
  cluster's topic ids) and subscriptions, holding the broker's assignment, get exactly it back,
  member by member, as the coordinator's next run of ``SimpleAssignor`` would give it.
"""

from __future__ import annotations

import base64
import time

import numpy as np
import pytest

from heuristics import share
from problems import evaluate, load_problem
from problems.share import member_counts, pairs_from_assignment, reader_counts
from support.kafka_support import create_topic

#: Seconds to wait for the group to settle (every member holding its share).
SETTLE = 20.0


def _java_list(values: list[str]):
    import jpype

    out = jpype.JClass("java.util.ArrayList")()
    for value in values:
        out.add(jpype.JString(value))
    return out


def _uuid_text(uuid) -> str:
    """A Kafka ``Uuid`` as the base64url text the problem format's ``topic_ids`` takes."""
    raw = int(uuid.getMostSignificantBits()).to_bytes(8, "big", signed=True)
    raw += int(uuid.getLeastSignificantBits()).to_bytes(8, "big", signed=True)
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _describe(admin, group: str) -> dict[str, dict[str, list[int]]]:
    """The group's members' assignments ``{member id: {topic: [partitions]}}`` (``{}`` before the
    first member joined)."""
    import jpype

    try:
        description = admin.describeShareGroups(_java_list([group])).all().get().get(group)
    except jpype.JClass("java.util.concurrent.ExecutionException") as error:
        if "GroupIdNotFound" not in str(error.getCause().getClass().getName()):
            raise
        return {}  # no member joined yet
    assignment: dict[str, dict[str, list[int]]] = {}
    for member in description.members():
        topics: dict[str, list[int]] = {}
        for tp in member.assignment().topicPartitions():
            topics.setdefault(str(tp.topic()), []).append(int(tp.partition()))
        assignment[str(member.consumerId())] = {t: sorted(p) for t, p in topics.items()}
    return assignment


@pytest.fixture(scope="module")
def java_admin(kafka_cluster, kafka_java):
    """Kafka's Java Admin client on the cluster (the JPype peer's JVM)."""
    import jpype

    properties = jpype.JClass("java.util.Properties")()
    properties.put("bootstrap.servers", kafka_cluster.bootstrap)
    client = jpype.JClass("org.apache.kafka.clients.admin.Admin").create(properties)
    yield client
    client.close()


def _consumers(bootstrap: str, group: str, topics: list[str], count: int) -> list:
    import jpype

    Properties = jpype.JClass("java.util.Properties")
    Consumer = jpype.JClass("org.apache.kafka.clients.consumer.KafkaShareConsumer")
    Deserializer = "org.apache.kafka.common.serialization.ByteArrayDeserializer"
    consumers = []
    for i in range(count):
        properties = Properties()
        properties.put("bootstrap.servers", bootstrap)
        properties.put("group.id", group)
        properties.put("client.id", f"{group}-{i}")
        properties.put("key.deserializer", Deserializer)
        properties.put("value.deserializer", Deserializer)
        consumer = Consumer(properties)
        consumer.subscribe(_java_list(topics))
        consumers.append(consumer)
    return consumers


@pytest.mark.parametrize(
    ("topics", "members"),
    [({"share-wide": 4, "share-side": 3}, 3), ({"share-narrow": 2}, 3)],
    ids=["fewer-members", "more-members"],
)
def test_broker_share_assignment_is_the_heuristics(
    kafka_cluster, admin, java_admin, topics, members
):
    """Tests that three share consumers of one group get from the broker a valid share assignment,
    balanced as heuristics/share.py balances the group, and one heuristics/share.py keeps as it is."""
    import jpype

    for name, count in topics.items():
        create_topic(admin, name, count)
    group = "share-" + "-".join(topics)
    consumers = _consumers(kafka_cluster.bootstrap, group, list(topics), members)
    Duration = jpype.JClass("java.time.Duration")
    try:
        deadline = time.monotonic() + SETTLE
        while True:
            for consumer in consumers:  # joins the group and heartbeats
                consumer.poll(Duration.ofMillis(50))
            held = _describe(java_admin, group)
            total = sum(len(p) for member in held.values() for p in member.values())
            wanted = max(sum(topics.values()), members)
            settled = len(held) == members and all(held.values()) and total >= wanted
            if settled or time.monotonic() > deadline:
                break
        assert settled, f"the group did not settle in {SETTLE} s: {held}"
        names = list(topics)
        found = java_admin.describeTopics(_java_list(names))
        described = found.allTopicNames().get()
        topic_ids = {n: _uuid_text(described.get(n).topicId()) for n in names}
    finally:
        for consumer in consumers:
            consumer.close(Duration.ofSeconds(0))

    doc = {
        "topics": topics,
        "topic_ids": topic_ids,
        "members": [{"id": m, "topics": names} for m in held],
    }
    fresh = load_problem(doc)
    broker = pairs_from_assignment(fresh, held)
    verdict = evaluate(fresh, broker, "share")
    assert verdict.valid, verdict.violations
    ours = share.assign(fresh).answer
    assert sorted(member_counts(fresh, broker)) == sorted(member_counts(fresh, ours))
    assert sorted(reader_counts(fresh, broker)) == sorted(reader_counts(fresh, ours))
    # the broker's assignment as the current one: the assignor keeps it, pair for pair
    holding = load_problem(
        {**doc, "members": [{"id": m, "topics": names, "owned": held[m]} for m in held]}
    )
    assert np.array_equal(share.assign(holding).answer, pairs_from_assignment(holding, held))
