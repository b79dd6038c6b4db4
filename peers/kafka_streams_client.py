"""Kafka Streams' own client-side task assignors, in-process through JPype (tests and benchmarks only).

Runs Kafka 4.4's ``HighAvailabilityTaskAssignor`` (with its standby assignors and KIP-925's
``RackAwareTaskAssignor``) and KIP-924's public ``StickyTaskAssignor`` on the inputs
``StreamsPartitionAssignor`` would hand them for a :class:`heuristics.streams.streams_ha_state.StreamsInput`
(``StreamsClientPeers.java`` builds them from arrays):

* a ``ClientState`` per process with its UUID, capacity (threads), client tags, previous tasks and
  the lag of every stateful task; ``racksForProcessConsumer`` with each member's rack;
* a ``Cluster`` holding every task's source topic-partitions on one broker per rack, and an
  ``InternalTopicManager`` that describes the changelog topics the same way (a topic-partition
  without racks sits on a broker without a rack, which switches KIP-925 off as in Kafka);
* for KIP-924, ``DefaultKafkaStreamsState``s and ``DefaultTaskInfo``s in the ``HashMap``s
  ``DefaultApplicationState`` keeps (clients and tasks put in their order).

The JVM is the one :mod:`peers.kafka_java` starts (one per process).
"""

from __future__ import annotations

from dataclasses import dataclass

from heuristics.streams.streams_ha_state import StreamsInput
from peers import kafka_java


@dataclass
class PeerAnswer:
    """Kafka's answer per client (task positions), and what else it reports."""

    active: list[set[int]]
    standby: list[set[int]]
    probing: bool = False
    rack_aware: bool = False
    #: KIP-924: ``System.identityHashCode`` of each task's ``TaskInfo`` in that run
    task_info_hashes: list[int] | None = None


def _helper():
    import jpype

    kafka_java.start()
    return jpype.JClass("rebalancelab.peers.StreamsClientPeers")


def _racks(jpype, per_task) -> object:
    string = jpype.JString
    rows = []
    for partitions in per_task:
        row = []
        for racks in partitions:
            row.append(
                None if racks is None else jpype.JArray(string)([string(r) for r in sorted(racks)])
            )
        rows.append(jpype.JArray(jpype.JArray(string))(row))
    return jpype.JArray(jpype.JArray(jpype.JArray(string)))(rows)


def _input(inp: StreamsInput):
    import jpype

    helper = _helper()
    j = helper.newInput()
    string = jpype.JString
    c = inp.num_clients
    j.msb = jpype.JArray(jpype.JLong)([msb for msb, _ in inp.client_uuids])
    j.lsb = jpype.JArray(jpype.JLong)([lsb for _, lsb in inp.client_uuids])
    j.capacity = jpype.JArray(jpype.JInt)(list(inp.capacity))
    j.tagKeys = jpype.JArray(jpype.JArray(string))(
        [jpype.JArray(string)(list(tags)) for tags in inp.client_tags]
    )
    j.tagValues = jpype.JArray(jpype.JArray(string))(
        [jpype.JArray(string)(list(tags.values())) for tags in inp.client_tags]
    )
    j.memberRacks = jpype.JArray(jpype.JArray(string))(
        [
            jpype.JArray(string)([None if r is None else string(r) for r in racks])
            for racks in inp.member_racks
        ]
    )
    j.taskSubtopology = jpype.JArray(jpype.JInt)([s for s, _ in inp.task_ids])
    j.taskPartition = jpype.JArray(jpype.JInt)([p for _, p in inp.task_ids])
    j.stateful = jpype.JArray(jpype.JBoolean)(list(inp.stateful))
    j.lag = jpype.JArray(jpype.JArray(jpype.JLong))(
        [jpype.JArray(jpype.JLong)([0 if x is None else x for x in inp.lag[i]]) for i in range(c)]
    )
    j.sourceRacks = _racks(jpype, inp.source_racks)
    j.changelogRacks = _racks(jpype, inp.changelog_racks)
    previous_active: list[list[int]] = [[] for _ in range(c)]
    previous_standby: list[list[int]] = [[] for _ in range(c)]
    for t, owner in enumerate(inp.previous_active):
        for client in owner:
            previous_active[client].append(t)
    for t, holders in enumerate(inp.previous_standby):
        for client in holders:
            previous_standby[client].append(t)
    j.previousActive = jpype.JArray(jpype.JArray(jpype.JInt))(
        [jpype.JArray(jpype.JInt)(row) for row in previous_active]
    )
    j.previousStandby = jpype.JArray(jpype.JArray(jpype.JInt))(
        [jpype.JArray(jpype.JInt)(row) for row in previous_standby]
    )
    j.acceptableRecoveryLag = inp.acceptable_recovery_lag
    j.maxWarmupReplicas = inp.max_warmup_replicas
    j.numStandbyReplicas = inp.num_standby_replicas
    j.rackAwareAssignmentTags = jpype.JArray(string)(list(inp.rack_aware_assignment_tags))
    j.trafficCost = -1 if inp.traffic_cost is None else inp.traffic_cost
    j.nonOverlapCost = -1 if inp.non_overlap_cost is None else inp.non_overlap_cost
    j.rackAwareAssignmentStrategy = inp.rack_aware_assignment_strategy
    return helper, j


def high_availability(inp: StreamsInput) -> PeerAnswer:
    """Kafka's ``HighAvailabilityTaskAssignor.assign`` on ``inp``."""
    helper, j = _input(inp)
    out = helper.highAvailability(j)
    c = inp.num_clients
    return PeerAnswer(
        [set(int(t) for t in out[i]) for i in range(c)],
        [set(int(t) for t in out[c + i]) for i in range(c)],
        probing=bool(out[2 * c][0]),
        rack_aware=bool(out[2 * c + 1][0]),
    )


def kip924_sticky(inp: StreamsInput) -> PeerAnswer:
    """KIP-924's ``StickyTaskAssignor.assign`` on ``inp``."""
    helper, j = _input(inp)
    out = helper.kip924Sticky(j)
    c = inp.num_clients
    return PeerAnswer(
        [set(int(t) for t in out[i]) for i in range(c)],
        [set(int(t) for t in out[c + i]) for i in range(c)],
        task_info_hashes=[int(h) for h in out[2 * c]],
    )


def _timed(call, inp: StreamsInput, warmups: int, runs: int) -> tuple[PeerAnswer, list[float]]:
    """``call(inp)`` ``warmups`` untimed times, then ``runs`` times, each timed inside the JVM from
    Kafka's ``assign`` call to its returned assignment (the input is built before the clock starts)."""
    for _ in range(warmups):
        call(inp)
    seconds = []
    answer = None
    for _ in range(runs):
        answer = call(inp)
        seconds.append(int(_helper().lastAssignNanos) / 1e9)
    assert answer is not None
    return answer, seconds


def time_high_availability(
    inp: StreamsInput, warmups: int = 3, runs: int = 3
) -> tuple[PeerAnswer, list[float]]:
    """Kafka's ``HighAvailabilityTaskAssignor`` answer and the seconds of ``runs`` timed calls."""
    return _timed(high_availability, inp, warmups, runs)


def time_kip924_sticky(
    inp: StreamsInput, warmups: int = 3, runs: int = 3
) -> tuple[PeerAnswer, list[float]]:
    """KIP-924's ``StickyTaskAssignor`` answer and the seconds of ``runs`` timed calls."""
    return _timed(kip924_sticky, inp, warmups, runs)
