"""Exact lag-aware assignment (KIP-169's objective, docs/design/objectives.md) with CP-SAT.

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

import time

from ortools.sat.python import cp_model

from models.cpsat.ranked import add_hint, solve_ranked
from models.lag_aware_data import LagModel
from problems import GroupProblem, Result


def solve(
    problem: GroupProblem,
    time_limit: float = 10.0,
    variant: str | None = None,
    workers: int = 1,
    seed: int = 0,
    log: bool = False,
) -> Result:
    """Solve the lag-aware objective exactly with CP-SAT.

    Parameters
    ----------
    problem
        The consumer group; missing ``lags`` count as zero.
    time_limit
        Seconds for both levels together.
    variant
        ``None`` or ``"sticky"`` (level 2: moves instead of squared lags).
    workers, seed, log
        CP-SAT's ``num_workers``, ``random_seed`` and search log.

    Returns
    -------
    Result
        ``optimal`` when both levels are proven, else ``feasible`` with the
        proven bound, or ``unknown`` (time out without an answer).

    Raises
    ------
    ProblemError
        When the lags exceed the 64-bit bound stated in the module docstring.
    """
    # CP-SAT's overflow check: sum_m L[m] = S adds M + 1 sums, the objective M squares, a tangent
    # cut 4.
    started = time.perf_counter()  # the time limit covers building the model
    deadline = started + time_limit
    members = problem.num_members
    data = LagModel(problem, variant, 2**62, "CP-SAT", members + 1, max(members + 1, 4))
    if data.too_large:
        return data.bounds_only()
    owner, _ = data.hint  # the heuristics and their swaps count against the limit too
    model = cp_model.CpModel()
    x: dict[tuple[int, int], cp_model.IntVar] = {}
    for p in data.partitions.tolist():
        if time.perf_counter() > deadline:
            return (
                data.bounds_only()
            )  # out of time while building: the hint's answer, with the bounds
        row = [model.new_bool_var(f"x[{p},{m}]") for m in data.candidates(p).tolist()]
        x.update(zip(((p, m) for m in data.candidates(p).tolist()), row))
        model.add_exactly_one(row)
    start = problem.topic_start
    for t, subscribers, floor, ceiling in data.shares():
        for m in subscribers.tolist():
            model.add_linear_constraint(
                cp_model.LinearExpr.sum([x[p, m] for p in range(start[t], start[t + 1])]),
                floor,
                ceiling,
            )
    if time.perf_counter() > deadline:
        return data.bounds_only()
    total = sum(data.lags[p] for p in data.partitions.tolist())
    load: dict[int, tuple[list, list]] = {m: ([], []) for m in range(problem.num_members)}
    for (p, m), var in x.items():
        if data.lags[p]:
            load[m][0].append(var)
            load[m][1].append(data.lags[p])
    lag = {m: model.new_int_var(0, total, f"lag[{m}]") for m in range(problem.num_members)}
    for m, (variables, coefficients) in load.items():
        model.add(lag[m] == cp_model.LinearExpr.weighted_sum(variables, coefficients))
    model.add(
        cp_model.LinearExpr.sum(list(lag.values())) == total
    )  # redundant: gives the LP z >= total / members
    z = model.new_int_var(min(data.level1_floor, total), total, "z")
    for m in range(problem.num_members):
        model.add(z >= lag[m])
    for members in data.member_classes():
        for a, b in zip(members, members[1:]):
            model.add(lag[a] <= lag[b])
    for partitions in data.partition_classes():
        # Owners in subscriber order, non-decreasing along the class: one position per partition (M
        # terms) instead of M prefix rows of up to 2M terms per pair (the same integer solutions).
        if time.perf_counter() > deadline:
            return data.bounds_only()
        subscribers = data.candidates(partitions[0]).tolist()
        steps = list(range(len(subscribers)))
        positions = [
            cp_model.LinearExpr.weighted_sum([x[p, m] for m in subscribers], steps)
            for p in partitions
        ]
        for before, after in zip(positions, positions[1:]):
            model.add(before <= after)
    if variant == "sticky":
        owned = [p for p in data.partitions.tolist() if data.previous[p] >= 0]
        second = len(owned) - cp_model.LinearExpr.sum([x[p, int(data.previous[p])] for p in owned])
    else:
        square = {
            m: model.new_int_var(0, total * total, f"square[{m}]")
            for m in range(problem.num_members)
        }
        terms: dict[int, tuple[list, list]] = {m: ([], []) for m in range(problem.num_members)}
        for k, ((p, m), var) in enumerate(x.items()):  # L[m]^2 = sum_p lag_p * x[p, m] * L[m]
            if k % 256 == 0 and time.perf_counter() > deadline:
                return data.bounds_only()
            if data.lags[p]:
                w = model.new_int_var(0, total, f"w[{p},{m}]")
                model.add(w == lag[m]).only_enforce_if(var)
                model.add(w == 0).only_enforce_if(~var)
                terms[m][0].append(w)
                terms[m][1].append(data.lags[p])
        mean = total // max(problem.num_members, 1)
        for m in range(problem.num_members):
            model.add(square[m] == cp_model.LinearExpr.weighted_sum(*terms[m]))
            for a in sorted(
                {min(total, mean * k // 16) for k in range(4, 33)}
            ):  # tangents of the convex square
                model.add(square[m] >= 2 * a * lag[m] - a * a)
        second = cp_model.LinearExpr.sum(list(square.values()))
    add_hint(model, ((var, owner[p] == m) for (p, m), var in x.items()))
    if time.perf_counter() > deadline:
        return data.bounds_only()
    ranked = solve_ranked(
        model,
        [z, second],
        time_limit=time_limit,
        workers=workers,
        seed=seed,
        log=log,
        started=started,
        complete_hint=False,
    )  # no answer: data.result falls back on the hint
    return data.result(ranked, x)
