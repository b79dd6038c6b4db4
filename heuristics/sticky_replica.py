"""Sticky replica reassignment: apache/kafka PR 18903 (KAFKA-1792).

Step by step, with its sources and where it follows Kafka: docs/strategies/replica-placement.md.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from sortedcontainers import SortedList

from problems import PlacementProblem, Result

_NONE = np.iinfo(np.int64).max


class _Cluster:
    """Counts of the current placement: ``r_b``, ``l_b``, ``c_{p,k}`` and each replica's broker."""

    def __init__(self, problem: PlacementProblem):
        self.problem = problem
        partitions = problem.num_partitions
        self.brokers = problem.num_brokers
        self.racks = len(problem.rack_names)
        self.rack = problem.broker_rack.astype(np.int64)
        self.start = problem.replica_start.astype(np.int64)
        factors = problem.replication_factors
        self.part = np.repeat(np.arange(partitions, dtype=np.int64), factors)
        self.lead = np.zeros(len(self.part), dtype=bool)
        self.lead[self.start[:-1][factors > 0]] = True
        self.pos = problem.replica_positions.astype(
            np.int64
        )  # a copy: the problem's array is frozen
        self.fresh = self.pos >= 0
        live = self.fresh
        self.r = np.bincount(self.pos[live], minlength=self.brokers).astype(np.int64)
        self.l = np.bincount(self.pos[live & self.lead], minlength=self.brokers).astype(np.int64)
        cells = self.part[live] * self.racks + self.rack[self.pos[live]]
        self.c = np.bincount(cells, minlength=partitions * self.racks).reshape(
            partitions, self.racks
        )
        self.max_factor = int(factors.max(initial=0))

    def answer(self) -> np.ndarray:
        return self.problem.broker_ids[self.pos]


def _place_unassigned(cluster: _Cluster) -> int:
    """Stage 1: each unassigned replica to the broker with the best new-state scores.

    The new state's scores minus a constant rank as ``(r_b, c_{p,rack b}, l_b if
    a leader, b)``, packed into one integer per broker.
    """
    slots = np.flatnonzero(cluster.pos < 0)
    brokers, pos, start, part, lead = (
        cluster.brokers,
        cluster.pos,
        cluster.start,
        cluster.part,
        cluster.lead,
    )
    r, lb, c, rack = cluster.r, cluster.l, cluster.c, cluster.rack
    ids = np.arange(brokers, dtype=np.int64)
    leaders_span = len(cluster.c) + 1  # l_b <= P
    counts_span = cluster.max_factor + 1  # c_{p,k} <= the largest replication factor
    if (len(pos) + 1) * counts_span * leaders_span * brokers >= 2**62:
        raise ValueError("cluster too large for stage 1's packed ranking keys")
    for i in slots.tolist():
        p = part[i]
        key = (
            (r * counts_span + c[p, rack]) * leaders_span + (lb if lead[i] else 0)
        ) * brokers + ids
        holders = pos[start[p] : start[p + 1]]
        key[holders[holders >= 0]] = _NONE
        b = int(key.argmin())
        if key[b] == _NONE:
            raise ValueError(f"partition {p} has more replicas than live brokers")
        r[b] += 1
        lb[b] += lead[i]
        c[p, rack[b]] += 1
        pos[i] = b
        cluster.fresh[i] = False
    return len(slots)


