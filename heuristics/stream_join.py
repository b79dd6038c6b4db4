"""The stream-join sticky assignor of KIP-315 (``StickyStreamJoinAssignor``).

Step by step, with its sources and where it follows Kafka: docs/strategies/stream-join.md.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from heuristics.kafka_orders import member_rank
from problems import (
    GroupProblem,
    Result,
    join_partition_count,
    next_epoch,
    previous_number_owners,
    topic_partitions,
)


def assign(problem: GroupProblem) -> Result:
    """Assign partition numbers as KIP-315's stream-join sticky assignor does.

    Parameters
    ----------
    problem
        The consumer group; ``owned`` and ``generation`` are each member's
        previous assignment and its epoch.

    Returns
    -------
    Result
        Status ``"heuristic"``, judged on the ``stream-join`` objective;
        ``info["epoch"]`` is the epoch of the new assignment (step 6).
    """
    count = join_partition_count(problem)
    previous = previous_number_owners(problem)
    rank = member_rank(problem)
    drafters = np.flatnonzero(problem.subscribes.any(axis=1))
    drafters = drafters[np.argsort(rank[drafters], kind="stable")].tolist()

    # Steps 2-3: each previous owner's numbers, and the unowned numbers, ascending.
    owned = np.flatnonzero(previous >= 0)
    owned = owned[np.argsort(previous[owned], kind="stable")]
    owners, starts = np.unique(previous[owned], return_index=True)
    remaining = {
        m: deque(numbers)
        for m, numbers in zip(owners.tolist(), np.split(owned.tolist(), starts[1:]))
    }
    unowned = deque(np.flatnonzero(previous < 0).tolist())
    victims = sorted(remaining, key=lambda m: (-len(remaining[m]), rank[m]))

    # Step 4: the draft.
    number_owner = np.full(count, -1, dtype=np.int32)
    turn = 0
    drafted = 0
    while drafted < count:
        holders = [m for m in drafters if remaining.get(m)]
        others = [m for m in drafters if not remaining.get(m)]
        for m in holders + others:
            if drafted == count:
                break
            if remaining.get(m):
                k = remaining[m].popleft()
            elif unowned:
                k = unowned.popleft()
            else:  # every undrafted number is someone's: a victim with something left exists
                while not remaining[victims[turn]]:
                    del victims[turn]
                    turn %= len(victims)
                k = remaining[victims[turn]].popleft()
                turn = (turn + 1) % len(victims)
            number_owner[k] = m
            drafted += 1

    return Result(
        problem,
        "stream-join",
        topic_partitions(problem, number_owner),
        info={"epoch": next_epoch(problem)},
        objective_name="stream-join",
    )
