"""The stream-join sticky assignor of KIP-315 (``StickyStreamJoinAssignor``).

Source: KIP-315 (seed 003), section "Assignment Strategy", steps 1-7.  The
assignor hands out *partition numbers*: whoever gets number ``k`` gets
topic-partition ``(t, k)`` of every topic ``t`` it subscribes, so each
number is consumed in one place across all joined topics (co-partitioned).

1. ``K``, the number of partitions to assign, is the smallest partition count
   over the topics the group subscribes (:func:`problems.join_partition_count`);
   numbers ``>= K`` go unassigned.
2. Previous ownership: each member's claimed numbers (a member owning
   ``(t, k)`` of any topic claims ``k``: the KIP keeps a ``HashSet<Integer>``),
   numbers ``>= K`` dropped ("only partitions that are eligible for
   assignment"), and of two claims on one number the higher epoch
   (``generation``) wins, so a zombie with a stale epoch loses everything it
   claims (:func:`problems.previous_number_owners`; equal epochs: neither
   keeps it, DESIGN.md section 3 -- the KIP is silent on ties).
3. Unowned numbers: those below ``K`` that nobody validly owns.
4. The draft: members select one number at a time in rounds, every member once
   per round, so counts differ by at most one ("while still being fair");
   each round starts with the members that still hold unselected previous
   numbers ("prefer a consumer who has a previously owned partition").  A
   member selects (a) its own smallest unselected previous number, else (b)
   the smallest unowned number, else (c) steals the smallest unselected
   number of a previous owner; steals go round the previous owners in turn,
   "beginning with the consumer that had the longest list of previously owned
   partitions".
5. Numbers become topic-partitions for each topic the member subscribes;
   a topic only some members subscribe leaves the other members' share of it
   unassigned, as the KIP describes for a topic being added to the join.
6. The next epoch is the largest epoch received plus one, reported as
   ``Result.info["epoch"]``.

Where the KIP is silent this module follows its example code
(MikeFreyberger/sticky-join-assignor) or Kafka: ties in the draft order and
in the steal order go by Kafka's member order (static members by
``group.instance.id``, then member id: :func:`heuristics.kafka_orders.member_rank`);
previous and unowned numbers are taken smallest first (the example code's
``remove(0)`` on lists built from integer hash sets); with no epoch received
the largest is 0, so the first assignment carries epoch 1.  Two defects of the
example code are not reproduced, the KIP's text is followed instead: a steal
never targets a member with nothing left to give (the example code cycles
over every previous owner and fails on an exhausted one), and claims on
numbers ``>= K`` are dropped (the example code logs "Skipping" but keeps
them).  Members that subscribe no existing topic take no part in the draft: a
number given to them would become no topic-partition at all.
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
    )
