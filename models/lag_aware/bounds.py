"""Lower bounds of the lag-aware objective (docs/design/objectives.md), valid at any size, in O(P log P).

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from problems import GroupProblem


def _sorted_lags(problem: GroupProblem, t: int) -> np.ndarray:
    start, end = int(problem.topic_start[t]), int(problem.topic_start[t + 1])
    lags = problem.lags[start:end] if problem.lags is not None else np.zeros(end - start, np.int64)
    wide = int(lags.max(initial=0)) * max(len(lags), 1) >= 2**62
    return np.sort(lags.astype(object) if wide else lags.astype(np.int64))[::-1]


def lower_bound(problem: GroupProblem) -> tuple[int, int]:
    """``(level 1, level 2)`` lower bounds of the lag-aware objective for ``problem``."""
    subscribed = [
        t for t, s in enumerate(problem.topic_subscribers) if len(s) and problem.partition_counts[t]
    ]
    if not subscribed:
        return 0, 0
    lags = {t: _sorted_lags(problem, t) for t in subscribed}
    floors = {
        t: int(problem.partition_counts[t]) // len(problem.topic_subscribers[t]) for t in subscribed
    }
    # The floor_t smallest lags of each topic: what any subscriber gets at least from it.
    least = {
        t: int(lags[t][len(lags[t]) - floors[t] :].sum()) if floors[t] else 0 for t in subscribed
    }
    active = int(np.count_nonzero(problem.subscribes[:, subscribed].any(axis=1)))
    total = sum(int(lags[t].sum()) for t in subscribed)
    best = -(-total // active)
    for t in subscribed:
        a, k = lags[t], len(problem.topic_subscribers[t])
        best = max(best, -(-int(a.sum()) // k))
        # The least extra from the other topics over t's subscribers.
        others = min(
            sum(least[u] for u in subscribed if u != t and problem.subscribes[m, u])
            for m in problem.topic_subscribers[t].tolist()
        )
        prefix = np.concatenate(([0], np.cumsum(a)))
        j = np.arange(0, (len(a) - 1) // k + 1)  # j k + 1 <= n
        top = prefix[j * k + 1] - prefix[j * k - j]  # a_{jk-j+1} + ... + a_{jk+1}
        # Then floor_t - j - 1 more of t, at least its smallest lags not among the top j k + 1.
        more = np.maximum(floors[t] - j - 1, 0)
        n = len(a)
        smallest = prefix[n] - prefix[np.maximum(n - more, j * k + 1)]
        best = max(best, int((top + smallest).max()) + others)
    best = max(best, _across_topics(problem, subscribed, lags, floors, active))
    # Some member carries the largest lag L >= best, the other active - 1 the rest: at least
    # L^2 + even(total - L, active - 1), which does not fall as L grows from best >= total / active.
    level2 = max(
        _even(total, active),
        best * best + _even(total - best, active - 1),
        _majorant(total, active, best, _held(problem, subscribed, lags, floors, active)),
    )
    # L^2 and L have the same parity, so level 2 has the parity of the total.
    return best, level2 + (level2 - total) % 2


def _held(
    problem: GroupProblem,
    subscribed: list[int],
    lags: dict[int, np.ndarray],
    floors: dict[int, int],
    active: int,
) -> list[int]:
    """For ``k = 1 .. active - 1``, a least total of the ``k`` members of largest totals: some
    ``k`` members hold the ``k`` largest partition lags (the ``c_t`` largest of each topic ``t``),
    and in each topic ``t`` at least ``F_t(k)`` partitions, the sum of the ``k`` least floor
    shares of ``t`` over the active members (0 for a member not subscribing ``t``): the ``c_t``
    largest of ``t`` and at least its ``F_t(k) - c_t`` smallest others."""
    ks = np.arange(1, active)
    if not len(ks):
        return []
    labels = np.concatenate([np.full(len(lags[t]), t) for t in subscribed])
    values = np.concatenate([lags[t] for t in subscribed])
    order = np.argsort(-values.astype(np.float64), kind="stable")[: active - 1]
    members = problem.subscribes[:, subscribed].any(axis=1)
    held = np.zeros(len(ks), dtype=values.dtype)
    for t in subscribed:
        a = lags[t]  # descending
        n = len(a)
        prefix = np.concatenate(([0], np.cumsum(a))).astype(values.dtype)
        # c_t(k): t's partitions among the k largest (all of them once k passes their number).
        tops = np.cumsum(labels[order] == t)[np.minimum(ks, len(order)) - 1]
        shares = np.sort(np.where(problem.subscribes[members, t], floors[t], 0))
        least = np.cumsum(shares)[ks - 1]  # F_t(k)
        more = np.clip(least - tops, 0, n - tops)
        held = held + prefix[tops] + (prefix[n] - prefix[n - more])
    return [int(v) for v in held.tolist()]


def _majorant(total: int, active: int, best: int, held: list[int]) -> int:
    """Level 2 over the sorted member lags ``L_1 >= ... >= L_M`` (``M = active``): their first
    ``k`` add up to at least ``held[k - 1]`` (:func:`_held`), and ``L_1 >= best``.  The prefix
    sums of ``L`` are concave, so they lie above the least concave majorant ``C`` of those points,
    ``(0, 0)`` and ``(M, total)``: ``L`` majorizes ``C``'s slopes and the convex sum of squares is
    at least theirs (a rational, rounded up)."""
    points = [(0, 0)]
    for k in range(1, active):
        points.append((k, min(total, max(held[k - 1] if k - 1 < len(held) else 0, best))))
    points.append((active, total))
    hull: list[tuple[int, int]] = []
    for point in points:  # the upper hull, left to right
        while len(hull) >= 2:
            (x0, y0), (x1, y1) = hull[-2], hull[-1]
            if (y1 - y0) * (point[0] - x0) <= (point[1] - y0) * (x1 - x0):
                hull.pop()  # hull[-1] lies on or below the chord
            else:
                break
        hull.append(point)
    bound = Fraction(0)
    for (x0, y0), (x1, y1) in zip(hull, hull[1:]):
        bound += Fraction((y1 - y0) ** 2, x1 - x0)
    return math.ceil(bound)


def _even(total: int, members: int) -> int:
    """The least sum of squares of ``members`` non-negative integers adding up to ``total``."""
    if members <= 0:
        return 0 if total <= 0 else total * total
    q, extra = divmod(total, members)
    return (members - extra) * q * q + extra * (q + 1) * (q + 1)


def _across_topics(
    problem: GroupProblem,
    subscribed: list[int],
    lags: dict[int, np.ndarray],
    floors: dict[int, int],
    active: int,
) -> int:
    """The pigeonhole bound over all subscribed partitions: among the ``j M + 1`` largest lags
    (``M`` active members) some member gets ``j + 1``, at least the ``j + 1`` smallest of them,
    plus the smallest lags outside them for the rest of its least total share
    (``min_m sum_t floor_t`` over the topics ``m`` subscribes)."""
    a = np.sort(np.concatenate([lags[t] for t in subscribed]))[::-1]
    n, k = len(a), active
    share = min(
        sum(floors[t] for t in subscribed if problem.subscribes[m, t])
        for m in range(problem.num_members)
        if problem.subscribes[m, subscribed].any()
    )
    prefix = np.concatenate(([0], np.cumsum(a)))
    j = np.arange(0, (n - 1) // k + 1)  # j k + 1 <= n
    top = prefix[j * k + 1] - prefix[j * k - j]
    more = np.maximum(share - j - 1, 0)
    smallest = prefix[n] - prefix[np.maximum(n - more, j * k + 1)]
    return int((top + smallest).max())


def combine(problem: GroupProblem, bound: tuple[int, ...] | None) -> tuple[int, ...]:
    """A solver's lexicographic bound strengthened by :func:`lower_bound`, level by level.

    Each entry of :func:`lower_bound` bounds its level over every valid
    assignment, so the larger of the two is a bound too.
    """
    ours = lower_bound(problem)
    theirs = tuple(bound or ())
    return tuple(
        max(int(a), b) if i < len(theirs) else b
        for i, (a, b) in enumerate(zip(theirs + (0,) * (2 - len(theirs)), ours))
    )
