"""An example of a researcher's own assignor for the harness: keep, then give to the least loaded.

Each member keeps the partitions it owned, up to the even share (partitions over members, rounded
up); every other partition goes, in order, to the subscribed member holding the fewest so far.
Judged on ``sticky`` (balance first, then moves): run it with

    PYTHONPATH=examples/plugins rebalance-lab compare --suite smoke --plugin least_loaded:assign

or install it under the entry point group ``rebalance_lab.strategies`` (docs/harness.md).
"""

from __future__ import annotations

import numpy as np

from problems import GroupProblem, previous_owners

#: The strategy whose constraints and objective judge this assignor's answers.
judged_on = "sticky"


def assign(problem: GroupProblem) -> np.ndarray:
    """The ``owner`` array: for each partition, the position of its member (-1: nobody's)."""
    members, partitions = problem.num_members, problem.num_partitions
    owner = np.full(partitions, -1, dtype=np.int64)
    if members == 0:
        return owner
    share = -(-partitions // members)
    load = np.zeros(members, dtype=np.int64)
    eligible = problem.subscribes[:, problem.partition_topic]  # members x partitions
    previous = previous_owners(problem)
    for p in range(partitions):  # keep what is still subscribed, up to the share
        m = int(previous[p])
        if m >= 0 and eligible[m, p] and load[m] < share:
            owner[p], load[m] = m, load[m] + 1
    for p in np.flatnonzero(owner < 0):
        subscribers = np.flatnonzero(eligible[:, p])
        if len(subscribers):
            m = int(subscribers[np.argmin(load[subscribers])])
            owner[p], load[m] = m, load[m] + 1
    return owner


assign.judged_on = judged_on  # what `--plugin least_loaded:assign` reads
