"""KIP-54's general sticky algorithm (unequal subscriptions), as Apache Kafka runs it.

Source: ``shared/seeds/002`` (KIP-54 with the KIP-341 fix); where the seed is
silent, Apache Kafka's ``AbstractStickyAssignor.generalAssign`` / ``balance`` /
``performReassignments``:

1. *Keep*: every partition stays with its valid previous owner
   (:func:`problems.previous_owners`, KIP-341).
2. *Assign*: topics are sorted by their number of subscribers, fewest first,
   then by name (Kafka's ``TopicComparator``); each unassigned partition, in
   that order and then by index, goes to the subscriber with the fewest
   partitions, ties by member id (Kafka's ``sortedCurrentSubscriptions``).  The
   one-at-a-time choice is computed per topic in one step (water-filling: the
   k-th partition goes to the k-th smallest ``(count before, member id)``
   among the subscribers' successive counts), which is exactly the same.
3. *Balance* (KIP-54's condition): partitions are visited in the same order,
   first the ones that step 2 assigned (unless a subscription change forced a
   revocation), then all of them, in repeated passes until a pass moves
   nothing.  A partition whose owner has 2+ more partitions than another
   subscriber of its topic moves: back to its *earlier* owner (the claim with
   the next-highest generation, Kafka's ``prevAssignment``) when that one has
   2+ fewer, else to the least-loaded subscriber (ties by member id).  A pass
   visits only the topics that break the condition when it starts: no
   partition of another topic can move (its owner is within one of every
   subscriber of the topic), so nothing is skipped.  Topics with a single
   subscriber never move (Kafka's ``fixedPartitions``).
   *No ping-pong* (Kafka's ``PartitionMovements``): moving a partition of topic
   t from c to d, when a partition of t moved earlier from d to c, moves that
   one back instead, so no partition travels c -> d -> c.
   Each move lowers the sum of squared counts by at least 2, so this ends, and
   it ends KIP-54-balanced (:func:`problems.is_kip54_balanced`).
4. *Revert*: if the group was not empty before and the balancing did not
   lower Kafka's balance score (the sum over member pairs of the difference in
   counts, over the members that can take part), the moves of step 3 are undone.
"""

from __future__ import annotations

import numpy as np

from heuristics._kafka import java_order_key
from problems import GroupProblem, earlier_owners, member_counts, member_topic_counts


def general_assign(problem: GroupProblem, previous: np.ndarray, id_rank: np.ndarray) -> np.ndarray:
    """Steps 1-4 of the module docstring; returns the ``owner`` array."""
    owner = previous.copy()
    counts = member_counts(problem, owner).astype(np.int64)
    topics = _topic_order(problem)
    fresh = counts.max(initial=0) == 0
    newly = _assign_unassigned(problem, owner, counts, topics, id_rank)
    before = owner.copy()
    earlier = earlier_owners(problem, previous)
    movable = [t for t in topics if len(problem.topic_subscribers[t]) >= 2]
    balancer = _Balancer(problem, owner, counts, earlier, id_rank)
    moved = False
    if not _revocation_required(problem):
        moved |= balancer.run([(t, newly[t]) for t in movable if len(newly[t])])
    moved |= balancer.run([(t, problem.topic_start[t] + np.arange(problem.partition_counts[t])) for t in movable])
    if not fresh and moved:
        taking_part = _can_take_part(problem, before)
        if _balance_score(counts[taking_part]) >= _balance_score(member_counts(problem, before)[taking_part]):
            return before
    return owner


def _topic_order(problem: GroupProblem) -> list[int]:
    """Existing topics with subscribers: fewest subscribers first, then by name (Java order)."""
    subscribed = [t for t in range(problem.num_topics) if len(problem.topic_subscribers[t])]
    return sorted(subscribed, key=lambda t: (len(problem.topic_subscribers[t]), java_order_key(problem.topics[t])))


def _assign_unassigned(problem, owner, counts, topics, id_rank) -> dict[int, np.ndarray]:
    """Step 2, topic by topic; returns the partitions assigned per topic."""
    newly: dict[int, np.ndarray] = {}
    for t in topics:
        start = problem.topic_start[t]
        block = owner[start : start + problem.partition_counts[t]]
        free = np.flatnonzero(block < 0)
        newly[t] = start + free
        if len(free) == 0:
            continue
        subscribers = problem.topic_subscribers[t]
        got = _water_fill(counts[subscribers], id_rank[subscribers], len(free))
        block[free] = subscribers[got]
        counts += np.bincount(subscribers[got], minlength=len(counts))
    return newly


