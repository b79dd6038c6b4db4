"""What both exact lag-aware models share (CP-SAT and the MIP): the data, its bounds, the symmetry classes, the hint.

The formulations are described in :mod:`models.lag_aware.cpsat`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from heuristics import lag_aware as heuristic
from models.common.ranked_outcome import Ranked
from models.lag_aware.bounds import combine, lower_bound
from models.lag_aware.search import search
from models.lag_aware.swaps import balance, even_out, improve
from models.options import answer_of
from problems import (
    GroupProblem,
    Result,
    Status,
    evaluate,
    member_lags,
    previous_owners,
)

VARIANTS = (None, "sticky")
#: Beyond this many (partition, subscriber) pairs no model is built: the answer is the best
#: heuristic's, ``feasible`` with the bounds of :mod:`models.lag_aware.bounds` (``optimal`` if it meets
#: them).
MODEL_PAIRS = 200_000
#: The heuristics whose best answer hints the models (and answers beyond ``MODEL_PAIRS``).
HINTS = (None, "cumulative", "differencing")
#: Seconds of swaps on the largest member (:mod:`models.lag_aware.swaps`) that improve the best hint.
SWAP_SECONDS = 1.0
#: Seconds at most of :func:`models.lag_aware.swaps.balance` towards the level-1 bound (it stops as soon
#: as the bound is met or no exchange helps); the models give it a share of their time limit.
BALANCE_SECONDS = 8.0
#: Seconds at most of the exact search of :mod:`models.lag_aware.search` (small groups: it proves the
#: optimum or gives up at once when a member's choices are too many to enumerate); the models give
#: it a share of their time limit.
SEARCH_SECONDS = 4.0


def balance_share(time_limit: float) -> float:
    """Seconds of :func:`models.lag_aware.swaps.balance` within a model's ``time_limit``."""
    return min(BALANCE_SECONDS, 0.6 * time_limit)


def search_share(time_limit: float) -> float:
    """Seconds of :func:`models.lag_aware.search.search` within a model's ``time_limit``."""
    return min(SEARCH_SECONDS, 0.25 * time_limit)


