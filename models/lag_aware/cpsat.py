"""Exact lag-aware assignment (KIP-169's objective, docs/design/objectives.md) with CP-SAT.

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

import time

from ortools.sat.python import cp_model

from models.common.cpsat_ranked import add_hint, solve_ranked
from models.common.ranked_outcome import Deadline, OutOfTime
from models.lag_aware.data import LagModel, balance_share, search_share
from models.options import SolveOptions
from problems import GroupProblem, Result

#: ``x[p, m]``: partition ``p`` goes to member ``m`` (its subscribers only).
Choices = dict[tuple[int, int], cp_model.IntVar]


def solve(problem: GroupProblem, options: SolveOptions) -> Result:
    """Solve the lag-aware objective exactly with CP-SAT.

    ``options.variant``: ``None``, or ``"sticky"`` (level 2: moves instead of squared lags); a
    valid ``options.hint`` joins the heuristics' answers whose best is the hint (missing ``lags``
    count as zero).

    Returns
    -------
    Result
        ``optimal`` when both levels are proven, else ``feasible`` with the
        proven bound, or ``unknown`` (time out without an answer).

    Lags whose squares leave CP-SAT's 64-bit range keep level 1 exact and level 2 bounded; lags
    whose sums leave it get the best heuristic answer with the size-free bounds (never a refusal).
    """
    # CP-SAT's overflow check: sum_m L[m] = S adds M + 1 sums, the objective M squares, a tangent
    # cut 4.
    started = time.perf_counter()  # the time limit covers building the model
    deadline = Deadline(started + options.time_limit)
    members = problem.num_members
    hinted = options.hint_answer(problem, "lag-aware")
    data = LagModel(
        problem,
        options.variant,
        2**62,
        "CP-SAT",
        members + 1,
        max(members + 1, 4),
        hinted,
        balance_share(options.time_limit),
        search_share(options.time_limit),
    )
    if data.too_large or data.hint_meets_bounds:  # optimal already: no model to prove it
        return data.bounds_only()
    owner, _ = data.hint  # the heuristics and their swaps count against the limit too
    model = cp_model.CpModel()
    try:
        x = _assignment(model, data, deadline)
        lag, z = _member_lags(model, data, x)
        _break_symmetry(model, data, x, lag, deadline)
        levels: list[cp_model.LinearExprT] = [z]
        if options.variant == "sticky":
            levels.append(_moves(data, x))
        elif data.squares_in_range:  # else level 2 is the answer's, with the size-free bound
            levels.append(_squares(model, data, x, lag, deadline))
        add_hint(model, ((var, owner[p] == m) for (p, m), var in x.items()))
        deadline.check()
    except OutOfTime:  # out of time while building: the hint's answer, with the bounds
        return data.bounds_only()
    # No answer: data.result falls back on the hint.
    ranked = solve_ranked(model, levels, options, started=started, complete_hint=False)
    return data.result(ranked, x)


def _assignment(model: cp_model.CpModel, data: LagModel, deadline: Deadline) -> Choices:
    """``x``: every partition to exactly one subscriber, each subscriber within its topic's
    floor/ceiling share."""
    x: Choices = {}
    for p in data.partitions.tolist():
        deadline.check()
        candidates = data.candidates(p).tolist()
        row = [model.new_bool_var(f"x[{p},{m}]") for m in candidates]
        x.update(zip(((p, m) for m in candidates), row))
        model.add_exactly_one(row)
    start = data.problem.topic_start
    for t, subscribers, floor, ceiling in data.shares():
        for m in subscribers.tolist():
            model.add_linear_constraint(
                cp_model.LinearExpr.sum([x[p, m] for p in range(start[t], start[t + 1])]),
                floor,
                ceiling,
            )
    deadline.check()
    return x


def _member_lags(
    model: cp_model.CpModel, data: LagModel, x: Choices
) -> tuple[dict[int, cp_model.IntVar], cp_model.IntVar]:
    """Each member's lag ``lag[m]`` and level 1, ``z >= lag[m]`` (from the size-free floor)."""
    members = range(data.problem.num_members)
    total = sum(data.lags[p] for p in data.partitions.tolist())
    load: dict[int, tuple[list[cp_model.IntVar], list[int]]] = {m: ([], []) for m in members}
    for (p, m), var in x.items():
        if data.lags[p]:
            load[m][0].append(var)
            load[m][1].append(data.lags[p])
    lag = {m: model.new_int_var(0, total, f"lag[{m}]") for m in members}
    for m, (variables, coefficients) in load.items():
        model.add(lag[m] == cp_model.LinearExpr.weighted_sum(variables, coefficients))
    # Redundant: gives the LP z >= total / members.
    model.add(cp_model.LinearExpr.sum(list(lag.values())) == total)
    z = model.new_int_var(min(data.level1_floor, total), total, "z")
    for m in members:
        model.add(z >= lag[m])
    return lag, z


