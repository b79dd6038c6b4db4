"""KIP-881 rack awareness in Kafka's sticky assignors (``AbstractStickyAssignor.RackInfo``).

Step by step, with its sources and where it follows Kafka: docs/strategies/client-assignors.md.
"""

from __future__ import annotations

import collections
import heapq

import numpy as np
from sortedcontainers import SortedList

from problems import GroupProblem


class RackInfo:
    """Kafka's ``RackInfo`` when rack awareness is on (build it with :func:`rack_info`)."""

    def __init__(self, problem: GroupProblem, has: np.ndarray):
        assert problem.member_rack is not None  # rack awareness is on: members have racks
        self.problem = problem
        self.has = has  # [partition, rack]: a replica of the partition on the rack
        self.rack: np.ndarray = problem.member_rack

    def mismatch(self, owner: np.ndarray) -> np.ndarray:
        """``racksMismatch`` of each partition with ``owner`` (-1: unassigned, never)."""
        return self.problem.rack_mismatches(owner)

    def matches(self, members: np.ndarray, partition: int) -> np.ndarray:
        """``!racksMismatch`` of ``members`` with ``partition`` (members without a rack match)."""
        racks = self.rack[members]
        matching: np.ndarray = (racks < 0) | self.has[partition, np.maximum(racks, 0)]
        return matching

    def rack_consumers(self, partitions: np.ndarray) -> np.ndarray:
        """``numConsumersByPartition``: members on the partitions' replica racks, summed over racks."""
        per_rack = np.bincount(self.rack[self.rack >= 0], minlength=self.has.shape[1])
        consumers: np.ndarray = self.has[partitions].astype(np.int64) @ per_rack
        return consumers


def rack_info(problem: GroupProblem, live: np.ndarray) -> RackInfo | None:
    """Kafka's ``RackInfo`` if rack awareness switches on for ``problem`` (``live``: live topics), else None."""
    member_rack, replica_racks = problem.member_rack, problem.replica_racks
    if (
        not problem.has_racks
        or member_rack is None
        or replica_racks is None
        or not (member_rack >= 0).any()
    ):
        return None
    has = np.zeros((problem.num_partitions, len(problem.rack_names)), dtype=bool)
    has[problem.replica_rack_partition, replica_racks] = True
    live_partitions = live[problem.partition_topic]
    rows = has[live_partitions]
    union = rows.any(axis=0)
    member_racks = np.zeros(len(problem.rack_names), dtype=bool)
    member_racks[member_rack[member_rack >= 0]] = True
    if not (member_racks & union).any() or (rows == union).all():
        return None
    return RackInfo(problem, has)


def rack_round_robin(
    racks: RackInfo,
    unassigned: list[int],
    counts: np.ndarray,
    under: list[int],
    exactly: list[int],
    over: int,
    expected_over: int,
    c_f: int,
    c_c: int,
    owner: np.ndarray,
) -> tuple[list[int], int]:
    """``assignRackAwareRoundRobin``: deal ``unassigned`` (in order) within racks.

    ``under`` (members below ``C_f``, by id) and ``exactly`` (members at ``C_f`` that may take one
    more) are updated in place as Kafka updates them, ``counts`` and ``owner`` too.  Returns the
    partitions left, in order, and the number of members above ``C_f``.

    Kafka's ``nextRackConsumer`` walks a list from a position for the first member on one of the
    partition's replica racks (``O(members)`` per partition).  Here each list entry keeps its
    *slot* (its position in the list as first built, or the order it was appended), which a
    removal does not shift, and each rack keeps the live slots of its members sorted
    (:class:`sortedcontainers.SortedList` for ``under``, a queue for ``exactly``, which Kafka
    always scans from its start and only pops at the member found): the next member on the
    partition's racks from a slot, cyclically, is the nearest of one bisection per replica rack
    (``O(racks log members)``).  Kafka's next position after a take (``index`` after a removal,
    ``index + 1`` otherwise, modulo the list's length) is the first live slot after the taken one,
    cyclically, in both cases: the same member.
    """
    left = []
    rack_count = racks.has.shape[1]
    member_rack = racks.rack
    under_slots: list[SortedList[int]] = [SortedList() for _ in range(rack_count)]
    for slot, member in enumerate(under):
        if member_rack[member] >= 0:
            under_slots[member_rack[member]].add(slot)
    under_alive = np.ones(len(under), dtype=bool)
    exactly_slots: list[collections.deque[int]] = [collections.deque() for _ in range(rack_count)]
    exactly_alive = [True] * len(exactly)
    for slot, member in enumerate(exactly):
        if member_rack[member] >= 0:
            exactly_slots[member_rack[member]].append(slot)
    exactly_live = len(exactly)
    following = 0
    partition_racks = _partition_racks(racks, unassigned)
    for partition, on in zip(unassigned, partition_racks):
        consumer = None
        slot = _next_slot(under_slots, on, following)
        if slot >= 0:
            consumer = under[slot]
            if counts[consumer] + 1 >= c_f:
                under_slots[member_rack[consumer]].remove(slot)
                under_alive[slot] = False
                if counts[consumer] + 1 < c_c and over < expected_over:
                    if member_rack[consumer] >= 0:
                        exactly_slots[member_rack[consumer]].append(len(exactly))
                    exactly.append(consumer)
                    exactly_alive.append(True)
                    exactly_live += 1
            following = slot + 1
        elif exactly_live:
            first = min((exactly_slots[r][0] for r in on if exactly_slots[r]), default=-1)
            if first >= 0:
                consumer = exactly[first]
                if counts[consumer] + 1 == c_c:
                    exactly_slots[member_rack[consumer]].popleft()
                    exactly_alive[first] = False
                    exactly_live -= 1
                    over += 1
                    if over == expected_over:
                        exactly_alive = [False] * len(exactly)
                        exactly_live = 0
                        exactly_slots = [collections.deque() for _ in range(rack_count)]
        if consumer is None:
            left.append(partition)
        else:
            owner[partition] = consumer
            counts[consumer] += 1
    under[:] = [member for member, alive in zip(under, under_alive.tolist()) if alive]
    exactly[:] = [member for member, alive in zip(exactly, exactly_alive) if alive]
    return left, over


