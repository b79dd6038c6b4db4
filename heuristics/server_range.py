"""KIP-848's server-side ``RangeAssignor`` (``group.consumer.assignors=range`` on the broker).

Step by step, with its sources and where it follows Kafka: docs/strategies/kip848.md.
"""

from __future__ import annotations

import numpy as np

from heuristics.kafka_orders import member_rank
from heuristics.server_input import topic_signatures
from problems import GroupProblem, Result, baseline_objective


def _subscriber_runs(
    problem: GroupProblem, rank: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each topic's subscriber count and its first ``min(partitions, subscribers)`` subscribers in
    Kafka's member order, as ``(subscribers, topic, within, member)`` arrays (one row per subscriber
    that receives a partition, by topic then member order).

    Members sharing a subscription form a class, topics subscribed by the same classes a signature;
    each signature's subscribers are listed once, so the work grows with members times signatures
    and with partitions, never with members times topics."""
    topics = problem.num_topics
    member_class, class_topics = problem.subscription_classes
    signature, first = topic_signatures(class_topics)
    by_rank = np.argsort(rank, kind="stable")
    ranked_class = member_class[by_rank]
    counts = problem.partition_counts.astype(np.int64)
    subscribers = np.zeros(topics, dtype=np.int64)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    topic_order = np.argsort(signature, kind="stable")
    bounds = np.searchsorted(signature[topic_order], np.arange(len(first) + 1))
    for s, classes_in in enumerate(class_topics[:, first].T):
        group = topic_order[bounds[s] : bounds[s + 1]]
        listed = by_rank[classes_in[ranked_class]]  # the signature's subscribers in member order
        subscribers[group] = len(listed)
        taken = np.minimum(counts[group], len(listed))
        topic = np.repeat(group, taken)
        within = np.arange(len(topic)) - np.repeat(np.cumsum(taken) - taken, taken)
        parts.append((topic, within, listed[within] if len(listed) else within))
    topic, within, member = (np.concatenate(column) for column in zip(*parts))
    order = np.lexsort((within, topic))
    return subscribers, topic[order], within[order], member[order]


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
    subscribers, topic, within, member = _subscriber_runs(problem, member_rank(problem))
    counts = problem.partition_counts.astype(np.int64)
    quota = counts[topic] // subscribers[topic]
    lengths = quota + (within < counts[topic] % subscribers[topic])
    assignable = subscribers[problem.partition_topic] > 0
    owner[assignable] = np.repeat(member, lengths)
    return Result(problem, "server-range", owner, objective_name=baseline_objective(problem))
