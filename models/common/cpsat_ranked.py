"""Ranked (lexicographic) objectives with OR-Tools CP-SAT, written once.

Bound-and-resolve, as the OR-Tools samples rank objectives: minimise level 1;
if proven optimal, constrain level 1 to its optimum and minimise level 2 with
the previous solution as a hint; and so on.  One deadline covers all levels.
If a level runs out of time the search stops there: the answer is the best
solution found, status ``feasible``, and the bound is the proven lexicographic
lower bound ``(v_1, ..., v_{i-1}, ceil(bound_i))``.  Only when every level is
proven optimal is the status ``optimal``.

Determinism: ``num_workers`` and ``random_seed`` are always set; with a time
limit that is not reached, the same inputs give the same answer.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from ortools.sat.python import cp_model

from models.common import ranked_outcome
from models.options import SolveOptions
from problems import Status

#: Seconds allowed, past the time limit, to complete a hinted answer when the search found none.
HINT_SECONDS = 1.0
#: Seconds CP-SAT may spend loading a model, per variable and constraint, before it first looks at
#: its time limit (validation, statistics and presolve set-up are not interruptible).  Measured on a
#: loaded 2-core machine: 1.3-1.8 s for a lag-aware 1,000 x 40 model (160,000 variables and
#: constraints) and 2.3-4.2 s for 2,000 x 40 (325,000), even with a 0.01 s limit.  A level is not
#: started when this estimate passes the time left by more than ``OVERRUN_SECONDS`` (the limit
#: plus the grace must hold on any model).
LOAD_SECONDS_PER_ITEM = 12e-6
#: How far past the deadline a level's estimated loading may end (a level is given at least 0.01 s).
OVERRUN_SECONDS = 0.25

_STATUS = {
    cp_model.OPTIMAL: Status.OPTIMAL,
    cp_model.FEASIBLE: Status.FEASIBLE,
    cp_model.INFEASIBLE: Status.INFEASIBLE,
    cp_model.UNKNOWN: Status.UNKNOWN,
}


@dataclass
class Ranked(ranked_outcome.Ranked):
    """The outcome of :func:`solve_ranked` (:class:`models.common.ranked_outcome.Ranked`), the
    solution by proto index."""

    _solution: list[int] = field(default_factory=list, repr=False)

    def value(self, expression: cp_model.LinearExprT) -> int:
        """Value of a variable or linear expression in the returned solution."""
        return _evaluate(expression, self._solution)


def _evaluate(expression: cp_model.LinearExprT, solution: list[int]) -> int:
    """Evaluate a linear expression over a solution vector (variables by proto index)."""
    if isinstance(expression, (int, float, np.integer)):
        return int(expression)
    if isinstance(expression, cp_model.IntVar):
        return solution[expression.index]
    flat = cp_model.FlatIntExpr(expression)
    return int(flat.offset) + sum(
        int(c) * int(solution[v.index]) for v, c in zip(flat.vars, flat.coeffs)
    )


def solve_ranked(
    model: cp_model.CpModel,
    objectives: Sequence[cp_model.LinearExprT],
    options: SolveOptions,
    *,
    started: float | None = None,
    complete_hint: bool = True,
) -> Ranked:
    """Minimise ``objectives`` lexicographically on ``model`` (which it modifies).

    Parameters
    ----------
    model
        The CP-SAT model, with any hint already added for the first level.
    objectives
        Linear integer expressions, most important first.
    options
        ``time_limit`` (all levels together), ``workers`` and ``seed`` (every solve's
        ``num_workers`` and ``random_seed``) and ``log`` (CP-SAT's search log).
    started
        ``time.perf_counter()`` when the caller began building the model (the
        limit covers the building too); default now.
    complete_hint
        When level 1 ends without a solution, complete the model's hint
        (:func:`_from_hint`); ``False`` when the caller falls back on its hint itself.
    """
    started = time.perf_counter() if started is None else started
    deadline = started + options.time_limit
    workers, seed = options.workers, options.solver_seed
    solution: list[int] = []
    levels: list[int] = []
    loading = load_seconds(model)
    for i, objective in enumerate(objectives):
        if (
            loading - max(0.0, deadline - time.perf_counter()) > OVERRUN_SECONDS
        ):  # it would overrun before looking
            if i == 0:
                hinted = (
                    complete_hint and model.proto.solution_hint.vars and loading <= HINT_SECONDS
                )
                return (
                    _from_hint(model, objectives, None, workers, seed, started)
                    if hinted
                    else Ranked(Status.UNKNOWN, seconds=time.perf_counter() - started)
                )
            return Ranked(
                Status.FEASIBLE,
                _levels(objectives, solution),
                tuple(levels),
                time.perf_counter() - started,
                solution,
            )
        model.minimize(objective)
        solver = cp_model.CpSolver()
        solver.parameters.max_time_in_seconds = max(0.01, deadline - time.perf_counter())
        solver.parameters.num_workers = workers
        solver.parameters.random_seed = seed
        solver.parameters.log_search_progress = options.log
        code = solver.solve(model)
        status = _STATUS.get(code)
        if status is None:
            raise RuntimeError(
                f"CP-SAT rejected the model: {solver.status_name(code)} {model.validate()}"
            )
        if status in ("infeasible", "unknown"):
            if i == 0 and status == "unknown" and complete_hint and model.proto.solution_hint.vars:
                return _from_hint(model, objectives, solver, workers, seed, started)
            if i == 0 or status == "infeasible":
                return Ranked(status, seconds=time.perf_counter() - started)
            # Out of time on a later level: keep the previous level's solution.
            bound = (*levels, *_level_bound(solver))
            return Ranked(
                Status.FEASIBLE,
                _levels(objectives, solution),
                bound or None,
                time.perf_counter() - started,
                solution,
            )
        solution = list(solver.response_proto.solution)
        if status == "feasible":
            bound = (*levels, math.ceil(solver.best_objective_bound - 1e-9))
            return Ranked(
                Status.FEASIBLE,
                _levels(objectives, solution),
                bound,
                time.perf_counter() - started,
                solution,
            )
        value = _evaluate(
            objective, solution
        )  # exact: objective_value is a double (inexact above 2**53)
        levels.append(value)
        model.add(objective <= value)
        model.clear_hints()  # type: ignore[no-untyped-call]  # OR-Tools leaves it unannotated
        for index, hinted in enumerate(solution):
            model.add_hint(model.get_int_var_from_proto_index(index), hinted)
    return Ranked(
        Status.OPTIMAL, tuple(levels), tuple(levels), time.perf_counter() - started, solution
    )


def load_seconds(model: cp_model.CpModel) -> float:
    """CP-SAT's estimated loading time of ``model`` (:data:`LOAD_SECONDS_PER_ITEM`), in seconds."""
    return LOAD_SECONDS_PER_ITEM * (len(model.proto.variables) + len(model.proto.constraints))


def _from_hint(
    model: cp_model.CpModel,
    objectives: Sequence[cp_model.LinearExprT],
    timed_out: cp_model.CpSolver | None,
    workers: int,
    seed: int,
    started: float,
) -> Ranked:
    """Level 1 ran out of time without a solution: the hinted answer, completed, as ``feasible``.

    The hint (a heuristic's answer) is a solution of the hard constraints; its
    other variables follow by propagation, which a solve with every hinted
    variable fixed finds at once (at most :data:`HINT_SECONDS`, past the limit).
    """
    solver = cp_model.CpSolver()
    solver.parameters.fix_variables_to_their_hinted_value = True
    solver.parameters.stop_after_first_solution = True
    solver.parameters.max_time_in_seconds = HINT_SECONDS
    solver.parameters.num_workers = workers
    solver.parameters.random_seed = seed
    if solver.solve(model) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return Ranked(Status.UNKNOWN, seconds=time.perf_counter() - started)
    solution = list(solver.response_proto.solution)
    found = _levels(objectives, solution)
    bound = (
        tuple(min(b, found[0]) for b in _level_bound(timed_out)) if timed_out is not None else ()
    )
    return Ranked(Status.FEASIBLE, found, bound or None, time.perf_counter() - started, solution)


def _level_bound(solver: cp_model.CpSolver) -> tuple[int, ...]:
    bound = solver.best_objective_bound
    return () if math.isinf(bound) or math.isnan(bound) else (math.ceil(bound - 1e-9),)


def _levels(objectives: Sequence[cp_model.LinearExprT], solution: list[int]) -> tuple[int, ...]:
    return tuple(_evaluate(objective, solution) for objective in objectives)


def add_hint(
    model: cp_model.CpModel, pairs: Iterable[tuple[cp_model.IntVar, int | bool | np.integer]]
) -> None:
    """Hint ``(variable, value)`` pairs (e.g. from a heuristic's answer)."""
    for variable, hinted in pairs:
        model.add_hint(variable, int(hinted))


def add_member_squares(
    model: cp_model.CpModel,
    gets: Sequence[Sequence[cp_model.LinearExprT]],
    lo: int,
    hi: Sequence[int] | np.ndarray,
) -> tuple[list[cp_model.LinearExprT], dict[tuple[int, int], cp_model.IntVar]]:
    """Each member's count ``n_m = sum(gets[m])`` as ``lo + sum_k b[m, k]`` with unit increments
    (``lo < k <= hi[m]``, ``b[m, k] => b[m, k - 1]``), so ``n_m^2 = lo^2 + sum_k (2k - 1) b[m, k]``
    (convex: cheaper increments first; no multiplication constraint).  Members with no term are
    skipped.

    Returns the squares and the increments ``{(m, k): b}``.
    """
    b: dict[tuple[int, int], cp_model.IntVar] = {}
    squares: list[cp_model.LinearExprT] = []
    for m, terms in enumerate(gets):
        if not terms:
            continue
        steps = range(lo + 1, int(hi[m]) + 1)
        b.update({(m, k): model.new_bool_var(f"b[{m},{k}]") for k in steps})
        model.add(sum(terms) == lo + sum(b[m, k] for k in steps))
        for k in steps[1:]:
            model.add_implication(b[m, k], b[m, k - 1])
        squares.append(lo * lo + sum((2 * k - 1) * b[m, k] for k in steps))
    return squares, b
