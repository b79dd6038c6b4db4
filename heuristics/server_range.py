"""KIP-848's server-side ``RangeAssignor`` (``group.consumer.assignors=range`` on the broker).

Step by step, with its sources and where it follows Kafka: docs/strategies/kip848.md.
"""

from __future__ import annotations

import numpy as np

from heuristics.kafka_orders import member_rank
from problems import GroupProblem, Result, baseline_objective


def assign(problem: GroupProblem) -> Result:
    """Assign partitions as Kafka 4's server ``RangeAssignor`` does.

    Returns
    -------
    Result
        Status ``"heuristic"``; judged on the sticky objective (rack-aware when racks are known).
    """
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    if problem.num_members == 0 or problem.num_partitions == 0:
        return Result(problem, "server-range", owner, objective_name=baseline_objective(problem))
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
    return Result(problem, "server-range", owner, objective_name=baseline_objective(problem))
