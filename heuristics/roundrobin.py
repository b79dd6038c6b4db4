"""Kafka's client ``RoundRobinAssignor`` (``partition.assignment.strategy=roundrobin``).

Step by step, with its sources and where it follows Kafka: docs/strategies/client-assignors.md.
"""

from __future__ import annotations

import numpy as np

from heuristics.kafka_orders import member_rank, topics_in_name_order
from problems import GroupProblem, Result, baseline_objective


def assign(problem: GroupProblem) -> Result:
    """Assign partitions as Kafka's RoundRobinAssignor does.

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
    by_rank = np.argsort(rank).astype(np.int32)  # circle position -> member
    size = problem.num_members
    position = 0  # the circle's next member, as a circle position
    for t in topics_in_name_order(problem):
        subscribers = problem.topic_subscribers[t]
        count = int(problem.partition_counts[t])
        if len(subscribers) == 0 or count == 0:
            continue
        seats = np.sort(rank[subscribers])  # the subscribers' circle positions
        first = int(np.searchsorted(seats, position)) % len(seats)
        dealt = seats[(first + np.arange(count)) % len(seats)]
        start = problem.topic_start[t]
        owner[start : start + count] = by_rank[dealt]
        position = (int(dealt[-1]) + 1) % size
    return Result(problem, "roundrobin", owner, objective_name=baseline_objective(problem))
