"""kafka-python's ``StickyPartitionAssignor`` as an independent peer (test and benchmark support).

kafka-python (PyPI, 3.0.x) ports Kafka's pre-KAFKA-9987 sticky assignor (the
general algorithm only, no fast path for equal subscriptions) and runs it
without a broker.  Each member's previous assignment and generation travel in
its subscription user data (``StickyPartitionAssignor._metadata``), exactly as
a consumer would send them.  It orders ids as Python does, which equals Java's
order for the ASCII ids used.
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
            previous = [TopicPartition(t, i) for t, indices in owned.items() for i in indices] if owned else None
            generation = int(problem.generations[m])
            metadata = self.assignor._metadata(sorted(problem.subscriptions[m]), previous, generation)
            members.append(JoinGroupResponse.JoinGroupResponseMember(
                member_id=member_id, group_instance_id=None, metadata=metadata))
        owner = np.full(problem.num_partitions, -1, dtype=np.int32)
        for member_id, assignment in self.assignor.assign(_Cluster(problem), members).items():
            m = problem.member_index[member_id]
            for tp in assignment.partitions():
                owner[problem.global_id(tp.topic, tp.partition)] = m
        return owner

    @staticmethod
    def assignment_json(problem: GroupProblem, owner: np.ndarray) -> dict:
        """The answer as DESIGN.md's assignment JSON (to feed the next rebalance)."""
        return assignment_json(problem, owner)
