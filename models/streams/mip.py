"""Exact streams-group task assignment (KIP-1071) as a MIP (PuLP with HiGHS or CBC), every level
of ``streams``.

The CP-SAT model's formulation (:mod:`models.streams.cpsat`) in PuLP: binaries ``x[t, m]`` and
``y[t, m]``, each task active once, ``standbys[t]`` standbys, at most one copy per process, the
balance levels as ordered unit increments; the six levels of :mod:`models.streams.data` minimised
in order by :func:`models.common.mip_ranked.solve_ranked` (the solver runs as a child process, each
level's optimum fixed before the next).  The formulation: docs/design/formulations.md.
"""

from __future__ import annotations

import time

import numpy as np
import pulp

from models.common.mip_ranked import Ranked, solve_ranked
from models.common.ranked_outcome import Deadline, OutOfTime
from models.options import SolveOptions
from models.streams.data import (
    IntArray,
    StreamsData,
    check_size,
    group_rows,
    level_one,
    ranked_answer,
    streams_data,
    streams_result,
    task_variables,
)
from problems import Result, Status
from problems.streams import StreamsProblem


def solve(problem: StreamsProblem, options: SolveOptions) -> Result:
    """Solve the ``streams`` objective exactly with a MIP (every level within ``options.time_limit``).

    Returns
    -------
    Result
        ``optimal`` when every level is proven, ``feasible`` with the proven lexicographic bound,
        or ``unknown`` when time ran out before any answer.
    """
    started = time.perf_counter()  # the time limit covers building the model
    check_size(problem, options)
    data = streams_data(problem)
    ranked, active, standby = solve_data(data, options, started=started)
    return streams_result(problem, ranked.status, ranked.bound, active, standby)


def solve_data(
    data: StreamsData, options: SolveOptions, *, started: float | None = None
) -> tuple[Ranked, IntArray | None, IntArray | None]:
    """The ranked solve of ``data``: the outcome, the active member per task and the standby
    ``(task, member)`` rows (``None`` without a solution)."""
    started = time.perf_counter() if started is None else started
    model = pulp.LpProblem("streams", pulp.LpMinimize)
    try:
        x, y, objectives = _build(model, data, Deadline(started + options.time_limit))
    except OutOfTime:  # the model did not fit the time limit
        return Ranked(Status.UNKNOWN, seconds=time.perf_counter() - started), None, None
    return ranked_answer(solve_ranked(model, objectives, options, started=started), data, x, y)


def _build(
    model: pulp.LpProblem, data: StreamsData, deadline: Deadline
) -> tuple[
    list[list[pulp.LpVariable]], dict[int, list[pulp.LpVariable]], list[pulp.LpAffineExpression]
]:
    """The model's variables ``x`` and ``y`` and its six levels (:class:`OutOfTime` past the
    deadline)."""
    tasks, members = data.num_tasks, data.num_members
    by_process = data.process_members()
    x, y = task_variables(
        data, deadline, lambda name, t, m: pulp.LpVariable(f"{name}_{t}_{m}", cat="Binary")
    )
    for t in range(tasks):
        deadline.check()
        model += pulp.lpSum(x[t]) == 1, f"active_{t}"
        if t in y:
            model += pulp.lpSum(y[t]) == int(data.standbys[t]), f"standbys_{t}"
            for p, group in enumerate(by_process):
                if group:
                    copies = [x[t][m] for m in group] + [y[t][m] for m in group]
                    model += pulp.lpSum(copies) <= 1, f"copy_{t}_{p}"
    gets, holds = group_rows(data, x, y, deadline)
    weights = [int(w) for w in data.balance_weight]
    balance = _ladder(model, gets, weights, tasks, "a", deadline)
    standby_weights = [int(w) for w in data.standby_weight]
    standby_balance = _ladder(model, holds, standby_weights, len(y), "s", deadline)
    deadline.check()
    allowed, _ = level_one(data)
    for t, m in zip(*np.nonzero(~allowed)):  # level 1 solved outright (level_one)
        x[t][m].upBound = 0
    restore = pulp.LpAffineExpression()
    traffic = pulp.lpSum(
        int(data.traffic[t, m]) * x[t][m]
        for t in range(tasks)
        for m in range(members)
        if data.traffic[t, m]
    ) + pulp.lpSum(
        int(data.standby_traffic[t, m]) * row[m]
        for t, row in y.items()
        for m in range(members)
        if data.standby_traffic[t, m]
    )
    owned = np.flatnonzero(data.prev_active >= 0).tolist()
    moves = len(owned) - pulp.lpSum(x[t][int(data.prev_active[t])] for t in owned)
    standby_moves = pulp.lpSum(
        row[m] for t, row in y.items() for m in range(members) if data.standby_new[t, m]
    )
    deadline.check()
    objectives = [
        pulp.LpAffineExpression(e)
        for e in (restore, balance, standby_balance, traffic, moves, standby_moves)
    ]
    return x, y, objectives


def _ladder(
    model: pulp.LpProblem,
    gets: list[list[pulp.LpVariable]],
    weights: list[int],
    top: int,
    name: str,
    deadline: Deadline,
) -> pulp.LpAffineExpression:
    """``sum_g weights[g] * n_g^2`` as ordered unit increments (:func:`models.streams.cpsat._ladder`)."""
    terms: list[pulp.LpAffineExpression] = []
    for g, parts in enumerate(gets):
        deadline.check()
        if not parts:
            continue
        steps = min(len(parts), top)
        b = [pulp.LpVariable(f"{name}_{g}_{k}", cat="Binary") for k in range(1, steps + 1)]
        model += pulp.lpSum(parts) == pulp.lpSum(b), f"{name}_count_{g}"
        for k in range(1, len(b)):
            model += b[k] <= b[k - 1], f"{name}_order_{g}_{k}"
        terms.extend(weights[g] * (2 * k + 1) * var for k, var in enumerate(b))
    return pulp.lpSum(terms)