@dataclass
class LagModel:
    """Backend-neutral data of the lag-aware model (used by CP-SAT and the MIP).

    Attributes
    ----------
    problem
        The consumer group.
    variant
        ``None`` (level 2: sum of squared lags) or ``"sticky"`` (level 2: moves).
    limit
        The largest number the backend represents exactly.
    backend
        The solver's name, for the error message.
    sum_factor, square_factor
        How many lag sums (squared lag sums) the backend's largest level-1
        (level-2) expression may add up: ``sum_factor * S`` and, for level 2,
        ``square_factor * S**2`` must be at most ``limit``.
    start
        A valid answer given as a hint (``None``: none), a candidate beside the heuristics'.
    balance_seconds
        The most seconds :func:`models.lag_aware.swaps.balance` spends lowering the best hint's level 1
        towards its bound.
    search_seconds
        The most seconds :func:`models.lag_aware.search.search` spends proving the optimum of a small
        group (0: no search).

    When ``square_factor * S**2`` leaves the range but ``sum_factor * S`` does not, the model
    keeps level 1 and leaves level 2 out (``squares_in_range`` is false): level 2 is then the
    answer's, bounded by :func:`models.lag_aware.bounds.lower_bound`, and the answer is ``optimal``
    only if it meets that bound.  When even level 1 leaves the range, no model is built
    (``too_large``): the best heuristic answer with the size-free bounds.
    """

    problem: GroupProblem
    variant: str | None
    limit: int
    backend: str
    sum_factor: int = 1
    square_factor: int = 1
    start: np.ndarray | None = None
    balance_seconds: float = BALANCE_SECONDS
    search_seconds: float = SEARCH_SECONDS
    _proven: bool = field(default=False, init=False, repr=False)  # the search ran to its end

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"unknown lag-aware variant {self.variant!r} (choose from sticky)")

    @cached_property
    def total(self) -> int:
        """The sum of the divided lags of the assignable partitions."""
        return sum(self.lags[p] for p in self.partitions.tolist())

    @property
    def sums_in_range(self) -> bool:
        """Whether level 1's expressions stay within ``limit``."""
        return self.sum_factor * self.total <= self.limit

    @property
    def squares_in_range(self) -> bool:
        """Whether level 2 (squared lags) is modelled: its expressions stay within ``limit``."""
        return self.variant is None and self.square_factor * self.total**2 <= self.limit

    @cached_property
    def scale(self) -> int:
        """The gcd of the assignable partitions' lags (1 when all are zero)."""
        raw = self.problem.lags
        if raw is None:
            return 1
        return math.gcd(*raw[self.partitions].tolist()) or 1

    @cached_property
    def partitions(self) -> np.ndarray:
        """Global ids of the partitions to assign."""
        return np.flatnonzero(self.problem.assignable)

    @cached_property
    def lags(self) -> list[int]:
        """Divided lag of every partition, by global id (exact Python integers)."""
        if self.problem.lags is None:
            return [0] * self.problem.num_partitions
        return [v // self.scale for v in self.problem.lags.tolist()]

    def candidates(self, p: int) -> np.ndarray:
        """The members that may take partition ``p``."""
        subscribers: np.ndarray = self.problem.topic_subscribers[self.problem.partition_topic[p]]
        return subscribers

    @cached_property
    def previous(self) -> np.ndarray:
        """Valid previous owners (KIP-341)."""
        return previous_owners(self.problem)

    def shares(self) -> Iterator[tuple[int, np.ndarray, int, int]]:
        """``(topic, subscribers, floor, ceiling)`` of every subscribed topic."""
        for t, subscribers in enumerate(self.problem.topic_subscribers):
            if len(subscribers):
                floor, extra = divmod(int(self.problem.partition_counts[t]), len(subscribers))
                yield t, subscribers, floor, floor + (extra > 0)

    def pairs(self) -> Iterator[tuple[int, int, int, np.ndarray]]:
        """``(p, q, 2 lag_p lag_q, common members)`` of partitions of positive lag that may share a member."""
        positive = [int(p) for p in self.partitions if self.lags[p] > 0]
        subscribes = self.problem.subscribes
        topic = self.problem.partition_topic
        for i, p in enumerate(positive):
            for q in positive[i + 1 :]:
                common = np.flatnonzero(subscribes[:, topic[p]] & subscribes[:, topic[q]])
                if len(common):
                    yield p, q, 2 * self.lags[p] * self.lags[q], common

    @cached_property
    def constant(self) -> int:
        """``sum_p lag_p^2``: the level-2 part that does not depend on the answer."""
        return sum(self.lags[p] ** 2 for p in self.partitions)

    def member_classes(self) -> list[list[int]]:
        """Interchangeable members (same subscription; sticky: nothing validly owned), 2 or more."""
        owning = set(self.previous[self.previous >= 0].tolist()) if self.variant else set()
        classes: dict[tuple[int, ...], list[int]] = {}
        for m, topics in enumerate(self.problem.subscribed_topics):
            if m not in owning and len(topics):
                classes.setdefault(tuple(topics.tolist()), []).append(m)
        return [c for c in classes.values() if len(c) > 1]

    def partition_classes(self) -> list[list[int]]:
        """Interchangeable partitions (same topic and lag; sticky: no valid owner), 2 or more, ascending."""
        classes: dict[tuple[int, int], list[int]] = {}
        for p in self.partitions.tolist():
            if self.variant and self.previous[p] >= 0:
                continue
            classes.setdefault((int(self.problem.partition_topic[p]), self.lags[p]), []).append(p)
        return [c for c in classes.values() if len(c) > 1]

    @cached_property
    def best_heuristic(self) -> Result:
        """The lexicographically best answer of the heuristics in ``HINTS`` (KIP-169 and its
        variants) and ``start``, improved by :func:`models.lag_aware.swaps.improve` (swaps on the largest
        member, at most ``SWAP_SECONDS``); for level 2 of squared lags, the optimum of
        :func:`models.lag_aware.search.search` when it runs to its end within ``search_seconds`` (small
        groups), else its best answer; then within what is left of ``balance_seconds`` by
        :func:`models.lag_aware.swaps.balance` towards the level-1 bound and (level 2 of squared lags)
        :func:`models.lag_aware.swaps.even_out` towards the level-2 bound."""
        found = [heuristic.assign(self.problem, variant=v) for v in HINTS]
        if self.start is not None:
            found.append(Result(self.problem, "lag-aware", self.start, objective_name="lag-aware"))
        best = min(found, key=lambda r: r.objective)
        owner = improve(self.problem, answer_of(best), SWAP_SECONDS)
        target = lower_bound(self.problem)
        started = time.perf_counter()
        if self.variant is None and self.search_seconds > 0:
            # Small groups: the exact search proves the optimum (or gives up, keeping its best).
            owner, self._proven = search(self.problem, owner, target, self.search_seconds)
            if self._proven:
                return Result(self.problem, "lag-aware", owner, objective_name="lag-aware")
        if max(member_lags(self.problem, owner), default=0) > target[0]:
            left = self.balance_seconds - (time.perf_counter() - started)
            owner = balance(self.problem, owner, target[0], max(left, 0.0))
        if self.variant is None:  # level 2 is the sum of squares: even the lags out
            left = self.balance_seconds - (time.perf_counter() - started)
            owner = even_out(self.problem, owner, target[1], max(left, 0.0))
        improved = Result(self.problem, "lag-aware", owner, objective_name="lag-aware")
        return min((best, improved), key=lambda r: r.objective)

    @property
    def too_large(self) -> bool:
        """Whether no model is built: beyond ``MODEL_PAIRS``, or level 1 beyond ``limit``."""
        subscribers = np.array([len(s) for s in self.problem.topic_subscribers], dtype=np.int64)
        pairs = int((self.problem.partition_counts * subscribers).sum())
        return pairs > MODEL_PAIRS or not self.sums_in_range

    @property
    def hint_meets_bounds(self) -> bool:
        """Whether the best heuristic answer is proven optimal (level 2 of squared lags): the exact
        search of :mod:`models.lag_aware.search` ran to its end, or the answer meets
        :func:`models.lag_aware.bounds.lower_bound` at both levels; no model needs building."""
        best = self.best_heuristic
        return self.variant is None and (
            self._proven or tuple(best.objective) == lower_bound(self.problem)
        )

    @property
    def bound(self) -> tuple[int, ...]:
        """The size-free bounds (:func:`models.lag_aware.bounds.lower_bound`), or the proven optimum
        when the exact search ran to its end."""
        best = self.best_heuristic
        return tuple(best.objective) if self._proven else lower_bound(self.problem)

    def bounds_only(self) -> Result:
        """The best heuristic answer with the size-free lower bounds (beyond ``MODEL_PAIRS``, or out of time
        before the solver returned any answer)."""
        best = self.best_heuristic
        answer, bound = answer_of(best), self.bound
        if self.variant:
            info = {
                "moves": evaluate(self.problem, answer, "sticky").objective[1],
                "method": "bounds",
            }
            return Result(
                self.problem,
                "lag-aware",
                answer,
                Status.FEASIBLE,
                bound[:1],
                info,
                objective_name="lag-aware",
            )
        status = Status.OPTIMAL if tuple(best.objective) == bound else Status.FEASIBLE
        # The search's proof, or the size-free bounds; as a model would say, level 2 beyond the
        # backend's range is then the size-free bound.
        method = "search" if self._proven and bound != lower_bound(self.problem) else "bounds"
        level2 = {"level2": "bounded"} if method == "bounds" and not self.squares_in_range else {}
        return Result(
            self.problem,
            "lag-aware",
            answer,
            status,
            bound,
            {"method": method, **level2},
            objective_name="lag-aware",
        )

    @property
    def level1_floor(self) -> int:
        """:func:`models.lag_aware.bounds.lower_bound`'s level 1 in divided units (a valid floor of ``z``)."""
        return -(-lower_bound(self.problem)[0] // self.scale)

    @cached_property
    def hint(self) -> tuple[np.ndarray, int]:
        """The best heuristic's owner array made canonical for the symmetry breaking, and its level 1 (divided)."""
        owner = answer_of(self.best_heuristic).copy()
        totals = member_lags(self.problem, owner)
        relabel = np.arange(self.problem.num_members)
        for members in self.member_classes():
            ranked = sorted(members, key=lambda m: totals[m])
            relabel[ranked] = members
        owner[owner >= 0] = relabel[owner[owner >= 0]]
        for partitions in self.partition_classes():
            owner[partitions] = np.sort(owner[partitions])
        return owner, max(member_lags(self.problem, owner), default=0) // self.scale

    def result(self, ranked: Ranked, x: dict[tuple[int, int], Any]) -> Result:
        """The :class:`Result` of a ranked solve over ``x[p, m]``, bounds in the evaluator's units.

        The sticky variant's level 2 (moves) is not a level of the lag-aware
        objective: its bound and the answer's moves go to ``info``.
        """
        info: dict[str, Any] = {}
        if not ranked.has_solution:
            # Out of time before any answer, or a solver's numerical "infeasible" (every group has
            # an assignment): the hint is one, with the bounds.
            return self.bounds_only()
        answer = np.full(self.problem.num_partitions, -1, dtype=np.int32)
        for (p, m), var in x.items():
            if ranked.value(var):
                answer[p] = m
        if self.variant:
            info["moves"] = evaluate(self.problem, answer, "sticky").objective[1]
        bound = ranked.bound
        if bound is not None and self.variant:
            info.update({"moves_bound": int(bound[1])} if len(bound) > 1 else {})
            bound = bound[:1]
        if bound is not None:
            bound = tuple(int(b) * f for b, f in zip(bound, (self.scale, self.scale**2)))
        # Strengthened by the size-free bounds (level 1 only for the sticky variant).
        bound = combine(self.problem, bound)[: 1 if self.variant else 2]
        status = ranked.status
        if self.variant is None:
            if not self.squares_in_range:
                info["level2"] = "bounded"  # level 2 was not modelled: the size-free bound
                status = Status.FEASIBLE
            objective = evaluate(self.problem, answer, "lag-aware").objective
            if tuple(objective) == tuple(bound):  # the answer meets a proven lower bound
                status = Status.OPTIMAL
        return Result(
            self.problem, "lag-aware", answer, status, bound, info, objective_name="lag-aware"
        )
