"""Exact lag-aware search for small groups: member by member, each member's partitions within the
window of totals its level still allows.

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

import numpy as np

from models.lag_aware.bounds import _majorant
from models.lag_aware.swaps import search_lags
from problems import GroupProblem

#: The most subsets of one topic enumerated for one member; beyond it the search does not apply.
TOPIC_SUBSETS = 200_000
#: The most combinations of a member's topics but its last held at once.
PARTIAL_BUNDLES = 2_000_000


class _Stop(Exception):
    """Out of time, or a member's choices too many to enumerate: the search gives up."""


class _Found(Exception):
    """A decision found an answer (``owner`` holds it)."""


def _subsets_up_to(n: int, take: int) -> int:
    """``C(n, 0) + ... + C(n, take)``, or any number above ``2 * TOPIC_SUBSETS`` once it passes."""
    term = total = 1
    for s in range(min(take, n)):
        term = term * (n - s) // (s + 1)
        total += term
        if total > 2 * TOPIC_SUBSETS:
            break
    return total


def _few(counts: tuple[int, ...], take: int) -> bool:
    """Whether the ways to take at most ``take`` items from classes of ``counts`` interchangeable
    items (the rows :func:`_multisets` builds on its way) are at most ``TOPIC_SUBSETS``."""
    if _subsets_up_to(sum(counts), take) <= TOPIC_SUBSETS:
        return True  # at most the subsets
    if _subsets_up_to(len(counts), take) > TOPIC_SUBSETS:
        return False  # at least the choices of distinct classes
    if len(counts) * (take + 1) > TOPIC_SUBSETS:
        return False  # too long to count
    ways = [1] + [0] * take  # ways[s]: how many ways to take s items from the classes so far
    for count in counts:
        window = 0
        new = []
        for s in range(take + 1):  # ways[s - count] + ... + ways[s], a sliding sum
            window += ways[s] - (ways[s - count - 1] if s > count else 0)
            new.append(window)
        ways = new
    return sum(ways) <= TOPIC_SUBSETS


@cache
def _multisets(counts: tuple[int, ...], take: int) -> np.ndarray:
    """Every way to take ``take`` items from classes of ``counts`` interchangeable items: one row
    of per-class numbers each (at most ``TOPIC_SUBSETS`` rows, else :class:`_Stop`)."""
    if not _few(counts, take):
        raise _Stop
    rows = np.zeros((1, 0), dtype=np.int64)
    used = np.zeros(1, dtype=np.int64)
    for count in counts:
        k = np.arange(min(count, take) + 1)
        rows = np.concatenate(
            [np.repeat(rows, len(k), axis=0), np.tile(k, len(rows))[:, None]], axis=1
        )
        used = (used[:, None] + k[None, :]).reshape(-1)
        keep = used <= take
        rows, used = rows[keep], used[keep]
    chosen: np.ndarray = rows[used == take]
    return chosen


@dataclass
class _Bundles:
    """A member's candidate bundles: their totals and, per topic, which of its choices."""

    totals: np.ndarray
    picks: np.ndarray  # one row per bundle: per topic, the row of its choices
    choices: list[np.ndarray]  # per topic: chosen ids, one row each (padded with -1)

    def parts(self, k: int) -> list[np.ndarray]:
        """Bundle ``k``'s partitions, per topic."""
        return [rows[j] for rows, j in zip(self.choices, self.picks[k].tolist())]


