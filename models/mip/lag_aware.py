"""Exact lag-aware assignment (KIP-169's objective, docs/design/objectives.md) as a PuLP MIP.

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

import time

import pulp

from models.lag_aware_data import LagModel
from models.mip.ranked import solve_ranked
from problems import GroupProblem, Result

#: Level 2's co-assignment rows (pairs of positive-lag partitions x members) beyond which no model
#: is built (measured: 200 partitions x 10 members, 199,000 rows, took 76 s to build and solve).
PAIR_ROWS = 50_000


def solve(
    problem: GroupProblem,
    time_limit: float = 10.0,
    variant: str | None = None,
    backend: str = "highs",
    seed: int = 0,
    log: bool = False,
) -> Result:
    """Solve the lag-aware objective exactly with a MIP (HiGHS by default, or CBC).

    Parameters
    ----------
    problem
        The consumer group; missing ``lags`` count as zero.
    time_limit
        Seconds for both levels together.
    variant
        ``None`` or ``"sticky"`` (level 2: moves instead of squared lags).
    backend
        ``highs`` or ``cbc``.
    seed, log
        The solver's random seed and log.

    Returns
    -------
    Result
        ``optimal`` when both levels are proven, else ``feasible`` with the
        proven bound, or ``unknown``.

    Raises
    ------
    ProblemError
        When the lags exceed the bound stated in the module docstring.
    """
    started = time.perf_counter()  # the time limit covers building the model
    deadline = started + time_limit
    data = LagModel(problem, variant, 2**53, "MIP")
    positive = sum(1 for p in data.partitions.tolist() if data.lags[p] > 0)
    if data.too_large or (
        variant is None and positive * (positive - 1) // 2 * problem.num_members > PAIR_ROWS
    ):
        return data.bounds_only()  # as CP-SAT: the best heuristic answer with the size-free bounds
    _, heuristic_level = data.hint  # the heuristics and their swaps count against the limit too
    # Out of time while building: data.bounds_only(), the hint's answer with the size-free bounds.
    model = pulp.LpProblem("lag_aware", pulp.LpMinimize)
    x = {}
    for p in data.partitions.tolist():
        if time.perf_counter() > deadline:
            return data.bounds_only()
        row = {
            (p, m): pulp.LpVariable(f"x_{p}_{m}", cat="Binary") for m in data.candidates(p).tolist()
        }
        x.update(row)
        model += pulp.lpSum(row.values()) == 1
    start = problem.topic_start
    for t, subscribers, floor, ceiling in data.shares():
        for m in subscribers.tolist():
            if time.perf_counter() > deadline:
                return data.bounds_only()
            count = pulp.lpSum(x[p, m] for p in range(start[t], start[t + 1]))
            model += count >= floor
            model += count <= ceiling
    load: dict[int, list] = {m: [] for m in range(problem.num_members)}
    for (p, m), var in x.items():
        if data.lags[p]:
            load[m].append((var, data.lags[p]))
    lag = {m: pulp.LpAffineExpression(terms) for m, terms in load.items()}
    z = pulp.LpVariable("z", min(data.level1_floor, heuristic_level), heuristic_level)
    for m in range(problem.num_members):
        model += z >= lag[m]
    for members in data.member_classes():
        for a, b in zip(members, members[1:]):
            model += lag[a] <= lag[b]
    for partitions in data.partition_classes():
        # Owners in subscriber order, non-decreasing along the class (as CP-SAT: one row per pair).
        if time.perf_counter() > deadline:
            return data.bounds_only()
        subscribers = data.candidates(partitions[0]).tolist()
        positions = [
            pulp.LpAffineExpression([(x[p, m], k) for k, m in enumerate(subscribers)])
            for p in partitions
        ]
        for before, after in zip(positions, positions[1:]):
            model += before <= after
    if variant == "sticky":
        owned = [p for p in data.partitions.tolist() if data.previous[p] >= 0]
        second = len(owned) - pulp.lpSum(x[p, int(data.previous[p])] for p in owned)
    else:
        terms = []
        for k, (p, q, coefficient, common) in enumerate(data.pairs()):
            if k % 64 == 0 and time.perf_counter() > deadline:
                return data.bounds_only()
            same = pulp.LpVariable(f"same_{p}_{q}", cat="Binary")
            for m in common.tolist():
                model += same >= x[p, m] + x[q, m] - 1
            terms.append(coefficient * same)
        second = data.constant + pulp.lpSum(terms)
    ranked = solve_ranked(
        model,
        [1 * z, second],
        time_limit=time_limit,
        backend=backend,
        seed=seed,
        log=log,
        started=started,
    )
    return data.result(ranked, x)
