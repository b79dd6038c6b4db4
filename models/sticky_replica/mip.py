"""Exact replica placement as a PuLP MIP (HiGHS by default, CBC on request).

The same model as :mod:`models.sticky_replica.cpsat` (formulation and the two
PR questions: :mod:`models.sticky_replica.data`), solved by
:func:`models.common.mip_ranked.solve_ranked`.  Squares are continuous variables
above the secants (exact at integer counts); "match or beat lexicographically"
uses three binaries with big-M bounds taken from each level's upper bound (at
most a few million on the benchmark, far from HiGHS's trouble zone).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pulp

from models.common.mip_ranked import Ranked, solve_ranked
from models.common.ranked_outcome import OutOfTime
from models.options import SolveOptions
from models.sticky_replica.data import (
    check_model_size,
    count_bounds,
    original_sets,
    rack_count_bounds,
    read_answer,
    replica_result,
    secant_range,
    solve_frontier,
    target_levels,
)
from problems import PlacementProblem, Result, Status


def _square(
    model: pulp.LpProblem, value: pulp.LpAffineExpression, low: int, high: int, name: str
) -> pulp.LpVariable:
    """A continuous ``s >= value^2`` (equal at the optimum) for integer ``value`` in ``[low, high]``."""
    square = pulp.LpVariable(name, low * low, high * high)
    if (
        len(value) > 1
    ):  # one row defines the count; each secant is then a two-term row (not a copy of value)
        count = pulp.LpVariable(f"{name}_count", low, high)
        model += count == value
        value = count
    for t in secant_range(low, high):
        model += square >= (2 * t + 1) * value - t * (t + 1)
    return square


#: A level's expression and an upper bound of its value (the big-M of "match or beat").
Level = tuple[pulp.LpAffineExpression, int]


@dataclass
class _Model:
    """The MIP of one solve while it is built: its variables by key, and its deadline."""

    problem: PlacementProblem
    deadline: float
    model: pulp.LpProblem = field(
        default_factory=lambda: pulp.LpProblem("sticky_replica", pulp.LpMinimize)
    )
    #: ``x[p, b]``: partition ``p`` has a replica on live broker ``b``; ``y[p, b]``: ``b`` leads it.
    x: dict[tuple[int, int], pulp.LpVariable] = field(default_factory=dict)
    y: dict[tuple[int, int], pulp.LpVariable] = field(default_factory=dict)

    def check_time(self) -> None:
        if time.perf_counter() > self.deadline:
            raise OutOfTime

    def add_placements(self) -> None:
        """``x`` and ``y``: each partition on exactly its replication factor of brokers, one leader
        among them (none without replicas)."""
        problem, model = self.problem, self.model
        brokers = range(problem.num_brokers)
        for p, factor in enumerate(problem.replication_factors.tolist()):
            self.check_time()
            xs = [pulp.LpVariable(f"x_{p}_{b}", cat="Binary") for b in brokers]
            ys = [pulp.LpVariable(f"y_{p}_{b}", cat="Binary") for b in brokers]
            self.x.update(((p, b), v) for b, v in zip(brokers, xs))
            self.y.update(((p, b), v) for b, v in zip(brokers, ys))
            model += pulp.lpSum(xs) == factor
            model += pulp.lpSum(ys) == min(factor, 1)
            for b in brokers:
                model += ys[b] <= xs[b]

    def broker_levels(self, bounds: list[tuple[int, int]]) -> tuple[Level, Level]:
        """Levels 1 and 3 with their upper bounds: the sums of the squared replica and leader
        counts of the brokers, replica counts within ``bounds[b]``."""
        model, partitions = self.model, range(self.problem.num_partitions)
        level1, level3, upper = [], [], 0
        for b, (low, high) in enumerate(bounds):
            self.check_time()
            r = pulp.lpSum(self.x[p, b] for p in partitions)
            model += r >= low
            model += r <= high
            level1.append(_square(model, r, low, high, f"r2_{b}"))
            leads = pulp.lpSum(self.y[p, b] for p in partitions)
            level3.append(_square(model, leads, 0, high, f"l2_{b}"))
            upper += high * high
        return (pulp.lpSum(level1), upper), (pulp.lpSum(level3), upper)

    def rack_spread(self) -> Level:
        """Level 2 with its upper bound: the sum over partitions and racks of the squared replicas
        on the rack."""
        problem, model = self.problem, self.model
        factors, rack = problem.replication_factors.tolist(), problem.broker_rack.tolist()
        racks = range(len(problem.rack_names))
        rack_size = np.bincount(problem.broker_rack, minlength=len(racks)).tolist()
        squares, constant, upper = [], 0, 0
        for p, factor in enumerate(factors):
            self.check_time()
            for k in racks:
                if len(racks) == 1:
                    constant += factor**2  # one rack: every replica is on it
                    continue
                low, high = rack_count_bounds(factor, rack_size[k], problem.num_brokers)
                c = pulp.lpSum(self.x[p, b] for b in range(problem.num_brokers) if rack[b] == k)
                squares.append(_square(model, c, low, high, f"c2_{p}_{k}"))
                upper += high * high
        return pulp.lpSum(squares) + constant, upper + constant

    def moves(self) -> pulp.LpAffineExpression:
        """Level 4: replicas on a broker outside their partition's original set."""
        original = original_sets(self.problem)
        return pulp.lpSum(var for (p, b), var in self.x.items() if b not in original[p])

    def answer(self, ranked: Ranked) -> np.ndarray:
        """The ``replicas`` array of the ranked solve's solution."""
        return read_answer(self.problem, self.x, self.y, ranked.value)


