"""Kafka's general sticky algorithm (unequal subscriptions), as Kafka 4.x runs it, without its quadratic cost.

Step by step, with its sources and where it follows Kafka: docs/strategies/client-assignors.md.
"""

from __future__ import annotations

import heapq

import numpy as np

from heuristics.java import java_order_key, java_spread, java_string_hash
from heuristics.sticky.sticky_racks import RackInfo, assign_within_racks
from problems import GroupProblem

_MIN_WINDOW, _MAX_WINDOW = 64, 1 << 16


def general_assign(
    problem: GroupProblem,
    kept: np.ndarray,
    prev: np.ndarray,
    revocation: bool,
    id_rank: np.ndarray,
    live: np.ndarray,
    racks: RackInfo | None = None,
) -> np.ndarray:
    """Steps 1-4 of the module docstring; returns the ``owner`` array.

    ``kept``: step 1's owners (-1: none); ``prev``: Kafka's ``prevAssignment``
    (-1: none); ``revocation``: whether a kept claim was on an unsubscribed
    topic (or off its member's racks); ``id_rank``: members' positions by id;
    ``live``: topics that exist, have partitions and a subscriber; ``racks``:
    Kafka's rack information when rack awareness is on (step 2 first deals
    within racks, :func:`heuristics.sticky.sticky_racks.assign_within_racks`).
    """
    owner = kept.copy()
    counts = np.bincount(owner[owner >= 0], minlength=problem.num_members).astype(np.int64)
    initializing = int(counts.max(initial=0)) == 0
    topics = topic_order(problem, live)
    unassigned_before = owner < 0
    if racks is not None:
        assign_within_racks(racks, problem, owner, counts, topics, id_rank)
    _assign_unassigned(problem, owner, counts, topics, id_rank)
    subscribers = problem.subscribes.sum(axis=0)
    movable = [t for t in topics if subscribers[t] >= 2]
    start, size = problem.topic_start, problem.partition_counts
    every = np.concatenate(
        [np.arange(start[t], start[t] + size[t]) for t in movable] or [np.zeros(0, np.int64)]
    )
    taking_part = _can_take_part(problem, owner, counts, subscribers)
    before, before_counts = owner.copy(), counts.copy()
    balancer = _Balancer(problem, owner, counts, prev, id_rank, taking_part)
    if not revocation:
        balancer.perform(every[unassigned_before[every]])
    performed = balancer.perform(every)
    if not initializing and performed:
        if _balance_score(counts[taking_part]) >= _balance_score(before_counts[taking_part]):
            return before
    return owner


def topic_order(problem: GroupProblem, live: np.ndarray) -> list[int]:
    """Live topics, fewest subscribers first, then by name (Kafka's ``TopicComparator``)."""
    subscribers = problem.subscribes.sum(axis=0)
    return sorted(
        np.flatnonzero(live).tolist(),
        key=lambda t: (subscribers[t], java_order_key(problem.topics[t])),
    )


def _assign_unassigned(
    problem: GroupProblem,
    owner: np.ndarray,
    counts: np.ndarray,
    topics: list[int],
    id_rank: np.ndarray,
) -> None:
    """Step 2, topic by topic (``maybeAssign``)."""
    for t in topics:
        start = problem.topic_start[t]
        block = owner[start : start + problem.partition_counts[t]]
        free = np.flatnonzero(block < 0)
        if len(free) == 0:
            continue
        subscribers = problem.topic_subscribers[t]
        got = _water_fill(counts[subscribers], id_rank[subscribers], len(free))
        block[free] = subscribers[got]
        counts += np.bincount(subscribers[got], minlength=len(counts))


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


def _can_take_part(
    problem: GroupProblem, owner: np.ndarray, counts: np.ndarray, subscribers: np.ndarray
) -> np.ndarray:
    """Kafka's ``canConsumerParticipateInReassignment`` for every member."""
    reach = problem.subscribes.astype(np.int64) @ problem.partition_counts
    assigned = owner >= 0
    shared = subscribers[problem.partition_topic[assigned]] >= 2
    holds_shared = np.zeros(problem.num_members, dtype=bool)
    holds_shared[owner[assigned][shared]] = True
    taking_part: np.ndarray = (counts < reach) | holds_shared
    return taking_part