def _partition_racks(racks: RackInfo, partitions: list[int]) -> list[list[int]]:
    """Each partition's replica racks (rack ids, ascending)."""
    rows, columns = np.nonzero(racks.has[np.asarray(partitions, dtype=np.int64)])
    bounds = np.searchsorted(rows, np.arange(len(partitions) + 1))
    return [columns[a:b].tolist() for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]


def _next_slot(slots: list[SortedList[int]], on: list[int], first: int) -> int:
    """``nextRackConsumer`` in slots: the first live slot from ``first`` on (cyclically) of a member on one of
    the racks ``on``, or -1."""
    later, earliest = -1, -1
    for r in on:
        live = slots[r]
        if not live:
            continue
        at = live.bisect_left(first)
        if at < len(live) and (later < 0 or live[at] < later):
            later = live[at]
        if earliest < 0 or live[0] < earliest:
            earliest = live[0]
    return later if later >= 0 else earliest


def assign_within_racks(
    racks: RackInfo,
    problem: GroupProblem,
    owner: np.ndarray,
    counts: np.ndarray,
    topics: list[int],
    id_rank: np.ndarray,
) -> None:
    """The general builder's rack pass: each unassigned partition, in Kafka's order, to the least-loaded
    subscriber (count, then member id) that does not mismatch its racks; partitions nobody matches
    stay.

    Kafka scans the topic's subscribers for each partition.  Here the subscribers of a topic are
    kept in one heap per rack (and one for members without a rack, who match every partition), keyed
    by (count, id rank), shared by the topics with the same subscribers: the least-loaded match of a
    partition is the smallest of the heads of its replica racks' heaps and the rack-less heap.
    Counts only grow, so an entry whose count is stale (its member took a partition elsewhere) is
    refreshed when it surfaces.
    """
    rack_count = racks.has.shape[1]
    member_rack = racks.rack
    shared: dict[bytes, list[list[tuple[int, int, int]]]] = {}
    for t in topics:
        start = int(problem.topic_start[t])
        subscribers = problem.topic_subscribers[t]
        todo = (
            start + np.flatnonzero(owner[start : start + problem.partition_counts[t]] < 0)
        ).tolist()
        if not todo or not len(subscribers):
            continue
        heaps = shared.get(subscribers.tobytes())
        if heaps is None:
            heaps = [[] for _ in range(rack_count + 1)]  # index rack_count: members without a rack
            for member, count, rank, rack in zip(
                subscribers.tolist(),
                counts[subscribers].tolist(),
                id_rank[subscribers].tolist(),
                member_rack[subscribers].tolist(),
            ):
                heaps[rack if rack >= 0 else rack_count].append((count, rank, member))
            for heap in heaps:
                heapq.heapify(heap)
            shared[subscribers.tobytes()] = heaps
        for partition, on in zip(todo, _partition_racks(racks, todo)):
            best, chosen = None, None
            for heap in [*(heaps[r] for r in on), heaps[rack_count]]:
                while heap and heap[0][0] != counts[heap[0][2]]:  # stale count: refresh the entry
                    _, rank, member = heapq.heappop(heap)
                    heapq.heappush(heap, (int(counts[member]), rank, member))
                if heap and (best is None or heap[0] < best):
                    best, chosen = heap[0], heap
            if chosen is not None:
                _, rank, member = heapq.heappop(chosen)
                owner[partition] = member
                counts[member] += 1
                heapq.heappush(chosen, (int(counts[member]), rank, member))
