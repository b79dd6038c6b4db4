"""Kafka's own Java assignors and replica placement, in-process through JPype (tests and benchmarks only).

One JVM per Python process (:func:`start`, idempotent; JPype cannot restart a JVM), on the
classpath ``peers/java/target``: the Apache Kafka release ``make peers`` built (4.4.0 unless
``KAFKA_VERSION`` named another; :func:`built_version`, :func:`kafka_version`) and a
small helper, ``KafkaPeers.java``, that converts whole arrays in one call, so a million-partition
group crosses the boundary in a handful of calls.  ``make test`` / ``make run`` build it
(``make peers``); nothing under ``problems/``, ``heuristics/``, ``models/`` or ``experiments/``
imports this module.

Client assignors (``range``, ``roundrobin``, ``sticky``, ``cooperative-sticky``) get exactly what
the group leader's consumer hands them (``ConsumerCoordinator.onLeaderElected``):

* each member's ``Subscription`` as its own consumer builds it (``ConsumerCoordinator.metadata``):
  the subscribed topics as given (topics missing from the cluster included), in the iteration order
  of the ``HashSet`` ``KafkaConsumer.subscribe`` keeps; the user data of a fresh instance of the
  member's assignor class told the member's previous assignment (``owned``, as given, stale claims
  included) and generation through ``onAssignment`` (``StickyAssignor`` carries them there); the
  owned partitions in the subscription only for cooperative assignors (an eager consumer revokes
  everything before it joins); the generation (-1 when absent); the rack.  A member with neither
  ``owned`` nor ``generation`` is a new consumer whose assignor was never told anything;
* every subscription through ``ConsumerProtocol``'s serialization and back, ``group.instance.id``
  set, in a ``java.util.HashMap`` keyed by member id: wherever Kafka's assignors break a tie by
  Java's hash-map iteration order, the order is the one Kafka's consumer produces;
* a ``Cluster`` with every partition of ``problem.topics``; each partition's replicas on one node
  per rack of the document's ``partition_racks`` (KIP-881), or one node without a rack when the
  document has none (KIP-881's rack-aware paths then stay off, as in Kafka without partition racks).

``kafka_default`` calls ``org.apache.kafka.admin.AdminUtils.assignReplicasToBrokers`` per topic,
brokers in the problem's order, with a fixed start index (Kafka's ``fixedStartIndex``).  Kafka 4.1
removed ``AdminUtils`` (4.1's tools place replicas with the controller's ``StripedReplicaPlacer``),
so the class comes from ``kafka-server-common`` 4.0.2, the last release with it
(``target/placement-lib/``), through a class loader of its own above the built release.

``server_assign`` runs the KIP-848 server assignors
(``uniform``, ``range``) on the ``GroupSpec`` the coordinator would build (:func:`server_input`);
topic ids are the document's ``topic_ids``, else deterministic ones (``GroupProblem.topic_uuids``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from problems import GroupProblem, PlacementProblem

JAVA_DIR = Path(__file__).resolve().parent / "java"
TARGET = JAVA_DIR / "target"
HELPER_JAR = TARGET / "kafka-peers-1.jar"
LIBRARIES = TARGET / "lib"
#: ``kafka-server-common`` of the last release with ``AdminUtils`` (kafka-default's reference).
PLACEMENT_LIBRARIES = TARGET / "placement-lib"
#: ``AppInfoParser`` (the release's version) by release: moved to ``...utils.internals`` in 4.4.
APP_INFO_PARSERS = (
    "org.apache.kafka.common.utils.internals.AppInfoParser",
    "org.apache.kafka.common.utils.AppInfoParser",
)

CLIENT_ASSIGNORS = {
    "range": "org.apache.kafka.clients.consumer.RangeAssignor",
    "roundrobin": "org.apache.kafka.clients.consumer.RoundRobinAssignor",
    "sticky": "org.apache.kafka.clients.consumer.StickyAssignor",
    "cooperative-sticky": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
}
#: KIP-932's share-group assignor (``group.share.assignors``' default, ``simple``).
SHARE_ASSIGNOR = "org.apache.kafka.coordinator.group.assignor.SimpleAssignor"
SERVER_ASSIGNORS = {
    "uniform": "org.apache.kafka.coordinator.group.assignor.UniformAssignor",
    "range": "org.apache.kafka.coordinator.group.assignor.RangeAssignor",
}


class PeerMissing(RuntimeError):
    """The Java peer is not built (run ``make peers``)."""


def start():
    """Start the JVM once per process (idempotent) and return the ``KafkaPeers`` helper class."""
    import jpype

    if not jpype.isJVMStarted():
        if not HELPER_JAR.exists() or not LIBRARIES.is_dir():
            raise PeerMissing(f"{HELPER_JAR} or {LIBRARIES} is missing: run `make peers`")
        jpype.startJVM(
            "-Xss16m",
            "-XX:+UseParallelGC",
            classpath=[str(HELPER_JAR), str(LIBRARIES / "*")],
            convertStrings=False,
        )
    return jpype.JClass("rebalancelab.peers.KafkaPeers")


def kafka_version() -> str:
    """The Kafka release on the classpath (``AppInfoParser.getVersion``)."""
    import jpype

    start()
    for name in APP_INFO_PARSERS:
        try:
            parser = jpype.JClass(name)
        except TypeError:  # JPype: no such class in this release
            continue
        return str(parser.getVersion())
    raise PeerMissing(f"no AppInfoParser on the classpath ({', '.join(APP_INFO_PARSERS)})")


def built_version() -> str | None:
    """The release ``make peers`` built (its stamp ``target/.built-VERSION``), None if not built."""
    stamps = sorted(TARGET.glob(".built-*"))
    return stamps[-1].name.removeprefix(".built-") if stamps else None


def _placement_class(name: str):
    """A class of ``target/placement-lib/`` (``AdminUtils``, ``BrokerMetadata``) through one
    class loader whose parent is the release's: classes the release has come from the release."""
    import jpype

    global _placement_loader
    start()
    if _placement_loader is None:
        jars = sorted(PLACEMENT_LIBRARIES.glob("*.jar"))
        if not jars:
            raise PeerMissing(f"{PLACEMENT_LIBRARIES} is missing: run `make peers`")
        url = jpype.JClass("java.net.URL")
        urls = jpype.JArray(url)(
            [jpype.JClass("java.io.File")(str(j)).toURI().toURL() for j in jars]
        )
        parent = jpype.JClass("java.lang.ClassLoader").getSystemClassLoader()
        _placement_loader = jpype.JClass("java.net.URLClassLoader")(urls, parent)
    return jpype.JClass(name, loader=_placement_loader)


