"""Kafka's client ``RangeAssignor`` (``partition.assignment.strategy=range``).

Source: Apache Kafka, ``org.apache.kafka.clients.consumer.RangeAssignor``
(the rack-unaware path; DESIGN.md section 4).  For every topic, its subscribers
are put in Kafka's member order (static members first by ``group.instance.id``,
then dynamic members by member id: :func:`heuristics._kafka.member_rank`); with
``P`` partitions and ``N`` subscribers, each gets ``P // N`` consecutive
partitions and the first ``P % N`` get one more.  Topics are independent, so
the order in which topics are visited does not matter.

KIP-881 made Kafka's range assignor rack-aware when both the consumers and the
partitions' replicas carry racks; the problem format has no partition racks, so
(as in Kafka without partition rack information) member racks are ignored.
"""

from __future__ import annotations

import numpy as np

from heuristics._kafka import member_rank
from problems import GroupProblem, Result


def assign(problem: GroupProblem) -> Result:
    """Assign partitions as Kafka's RangeAssignor does.

    Parameters
    ----------
    problem
        The consumer group; previous ownership and lags are ignored, as in Kafka.

    Returns
    -------
    Result
        Status ``"heuristic"``; judged on the sticky objective.
    """
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    rank = member_rank(problem)
    for t, subscribers in enumerate(problem.topic_subscribers):
        count = int(problem.partition_counts[t])
        if len(subscribers) == 0 or count == 0:
            continue
        ordered = subscribers[np.argsort(rank[subscribers])]
        quota, extra = divmod(count, len(ordered))
        lengths = np.full(len(ordered), quota, dtype=np.int64)
        lengths[:extra] += 1
        start = problem.topic_start[t]
        owner[start : start + count] = np.repeat(ordered, lengths)
    return Result(problem, "range", owner)