@dataclass
class _Group:
    """The small group as the search sees it: members in classes of equal subscriptions."""

    problem: GroupProblem
    lags: np.ndarray
    members: list[int]  # active members, each class of equal subscriptions consecutive
    topics: list[list[int]]  # per member (in ``members`` order): its subscribed topics
    same_class: list[bool]  # member i has the subscription of member i - 1
    run: list[int]  # how many members after i have its subscription
    floor: dict[int, int]  # per subscribed topic: its floor share
    extra: dict[int, int]  # per subscribed topic: its subscribers that get floor + 1
    total: int

    @classmethod
    def of(cls, problem: GroupProblem, lags: np.ndarray) -> _Group:
        topics = [
            t
            for t, s in enumerate(problem.topic_subscribers)
            if len(s) and problem.partition_counts[t]
        ]
        classes: dict[tuple[int, ...], list[int]] = {}
        for m in range(problem.num_members):
            key = tuple(t for t in problem.subscribed_topics[m].tolist() if t in topics)
            if key:
                classes.setdefault(key, []).append(m)
        floor, extra = {}, {}
        for t in topics:
            floor[t], extra[t] = divmod(
                int(problem.partition_counts[t]), len(problem.topic_subscribers[t])
            )
        keys = [k for k, c in classes.items() for _ in c]
        start = problem.topic_start
        return cls(
            problem,
            lags,
            [m for c in classes.values() for m in c],
            [list(k) for k in keys],
            [i > 0 and keys[i] == keys[i - 1] for i in range(len(keys))],
            [keys[i + 1 :].count(keys[i]) for i in range(len(keys))],
            floor,
            extra,
            sum(int(lags[start[t] : start[t + 1]].sum()) for t in topics),
        )