_placement_loader = None


# ------------------------------------------------------------------ conversions


def _strings(values) -> object:
    import jpype

    return jpype.JArray(jpype.JString)([None if v is None else str(v) for v in values])


def _ints(values) -> object:
    import jpype

    return jpype.JArray(jpype.JInt)(np.ascontiguousarray(values, dtype=np.int32))


def _longs(values) -> object:
    import jpype

    return jpype.JArray(jpype.JLong)(np.ascontiguousarray(values, dtype=np.int64))


def _racks(partition_racks) -> object:
    import jpype

    if partition_racks is None:
        return None
    string_array = jpype.JArray(jpype.JString)
    return jpype.JArray(string_array)([string_array(list(racks)) for racks in partition_racks])


def _offsets(lengths) -> np.ndarray:
    start = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(lengths, out=start[1:])
    return start


def _owned_flat(problem: GroupProblem) -> tuple[np.ndarray, list[str], list[int]]:
    """Every member's ``owned`` as given (stale claims included), flattened in its own order."""
    lengths, topics, partitions = [], [], []
    for owned in problem.owned:
        count = 0
        for topic, indices in owned.items():
            topics += [topic] * len(indices)
            partitions += list(indices)
            count += len(indices)
        lengths.append(count)
    return _offsets(lengths), topics, partitions


