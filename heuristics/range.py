"""Kafka's client ``RangeAssignor`` (``partition.assignment.strategy=range``), with KIP-881 racks.

Step by step, with its sources and where it follows Kafka: docs/strategies/client-assignors.md.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from heuristics.kafka_orders import member_rank
from problems import GroupProblem, Result, baseline_objective


def assign(problem: GroupProblem) -> Result:
    """Assign partitions as Kafka's RangeAssignor does (rack-aware as Kafka, see the module docstring).

    Parameters
    ----------
    problem
        The consumer group; previous ownership and lags are ignored, as in Kafka.

    Returns
    -------
    Result
        Status ``"heuristic"``; judged on the sticky objective, on ``rack-aware``
        when the document has ``partition_racks``.
    """
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    rank = member_rank(problem)
    member_rack = problem.member_rack
    if not problem.has_racks or member_rack is None or not (member_rack >= 0).any():  # racks off
        for t, subscribers in enumerate(problem.topic_subscribers):
            count = int(problem.partition_counts[t])
            if len(subscribers) == 0 or count == 0:
                continue
            ordered = subscribers[np.argsort(rank[subscribers])]
            quota, extra = divmod(count, len(ordered))
            lengths = np.full(len(ordered), quota, dtype=np.int64)
            lengths[:extra] += 1
            owner[problem.topic_start[t] : problem.topic_start[t] + count] = np.repeat(
                ordered, lengths
            )
        return Result(problem, "range", owner, objective_name=baseline_objective(problem))
    states = []
    orders: dict[
        bytes, np.ndarray
    ] = {}  # topics with the same subscribers share their member order
    for t, subscribers in enumerate(problem.topic_subscribers):
        count = int(problem.partition_counts[t])
        if len(subscribers) == 0 or count == 0:
            continue
        key = subscribers.tobytes()
        if key not in orders:
            orders[key] = subscribers[np.argsort(rank[subscribers])]
        states.append(_Topic(problem, t, orders[key], owner))
    if any(state.needs_racks for state in states):
        _match_racks(states)
    for state in states:
        state.deal_rest()
    return Result(problem, "range", owner, objective_name=baseline_objective(problem))


class _Topic:
    """Kafka's ``TopicAssignmentState``: one topic's subscribers, quotas and unassigned partitions.

    Subscribers are local positions ``i`` into ``consumers`` (Kafka's member order).
    """

    def __init__(self, problem: GroupProblem, t: int, consumers: np.ndarray, owner: np.ndarray):
        member_rack, rack_start = problem.member_rack, problem.replica_rack_start
        replica_racks = problem.replica_racks
        assert member_rack is not None and rack_start is not None and replica_racks is not None
        self.consumers = consumers
        start = int(problem.topic_start[t])
        count = int(problem.partition_counts[t])
        self.block = owner[start : start + count]  # a view: assignments land in ``owner``
        self.unassigned = np.ones(count, dtype=bool)
        self.quota, self.extra = divmod(count, len(consumers))
        self.assigned = np.zeros(len(consumers), dtype=np.int64)
        self.rack = member_rack[consumers].astype(np.int64)
        racked = bool((self.rack >= 0).any())
        self.needs_racks = False
        # [partition, rack]: a replica of the partition on the rack (no rack: no subscriber has one)
        self.has_rack = np.zeros((count, 0), dtype=bool)
        if racked:
            lo, hi = rack_start[start], rack_start[start + count]
            has = np.zeros((count, len(problem.rack_names)), dtype=bool)
            has[problem.replica_rack_partition[lo:hi] - start, replica_racks[lo:hi]] = True
            union = has.any(axis=0)
            consumer_racks = np.zeros(len(problem.rack_names), dtype=bool)
            consumer_racks[self.rack[self.rack >= 0]] = True
            self.needs_racks = bool((consumer_racks & union).any()) and not bool(
                (has == union).all()
            )
            self.has_rack = has
        # Kafka's co-partitioning key: the subscribers and the size of the partition -> racks map.
        self.group = (consumers.tobytes(), count if racked else 0)

    def matches(self, i: int) -> np.ndarray:
        """``racksMatch`` of subscriber ``i`` with every partition of the topic."""
        if self.rack[i] < 0:
            return np.ones(len(self.block), dtype=bool)
        matching: np.ndarray = self.has_rack[:, self.rack[i]]
        return matching

    def rooms(self) -> np.ndarray:
        """``maxAssignable`` of every subscriber."""
        return np.maximum(0, self.quota + (self.extra > 0) - self.assigned)

    def take(self, i: int, partitions: np.ndarray) -> None:
        """``onAssigned``."""
        self.block[partitions] = self.consumers[i]
        self.unassigned[partitions] = False
        self.assigned[i] += len(partitions)
        if self.assigned[i] > self.quota:
            self.extra -= 1

    def deal(self, allowed: Callable[[int], np.ndarray]) -> None:
        """``assignRanges``: each subscriber in order takes its first allowed unassigned partitions up to its quota.

        Only subscribers with room are visited (Kafka visits every one; one without room takes
        nothing): those below ``quota + 1`` while some may still go above the quota, then those
        below ``quota``. A subscriber's count changes only at its own visit and the quota's extra
        only shrinks, so the subscribers skipped would have taken nothing.
        """
        candidates = np.flatnonzero(self.assigned < self.quota + (self.extra > 0))
        at = 0
        while at < len(candidates):
            if not self.unassigned.any():
                break
            i = int(candidates[at])
            at += 1
            room = max(0, self.quota + (self.extra > 0) - int(self.assigned[i]))
            chosen = np.flatnonzero(self.unassigned & allowed(i))[:room]
            if len(chosen):
                self.take(i, chosen)
                if self.extra <= 0:  # nobody may go above the quota any more
                    rest = candidates[at:]
                    candidates, at = rest[self.assigned[rest] < self.quota], 0

    def deal_rest(self) -> None:
        """``assignRanges`` without the rack condition (step 2), in one vectorised pass.

        Kafka's loop, subscriber by subscriber, takes the first unassigned partitions up to each
        one's ``maxAssignable``.  While some may go above the quota (``extra > 0``), a subscriber
        below ``quota + 1`` fills up to ``quota + 1`` and so uses one ``extra``: the first ``extra``
        of them (in order) take ``quota + 1 - assigned``; every later subscriber takes ``quota -
        assigned`` (if positive).  Their takes, in order, are cut where the unassigned partitions
        run out.
        """
        free = np.flatnonzero(self.unassigned)
        if len(free) == 0:
            return
        sizes = np.zeros(len(self.consumers), dtype=np.int64)
        later = 0  # first subscriber dealt at the quota alone
        if self.extra > 0:
            above = np.flatnonzero(self.assigned < self.quota + 1)[: self.extra]
            sizes[above] = self.quota + 1 - self.assigned[above]
            later = int(above[-1]) + 1 if len(above) == self.extra else len(sizes)
        sizes[later:] = np.maximum(0, self.quota - self.assigned[later:])
        reach = np.minimum(np.cumsum(sizes), len(free))
        taken = np.diff(reach, prepend=0)
        self.block[free[: reach[-1]]] = np.repeat(self.consumers, taken)
        self.unassigned[free[: reach[-1]]] = False
        self.assigned += taken
        self.extra -= int(((taken > 0) & (self.assigned > self.quota)).sum())


def _match_racks(states: list[_Topic]) -> None:
    """``assignWithRackMatching`` (step 1 of the module docstring)."""
    groups: dict[tuple[bytes, int], list[_Topic]] = {}
    for state in states:
        groups.setdefault(state.group, []).append(state)
    for (_, partitions), members in groups.items():
        if len(members) > 1:
            _co_partitioned(partitions, members)
        elif members[0].needs_racks:
            state = members[0]
            state.deal(state.matches)


def _co_partitioned(partitions: int, states: list[_Topic]) -> None:
    """``assignCoPartitionedWithRackMatching``: partition number by number, one subscriber takes it on every topic.

    The topics of a group share their subscribers and partition count and nothing is assigned in
    them before, so their quotas move in lockstep: one topic's ``rooms`` stand for all.  A member
    matches partition number ``p`` of every topic when it has no rack or its rack holds a replica
    of ``p`` in each topic.
    """
    first = states[0]
    if partitions == 0:  # no subscriber has a rack: Kafka's partition -> racks maps are empty
        return
    remaining = np.arange(len(first.consumers))
    rack = first.rack
    on_every = np.logical_and.reduce([state.has_rack for state in states])  # [partition, rack]
    for p in range(partitions):
        fits = (rack[remaining] < 0) | on_every[p, np.maximum(rack[remaining], 0)]
        fits &= first.rooms()[remaining] > 0
        hits = np.flatnonzero(fits)
        if len(hits) == 0:
            continue
        k = int(hits[0])
        chosen = int(remaining[k])
        for state in states:
            state.take(chosen, np.array([p]))
        if first.rooms()[chosen] == 0:
            remaining = np.delete(remaining, k)
            if len(remaining) == 0:
                break