def _balance_score(counts: np.ndarray) -> int:
    """Sum over member pairs of the difference in counts (Kafka's ``getBalanceScore``)."""
    ordered = np.sort(counts.astype(np.int64))
    n = len(ordered)
    return int(np.dot(ordered, 2 * np.arange(n) - n + 1))


class _JavaHashSet:
    """The iteration order of a ``java.util.HashSet`` under adds and removes: only ``first()`` is needed.

    Buckets in index order, each in insertion order; 16 buckets at first,
    doubled when the size passes 3/4 of them or a bucket of a table under 64
    reaches 9 entries.  (A 9-entry bucket in a larger table is a red-black tree
    in Java, whose order is not reproduced.)
    """

    __slots__ = ("capacity", "entries", "sizes", "heap", "seq")

    def __init__(self) -> None:
        self.capacity = 16
        self.entries: dict[int, tuple[int, int]] = {}  # item: (sequence number, spread hash)
        self.sizes: dict[int, int] = {}  # bucket: items in it
        self.heap: list[tuple[int, int, int]] = []  # (bucket, sequence number, item)
        self.seq = 0

    def __len__(self) -> int:
        return len(self.entries)

    def add(self, item: int, spread: int) -> None:
        self.seq += 1
        self.entries[item] = (self.seq, spread)
        bucket = spread & (self.capacity - 1)
        self.sizes[bucket] = self.sizes.get(bucket, 0) + 1
        grew = self.sizes[bucket] >= 9 and self.capacity < 64
        if grew:
            self._grow()
        if len(self.entries) > self.capacity * 3 // 4:
            self._grow()
        elif not grew:
            heapq.heappush(self.heap, (bucket, self.seq, item))

    def remove(self, item: int) -> None:
        _, spread = self.entries.pop(item)
        self.sizes[spread & (self.capacity - 1)] -= 1

    def first(self) -> int:
        heap, entries = self.heap, self.entries
        while True:
            _, seq, item = heap[0]
            if item in entries and entries[item][0] == seq:
                return item
            heapq.heappop(heap)

    def _grow(self) -> None:
        self.capacity *= 2
        mask = self.capacity - 1
        self.heap = [(spread & mask, seq, item) for item, (seq, spread) in self.entries.items()]
        heapq.heapify(self.heap)
        self.sizes = {}
        for bucket, _, _ in self.heap:
            self.sizes[bucket] = self.sizes.get(bucket, 0) + 1


