"""Who owned what before, written once: claims (KIP-341), partition numbers and epochs (KIP-315).

Heuristics, models and the evaluator read previous ownership from here, and
every conflict between claims is settled by one rule, :func:`resolve_claims`
(the highest generation wins; a tie at the highest keeps none):

* :func:`previous_owners`: the valid previous owner of each partition;
* :func:`join_partition_count`, :func:`previous_number_owners`: KIP-315's K
  and the previous owner of each partition number;
* :func:`number_owners`: the owner of each partition number in an answer;
  :func:`topic_partitions`: the answer giving ``(t, k)`` to number ``k``'s
  owner; :func:`next_epoch`: the epoch a KIP-315 leader hands out.
"""

from __future__ import annotations

import numpy as np

from problems.arrays import frozen
from problems.group import GroupProblem


def resolve_claims(
    owner: np.ndarray, members: np.ndarray, keys: np.ndarray, generations: np.ndarray
) -> None:
    """Write into ``owner[key]`` the unique highest-generation claimant of each key."""
    single = np.bincount(keys, minlength=len(owner))[keys] == 1
    if single.all():  # the common case, a million claims and no conflict: nothing to sort
        owner[keys] = members
        return
    owner[keys[single]] = members[single]
    members, keys, generations = members[~single], keys[~single], generations[~single]
    order = np.lexsort((-generations, keys))
    keys, generations, members = keys[order], generations[order], members[order]
    first = np.ones(len(keys), dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    tied_with_next = np.zeros(len(keys), dtype=bool)
    tied_with_next[:-1] = (keys[1:] == keys[:-1]) & (generations[1:] == generations[:-1])
    winners = first & ~tied_with_next
    owner[keys[winners]] = members[winners]


def previous_owners(problem: GroupProblem) -> np.ndarray:
    """The valid previous owner of every partition, ``-1`` where there is none.

    KIP-341: a claim counts only if the partition still exists and the member
    still subscribes its topic; among several claimants the highest generation
    wins; when the highest generation is claimed by two or more members, none
    of them keeps the partition as a stickiness credit.  A member without a
    generation counts as generation -1.
    """
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    members, partitions = problem.owned_claims
    if len(partitions) == 0:
        return frozen(owner)
    keep = problem.subscribes[members, problem.partition_topic[partitions]]
    members, partitions = members[keep], partitions[keep]
    resolve_claims(owner, members, partitions, problem.generations[members])
    return frozen(owner)


def join_partition_count(problem: GroupProblem) -> int:
    """K of KIP-315: the smallest partition count over the group's subscribed topics."""
    subscribed = problem.subscribes.any(axis=0)
    if not subscribed.any():
        return 0
    return int(problem.partition_counts[subscribed].min())


def previous_number_owners(problem: GroupProblem) -> np.ndarray:
    """The valid previous owner of every partition number ``k < K`` (KIP-315).

    A member claims number ``k`` if it owned ``(t, k)`` of any existing topic
    (KIP-315 keeps a set of partition numbers per member); only numbers below K
    are eligible, and a member subscribed to no existing topic claims nothing.
    Conflicting claims: the higher epoch (``generation``) wins, the zombie with
    the older one loses; equal epochs: neither keeps it (as KIP-341).
    """
    count = join_partition_count(problem)
    owner = np.full(count, -1, dtype=np.int32)
    members, partitions = problem.owned_claims
    numbers = problem.partition_index[partitions]
    keep = (numbers < count) & np.any(problem.subscribes, axis=1)[members]
    members, numbers = members[keep], numbers[keep]
    # One claim per (member, number), whatever the number of topics.
    pairs = np.unique(members.astype(np.int64) * max(count, 1) + numbers)
    members, numbers = (pairs // max(count, 1)).astype(np.int32), pairs % max(count, 1)
    if len(numbers):
        resolve_claims(owner, members, numbers, problem.generations[members])
    return frozen(owner)


def number_owners(problem: GroupProblem, owner: np.ndarray) -> np.ndarray:
    """The owner of each partition number ``k < K`` in ``owner``.

    Who holds ``(t, k)`` of a subscribed topic, -1 if nobody.

    (Whether every ``(t, k)`` goes with its number, co-partitioning, is the
    evaluator's check.)
    """
    count = join_partition_count(problem)
    numbers = np.full(count, -1, dtype=np.int64)
    if count == 0:
        return numbers
    subscribed_topics = np.flatnonzero(problem.subscribes.any(axis=0))
    block = np.stack(
        [owner[problem.topic_start[t] : problem.topic_start[t] + count] for t in subscribed_topics]
    )
    numbers[:] = block.max(axis=0)
    return numbers


def topic_partitions(problem: GroupProblem, number_owner: np.ndarray) -> np.ndarray:
    """KIP-315 step 5: the ``owner`` array giving ``(t, k)`` to number k's owner if it subscribes t."""
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    count = len(number_owner)
    if count == 0:
        return owner
    for t in np.flatnonzero(problem.subscribes.any(axis=0)).tolist():
        start = int(problem.topic_start[t])
        owner[start : start + count] = np.where(
            problem.subscribes[number_owner, t], number_owner, -1
        )
    return owner


def next_epoch(problem: GroupProblem) -> int:
    """KIP-315 step 6: the largest epoch received (0 when none is) plus one."""
    given = problem.generations[np.asarray(problem.has_generation, dtype=bool)]
    return int(given.max(initial=0)) + 1
