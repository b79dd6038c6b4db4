"""Kafka's ``ConsumerAssignorBenchmark`` groups built with Kafka's own classes, through JPype.

The reference side of :mod:`experiments.kafka_grid` (tests and benchmarks only): the group spec,
topic resolver and topic describer of one benchmark cell, made the way the benchmark's
``GroupBuilder`` makes them from Kafka 4.4.0's group-coordinator and metadata classes -- a
``MetadataDelta`` replaying one ``RegisterBrokerRecord`` per rack, then each topic's
``TopicRecord`` (ids from ``java.util.Random(42)``) and ``PartitionRecord``s (replicas on brokers
``p mod 3`` and ``(p + 1) mod 3``) into a ``KRaftCoordinatorMetadataImage``; member specs
(``MemberSubscriptionAndAssignmentImpl``) in a ``HashMap`` filled ``member0`` first, each
subscription a ``HashSet`` of its bucket's topic names seen through ``TopicIds``, each current
assignment the previous output copied into a ``HashMap`` of ``HashSet``\\ s as
``Assignment.fromRecord`` rebuilds it; and the event's previous assignment the assignor's own
output on the group before the event (:func:`benchmark_input`).  Partition counts, bucket ranges
and event sizes are :mod:`experiments.kafka_grid`'s arithmetic, which its tests check against the
benchmark's documented values.
"""

from __future__ import annotations

from dataclasses import dataclass

from experiments.kafka_grid import (
    RACK_COUNT,
    TOPIC_ID_SEED,
    added_topic_count,
    bucket_count,
    bucket_ranges,
    partition_counts,
    previous_member_count,
    with_added_partitions,
)
from peers.kafka_java import SERVER_ASSIGNORS, start


@dataclass
class KafkaGroup:
    """One assignment input as the benchmark holds it: ``spec``, ``resolver``, ``describer``."""

    spec: object
    resolver: object
    describer: object
    topic_ids: list  # Kafka ``Uuid`` of each topic, in topic order


def _classes():
    import jpype

    start()
    names = {
        "Random": "java.util.Random",
        "HashMap": "java.util.HashMap",
        "HashSet": "java.util.HashSet",
        "ArrayList": "java.util.ArrayList",
        "Optional": "java.util.Optional",
        "List": "java.util.List",
        "Integer": "java.lang.Integer",
        "Uuid": "org.apache.kafka.common.Uuid",
        "TopicRecord": "org.apache.kafka.common.metadata.TopicRecord",
        "PartitionRecord": "org.apache.kafka.common.metadata.PartitionRecord",
        "RegisterBrokerRecord": "org.apache.kafka.common.metadata.RegisterBrokerRecord",
        "MetadataDelta": "org.apache.kafka.image.MetadataDelta",
        "MetadataImage": "org.apache.kafka.image.MetadataImage",
        "MetadataProvenance": "org.apache.kafka.image.MetadataProvenance",
        "KRaftImage": "org.apache.kafka.coordinator.common.runtime.KRaftCoordinatorMetadataImage",
        "TopicIds": "org.apache.kafka.coordinator.group.modern.TopicIds",
        "CachedTopicResolver": "org.apache.kafka.coordinator.group.modern.TopicIds$CachedTopicResolver",
        "Describer": "org.apache.kafka.coordinator.group.modern.SubscribedTopicDescriberImpl",
        "MemberSpec": "org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl",
        "Assignment": "org.apache.kafka.coordinator.group.modern.Assignment",
        "GroupSpecImpl": "org.apache.kafka.coordinator.group.modern.GroupSpecImpl",
        "SubscriptionType": "org.apache.kafka.coordinator.group.api.assignor.SubscriptionType",
    }
    return {key: jpype.JClass(name) for key, name in names.items()}


def _topic_id(java, random):
    uuid = java["Uuid"](random.nextLong(), random.nextLong())
    while java["Uuid"].RESERVED.contains(uuid) or "-" in str(uuid.toString()):
        uuid = java["Uuid"](random.nextLong(), random.nextLong())
    return uuid