def client_input(problem: GroupProblem, assignor: str, partition_racks=None):
    """Kafka's ``(Cluster, GroupSubscription)`` for ``problem`` as the leader's consumer builds them.

    Single use: an assignor that reads user data (``StickyAssignor``) consumes the buffers; pass
    ``start().unread(group)`` to call an assignor on the same input again.

    ``partition_racks``: optional replica racks of every partition (by global id), a list of lists
    of rack names; ``None`` (default) takes the document's ``partition_racks`` (no partition has a
    rack when it has none).
    """
    peers = start()
    if partition_racks is None:
        partition_racks = problem.partition_rack_lists
    cluster = peers.cluster(
        _strings(problem.topics), _ints(problem.partition_counts), _racks(partition_racks)
    )
    subscriptions = [list(topics) for topics in problem.subscriptions]
    owned_start, owned_topics, owned_partitions = _owned_flat(problem)
    has_previous = [
        bool(problem.owned[m]) or problem.has_generation[m] for m in range(problem.num_members)
    ]
    import jpype

    group = peers.subscriptions(
        CLIENT_ASSIGNORS[assignor],
        _strings(problem.members),
        _strings(problem.instance_ids),
        _strings(problem.racks),
        _ints(_offsets([len(s) for s in subscriptions])),
        _strings([t for s in subscriptions for t in s]),
        _ints(owned_start),
        _strings(owned_topics),
        _ints(owned_partitions),
        _ints(problem.generations),
        jpype.JArray(jpype.JBoolean)(has_previous),
    )
    return peers.clientInput(cluster, group)


def owners(problem: GroupProblem, answer) -> np.ndarray:
    """The ``owner`` array of a client assignor's ``GroupAssignment``."""
    peers = start()
    owner = peers.owners(
        answer, _strings(problem.topics), _longs(problem.topic_start), _strings(problem.members)
    )
    return np.array(owner, dtype=np.int32)


def assign(problem: GroupProblem, assignor: str, partition_racks=None) -> np.ndarray:
    """Kafka's client assignor ``assignor`` (a key of :data:`CLIENT_ASSIGNORS`) on ``problem``: an ``owner`` array.

    A group without members has no leader to run an assignor (Kafka's round robin would throw on
    it): everything stays unassigned.
    """
    peers = start()
    if problem.num_members == 0:
        return np.full(problem.num_partitions, -1, dtype=np.int32)
    inputs = client_input(problem, assignor, partition_racks)
    answer = peers.newAssignor(CLIENT_ASSIGNORS[assignor]).assign(inputs.cluster, inputs.group)
    return owners(problem, answer)


def assignment(problem: GroupProblem, assignor: str, partition_racks=None) -> dict:
    """As :func:`assign`, in the assignment JSON of docs/formats.md shape."""
    from problems import assignment_json

    return assignment_json(problem, assign(problem, assignor, partition_racks))


def time_assign(
    problem: GroupProblem, assignor: str, warmups: int = 3, runs: int = 3
) -> tuple[np.ndarray, list[float]]:
    """Kafka's answer and the seconds of ``runs`` timed ``assign`` calls, timed inside the JVM after
    ``warmups`` untimed ones (JIT warm-up), all from the same ``Cluster`` and ``GroupSubscription``."""
    peers = start()
    inputs = client_input(problem, assignor)  # the document's racks, if any
    instance = peers.newAssignor(CLIENT_ASSIGNORS[assignor])
    seconds = [float(s) for s in peers.time(instance, inputs.cluster, inputs.group, warmups, runs)]
    return owners(problem, instance.assign(inputs.cluster, peers.unread(inputs.group))), seconds


# ------------------------------------------------------------------ KIP-848 server assignors