class _Balancer:
    """Step 3 on shared state: ``owner`` and ``counts`` are updated in place."""

    def __init__(
        self,
        problem: GroupProblem,
        owner: np.ndarray,
        counts: np.ndarray,
        prev: np.ndarray,
        id_rank: np.ndarray,
        taking_part: np.ndarray,
    ) -> None:
        self.problem, self.owner, self.counts, self.id_rank = problem, owner, counts, id_rank
        self.topic_of = problem.partition_topic
        # Earlier owners Kafka would consult and we follow (see the module docstring).
        ok = prev >= 0
        ok[ok] = taking_part[prev[ok]] & problem.subscribes[prev[ok], self.topic_of[ok]]
        self.prev = np.where(ok, prev, -1).astype(np.int32)
        self.subscribers = problem.topic_subscribers
        self.member_topics = problem.subscribed_topics
        self.scale = problem.num_members + 1
        lengths = np.array([len(s) for s in self.subscribers], dtype=np.int64)
        self.sub_ptr = np.concatenate(([0], np.cumsum(lengths)))
        self.sub_idx = np.concatenate([*self.subscribers, np.zeros(0, np.int32)]).astype(np.int64)
        self.least = np.zeros(problem.num_topics, dtype=np.int64)
        self.dirty = lengths > 0  # ``least`` to recompute before use
        # PartitionMovements: each moved partition's original source, and the (topic, from, to)
        # sets.
        self.source = np.full(problem.num_partitions, -1, dtype=np.int32)
        self.moves: dict[tuple[int, int, int], _JavaHashSet] = {}
        self.topic_moves = np.zeros(problem.num_topics, dtype=np.int64)
        self.topic_hash = [java_string_hash(name) for name in problem.topics]

    # -------------------------------------------------------------- passes
    def perform(self, parts: np.ndarray) -> bool:
        """``performReassignments`` over ``parts`` (global ids, in order); whether anything moved."""
        n = len(parts)
        if n == 0:
            return False
        owner, counts, dirty = self.owner, self.counts, self.dirty
        topic = self.topic_of[parts]
        earlier = self.prev[parts]
        any_earlier = bool((earlier >= 0).any())
        # ``parts`` is grouped by topic: its runs, to refresh the topics a window covers.
        run_start = np.flatnonzero(np.concatenate(([True], topic[1:] != topic[:-1])))
        run_topic = topic[run_start].tolist()
        run_of = np.repeat(np.arange(len(run_start)), np.diff(np.append(run_start, n)))
        performed = False
        while True:
            modified, i, width = False, 0, _MIN_WINDOW
            while i < n:
                end = min(n, i + width)
                first, last = int(run_of[i]), int(run_of[end - 1])
                if first == last:  # the window lies in one topic
                    t = run_topic[first]
                    if dirty[t]:
                        self.least[t] = counts[self.subscribers[t]].min()
                        dirty[t] = False
                else:
                    covered = np.array(run_topic[first : last + 1])
                    stale = covered[dirty[covered]]
                    if len(stale):
                        self._recompute(stale)
                held = counts[owner[parts[i:end]]]
                fire = held > self.least[topic[i:end]] + 1
                if any_earlier:
                    back = earlier[i:end]
                    to_earlier = (back >= 0) & (held > counts[back] + 1)
                    fire |= to_earlier
                k = int(fire.argmax())
                if not fire[k]:
                    i, width = end, min(2 * width, _MAX_WINDOW)
                    continue
                j = i + k
                if any_earlier and to_earlier[k]:
                    target = int(earlier[j])
                else:
                    subs = self.subscribers[topic[j]]
                    target = int(subs[np.argmin(counts[subs] * self.scale + self.id_rank[subs])])
                self._reassign(int(parts[j]), target)
                modified = performed = True
                i, width = (
                    j + 1,
                    min(max(_MIN_WINDOW, 2 * (k + 1)), _MAX_WINDOW),
                )  # about the last gap, twice
            if not modified:
                return performed

    # ------------------------------------------------------------- moves
    def _reassign(self, partition: int, target: int) -> None:
        """``reassignPartition``: ``getTheActualPartitionToBeMoved``, then the move."""
        t = int(self.topic_of[partition])
        if self.topic_moves[t]:
            source = int(self.source[partition])
            source = int(self.owner[partition]) if source < 0 else source
            reverse = self.moves.get((t, target, source))
            if reverse:
                partition = reverse.first()
        self._move(partition, target)

    def _move(self, partition: int, target: int) -> None:
        """``processPartitionMovement``: the move and its ``PartitionMovements`` record."""
        t = int(self.topic_of[partition])
        old = int(self.owner[partition])
        source = int(self.source[partition])
        if source >= 0:
            key = (t, source, old)
            self.moves[key].remove(partition)
            if not self.moves[key]:
                del self.moves[key]
            self.topic_moves[t] -= 1
            self.source[partition] = -1
        else:
            source = old
        if source != target:
            key = (t, source, target)
            if key not in self.moves:
                self.moves[key] = _JavaHashSet()
            self.moves[key].add(partition, self._hash(partition, t))
            self.topic_moves[t] += 1
            self.source[partition] = source
        self.owner[partition] = target
        self.counts[old] -= 1
        self.counts[target] += 1
        self.dirty[self.member_topics[old]] = True
        self.dirty[self.member_topics[target]] = True

    def _hash(self, partition: int, t: int) -> int:
        """``HashMap.hash`` of Kafka's ``TopicPartition``: ``31 * (31 + index) + topic.hashCode()``."""
        index = int(partition - self.problem.topic_start[t])
        return java_spread(31 * (31 + index) + self.topic_hash[t])

    # ------------------------------------ each topic's least subscriber count
    # ``least[t]``: the fewest partitions a subscriber of t has.  A move marks the
    # topics of its two members ``dirty``; a pass recomputes a dirty topic when
    # its window reaches it (usually the topic it is in: one small reduction).
    def _recompute(self, topics: np.ndarray) -> None:
        """``least`` of ``topics`` from scratch (gathered at once, reduced per topic)."""
        starts, ends = self.sub_ptr[topics], self.sub_ptr[topics + 1]
        lengths = ends - starts
        offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        index = np.arange(int(lengths.sum())) - np.repeat(offsets - starts, lengths)
        self.least[topics] = np.minimum.reduceat(self.counts[self.sub_idx[index]], offsets)
        self.dirty[topics] = False