def build_group(
    members: int,
    topics: int,
    partitions: int,
    *,
    distribution: str = "equal",
    pattern: str = "equal",
    racks: bool = False,
    buckets: int,
    added: int = 0,
    current=None,
) -> KafkaGroup:
    """``GroupBuilder.build`` with Kafka's classes (``current``: a ``GroupAssignment`` or None)."""
    import jpype

    java = _classes()
    names = [f"topic-{t}" for t in range(topics)]
    counts = with_added_partitions(partition_counts(distribution, topics, partitions), added)
    delta = java["MetadataDelta"].Builder().setImage(java["MetadataImage"].EMPTY).build()
    for broker in range(RACK_COUNT):
        delta.replay(java["RegisterBrokerRecord"]().setBrokerId(broker).setRack(f"rack{broker}"))
    random = java["Random"](jpype.JLong(TOPIC_ID_SEED))
    ids = []
    for name, count in zip(names, counts.tolist()):
        topic_id = _topic_id(java, random)
        ids.append(topic_id)
        delta.replay(java["TopicRecord"]().setTopicId(topic_id).setName(name))
        for p in range(int(count)):
            replicas = java["ArrayList"]()
            replicas.add(java["Integer"].valueOf(p % RACK_COUNT))
            replicas.add(java["Integer"].valueOf((p + 1) % RACK_COUNT))
            delta.replay(
                java["PartitionRecord"]()
                .setTopicId(topic_id)
                .setPartitionId(p)
                .setReplicas(replicas)
            )
    image = java["KRaftImage"](delta.apply(java["MetadataProvenance"].EMPTY))
    resolver = java["CachedTopicResolver"](image)
    describer = java["Describer"](image)
    bucket_topics = [
        java["List"].copyOf(java["ArrayList"]([names[t] for t in range(a, b)]))
        for a, b in bucket_ranges(pattern, topics, buckets)
    ]
    specs = java["HashMap"]()
    inverted = java["HashMap"]()
    held = current.members() if current is not None else None
    for i in range(members):
        member_id = f"member{i}"
        assignment = java["Assignment"].EMPTY
        previous = held.get(member_id) if held is not None else None
        if previous is not None:
            copied = java["HashMap"]()
            for entry in previous.partitions().entrySet():
                topic_id, topic_partitions = entry.getKey(), entry.getValue()
                copied.put(topic_id, java["HashSet"](topic_partitions))
                owners = inverted.get(topic_id)
                if owners is None:
                    owners = java["HashMap"]()
                    inverted.put(topic_id, owners)
                for partition in topic_partitions:
                    owners.put(partition, member_id)
            assignment = java["Assignment"](copied)
        rack = java["Optional"].of(f"rack{i % RACK_COUNT}") if racks else java["Optional"].empty()
        subscription = java["TopicIds"](java["HashSet"](bucket_topics[i % buckets]), resolver)
        specs.put(
            member_id, java["MemberSpec"](rack, java["Optional"].empty(), subscription, assignment)
        )
    kind = java["SubscriptionType"].HOMOGENEOUS if pattern == "equal" else None
    if kind is None:
        kind = java["SubscriptionType"].HETEROGENEOUS
    spec = java["GroupSpecImpl"](specs, kind, inverted)
    return KafkaGroup(spec, resolver, describer, ids)


def assignor(name: str):
    """A new instance of Kafka's server assignor ``name`` (``uniform`` or ``range``)."""
    import jpype

    start()
    return jpype.JClass(SERVER_ASSIGNORS[name])()


def benchmark_input(
    churn: str,
    members: int,
    topics: int,
    partitions: int,
    *,
    distribution: str = "equal",
    pattern: str = "equal",
    racks: bool = False,
    assignor_name: str = "uniform",
) -> tuple[KafkaGroup, object]:
    """``ConsumerAssignorBenchmark.setup``: the group the assignor gets after the event, and the
    assignor; the previous assignment is its own output on the group before the event."""
    instance = assignor(assignor_name)
    shape = dict(distribution=distribution, pattern=pattern, racks=racks)
    buckets = bucket_count(members, topics)
    previous = None
    if churn != "fresh":
        before = build_group(
            previous_member_count(churn, members), topics, partitions, buckets=buckets, **shape
        )
        previous = instance.assign(before.spec, before.describer)
    group = build_group(
        members,
        topics,
        partitions,
        buckets=buckets,
        added=added_topic_count(churn, topics),
        current=previous,
        **shape,
    )
    return group, instance


def time_assign(
    group: KafkaGroup, instance, warmups: int = 5, runs: int = 5
) -> tuple[object, list, list]:
    """``doAssignment`` timed in the JVM (the resolver cleared before each call as the benchmark
    does), after ``warmups`` untimed calls: the last answer, the wall seconds of each call
    (``System.nanoTime``) and its CPU seconds (the calling thread's, ``ThreadMXBean``)."""
    import jpype

    clock = jpype.JClass("java.lang.System")
    threads = jpype.JClass("java.lang.management.ManagementFactory").getThreadMXBean()
    answer = None
    for _ in range(warmups):
        group.resolver.clear()
        answer = instance.assign(group.spec, group.describer)
    wall, cpu = [], []
    for _ in range(runs):
        group.resolver.clear()
        began, began_cpu = clock.nanoTime(), threads.getCurrentThreadCpuTime()
        answer = instance.assign(group.spec, group.describer)
        cpu.append((threads.getCurrentThreadCpuTime() - began_cpu) / 1e9)
        wall.append((clock.nanoTime() - began) / 1e9)
    return answer, wall, cpu