def _topic_ids(problem: GroupProblem):
    peers = start()
    most, least = problem.topic_uuids
    return peers.topicIds(_longs(most), _longs(least))


def server_input(problem: GroupProblem, partition_racks=None):
    """Kafka's ``(GroupSpec, SubscribedTopicDescriber)`` for ``problem`` as KIP-848's coordinator builds them.

    ``TargetAssignmentBuilder.build``: the member specs in a ``HashMap`` filled in the document's
    order; each member's subscription the ``HashSet`` of its topic names (``ConsumerGroupMember``)
    seen through Kafka's ``TopicIds`` (names missing from the cluster skipped); its current
    assignment (:func:`heuristics.server_input.current_claims`: existing partitions, one owner each)
    as a ``HashMap`` of topic id to ``HashSet`` of partitions filled in the document's order, and
    the inverted assignment; the subscription type from the topic names (``ModernGroup``).  Topic
    ids: ``problem.topic_uuids`` (the document's ``topic_ids``, else deterministic ids in document
    order). Replica racks (``racksForPartition``): ``partition_racks``, else the document's; Kafka
    4.0's server assignors do not read them.
    """
    from heuristics.server_input import current_claims

    return _group_spec(problem, *current_claims(problem), partition_racks)


def _group_spec(problem: GroupProblem, claim_member, claim_partition, partition_racks=None):
    """:func:`server_input` with the members' current assignments given as claims."""
    peers = start()
    if partition_racks is None:
        partition_racks = problem.partition_rack_lists
    ids = _topic_ids(problem)
    topic = problem.partition_topic[claim_partition]
    distinct: dict[int, int] = {}  # members share subscription tuples: each crosses once
    lists = []
    for subscription in problem.subscriptions:
        if id(subscription) not in distinct:
            distinct[id(subscription)] = len(lists)
            lists.append(subscription)
    spec = peers.groupSpec(
        _strings(problem.members),
        _strings(problem.instance_ids),
        _strings(problem.racks),
        _ints([distinct[id(s)] for s in problem.subscriptions]),
        _ints(_offsets([len(s) for s in lists])),
        _strings([t for s in lists for t in s]),
        _strings(problem.topics),
        ids,
        _ints(_offsets(np.bincount(claim_member, minlength=problem.num_members))),
        _ints(topic),
        _ints(problem.partition_index[claim_partition]),
    )
    describer = peers.describer(
        ids, _ints(problem.partition_counts), _racks(partition_racks), _longs(problem.topic_start)
    )
    return spec, describer


def server_assign(
    problem: GroupProblem, assignor: str = "uniform", partition_racks=None
) -> np.ndarray:
    """A KIP-848 server assignor (``uniform`` or ``range``) on ``problem``: an ``owner`` array.

    The input is :func:`server_input`'s.  A group without members gets no assignment.
    """
    import jpype

    if problem.num_members == 0:
        return np.full(problem.num_partitions, -1, dtype=np.int32)
    spec, describer = server_input(problem, partition_racks)
    answer = jpype.JClass(SERVER_ASSIGNORS[assignor])().assign(spec, describer)
    return server_owners(problem, answer)


def server_owners(problem: GroupProblem, answer) -> np.ndarray:
    """The ``owner`` array of a server assignor's ``GroupAssignment``."""
    peers = start()
    owner = peers.serverOwners(
        answer, _topic_ids(problem), _longs(problem.topic_start), _strings(problem.members)
    )
    return np.array(owner, dtype=np.int32)