class _Decision:
    """Whether some answer has a largest total at most ``level1`` and (unless ``None``) a sum of
    squares at most ``level2``: a depth-first search over the members' bundles.

    With ``least``, the least sum of squares at most ``level2`` instead (branch and bound: each
    answer found lowers ``level2`` below its own and the search goes on; ``best`` is the last)."""

    def __init__(
        self,
        group: _Group,
        level1: int,
        level2: int | None,
        deadline: float,
        least: bool = False,
    ) -> None:
        self.group = group
        self.level1 = level1
        self.level2 = level2
        self.deadline = deadline
        self.least = least
        self.best: np.ndarray | None = None
        problem = group.problem
        start = problem.topic_start
        lags = group.lags
        self.remaining = {  # unassigned partitions per topic, by lag descending
            t: sorted(range(int(start[t]), int(start[t + 1])), key=lambda p: (-int(lags[p]), p))
            for t in group.floor
        }
        self.subscribers_left = {t: len(problem.topic_subscribers[t]) for t in group.floor}
        self.extra_left = dict(group.extra)  # subscribers still to get floor + 1
        self.owner = np.full(problem.num_partitions, -1, dtype=np.int64)

    def run(self) -> bool:
        """Whether an answer exists (then ``owner`` is one)."""
        try:
            self._descend(0, self.group.total, 0, self.level1)
        except _Found:
            return True
        return False

    def _window(self, i: int, left: int, squares: int, previous: int) -> tuple[int, int]:
        """The totals member ``i`` may take, ``left`` lag being over the members from ``i`` on."""
        group = self.group
        after = len(group.members) - i - 1
        low = max(left - after * self.level1, 0)
        high = min(self.level1, previous) if group.same_class[i] else self.level1
        # The next ``run`` members have this one's subscription, so (non-increasing totals within a
        # class) each takes at most this one's total; the others at most level 1.
        run = group.run[i]
        low = max(low, -(-(left - (after - run) * self.level1) // (run + 1)))
        if self.level2 is not None:
            # L^2 + (left - L)^2 / after <= level2 - squares: L between the roots of
            # (after + 1) L^2 - 2 left L + left^2 - after room.
            room = self.level2 - squares
            if after == 0:
                return (low, high) if left * left <= room else (1, 0)
            disc = after * ((after + 1) * room - left * left)
            if disc < 0:
                return 1, 0
            root = math.isqrt(disc) + 1
            low = max(low, (left - root) // (after + 1))
            high = min(high, -(-(left + root) // (after + 1)))
        return low, high

    def _descend(self, i: int, left: int, squares: int, previous: int) -> None:
        if time.perf_counter() > self.deadline:
            raise _Stop
        group = self.group
        if i == len(group.members):
            self._found(squares)
            return
        if self.level2 is not None and squares + self._rest(i, left) > (self.level2):
            return
        low, high = self._window(i, left, squares, previous)
        if low > high:
            return
        if i == len(group.members) - 1:  # the last member takes what is left
            parts = [np.array(self.remaining[t], dtype=np.int64) for t in group.topics[i]]
            self._take(i, parts)
            self._found(squares + left * left)
            self._take(i, parts, undo=True)
            return
        bundles = self._bundles(i, low, high)
        rest = len(group.members) - i - 1
        for k, total in enumerate(bundles.totals.tolist()):
            if self.level2 is not None and (
                squares + total * total + _even(left - total, rest) > self.level2
            ):
                continue
            parts = bundles.parts(k)
            self._take(i, parts)
            self._descend(i + 1, left - total, squares + total * total, total)
            self._take(i, parts, undo=True)

    def _found(self, squares: int) -> None:
        """An answer (in ``owner``) with sum of squares ``squares``: the decision ends, or the
        least sum of squares searched for goes below it."""
        if not self.least:
            raise _Found
        self.best = self.owner.copy()
        self.level2 = squares - 1

    def _rest(self, i: int, left: int) -> int:
        """A lower bound of the sum of squares of the totals of the members from ``i`` on
        (``left`` lag): the larger of the majorant bound of :mod:`models.lag_aware.bounds` over the
        remaining partitions and the boxed bound, the least over the members who may take the
        largest free partition of the even split within each member's least and most total
        (that member's least raised by it)."""
        group, lags = self.group, self.group.lags
        members = len(group.members) - i
        top = sorted(
            (int(lags[p]) for q in self.remaining.values() for p in q[:members]), reverse=True
        )[:members]
        if not top:
            return 0
        held = [int(v) for v in np.cumsum(top).tolist()]
        majorant = _majorant(left, members, top[0], held)
        largest = max(
            (t for t in self.remaining if self.remaining[t]),
            key=lambda t: (int(lags[self.remaining[t][0]]), -t),
        )
        hot = int(lags[self.remaining[largest][0]])
        boxes = []
        raised = []  # per member: its least total when it takes the largest free partition
        for topics in group.topics[i:]:
            least = most = 0
            holding = None if largest not in topics else hot
            for t in topics:
                q = self.remaining[t]
                floor = group.floor[t]
                ceiling = floor + (self.extra_left[t] > 0)
                smallest = [int(lags[p]) for p in q[len(q) - floor :]] if floor else []
                least += sum(smallest)
                most += sum(int(lags[p]) for p in q[:ceiling])
                if t == largest and holding is not None:
                    # It holds the largest and at least floor - 1 more of t, the smallest.
                    holding += sum(smallest[1:]) if len(q) > floor else sum(smallest) - hot
                elif holding is not None:
                    holding += sum(smallest)
            boxes.append((least, most))
            raised.append(holding)
        boxed = min(
            (
                _boxed(left, boxes[:j] + [(max(boxes[j][0], lift), boxes[j][1])] + boxes[j + 1 :])
                for j, lift in enumerate(raised)
                if lift is not None and lift <= boxes[j][1]
            ),
            default=0,
        )
        return max(majorant, boxed)

    def _bundles(self, i: int, low: int, high: int) -> _Bundles:
        """Every choice of member ``i`` (per topic floor or ceiling of the remaining partitions,
        the counts still completable) whose total lies in ``[low, high]``, nearest the window's
        middle first."""
        lags = self.group.lags
        sums: list[np.ndarray] = []  # per topic: the totals of its choices
        rows: list[np.ndarray] = []  # per topic: its choices' ids (padded with -1)
        for t in self.group.topics[i]:
            ids = np.array(self.remaining[t], dtype=np.int64)
            floor = self.group.floor[t]
            topic_sums: list[np.ndarray] = []
            topic_rows: list[np.ndarray] = []
            # Partitions of a topic with equal lags are interchangeable: one choice per multiset
            # of lags (the first ones of each lag, the ids being in lag order).
            values = lags[ids]
            starts = np.flatnonzero(np.concatenate(([len(ids) > 0], values[1:] != values[:-1])))
            counts = tuple(np.diff(np.append(starts, len(ids))).tolist())
            kind = np.repeat(np.arange(len(counts)), counts)
            rank = np.arange(len(ids)) - starts[kind]
            for extra in (0, 1):
                take = floor + extra
                left = self.extra_left[t] - extra
                if left < 0 or left > self.subscribers_left[t] - 1 or take > len(ids):
                    continue
                numbers = _multisets(counts, take)
                chosen = np.broadcast_to(ids, (len(numbers), len(ids)))[
                    rank[None, :] < numbers[:, kind]
                ].reshape(len(numbers), take)
                topic_sums.append(lags[chosen].sum(axis=1))
                padded = np.full((len(chosen), floor + 1), -1, dtype=np.int64)
                padded[:, :take] = chosen
                topic_rows.append(padded)
            if not topic_sums:
                return _Bundles(np.zeros(0, np.int64), np.zeros((0, 0), np.int64), [])
            sums.append(np.concatenate(topic_sums))
            rows.append(np.concatenate(topic_rows))
        # Totals of the first topics combined (pruned by the window), the last by binary search.
        total = np.zeros(1, dtype=np.int64)
        picks = np.zeros((1, 0), dtype=np.int64)
        most_after = [int(sum(int(v.max()) for v in sums[k + 1 :])) for k in range(len(sums))]
        for k, values in enumerate(sums[:-1]):
            total = (total[:, None] + values[None, :]).reshape(-1)
            picks = np.concatenate(
                [
                    np.repeat(picks, len(values), axis=0),
                    np.tile(np.arange(len(values)), len(picks))[:, None],
                ],
                axis=1,
            )
            keep = (total <= high) & (total + most_after[k] >= low)
            total, picks = total[keep], picks[keep]
            if len(total) > PARTIAL_BUNDLES:
                raise _Stop
        last = sums[-1]
        order = np.argsort(last, kind="stable")
        begin = np.searchsorted(last[order], low - total, side="left")
        end = np.searchsorted(last[order], high - total, side="right")
        counts = np.maximum(end - begin, 0)
        first = np.repeat(np.arange(len(total)), counts)
        offsets = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        final = order[np.repeat(begin, counts) + offsets]
        totals = total[first] + last[final]
        picks = np.concatenate([picks[first], final[:, None]], axis=1)
        rank = np.argsort(np.abs(2 * totals - low - high), kind="stable")
        return _Bundles(totals[rank], picks[rank], rows)

    def _take(self, i: int, parts: list[np.ndarray], undo: bool = False) -> None:
        """Member ``i`` takes (or gives back) ``parts``, per topic."""
        m = self.group.members[i]
        for t, padded in zip(self.group.topics[i], parts):
            chosen = padded[padded >= 0]
            extra = len(chosen) - self.group.floor[t]
            if undo:
                self.remaining[t] = sorted(
                    self.remaining[t] + chosen.tolist(),
                    key=lambda p: (-int(self.group.lags[p]), p),
                )
                self.owner[chosen] = -1
            else:
                gone = set(chosen.tolist())
                self.remaining[t] = [p for p in self.remaining[t] if p not in gone]
                self.owner[chosen] = m
            sign = 1 if undo else -1
            self.subscribers_left[t] += sign
            self.extra_left[t] += sign * extra


def _even(total: int, members: int) -> int:
    """The least sum of squares of ``members`` non-negative integers adding up to ``total``."""
    if members <= 0:
        return 0 if total == 0 else total * total
    q, extra = divmod(total, members)
    return (members - extra) * q * q + extra * (q + 1) * (q + 1)


def _boxed(total: int, boxes: list[tuple[int, int]]) -> int:
    """The least sum of squares of reals ``L_j`` in ``[least_j, most_j]`` adding up to ``total``
    (rounded up; 0 when the boxes cannot add up to it): each ``L_j`` is ``lambda`` clamped to its
    box, ``lambda`` found on the sorted box ends."""
    if not boxes or not sum(a for a, _ in boxes) <= total <= sum(b for _, b in boxes):
        return 0
    ends = sorted({v for box in boxes for v in box})

    def clamp(level: Fraction, a: int, b: int) -> Fraction:
        return min(max(level, Fraction(a)), Fraction(b))

    def filled(level: Fraction) -> Fraction:
        return sum((clamp(level, a, b) for a, b in boxes), Fraction(0))

    # The segment [ends[k], ends[k + 1]] where the filled total reaches ``total``; linear on it.
    level = Fraction(ends[0])
    for a, b in zip(ends, ends[1:]):
        low, high = filled(Fraction(a)), filled(Fraction(b))
        if low <= total <= high:
            level = (
                Fraction(a) + (b - a) * (total - low) / (high - low) if high > low else Fraction(a)
            )
            break
    return math.ceil(sum((clamp(level, a, b) ** 2 for a, b in boxes), Fraction(0)))


def _least(low: int, high: int, decide: Callable[[int], int | None]) -> int:
    """The least ``v`` in ``[low, high]`` with an answer, ``high`` known to have one:
    ``decide(v)`` is the value of an answer at most ``v``, or ``None`` when there is none.
    ``low`` itself first (a bound is often met), then halving the interval."""
    first = True
    while low < high:
        v = low if first else (low + high - 1) // 2
        first = False
        found = decide(v)
        if found is None:
            low = v + 1
        else:
            high = found
    return high


def search(
    problem: GroupProblem, owner: np.ndarray, bound: tuple[int, int], max_seconds: float
) -> tuple[np.ndarray, bool]:
    """The lag-aware optimum of a small group, from the valid answer ``owner`` and a lower bound
    ``bound`` (level 1, level 2): ``(answer, proven)``; ``proven`` when the search ran to its end
    (the answer is lexicographically optimal), else the best answer found (never worse than
    ``owner``) and ``False`` (out of time, or too large to enumerate)."""
    owner = np.array(owner)
    if problem.num_members < 2 or problem.lags is None:
        return owner, True  # one valid answer, or every answer (0, 0)
    lags = search_lags(problem)
    if lags is None:  # member totals beyond 62 bits
        return owner, False
    scale = math.gcd(*lags.tolist()) or 1  # both levels scale by a constant
    group = _Group.of(problem, lags // scale)
    if _levels(group, owner) == (-(-bound[0] // scale), -(-bound[1] // scale**2)):
        return owner, True  # it meets the bounds
    start = problem.topic_start
    for t, floor in group.floor.items():  # a member's choices of each topic, before any is taken
        values = np.sort(group.lags[start[t] : start[t + 1]])
        _, counts = np.unique(values, return_counts=True)
        if not _few(tuple(counts.tolist()), floor + (group.extra[t] > 0)):
            return owner, False
    deadline = time.perf_counter() + max_seconds
    best = owner.copy()

    def decide(level1: int, level2: int | None) -> int | None:
        nonlocal best
        decision = _Decision(group, level1, level2, deadline)
        if not decision.run():
            return None
        best = decision.owner.copy()
        return _levels(group, best)[0 if level2 is None else 1]

    try:
        level1 = _least(-(-bound[0] // scale), _levels(group, owner)[0], lambda v: decide(v, None))
        squares = _levels(group, best)[1]
        floor = -(-bound[1] // scale**2)
        if squares > floor and decide(level1, floor) is None:  # the bound first, then below best
            least = _Decision(group, level1, squares - 1, deadline, least=True)
            least.run()
            if least.best is not None:
                best = least.best
    except _Stop:
        return (best if _levels(group, best) < _levels(group, owner) else owner), False
    return best, True


def _levels(group: _Group, owner: np.ndarray) -> tuple[int, int]:
    """``owner``'s two levels in the search's (divided) lags."""
    totals = [0] * group.problem.num_members
    for p, m in enumerate(owner.tolist()):
        if m >= 0:
            totals[m] += int(group.lags[p])
    return max(totals, default=0), sum(v * v for v in totals)