def _water_fill(current: np.ndarray, rank: np.ndarray, k: int) -> np.ndarray:
    """Who gets each of ``k`` items handed out one at a time to the min ``(count, rank)``.

    Returns positions into ``current`` in hand-out order.
    """
    ordered = np.sort(current)
    prefix = np.concatenate(([0], np.cumsum(ordered)))
    sizes = np.arange(1, len(ordered) + 1)
    needed = sizes * ordered - prefix[1:]  # items to lift the lowest j to ordered[j-1]
    j = int(np.searchsorted(needed, k, side="right"))  # >= 1 since needed[0] == 0
    level = (k + int(prefix[j])) // j
    final = np.maximum(current, level)  # only the lowest j reach the level
    extra = k - int((final - current).sum())
    at_level = np.flatnonzero(final == level)
    final[at_level[np.argsort(rank[at_level], kind="stable")[:extra]]] += 1
    grants = final - current
    who = np.repeat(np.arange(len(current)), grants)
    step = current[who] + np.arange(len(who)) - np.repeat(np.cumsum(grants) - grants, grants)
    return who[np.lexsort((rank[who], step))]


def _revocation_required(problem: GroupProblem) -> bool:
    """Whether a member claims a partition of an existing topic it no longer subscribes."""
    members, partitions = problem.owned_claims
    return bool(np.any(~problem.subscribes[members, problem.partition_topic[partitions]]))


def _can_take_part(problem: GroupProblem, owner: np.ndarray) -> np.ndarray:
    """Kafka's ``canParticipateInReassignment`` for every member."""
    counts = member_counts(problem, owner)
    reach = problem.subscribes.astype(np.int64) @ problem.partition_counts
    shared = np.array([len(s) >= 2 for s in problem.topic_subscribers], dtype=bool)
    holds_shared = (member_topic_counts(problem, owner)[:, shared] > 0).any(axis=1)
    return (counts < reach) | holds_shared


def _balance_score(counts: np.ndarray) -> int:
    """Sum over member pairs of the difference in counts (Kafka's ``getBalanceScore``)."""
    ordered = np.sort(counts.astype(np.int64))
    n = len(ordered)
    return int(np.dot(ordered, 2 * np.arange(n) - n + 1))


class _Balancer:
    """Step 3 on shared state: ``owner`` and ``counts`` are updated in place."""

    def __init__(self, problem, owner, counts, earlier, id_rank):
        self.problem, self.owner, self.counts, self.earlier, self.id_rank = problem, owner, counts, earlier, id_rank
        self.topic_counts = member_topic_counts(problem, owner)
        self.returns: dict[tuple[int, int, int], list[int]] = {}  # (topic, from, to) -> partitions moved

    def violating(self) -> np.ndarray:
        """Topics where a holder has 2+ more partitions than some subscriber."""
        counts = self.counts[:, None]
        holder_max = np.where(self.topic_counts > 0, counts, -1).max(axis=0, initial=-1)
        big = np.iinfo(np.int64).max
        subscriber_min = np.where(self.problem.subscribes, counts, big).min(axis=0, initial=big)
        return holder_max - subscriber_min >= 2

    def run(self, work: list[tuple[int, np.ndarray]]) -> bool:
        """Passes over ``work`` ((topic, partitions in order) pairs) until one moves nothing."""
        moved_any = False
        while True:
            bad = self.violating()
            moved = False
            for t, partitions in work:
                if bad[t]:
                    moved |= self._pass(t, partitions)
            moved_any |= moved
            if not moved:
                return moved_any

    def _pass(self, t: int, partitions: np.ndarray) -> bool:
        subscribers = self.problem.topic_subscribers[t]
        tie = self.id_rank[subscribers]
        scale = len(self.id_rank) + 1
        earlier = self.earlier[partitions]
        pointer, moved = 0, False
        while pointer < len(partitions):
            counts = self.counts
            held = counts[self.owner[partitions[pointer:]]]
            back = earlier[pointer:]
            to_earlier = (back >= 0) & (held > counts[np.maximum(back, 0)] + 1)
            lightest = int(counts[subscribers].min())
            hits = np.flatnonzero(to_earlier | (held > lightest + 1))
            if len(hits) == 0:
                return moved
            i = pointer + int(hits[0])
            if to_earlier[hits[0]]:
                target = int(earlier[i])
            else:
                target = int(subscribers[np.argmin(counts[subscribers] * scale + tie)])
            self._move(t, int(partitions[i]), target)
            pointer, moved = i + 1, True
        return moved

    def _move(self, t: int, partition: int, target: int) -> None:
        source = int(self.owner[partition])
        undo = [p for p in self.returns.get((t, target, source), []) if self.owner[p] == source]
        if undo:  # a partition of t went target -> source earlier: send that one back instead
            partition = undo[-1]
            self.returns[(t, target, source)].remove(partition)
        else:
            self.returns.setdefault((t, source, target), []).append(partition)
        self.owner[partition] = target
        self.counts[source] -= 1
        self.counts[target] += 1
        self.topic_counts[source, t] -= 1
        self.topic_counts[target, t] += 1