def time_server_assign(
    problem: GroupProblem, assignor: str = "uniform", warmups: int = 3, runs: int = 3
) -> tuple[np.ndarray, list[float], float]:
    """Kafka's answer, the seconds of ``runs`` timed ``assign`` calls on one already-built
    ``GroupSpec`` (timed inside the JVM after ``warmups`` untimed calls, as Kafka's JMH
    ``ServerSideAssignorBenchmark`` times it), and the seconds :func:`server_input` took to build it."""
    import time

    import jpype

    peers = start()
    began = time.perf_counter()
    spec, describer = server_input(problem)
    built = time.perf_counter() - began
    instance = jpype.JClass(SERVER_ASSIGNORS[assignor])()
    seconds = [float(s) for s in peers.timeServer(instance, spec, describer, warmups, runs)]
    return server_owners(problem, instance.assign(spec, describer)), seconds, built


# ------------------------------------------------------------------ KIP-932 share groups


def share_input(problem: GroupProblem, partition_racks=None):
    """Kafka's ``(GroupSpec, SubscribedTopicDescriber)`` for ``problem`` as a share group (KIP-932).

    As :func:`server_input`, except the current assignment: every member's ``owned`` claims on
    partitions that exist, as given (a share group's partition may have several members, so no
    claim is dropped for another's; :func:`problems.share.previous_claims`).
    """
    from problems.share import previous_claims

    return _group_spec(problem, *previous_claims(problem), partition_racks)


def share_assign(problem: GroupProblem) -> np.ndarray:
    """Kafka's share-group ``SimpleAssignor`` on ``problem``: the ``(member, partition)`` pairs
    (an ``int64`` array of shape ``(K, 2)``, sorted, as :mod:`problems.share` holds a share answer)."""
    import jpype

    from problems.share import pairs_array

    if problem.num_members == 0:
        return pairs_array(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    spec, describer = share_input(problem)
    answer = jpype.JClass(SHARE_ASSIGNOR)().assign(spec, describer)
    flat = np.array(
        start().serverPairs(
            answer, _topic_ids(problem), _longs(problem.topic_start), _strings(problem.members)
        ),
        dtype=np.int64,
    )
    return pairs_array(flat[0::2], flat[1::2])


# ------------------------------------------------------------------ replica placement


def kafka_default(problem: PlacementProblem, start_index: int) -> np.ndarray:
    """``AdminUtils.assignReplicasToBrokers`` per topic with ``fixedStartIndex = start_index``.

    Brokers in the problem's order (``BrokerMetadata`` with the rack when the cluster has racks);
    each topic's partitions must be contiguous indices with one replication factor (what Kafka
    places); the loop starts at the topic's lowest index (``startPartitionId``).  Returns the flat
    replica array in the problem's layout (``replica_start``), as ``heuristics.kafka_default`` does.
    """
    import jpype

    admin = _placement_class("org.apache.kafka.admin.AdminUtils")
    metadata = _placement_class("org.apache.kafka.admin.BrokerMetadata")
    optional = jpype.JClass("java.util.Optional")
    brokers = jpype.JClass("java.util.ArrayList")()
    for broker, rack in zip(problem.broker_ids.tolist(), problem.broker_racks):
        brokers.add(metadata(int(broker), optional.ofNullable(rack)))
    replicas = np.array(problem.replica_brokers, dtype=np.int64)
    by_topic: dict[str, list[int]] = {}
    for p, topic in enumerate(problem.topics):
        by_topic.setdefault(topic, []).append(p)
    factors = problem.replication_factors
    for topic, members in by_topic.items():
        indices = sorted(int(problem.partitions[p]) for p in members)
        if indices != list(range(indices[0], indices[0] + len(indices))):
            raise ValueError(
                f"topic {topic!r}: partitions are not contiguous, Kafka cannot place them"
            )
        factor = int(factors[members[0]])
        if any(int(factors[p]) != factor for p in members):
            raise ValueError(f"topic {topic!r}: partitions have different replication factors")
        placed = admin.assignReplicasToBrokers(
            brokers, len(members), factor, int(start_index), indices[0]
        )
        for p in members:
            chosen = placed.get(jpype.JInt(int(problem.partitions[p])))
            replicas[problem.replica_start[p] : problem.replica_start[p + 1]] = [
                int(b) for b in chosen
            ]
    return replicas