def _break_symmetry(
    model: cp_model.CpModel,
    data: LagModel,
    x: Choices,
    lag: dict[int, cp_model.IntVar],
    deadline: Deadline,
) -> None:
    """Interchangeable members in non-decreasing lag; interchangeable partitions with
    non-decreasing owners."""
    for alike in data.member_classes():
        for a, b in zip(alike, alike[1:]):
            model.add(lag[a] <= lag[b])
    for partitions in data.partition_classes():
        # Owners in subscriber order, non-decreasing along the class: one position per partition (M
        # terms) instead of M prefix rows of up to 2M terms per pair (the same integer solutions).
        deadline.check()
        subscribers = data.candidates(partitions[0]).tolist()
        steps = list(range(len(subscribers)))
        positions = [
            cp_model.LinearExpr.weighted_sum([x[p, m] for m in subscribers], steps)
            for p in partitions
        ]
        for before, after in zip(positions, positions[1:]):
            model.add(before <= after)


def _moves(data: LagModel, x: Choices) -> cp_model.LinearExprT:
    """Level 2 of the sticky variant: partitions leaving their valid previous owner."""
    owned = [p for p in data.partitions.tolist() if data.previous[p] >= 0]
    moves: cp_model.LinearExprT = len(owned) - cp_model.LinearExpr.sum(
        [x[p, int(data.previous[p])] for p in owned]
    )
    return moves


def _squares(
    model: cp_model.CpModel,
    data: LagModel,
    x: Choices,
    lag: dict[int, cp_model.IntVar],
    deadline: Deadline,
) -> cp_model.LinearExprT:
    """Level 2: ``sum_m L[m]^2``, with ``L[m]^2 = sum_p lag_p * x[p, m] * L[m]`` and tangent cuts
    of the convex square."""
    members = range(data.problem.num_members)
    total = sum(data.lags[p] for p in data.partitions.tolist())
    square = {m: model.new_int_var(0, total * total, f"square[{m}]") for m in members}
    terms: dict[int, tuple[list[cp_model.IntVar], list[int]]] = {m: ([], []) for m in members}
    for k, ((p, m), var) in enumerate(x.items()):
        if k % 256 == 0:
            deadline.check()
        if data.lags[p]:
            w = model.new_int_var(0, total, f"w[{p},{m}]")
            model.add(w == lag[m]).only_enforce_if(var)
            model.add(w == 0).only_enforce_if(~var)
            terms[m][0].append(w)
            terms[m][1].append(data.lags[p])
    mean = total // max(len(members), 1)
    tangents = sorted({min(total, mean * k // 16) for k in range(4, 33)})
    for m in members:
        model.add(square[m] == cp_model.LinearExpr.weighted_sum(*terms[m]))
        for a in tangents:
            model.add(square[m] >= 2 * a * lag[m] - a * a)
    return cp_model.LinearExpr.sum(list(square.values()))
