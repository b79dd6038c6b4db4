"""Exact streams-group task assignment (KIP-1071) with OR-Tools CP-SAT, every level of ``streams``.

One boolean ``x[t, m]`` per task and member (``t`` active on ``m``) and ``y[t, m]`` per task with
standbys and member (a standby of ``t`` on ``m``); each task active once, ``standbys[t]`` standbys,
at most one copy per process; the two balance levels as ordered unit increments of convex cost
(:func:`models.common.cpsat_ranked.add_member_squares`'s ladder with the group's weight); the six levels
of :mod:`models.streams.data` minimised in order by :func:`models.common.cpsat_ranked.solve_ranked`
(each level's optimum fixed before the next).  The min-cost flow's answer
(:mod:`models.streams.flow`, optimal on levels 1-2 whatever the rest) is the hint, or the
caller's hint when it is a valid answer.  The formulation: docs/design/formulations.md.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from ortools.sat.python import cp_model

from models.common.cpsat_ranked import Ranked, add_hint, solve_ranked
from models.common.ranked_outcome import Deadline, OutOfTime
from models.options import SolveOptions
from models.streams import flow
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
    """Solve the ``streams`` objective exactly with CP-SAT (every level within ``options.time_limit``).

    Returns
    -------
    Result
        ``optimal`` when every level is proven, ``feasible`` with the proven lexicographic bound,
        or ``unknown`` when time ran out before any answer.
    """
    started = time.perf_counter()  # the time limit covers building the model
    check_size(problem, options)
    data = streams_data(problem)
    hint = streams_hint(problem, data, options, Deadline(started + options.time_limit))
    ranked, active, standby = solve_data(data, options, hint, started=started)
    return streams_result(problem, ranked.status, ranked.bound, active, standby)


def solve_data(
    data: StreamsData,
    options: SolveOptions,
    hint: tuple[IntArray, IntArray] | None = None,
    *,
    started: float | None = None,
) -> tuple[Ranked, IntArray | None, IntArray | None]:
    """The ranked solve of ``data``: the outcome, the active member per task and the standby
    ``(task, member)`` rows (``None`` without a solution).  ``hint``: an answer to start from."""
    started = time.perf_counter() if started is None else started
    model = cp_model.CpModel()
    try:
        x, y, objectives = _build(model, data, hint, Deadline(started + options.time_limit))
    except OutOfTime:  # the model did not fit the time limit
        return Ranked(Status.UNKNOWN, seconds=time.perf_counter() - started), None, None
    return ranked_answer(solve_ranked(model, objectives, options, started=started), data, x, y)


def _build(
    model: cp_model.CpModel,
    data: StreamsData,
    hint: tuple[IntArray, IntArray] | None,
    deadline: Deadline,
) -> tuple[
    list[list[cp_model.IntVar]], dict[int, list[cp_model.IntVar]], list[cp_model.LinearExprT]
]:
    """The model's variables ``x`` and ``y`` and its six levels (:class:`OutOfTime` past the
    deadline)."""
    tasks, members = data.num_tasks, data.num_members
    by_process = data.process_members()
    x, y = task_variables(data, deadline, lambda name, t, m: model.new_bool_var(f"{name}[{t},{m}]"))
    for t in range(tasks):
        deadline.check()
        model.add_exactly_one(x[t])
        if t in y:
            model.add(sum(y[t]) == int(data.standbys[t]))
            for group in by_process:
                model.add_at_most_one([x[t][m] for m in group] + [y[t][m] for m in group])
    gets, holds = group_rows(data, x, y, deadline)
    weights = [int(w) for w in data.balance_weight]
    balance = _ladder(model, gets, weights, tasks, "a", deadline)
    standby_weights = [int(w) for w in data.standby_weight]
    standby_balance = _ladder(model, holds, standby_weights, len(y), "s", deadline)
    allowed, _ = level_one(data)
    for t, m in zip(*np.nonzero(~allowed), strict=True):  # level 1 solved outright (level_one)
        model.add(x[int(t)][int(m)] == 0)
    deadline.check()
    restore: cp_model.LinearExprT = 0
    y_rows = [y.get(t) for t in range(tasks)]
    traffic = cp_model.LinearExpr.sum(
        [_weighted(x, data.traffic), _weighted(y_rows, data.standby_traffic)]
    )
    owned = np.flatnonzero(data.prev_active >= 0).tolist()
    moves = len(owned) - sum(x[t][int(data.prev_active[t])] for t in owned)
    standby_moves = _weighted(y_rows, data.standby_new.astype(np.int64))
    deadline.check()
    if hint is not None:
        active, standby = hint
        chosen = {(int(t), int(m)) for t, m in standby.tolist()}
        add_hint(model, [(x[t][m], active[t] == m) for t in range(tasks) for m in range(members)])
        add_hint(
            model, [(row[m], (t, m) in chosen) for t, row in y.items() for m in range(members)]
        )
    deadline.check()
    objectives: Sequence[cp_model.LinearExprT] = [
        restore,
        balance,
        standby_balance,
        traffic,
        moves,
        standby_moves,
    ]
    return x, y, list(objectives)


def _weighted(
    rows: Sequence[Sequence[cp_model.IntVar] | None], cost: npt.NDArray[np.int64]
) -> cp_model.LinearExprT:
    """``sum cost[t, m] * rows[t][m]`` over the nonzero costs of the rows there are."""
    terms = [
        (row[m], int(cost[t, m]))
        for t, m in zip(*np.nonzero(cost), strict=True)
        if (row := rows[int(t)]) is not None
    ]
    variables = [var for var, _ in terms]
    return cp_model.LinearExpr.weighted_sum(variables, [c for _, c in terms])


def _ladder(
    model: cp_model.CpModel,
    gets: Sequence[Sequence[cp_model.LinearExprT]],
    weights: list[int],
    top: int,
    name: str,
    deadline: Deadline,
) -> cp_model.LinearExprT:
    """``sum_g weights[g] * n_g^2`` with ``n_g = sum(gets[g]) <= top`` as ordered unit increments
    ``b[g, k]`` (``b[g, k] => b[g, k - 1]``, marginal ``weights[g] * (2k - 1)``): convex, so the
    increments are taken cheapest first, and the LP relaxation is the convex hull."""
    terms: list[cp_model.LinearExprT] = []
    for g, parts in enumerate(gets):
        deadline.check()
        if not parts:
            continue
        b = [model.new_bool_var(f"{name}[{g},{k}]") for k in range(1, min(len(parts), top) + 1)]
        model.add(sum(parts) == sum(b))
        for k in range(1, len(b)):
            model.add_implication(b[k], b[k - 1])
        terms.extend(weights[g] * (2 * k + 1) * var for k, var in enumerate(b))
    return sum(terms)


def streams_hint(
    problem: StreamsProblem, data: StreamsData, options: SolveOptions, deadline: Deadline
) -> tuple[IntArray, IntArray] | None:
    """The answer a model starts from: the caller's hint when it is a valid answer to
    ``problem``, else the min-cost flow's (proven on levels 1-2) when its networks are solved by
    ``deadline`` (``None`` otherwise: no hint)."""
    hinted = options.hint_streams(problem, "streams")
    if hinted is not None and len(hinted.standby) == int(data.standbys.sum()):
        return np.asarray(hinted.active, np.int64), np.asarray(hinted.standby, np.int64)
    pairs = data.num_tasks * data.num_members
    if time.perf_counter() + flow.SECONDS_PER_ARC * pairs > deadline.at:
        return None  # its networks (up to a pair each) would not be solved in time
    try:
        active, standby, _, _ = flow.solve_data(data, deadline)
    except OutOfTime:
        return None
    return active, standby
