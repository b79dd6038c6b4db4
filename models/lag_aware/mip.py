"""Exact lag-aware assignment (KIP-169's objective, docs/design/objectives.md) as a PuLP MIP.

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

import time

import pulp

from models.common.mip_ranked import solve_ranked
from models.common.ranked_outcome import Deadline, OutOfTime
from models.lag_aware.data import LagModel, balance_share, search_share
from models.options import SolveOptions
from problems import GroupProblem, Result

#: Level 2's co-assignment rows (pairs of positive-lag partitions x members) beyond which no model
#: is built (measured: 200 partitions x 10 members, 199,000 rows, took 76 s to build and solve).
PAIR_ROWS = 50_000


def solve(problem: GroupProblem, options: SolveOptions) -> Result:
    """Solve the lag-aware objective exactly with a MIP (HiGHS by default, or CBC).

    ``options.variant``: ``None``, or ``"sticky"`` (level 2: moves instead of squared lags); a
    valid ``options.hint`` joins the heuristics' answers whose best bounds level 1 (missing
    ``lags`` count as zero).

    Returns
    -------
    Result
        ``optimal`` when both levels are proven, else ``feasible`` with the
        proven bound, or ``unknown``.

    Lags whose level-2 products leave the MIP's exact range (2**53) keep level 1 exact and level
    2 bounded; lags whose sums leave it get the best heuristic answer with the size-free bounds.
    """
    started = time.perf_counter()  # the time limit covers building the model
    deadline = Deadline(started + options.time_limit)
    variant = options.variant
    data = LagModel(
        problem,
        variant,
        2**53,
        "MIP",
        start=options.hint_answer(problem, "lag-aware"),
        balance_seconds=balance_share(options.time_limit),
        search_seconds=search_share(options.time_limit),
    )
    positive = sum(1 for p in data.partitions.tolist() if data.lags[p] > 0)
    if (
        data.too_large
        or data.hint_meets_bounds
        or (
            data.squares_in_range
            and positive * (positive - 1) // 2 * problem.num_members > PAIR_ROWS
        )
    ):
        # As CP-SAT: the best heuristic answer with the size-free bounds (optimal when it meets them).
        return data.bounds_only()
    _, heuristic_level = data.hint  # the heuristics and their swaps count against the limit too
    model = pulp.LpProblem("lag_aware", pulp.LpMinimize)
    try:
        x = _assignment(model, data, deadline)
        lag = _member_lags(data, x)
        z = pulp.LpVariable("z", min(data.level1_floor, heuristic_level), heuristic_level)
        for m in range(problem.num_members):
            model += z >= lag[m]
        _break_symmetry(model, data, x, lag, deadline)
        levels = [1 * z]
        if variant == "sticky":
            levels.append(_moves(data, x))
        elif data.squares_in_range:  # else level 2 is the answer's, with the size-free bound
            levels.append(_squares(model, data, x, deadline))
    except OutOfTime:  # out of time while building: the hint's answer with the size-free bounds
        return data.bounds_only()
    ranked = solve_ranked(model, levels, options, started=started)
    return data.result(ranked, x)


#: ``x[p, m]``: partition ``p`` goes to member ``m`` (its subscribers only).
Choices = dict[tuple[int, int], pulp.LpVariable]


def _assignment(model: pulp.LpProblem, data: LagModel, deadline: Deadline) -> Choices:
    """``x``: every partition to exactly one subscriber, each subscriber within its topic's
    floor/ceiling share."""
    x: Choices = {}
    for p in data.partitions.tolist():
        deadline.check()
        row = {
            (p, m): pulp.LpVariable(f"x_{p}_{m}", cat="Binary") for m in data.candidates(p).tolist()
        }
        x.update(row)
        model += pulp.lpSum(row.values()) == 1
    start = data.problem.topic_start
    for t, subscribers, floor, ceiling in data.shares():
        for m in subscribers.tolist():
            deadline.check()
            count = pulp.lpSum(x[p, m] for p in range(start[t], start[t + 1]))
            model += count >= floor
            model += count <= ceiling
    return x


def _member_lags(data: LagModel, x: Choices) -> dict[int, pulp.LpAffineExpression]:
    """Each member's lag, an expression over ``x``."""
    load: dict[int, list[tuple[pulp.LpVariable, int]]] = {
        m: [] for m in range(data.problem.num_members)
    }
    for (p, m), var in x.items():
        if data.lags[p]:
            load[m].append((var, data.lags[p]))
    return {m: pulp.LpAffineExpression(terms) for m, terms in load.items()}


def _break_symmetry(
    model: pulp.LpProblem,
    data: LagModel,
    x: Choices,
    lag: dict[int, pulp.LpAffineExpression],
    deadline: Deadline,
) -> None:
    """Interchangeable members in non-decreasing lag; interchangeable partitions with
    non-decreasing owners (as CP-SAT: one row per pair)."""
    for alike in data.member_classes():
        for a, b in zip(alike, alike[1:]):
            model += lag[a] <= lag[b]
    for partitions in data.partition_classes():
        deadline.check()
        subscribers = data.candidates(partitions[0]).tolist()
        positions = [
            pulp.LpAffineExpression([(x[p, m], k) for k, m in enumerate(subscribers)])
            for p in partitions
        ]
        for before, after in zip(positions, positions[1:]):
            model += before <= after


def _moves(data: LagModel, x: Choices) -> pulp.LpAffineExpression:
    """Level 2 of the sticky variant: partitions leaving their valid previous owner."""
    owned = [p for p in data.partitions.tolist() if data.previous[p] >= 0]
    return len(owned) - pulp.lpSum(x[p, int(data.previous[p])] for p in owned)


def _squares(
    model: pulp.LpProblem, data: LagModel, x: Choices, deadline: Deadline
) -> pulp.LpAffineExpression:
    """Level 2: ``sum_p lag_p^2 + 2 sum_{p<q} lag_p lag_q same[p, q]``, ``same[p, q] >= x[p, m] +
    x[q, m] - 1`` for every common subscriber ``m``."""
    terms = []
    for k, (p, q, coefficient, common) in enumerate(data.pairs()):
        if k % 64 == 0:
            deadline.check()
        same = pulp.LpVariable(f"same_{p}_{q}", cat="Binary")
        for m in common.tolist():
            model += same >= x[p, m] + x[q, m] - 1
        terms.append(coefficient * same)
    return data.constant + pulp.lpSum(terms)
