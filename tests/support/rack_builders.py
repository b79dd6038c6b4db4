"""Kafka's rack-aware assignor test fixtures as problem documents (test support).

``AbstractPartitionAssignorTest.verifyRackAssignment`` builds its groups one way: consumers
``consumer0, consumer1, ...`` with racks (``None``: no rack), brokers with racks (``None``: no
rack), and each topic's partition ``i`` with replicas on brokers ``(i + j + next) % brokers`` for
``j < replication factor``, ``next`` the partitions of the topics before it (in the test's
``mkMap`` order).  :func:`kafka_rack_group` builds the same group as a document, and
:func:`sorted_strings` writes an assignment as the test's expectations do.
"""

from __future__ import annotations

ALL_RACKS = ["a", "b", "c", "d", "e", "f"]


def racks(count: int) -> list[str]:
    """``AbstractPartitionAssignorTest.racks``."""
    return [ALL_RACKS[i % len(ALL_RACKS)] for i in range(count)]


def null_racks(count: int) -> list[None]:
    """``AbstractPartitionAssignorTest.nullRacks``."""
    return [None] * count


def kafka_rack_group(
    topics: dict[str, int],
    replication: int,
    broker_racks: list,
    consumer_racks: list,
    consumer_topics: list[list[str]],
    owned: list[str] | None = None,
    generation: int | None = None,
    cumulative: bool = True,
) -> dict:
    """The group ``verifyRackAssignment`` builds (owned partitions as ``"t1-0, t1-3"`` strings);
    ``cumulative=False``: every topic starts at broker 0 (``partitionInfos(..., nextNodeIndex=0)``)."""
    partition_racks, start = {}, 0
    for topic, count in topics.items():
        lists = []
        for i in range(count):
            chosen = [broker_racks[(i + j + start) % len(broker_racks)] for j in range(replication)]
            lists.append([r for r in chosen if r is not None])
        partition_racks[topic] = lists
        start += count if cumulative else 0
    members = []
    for i, (rack, subscription) in enumerate(zip(consumer_racks, consumer_topics)):
        member: dict = {"id": f"consumer{i}", "topics": list(subscription)}
        if rack is not None:
            member["rack"] = rack
        if owned and i < len(owned) and owned[i]:
            claims: dict[str, list[int]] = {}
            for name in owned[i].split(", "):
                topic, index = name.rsplit("-", 1)
                claims.setdefault(topic, []).append(int(index))
            member["owned"] = claims
        if generation is not None:
            member["generation"] = generation
        members.append(member)
    return {"topics": dict(topics), "members": members, "partition_racks": partition_racks}


def sorted_strings(assignment: dict) -> list[str]:
    """Each member's partitions as ``"t1-0, t1-3, ..."``, sorted as strings (``toSortedString``)."""
    return [
        ", ".join(sorted(f"{t}-{p}" for t, ps in topics.items() for p in ps))
        for topics in assignment.values()
    ]
