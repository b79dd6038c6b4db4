"""KIP-848's server-side ``RangeAssignor`` (``group.consumer.assignors=range`` on the broker).

Source: Apache Kafka 4.0, ``org.apache.kafka.coordinator.group.assignor.RangeAssignor``
(DESIGN.md section 4; ``tests/peers/test_server_assignors.py`` checks it against the Java
class).  Members are sorted as ``sortMemberIds`` sorts them: members with an instance id
(static members) first, by instance id, then the others by member id (Java's
``String.compareTo``: :func:`heuristics.kafka_orders.member_rank`).  Each topic's partitions are cut
into contiguous ranges over its subscribers in that order: with ``P`` partitions and ``N``
subscribers, ``P // N`` each and the first ``P % N`` one more.  A homogeneous group (every
member on the same topics) whose topics have equal partition counts is therefore
co-partitioned: a member gets the same partition numbers of every topic.

The previous assignment, topic ids and every hash order are irrelevant: each topic is cut
independently, and the sort is total.  Kafka 4.0's server range assignor has no rack awareness
(unlike the client ``RangeAssignor`` of KIP-881), so member racks are ignored here.  The
result equals the client range assignor's without racks; it is written apart (all topics in
one vectorised pass) so that the client assignor's rack logic cannot leak into it.
"""

from __future__ import annotations

import numpy as np

from heuristics.kafka_orders import member_rank
from problems import GroupProblem, Result


def assign(problem: GroupProblem) -> Result:
    """Assign partitions as Kafka 4's server ``RangeAssignor`` does.

    Returns
    -------
    Result
        Status ``"heuristic"``; judged on the sticky objective (rack-aware when racks are known).
    """
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    if problem.num_members == 0 or problem.num_partitions == 0:
        return Result(problem, "server-range", owner)
    rank = member_rank(problem)
    topic, member = np.nonzero(problem.subscribes.T)  # every (topic, subscriber)
    order = np.lexsort((rank[member], topic))
    topic, member = topic[order], member[order]
    subscribers = np.bincount(topic, minlength=problem.num_topics)
    counts = problem.partition_counts
    first = np.concatenate(([0], np.cumsum(subscribers)[:-1]))
    within = np.arange(len(topic)) - first[topic]  # position among the topic's subscribers
    quota = counts[topic] // subscribers[topic]
    lengths = quota + (within < counts[topic] % subscribers[topic])
    owner[problem.assignable] = np.repeat(member, lengths)
    return Result(problem, "server-range", owner)
