"""Kafka's streams-group task assignor (KIP-1071), in-process through JPype (tests and benchmarks only).

The JVM and classpath are :mod:`peers.kafka_java`'s (:func:`peers.kafka_java.start`); the helper
class ``StreamsPeers.java`` builds the assignor's input from whole arrays and flattens its answer.

The input is what the group coordinator's streams ``TargetAssignmentBuilder`` hands the assignor:

* a ``GroupSpecImpl`` over a ``HashMap`` of member id -> ``MemberMetadataAndStateImpl`` filled in
  the document's member order: each member's process, rack, client tags, its current active,
  standby and warm-up tasks (the document's ``active``, ``standby``, ``warmup``), and the task
  offsets it reports: for every task of a stateful subtopology its process has state for, the
  offset sum :func:`heuristics.streams.streams_sticky.task_offset_sums` derives from the process's lag
  (every member of a process reports the process's), with the task's end offset;
* the configs ``num.standby.replicas`` and ``rack.aware.assignment.tags``;
* a ``TopologyDescriber`` with every subtopology (sorted by id, as the coordinator's
  ``TopologyMetadata`` lists them), its task count and whether it is stateful.
"""

from __future__ import annotations

import numpy as np

from heuristics.streams.streams_sticky import task_offset_sums
from peers.kafka_java import _ints, _longs, _offsets, _strings, start
from problems.streams import StreamsAssignment, StreamsProblem


def helper():
    """The ``StreamsPeers`` class (the JVM started if it was not)."""
    import jpype

    start()
    return jpype.JClass("rebalancelab.peers.StreamsPeers")


def _runs(problem: StreamsProblem, members: list[list[int]]) -> tuple[object, object, object]:
    """Each member's tasks (lists of task ids) as ``(start, subtopology, partition)`` arrays."""
    flat = np.array([t for tasks in members for t in tasks], dtype=np.int64)
    return (
        _ints(_offsets([len(tasks) for tasks in members])),
        _ints(problem.task_subtopology[flat] if len(flat) else flat),
        _ints(problem.task_partition[flat] if len(flat) else flat),
    )


def streams_input(problem: StreamsProblem) -> tuple[object, object]:
    """Kafka's ``(GroupSpec, TopologyDescriber)`` for ``problem`` (module docstring)."""
    import jpype

    peers = helper()
    members = range(problem.num_members)
    active = [np.flatnonzero(problem.prev_active == m).tolist() for m in members]
    standby = [problem.member_tasks(problem.prev_standby, m).tolist() for m in members]
    warmup = [problem.member_tasks(problem.prev_warmup, m).tolist() for m in members]
    end, offsets = task_offset_sums(problem)
    reported = [np.flatnonzero(offsets[problem.member_process[m]] >= 0).tolist() for m in members]
    values = [int(offsets[problem.member_process[m], t]) for m in members for t in reported[m]]
    ends = [int(end[t]) for m in members for t in reported[m]]
    tags = [sorted(problem.client_tags[m].items()) for m in members]
    spec = peers.groupSpec(
        _strings(problem.members),
        _strings([problem.processes[p] for p in problem.member_process.tolist()]),
        _strings(problem.racks),
        _strings([None] * problem.num_members),
        _ints(_offsets([len(t) for t in tags])),
        _strings([k for t in tags for k, _ in t]),
        _strings([v for t in tags for _, v in t]),
        _strings(problem.subtopologies),
        *_runs(problem, active),
        *_runs(problem, standby),
        *_runs(problem, warmup),
        *_runs(problem, reported),
        _longs(values),
        _longs(ends),
        jpype.JInt(problem.configs.num_standby_replicas),
        _strings(problem.configs.rack_aware_assignment_tags),
    )
    describer = peers.topologyDescriber(
        _strings(problem.subtopologies),
        _ints(problem.partitions),
        jpype.JArray(jpype.JBoolean)(problem.stateful.tolist()),
    )
    return spec, describer


def answer_of(problem: StreamsProblem, group_assignment) -> StreamsAssignment:
    """A ``GroupAssignment`` of the streams assignor as a :class:`StreamsAssignment`."""
    flat = np.array(
        helper().flatten(
            group_assignment, _strings(problem.members), _strings(problem.subtopologies)
        ),
        dtype=np.int64,
    ).reshape(-1, 4)
    kind, member, sub, partition = flat.T
    task = problem.task_start[sub] + partition
    active = np.full(problem.n_tasks, -1, dtype=np.int64)
    is_active = kind == 0
    if len(np.unique(task[is_active])) != int(is_active.sum()):
        raise AssertionError("Kafka's answer gives an active task to two members")
    active[task[is_active]] = member[is_active]
    return StreamsAssignment.of(active, np.stack([task[~is_active], member[~is_active]], axis=1))


def sticky_assign(problem: StreamsProblem) -> StreamsAssignment:
    """Kafka 4.4's streams-group ``StickyTaskAssignor`` on ``problem``."""
    peers = helper()
    spec, describer = streams_input(problem)
    return answer_of(problem, peers.assign(peers.newStickyAssignor(), spec, describer))


def time_sticky_assign(
    problem: StreamsProblem, warmups: int = 3, runs: int = 3
) -> tuple[StreamsAssignment, list[float]]:
    """Kafka's answer and the seconds of ``runs`` timed ``assign`` calls, timed inside the JVM after
    ``warmups`` untimed ones, on one ``GroupSpec``."""
    peers = helper()
    spec, describer = streams_input(problem)
    assignor = peers.newStickyAssignor()
    seconds = [float(s) for s in peers.time(assignor, spec, describer, warmups, runs)]
    return answer_of(problem, peers.assign(assignor, spec, describer)), seconds
