"""Exact replica placement as a PuLP MIP (HiGHS by default, CBC on request).

The same model as :mod:`models.cpsat.sticky_replica` (formulation and the two
PR questions: :mod:`models.replica_data`), solved by
:func:`models.mip.ranked.solve_ranked`.  Squares are continuous variables
above the secants (exact at integer counts); "match or beat lexicographically"
uses three binaries with big-M bounds taken from each level's upper bound (at
most a few million on the benchmark, far from HiGHS's trouble zone).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pulp

from models.mip.ranked import solve_ranked
from models.options import SolveOptions
from models.replica_data import (
    build_answer,
    check_model_size,
    count_bounds,
    original_sets,
    rack_count_bounds,
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


def solve(problem: PlacementProblem, options: SolveOptions) -> Result:
    """Place replicas optimally: levels 1-4 lexicographically, with ``options.max_moves`` and
    ``options.beat`` as :func:`models.cpsat.sticky_replica.solve` takes them."""
    started = time.perf_counter()  # the time limit covers building the model
    check_model_size(problem, "MIP")
    time_limit, max_moves, beat = options.time_limit, options.max_moves, options.beat
    target = None if beat is None else target_levels(problem, beat)
    model = pulp.LpProblem("sticky_replica", pulp.LpMinimize)
    brokers, partitions = range(problem.num_brokers), range(problem.num_partitions)
    factors = problem.replication_factors.tolist()
    rack = problem.broker_rack.tolist()
    racks = range(len(problem.rack_names))
    rack_size = np.bincount(problem.broker_rack, minlength=len(racks)).tolist()
    original = original_sets(problem)

    info: dict[str, Any] = {} if max_moves is None else {"max_moves": max_moves}
    late = Result(
        problem, "sticky-replica", None, Status.UNKNOWN, info=info
    )  # the limit ran out while building
    x: dict[tuple[int, int], pulp.LpVariable] = {}
    y: dict[tuple[int, int], pulp.LpVariable] = {}
    for p in partitions:
        if time.perf_counter() > started + time_limit:
            return late
        xs = [pulp.LpVariable(f"x_{p}_{b}", cat="Binary") for b in brokers]
        ys = [pulp.LpVariable(f"y_{p}_{b}", cat="Binary") for b in brokers]
        x.update(((p, b), v) for b, v in zip(brokers, xs))
        y.update(((p, b), v) for b, v in zip(brokers, ys))
        model += pulp.lpSum(xs) == factors[p]
        model += pulp.lpSum(ys) == min(factors[p], 1)
        for b in brokers:
            model += ys[b] <= xs[b]

    bounds = count_bounds(problem, max_moves, target)
    level1, level3, upper1, upper3 = [], [], 0, 0
    for b in brokers:
        if time.perf_counter() > started + time_limit:
            return late
        low, high = bounds[b]
        r = pulp.lpSum(x[p, b] for p in partitions)
        model += r >= low
        model += r <= high
        level1.append(_square(model, r, low, high, f"r2_{b}"))
        level3.append(_square(model, pulp.lpSum(y[p, b] for p in partitions), 0, high, f"l2_{b}"))
        upper1 += high * high
        upper3 += high * high
    level1, level3 = pulp.lpSum(level1), pulp.lpSum(level3)

    squares2, constant2, upper2 = [], 0, 0
    for p in partitions:
        if time.perf_counter() > started + time_limit:
            return late
        for k in racks:
            if len(racks) == 1:
                constant2 += factors[p] ** 2  # one rack: every replica is on it
                continue
            low, high = rack_count_bounds(factors[p], rack_size[k], problem.num_brokers)
            c = pulp.lpSum(x[p, b] for b in brokers if rack[b] == k)
            squares2.append(_square(model, c, low, high, f"c2_{p}_{k}"))
            upper2 += high * high
    level2 = pulp.lpSum(squares2) + constant2
    upper2 += constant2

    moves = pulp.lpSum(x[p, b] for p in partitions for b in brokers if b not in original[p])
    if max_moves is not None:
        model += moves <= max_moves
    if target is None:
        objectives = [level1, level2, level3, moves]
    else:
        objectives = [moves, level1, level2, level3]
        better1, better2, within = (
            pulp.LpVariable(n, cat="Binary") for n in ("beat1", "beat2", "match3")
        )
        model += level1 <= target[0]
        model += level1 <= target[0] - 1 + (upper1 - target[0] + 1) * (1 - better1)
        model += level2 <= target[1] - 1 + (upper2 - target[1] + 1) * (1 - better2)
        model += level2 <= target[1] + (upper2 - target[1]) * (1 - within)
        model += level3 <= target[2] + (upper3 - target[2]) * (1 - within)
        model += better1 + better2 + within >= 1

    ranked = solve_ranked(model, objectives, options, started=started)
    if not ranked.has_solution:
        return ranked.result(problem, "sticky-replica", info=info)
    holds = [[b for b in brokers if ranked.value(x[p, b])] for p in partitions]
    leaders = [next((b for b in brokers if ranked.value(y[p, b])), -1) for p in partitions]
    answer = build_answer(problem, holds, leaders)
    bound = ranked.bound
    if target is not None:  # the ranked order is (moves, 1, 2, 3): keep only the moves bound
        info["moves_bound"] = bound[0] if bound else None
        bound = None
    return Result(problem, "sticky-replica", answer, ranked.status, bound, info)


def fewest_moves(problem: PlacementProblem, placement: np.ndarray, options: SolveOptions) -> Result:
    """The fewest moves that match or beat ``placement`` on levels 1-3 (lexicographically)."""
    return solve(problem, options.with_extra(beat=placement))


def frontier(problem: PlacementProblem, max_k: int, options: SolveOptions) -> list[Result]:
    """The moves/quality frontier: :func:`solve` with ``max_moves=k`` for ``k = 0..max_k``.

    ``options.time_limit`` bounds the whole frontier: each point gets the time left
    (:func:`models.replica_data.frontier`; points past it are not solved, ``unknown``).
    """
    return solve_frontier(solve, problem, max_k, options)