def _add_beat(
    model: pulp.LpProblem, levels: tuple[Level, Level, Level], target: tuple[int, int, int]
) -> None:
    """Levels 1-3 match or beat ``target`` lexicographically (three binaries, big-M rows from each
    level's upper bound)."""
    (level1, upper1), (level2, upper2), (level3, upper3) = levels
    better1, better2, within = (
        pulp.LpVariable(n, cat="Binary") for n in ("beat1", "beat2", "match3")
    )
    model += level1 <= target[0]
    model += level1 <= target[0] - 1 + (upper1 - target[0] + 1) * (1 - better1)
    model += level2 <= target[1] - 1 + (upper2 - target[1] + 1) * (1 - better2)
    model += level2 <= target[1] + (upper2 - target[1]) * (1 - within)
    model += level3 <= target[2] + (upper3 - target[2]) * (1 - within)
    model += better1 + better2 + within >= 1


def solve(problem: PlacementProblem, options: SolveOptions) -> Result:
    """Place replicas optimally: levels 1-4 lexicographically, with ``options.max_moves`` and
    ``options.beat`` as :func:`models.sticky_replica.cpsat.solve` takes them."""
    started = time.perf_counter()  # the time limit covers building the model
    check_model_size(problem, "MIP")
    max_moves, beat = options.max_moves, options.beat
    target = None if beat is None else target_levels(problem, beat)
    info: dict[str, Any] = {} if max_moves is None else {"max_moves": max_moves}
    built = _Model(problem, started + options.time_limit)
    try:
        objectives = _build(built, max_moves, target)
    except OutOfTime:  # the limit ran out while building
        return Result(
            problem, "sticky-replica", None, Status.UNKNOWN, info=info, objective_name="replica"
        )
    ranked = solve_ranked(built.model, objectives, options, started=started)
    if not ranked.has_solution:
        return ranked.result(problem, "sticky-replica", info=info, objective="replica")
    bound = ranked.bound
    return replica_result(problem, built.answer(ranked), ranked.status, bound, target, info)


def _build(
    built: _Model, max_moves: int | None, target: tuple[int, int, int] | None
) -> list[pulp.LpAffineExpression]:
    """Build the model; its objectives, most important first (:class:`OutOfTime` past the
    deadline)."""
    built.add_placements()
    level1, level3 = built.broker_levels(count_bounds(built.problem, max_moves, target))
    level2 = built.rack_spread()
    moves = built.moves()
    if max_moves is not None:
        built.model += moves <= max_moves
    if target is None:
        return [level1[0], level2[0], level3[0], moves]
    _add_beat(built.model, (level1, level2, level3), target)
    return [moves, level1[0], level2[0], level3[0]]


def fewest_moves(problem: PlacementProblem, placement: np.ndarray, options: SolveOptions) -> Result:
    """The fewest moves that match or beat ``placement`` on levels 1-3 (lexicographically)."""
    return solve(problem, options.with_extra(beat=placement))


def frontier(problem: PlacementProblem, max_k: int, options: SolveOptions) -> list[Result]:
    """The moves/quality frontier: :func:`solve` with ``max_moves=k`` for ``k = 0..max_k``.

    ``options.time_limit`` bounds the whole frontier: each point gets the time left
    (:func:`models.sticky_replica.data.frontier`; points past it are not solved, ``unknown``).
    """
    return solve_frontier(solve, problem, max_k, options)
