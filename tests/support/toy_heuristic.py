"""The toy strategy's heuristic (tests/models/test_toy_strategy.py): each partition, in order, to the
subscribed member with the fewest partitions so far (ties: the lowest position), ignoring who owned
it before.  A heuristic module's one entry point is ``assign(problem) -> Result``."""

from __future__ import annotations

import numpy as np

from problems import GroupProblem, Result


def assign(problem: GroupProblem) -> Result:
    """Least loaded first, partition by partition; judged on the objective its record names."""
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    counts = np.zeros(problem.num_members, dtype=np.int64)
    for partition, topic in enumerate(problem.partition_topic):
        members = np.flatnonzero(problem.subscribes[:, topic])
        if len(members):
            chosen = members[np.argmin(counts[members])]
            owner[partition] = chosen
            counts[chosen] += 1
    return Result(problem, "toy-least-loaded", owner)
