"""kafka-python's client assignors as an independent peer (test and benchmark support only).

kafka-python (PyPI) implements Kafka's Range, RoundRobin and (pre-KAFKA-9987)
Sticky assignors in Python and runs them without a broker.  It orders ids as
Python does, which equals Java's order for the ASCII ids used.

Range and round robin (:func:`peer_assignment`): two defects of 3.0.12 limit
where they can be a reference: it drops members when static and dynamic members
are interleaved (so only dynamic members are compared), and its round-robin skip
loop breaks (``KeyError``) as soon as it must skip a member not subscribed to a
topic (so round robin is compared only when every member subscribes every topic).

Sticky (:class:`PeerStickyGroup`): kafka-python 3.0.x ports Kafka's
pre-KAFKA-9987 sticky assignor (the general algorithm only, no fast path for
equal subscriptions).  Each member's previous assignment and generation travel
in its subscription user data (``StickyPartitionAssignor._metadata``), exactly
as a consumer would send them.
"""

from __future__ import annotations

import numpy as np

from problems import GroupProblem, assignment_json


class _Cluster:
    def __init__(self, problem: GroupProblem):
        self._counts = dict(zip(problem.topics, problem.partition_counts.tolist()))

    def topics(self):
        return set(self._counts)

    def partitions_for_topic(self, topic):
        return set(range(self._counts[topic])) if topic in self._counts else None


def peer_assignment(problem: GroupProblem, strategy: str) -> dict[str, dict[str, list[int]]]:
    """kafka-python's assignment of ``problem`` in our JSON shape (``range`` or ``roundrobin``)."""
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from kafka.protocol.consumer import JoinGroupResponse

    assignor = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}[
        strategy
    ]
    members = [
        JoinGroupResponse.JoinGroupResponseMember(
            member_id=member_id,
            group_instance_id=None,
            metadata=assignor.metadata(list(subscription)),
        )
        for member_id, subscription in zip(problem.members, problem.subscriptions)
    ]
    out: dict[str, dict[str, list[int]]] = {m: {} for m in problem.members}
    for member_id, assignment in assignor.assign(_Cluster(problem), members).items():
        for topic, partitions in assignment.assigned_partitions:
            if partitions:
                out[member_id][topic] = sorted(partitions)
    # Our JSON keeps the problem's topic order within each member.
    order = problem.topic_index
    return {m: dict(sorted(t.items(), key=lambda kv: order[kv[0]])) for m, t in out.items()}


class PeerStickyGroup:
    """One kafka-python sticky assignor instance for a group (it keeps state between calls)."""

    def __init__(self):
        from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

        self.assignor = StickyPartitionAssignor()

    def assign(self, problem: GroupProblem) -> np.ndarray:
        """kafka-python's answer to ``problem`` as an ``owner`` array."""
        from kafka.protocol.consumer import JoinGroupResponse
        from kafka.structs import TopicPartition

        members = []
        for m, member_id in enumerate(problem.members):
            owned = problem.owned[m]
            previous = (
                [TopicPartition(t, i) for t, indices in owned.items() for i in indices]
                if owned
                else None
            )
            generation = int(problem.generations[m])
            metadata = self.assignor._metadata(
                sorted(problem.subscriptions[m]), previous, generation
            )
            members.append(
                JoinGroupResponse.JoinGroupResponseMember(
                    member_id=member_id, group_instance_id=None, metadata=metadata
                )
            )
        owner = np.full(problem.num_partitions, -1, dtype=np.int32)
        for member_id, assignment in self.assignor.assign(_Cluster(problem), members).items():
            m = problem.member_index[member_id]
            for tp in assignment.partitions():
                owner[problem.global_id(tp.topic, tp.partition)] = m
        return owner

    @staticmethod
    def assignment_json(problem: GroupProblem, owner: np.ndarray) -> dict:
        """The answer as the assignment JSON of docs/formats.md (to feed the next rebalance)."""
        return assignment_json(problem, owner)