class _Moves:
    """Stage 2: the possible moves, indexed so that finding the best one is cheap.

    List ``(x, L, a, k)`` (``x`` 0 for moved replicas, 1 for fresh ones, ``L``
    1 for first replicas) holds the replicas of that class on broker ``a``
    that may move to a broker of rack ``k`` without worsening property 2, as
    the integer ``(c_{p,k} - c_{p,rack a} + offset) * N + slot`` (a replica's
    own rack counts as ``-1``: ``d2 = 0``), so the head is the least
    ``(d2, slot)``.  ``head_d2`` / ``head_slot`` hold each list's head.
    """

    def __init__(self, cluster: _Cluster):
        self.cluster = cluster
        self.brokers, self.racks = cluster.brokers, cluster.racks
        self.size = len(cluster.pos)
        self.offset = cluster.max_factor + 1
        # Python scalars for the per-move bookkeeping.
        self.part = cluster.part.tolist()
        self.start = cluster.start.tolist()
        self.lead = cluster.lead.tolist()
        self.rack = cluster.rack.tolist()
        self.pos = cluster.pos.tolist()
        self.fresh = cluster.fresh.tolist()
        self.partitions = len(cluster.c)
        self.c = cluster.c.reshape(
            -1
        ).tolist()  # c_{p,k} at p * racks + k (flat: no per-partition lists)
        self.rack_brokers = [np.flatnonzero(cluster.rack == k).tolist() for k in range(self.racks)]
        self.by_rack = np.argsort(cluster.rack, kind="stable")
        self.rack_bounds = np.searchsorted(cluster.rack[self.by_rack], np.arange(self.racks))
        shape = (2, 2, self.brokers, self.racks)
        self.head_d2 = np.zeros(shape, dtype=np.int64)
        self.head_slot = np.full(shape, _NONE, dtype=np.int64)
        self.lists: list[SortedList | None] = [None] * int(np.prod(shape))
        self.flat_d2, self.flat_slot = self.head_d2.reshape(-1), self.head_slot.reshape(-1)  # views
        self._build()

    def _build(self) -> None:
        """Every list's initial keys and head at once, vectorised (the lists themselves are made lazily)."""
        cl, n, racks = self.cluster, self.size, self.racks
        slots = np.arange(n, dtype=np.int64)
        base = ((cl.fresh.astype(np.int64) * 2 + cl.lead) * self.brokers + cl.pos) * racks
        own = cl.rack[cl.pos]
        own_count = cl.c[cl.part, own]
        lists, keys = [base + own], [(self.offset - 1) * n + slots]
        for k in range(racks):
            diff = cl.c[cl.part, k] - own_count
            allowed = diff <= -1
            lists.append(base[allowed] + k)
            keys.append((diff[allowed] + self.offset) * n + slots[allowed])
        span = (self.offset + 1) * n
        packed = np.sort(np.concatenate(lists) * span + np.concatenate(keys))
        ids, self.sorted_keys = np.divmod(packed, span)
        every = np.arange(len(self.lists))
        self.begin, self.end = (
            np.searchsorted(ids, every),
            np.searchsorted(ids, every, side="right"),
        )
        filled = self.begin < self.end
        heads = self.sorted_keys[self.begin[filled]]
        self.flat_slot[filled] = heads % n
        self.flat_d2[filled] = 2 * (heads // n - self.offset) + 2

    def _list(self, lid: int) -> SortedList:
        """List ``lid``, made from its slice of the initial sorted keys when first needed."""
        entries = self.lists[lid]
        if entries is None:
            entries = self.lists[lid] = SortedList(
                self.sorted_keys[self.begin[lid] : self.end[lid]].tolist()
            )
        return entries

    def _entries(self, j: int) -> Iterator[tuple[int, int]]:
        """The ``(list id, key)`` of every list holding replica slot ``j``."""
        racks = self.racks
        first = self.part[j] * racks
        counts = self.c[first : first + racks]
        a = self.pos[j]
        own = self.rack[a]
        base = ((self.fresh[j] * 2 + self.lead[j]) * self.brokers + a) * self.racks
        n, offset, mine = self.size, self.offset, counts[own]
        yield base + own, (offset - 1) * n + j
        if mine >= 1 and self.racks > 1:
            for k, count in enumerate(counts):
                if count < mine:
                    yield base + k, (count - mine + offset) * n + j

    def move(self, i: int, b: int) -> None:
        """Execute moving replica slot ``i`` to broker ``b``, updating counts and the lists whose entries change."""
        cl, p = self.cluster, self.part[i]
        partition_slots = range(self.start[p], self.start[p + 1])
        before = {entry for j in partition_slots for entry in self._entries(j)}
        a = self.pos[i]
        cl.r[a] -= 1
        cl.r[b] += 1
        if self.lead[i]:
            cl.l[a] -= 1
            cl.l[b] += 1
        self.c[p * self.racks + self.rack[a]] -= 1
        self.c[p * self.racks + self.rack[b]] += 1
        self.pos[i] = b
        self.fresh[i] = 0
        after = {entry for j in partition_slots for entry in self._entries(j)}
        lists, touched = self.lists, set()
        for lid, key in before - after:
            self._list(lid).remove(key)
            touched.add(lid)
        for lid, key in after - before:
            self._list(lid).add(key)
            touched.add(lid)
        n, offset = self.size, self.offset
        for lid in touched:
            entries = lists[lid]
            if entries:
                head = entries[0]
                self.flat_slot[lid] = head % n
                self.flat_d2[lid] = 2 * (head // n - offset) + 2
            else:
                self.flat_slot[lid] = _NONE

    def _targets(self) -> np.ndarray:
        """Per rack, the target of least ``(r_b, b)`` (non-leaders) and of least ``(r_b, l_b, b)`` (leaders)."""
        r, lb, brokers = self.cluster.r, self.cluster.l, self.brokers
        ids = np.arange(brokers, dtype=np.int64)
        plain = np.minimum.reduceat((r * brokers + ids)[self.by_rack], self.rack_bounds) % brokers
        leaders_span = self.partitions + 1
        leaders = np.minimum.reduceat(
            ((r * leaders_span + lb) * brokers + ids)[self.by_rack], self.rack_bounds
        )
        return np.stack([plain, leaders % brokers])

    def _exact_cell(
        self, x: int, lead: int, a: int, k: int
    ) -> tuple[int, int, int, int, int] | None:
        """Cell ``(x, lead, a, k)``'s best move over every broker of rack ``k``: ``(-R, d2, d3, slot, b)`` or None."""
        r, lb = self.cluster.r, self.cluster.l
        entries = self._list(((x * 2 + lead) * self.brokers + a) * self.racks + k)
        n, offset, pos, start, part = self.size, self.offset, self.pos, self.start, self.part
        best: tuple[int, int, int, int, int] | None = None
        for b in self.rack_brokers[k]:
            gap = int(r[a] - r[b])
            if gap <= 0:
                continue
            d3 = 2 * int(lb[b] - lb[a]) + 2 if lead else 0
            for key in entries:
                j = key % n
                p = part[j]
                if b not in pos[start[p] : start[p + 1]]:
                    d2 = 2 * (key // n - offset) + 2
                    if gap >= 2 or d2 < 0 or d3 < 0:
                        candidate = (-gap, d2, d3, j, b)
                        if best is None or candidate < best:
                            best = candidate
                    break
        return best

    def best(self) -> tuple[int, int] | None:
        """The best possible move ``(replica slot, broker)``, or ``None``."""
        r, lb = self.cluster.r, self.cluster.l
        targets = self._targets()  # (leader flag, rack)
        gap = r[None, :, None] - r[targets][:, None, :]
        d3 = np.zeros_like(gap)
        d3[1] = 2 * (lb[targets[1]][None, :] - lb[:, None]) + 2
        target = np.broadcast_to(targets[:, None, :], gap.shape)
        # Cells (class x, leader flag, a, k): their heads' moves are lower bounds of each cell's
        # best move.
        ok = self._possible(gap, self.head_d2, d3, self.head_slot)
        for x in np.flatnonzero(ok.reshape(2, -1).any(axis=1)).tolist():
            cells = [gap, self.head_d2[x], d3, self.head_slot[x], target]
            possible, copied = ok[x], False
            while (cell := self._least(cells, possible)) is not None:
                i, b = int(cells[3][cell]), int(cells[4][cell])
                p = self.part[i]
                if b not in self.pos[self.start[p] : self.start[p + 1]]:
                    return i, b
                if not copied:
                    cells, copied = [array.copy() for array in cells], True
                exact = self._exact_cell(x, *cell)
                if exact is None:
                    cells[3][cell] = _NONE
                else:
                    for array, value in zip(cells, (-exact[0], *exact[1:])):
                        array[cell] = value
                possible = self._possible(*cells[:4])
        return None

    @staticmethod
    def _possible(gap: np.ndarray, d2: np.ndarray, d3: np.ndarray, slot: np.ndarray) -> np.ndarray:
        """Cells whose move keeps properties 1-2 and improves one: ``d1 <= 0``, ``d2 <= 0``, some ``< 0``."""
        cells: np.ndarray = (slot != _NONE) & (gap > 0) & ((gap >= 2) | (d2 < 0) | (d3 < 0))
        return cells

    def _least(self, cells: list[np.ndarray], possible: np.ndarray) -> tuple[int, int, int] | None:
        """The possible cell ``(leader flag, a, k)`` of least ``(-gap, d2, d3, slot, b)``, or ``None``."""
        gap, d2, d3, slot, target = cells
        if not possible.any():
            return None
        at = np.flatnonzero(possible & (gap == gap[possible].max()))
        # (d2, d3, slot, b) packed in one integer: d2 in [-2 F, 0], |d3| <= 2 P + 2, slot < N, b <
        # B.
        d3_span = 4 * self.partitions + 8
        key = (
            ((d2.flat[at] + 2 * self.offset) * d3_span + d3.flat[at] + d3_span // 2) * self.size
            + slot.flat[at]
        ) * self.brokers + target.flat[at]
        return np.unravel_index(at[int(key.argmin())], gap.shape)

    def answer(self) -> np.ndarray:
        return self.cluster.problem.broker_ids[np.asarray(self.pos, dtype=np.int64)]


def stage_one(problem: PlacementProblem) -> np.ndarray:
    """The placement after stage 1 (every replica on a live broker), as broker ids."""
    cluster = _Cluster(problem)
    _place_unassigned(cluster)
    return cluster.answer()


def assign(problem: PlacementProblem) -> Result:
    """Reassign replicas with PR 18903's two stages.

    Parameters
    ----------
    problem
        The cluster and its current placement; replicas on brokers missing
        from ``brokers`` are placed again.

    Returns
    -------
    Result
        Status ``"heuristic"``; ``info`` holds ``placed`` (stage 1) and
        ``moved`` (stage 2 iterations).
    """
    cluster = _Cluster(problem)
    placed = _place_unassigned(cluster)
    moves = _Moves(cluster)
    iterations = 0
    while (move := moves.best()) is not None:
        moves.move(*move)
        iterations += 1
    return Result(
        problem,
        "sticky-replica",
        moves.answer(),
        info={"placed": placed, "moved": iterations},
        objective_name="replica",
    )
