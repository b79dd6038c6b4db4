"""KIP-881 rack awareness in Kafka's sticky assignors (``AbstractStickyAssignor.RackInfo``).

Facts from Kafka's source (``AbstractStickyAssignor`` of Kafka 4.x), checked against Kafka's
jar by ``tests/peers/test_rack_equality.py``:

*When it switches on* (``useRackAwareAssignment``), for the whole group at once (range decides
per topic): some member has a rack, one of the members' racks holds a replica of a partition of a
live topic (subscribed, with partitions), and those partitions do not all have the same set of
replica racks.  Without ``partition_racks`` no partition has a rack and it never does.

*What changes when on*:

* a kept previous claim whose member's rack holds no replica of the partition (Kafka's
  ``racksMismatch``; a member without a rack never mismatches) is dropped: the constrained
  builder does not keep it in phase 1, the general builder drops it and requires revocation;
* constrained builder: the unassigned partitions (topic name, then index) are stably sorted by the
  number of members on the partition's replica racks (``sortPartitionsByRackConsumers``) and dealt
  first within racks (``assignRackAwareRoundRobin``: :func:`rack_round_robin`), then round robin
  as without racks, in that order;
* general builder: the unassigned partitions first go, in Kafka's order, to the least-loaded
  subscriber that does not mismatch the partition's racks (``maybeAssign`` with ``RackInfo``),
  those left to the least-loaded subscriber; the balancing passes are unchanged (their rack
  branch picks the same partitions and the same target as the rack-free branch).
"""

from __future__ import annotations

import numpy as np

from problems import GroupProblem


class RackInfo:
    """Kafka's ``RackInfo`` when rack awareness is on (build it with :func:`rack_info`)."""

    def __init__(self, problem: GroupProblem, has: np.ndarray):
        self.problem = problem
        self.has = has  # [partition, rack]: a replica of the partition on the rack
        self.rack = problem.member_rack

    def mismatch(self, owner: np.ndarray) -> np.ndarray:
        """``racksMismatch`` of each partition with ``owner`` (-1: unassigned, never)."""
        return self.problem.rack_mismatches(owner)

    def matches(self, members: np.ndarray, partition: int) -> np.ndarray:
        """``!racksMismatch`` of ``members`` with ``partition`` (members without a rack match)."""
        racks = self.rack[members]
        return (racks < 0) | self.has[partition, np.maximum(racks, 0)]

    def rack_consumers(self, partitions: np.ndarray) -> np.ndarray:
        """``numConsumersByPartition``: members on the partitions' replica racks, summed over racks."""
        per_rack = np.bincount(self.rack[self.rack >= 0], minlength=self.has.shape[1])
        return self.has[partitions].astype(np.int64) @ per_rack


def rack_info(problem: GroupProblem, live: np.ndarray) -> RackInfo | None:
    """Kafka's ``RackInfo`` if rack awareness switches on for ``problem`` (``live``: live topics), else None."""
    if not problem.has_racks or not (problem.member_rack >= 0).any():
        return None
    has = np.zeros((problem.num_partitions, len(problem.rack_names)), dtype=bool)
    has[problem.replica_rack_partition, problem.replica_racks] = True
    live_partitions = live[problem.partition_topic]
    rows = has[live_partitions]
    union = rows.any(axis=0)
    member_racks = np.zeros(len(problem.rack_names), dtype=bool)
    member_racks[problem.member_rack[problem.member_rack >= 0]] = True
    if not (member_racks & union).any() or (rows == union).all():
        return None
    return RackInfo(problem, has)


def rack_round_robin(racks: RackInfo, unassigned: list[int], counts: np.ndarray, under: list[int],
                     exactly: list[int], over: int, expected_over: int, c_f: int, c_c: int,
                     owner: np.ndarray) -> tuple[list[int], int]:
    """``assignRackAwareRoundRobin``: deal ``unassigned`` (in order) within racks.

    ``under`` (members below ``C_f``, by id) and ``exactly`` (members at ``C_f`` that may take one
    more) are updated in place as Kafka updates them, ``counts`` and ``owner`` too.  Returns the
    partitions left, in order, and the number of members above ``C_f``.  Each list's racks are
    kept beside it as an array, so that finding the next member on a partition's racks is one
    vectorised scan (Kafka's ``nextRackConsumer`` walks the list).
    """
    left = []
    following = 0
    under_racks, exactly_racks = _racks_of(racks, under), _racks_of(racks, exactly)
    for partition in unassigned:
        consumer = None
        index = _next_on_rack(racks, partition, under_racks, following)
        if index >= 0:
            consumer = under[index]
            if counts[consumer] + 1 >= c_f:
                under.pop(index)
                under_racks = np.delete(under_racks, index)
                if counts[consumer] + 1 < c_c and over < expected_over:
                    exactly.append(consumer)
                    exactly_racks = np.append(exactly_racks, racks.rack[consumer])
            else:
                index += 1
            following = index % len(under) if under else 0
        elif exactly:
            first = _next_on_rack(racks, partition, exactly_racks, 0)
            if first >= 0:
                consumer = exactly[first]
                if counts[consumer] + 1 == c_c:
                    exactly.pop(first)
                    exactly_racks = np.delete(exactly_racks, first)
                    over += 1
                    if over == expected_over:
                        exactly.clear()
                        exactly_racks = exactly_racks[:0]
        if consumer is None:
            left.append(partition)
        else:
            owner[partition] = consumer
            counts[consumer] += 1
    return left, over


def _racks_of(racks: RackInfo, members: list[int]) -> np.ndarray:
    return racks.rack[np.array(members, dtype=np.int64)] if members else np.zeros(0, dtype=racks.rack.dtype)


def _next_on_rack(racks: RackInfo, partition: int, member_racks: np.ndarray, first: int) -> int:
    """``nextRackConsumer``: the first position from ``first`` on (cyclically) whose member's rack (not
    none) holds a replica of ``partition``, or -1; ``member_racks``: the racks of the list's members."""
    if len(member_racks) == 0:
        return -1
    on = (member_racks >= 0) & racks.has[partition, np.maximum(member_racks, 0)]
    later = np.flatnonzero(on[first:])
    if len(later):
        return first + int(later[0])
    earlier = np.flatnonzero(on[:first])
    return int(earlier[0]) if len(earlier) else -1


def assign_within_racks(racks: RackInfo, problem: GroupProblem, owner: np.ndarray, counts: np.ndarray,
                        topics: list[int], id_rank: np.ndarray) -> None:
    """The general builder's rack pass: each unassigned partition, in Kafka's order, to the least-loaded
    subscriber (count, then member id) that does not mismatch its racks; partitions nobody matches stay."""
    scale = problem.num_members + 1
    for t in topics:
        start = int(problem.topic_start[t])
        subscribers = problem.topic_subscribers[t]
        for partition in (start + np.flatnonzero(owner[start : start + problem.partition_counts[t]] < 0)).tolist():
            eligible = subscribers[racks.matches(subscribers, partition)]
            if len(eligible):
                chosen = int(eligible[np.argmin(counts[eligible] * scale + id_rank[eligible])])
                owner[partition] = chosen
                counts[chosen] += 1
