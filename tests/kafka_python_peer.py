"""kafka-python's client assignors as an independent peer (test support only).

kafka-python (PyPI) implements Kafka's Range and RoundRobin assignors in Python
and runs them without a broker.  Two defects of 3.0.12 limit where it can be a
reference: it drops members when static and dynamic members are interleaved
(so only dynamic members are compared), and its round-robin skip loop breaks
(``KeyError``) as soon as it must skip a member not subscribed to a topic (so
round robin is compared only when every member subscribes every topic).  It
orders ids as Python does, which equals Java's order for the ASCII ids used.
"""

from __future__ import annotations

from problems import GroupProblem


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

    assignor = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}[strategy]
    members = [
        JoinGroupResponse.JoinGroupResponseMember(
            member_id=member_id, group_instance_id=None, metadata=assignor.metadata(list(subscription))
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
