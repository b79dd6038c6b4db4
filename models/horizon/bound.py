"""A lower bound on the horizon's trace moves from the linear relaxation of the class-count model.

The CP-SAT horizon (:mod:`models.horizon.cpsat`) decides ``y[c, k, m]``, the partitions of trace
class ``c`` member ``m`` holds at step ``k``; its trace moves at step ``k`` are
``sum_m max(0, y[c, k - 1, m] - y[c, k, m])`` over the classes assignable at both steps
(``y[c, k, m] = 0`` where ``m`` may not hold ``c`` at ``k``), and at the window's first step the
partitions of each class not kept by their owner before the window.  This module solves the
linear relaxation of that model with a subset of its constraints (each class's size at every
step; each member's count inside the box of :func:`models.horizon.levels.count_box`; each box
group's sum where the box is exact), each ``max(0, .)`` through a variable ``d >= 0`` with
``d >= y[c, k - 1, m] - y[c, k, m]``.  Every answer of the horizon model is a point of this
relaxation with the same moves, so the relaxation's minimum is a lower bound.

The relaxation is solved by PDLP (a first-order method: fast, but its answer is only near
optimal and near feasible), so its objective value is *not* used.  The bound is read from its
dual values ``u`` instead: for any ``u``, with ``r = c - A^T u`` the reduced costs,
``sum_i (max(u_i, 0) lo_i + min(u_i, 0) hi_i) + sum_j min(r_j lo_j, r_j hi_j)`` is at most
``c x`` for every ``x`` with ``lo <= A x <= hi`` and every variable in its bounds (weak duality;
every variable is bounded, so the sum is finite).  It is computed here, in floating point, and
rounded up after a margin far above the rounding error: a proven bound whatever PDLP's accuracy.
Why: docs/design/formulations.md, "Horizon".
"""

from __future__ import annotations

import math
import time

import numpy as np
from ortools.linear_solver import pywraplp  # type: ignore[import-untyped]

from models.common.ranked_outcome import Deadline, OutOfTime
from models.horizon.classes import TraceClasses, boundary_owner
from models.horizon.levels import BOX_MEMBERS, StepLevels, count_box
from models.horizon.steps import GroupSteps

#: Subtracted from the dual bound before rounding it up (floating-point error is far below it).
MARGIN = 1e-6
#: Items (variables, rows, coefficients) built between two looks at the deadline.
CHECK_EVERY = 4096


class _Rows:
    """A sparse constraint matrix with row bounds, built row by row."""

    def __init__(self) -> None:
        self.rows: list[int] = []
        self.cols: list[int] = []
        self.vals: list[float] = []
        self.lo: list[float] = []
        self.hi: list[float] = []

    def add(self, cols: list[int], vals: list[float], lo: float, hi: float) -> None:
        row = len(self.lo)
        self.rows.extend([row] * len(cols))
        self.cols.extend(cols)
        self.vals.extend(vals)
        self.lo.append(lo)
        self.hi.append(hi)


def lp_bound(
    steps: GroupSteps,
    levels: list[StepLevels],
    previous: np.ndarray | None,
    classes: TraceClasses,
    seconds: float,
) -> int:
    """A proven lower bound on the window's trace moves (see the module docstring), from at most
    ``seconds`` of building the relaxation and solving it with PDLP (0 when the time runs out
    first, or PDLP returns no dual values)."""
    deadline = Deadline(time.perf_counter() + seconds)
    try:
        return _lp_bound(steps, levels, previous, classes, deadline)
    except OutOfTime:
        return 0


def _lp_bound(
    steps: GroupSteps,
    levels: list[StepLevels],
    previous: np.ndarray | None,
    classes: TraceClasses,
    deadline: Deadline,
) -> int:
    num_classes, num_steps = len(classes.sizes), len(steps)
    y: dict[tuple[int, int, int], int] = {}
    upper: list[float] = []
    cost: list[float] = []
    rows = _Rows()
    for c in range(num_classes):
        deadline.check()
        size = float(classes.sizes[c])
        for k in range(num_steps):
            if classes.codes[c, k] < 0:
                continue
            cols = []
            for m in classes.eligible[c][k].tolist():
                y[c, k, m] = len(upper)
                cols.append(len(upper))
                upper.append(size)
                cost.append(0.0)
            rows.add(cols, [1.0] * len(cols), size, size)
    for k in range(num_steps):
        deadline.check()
        _add_counts(steps, k, levels[k], y, rows)
    constant = 0.0
    owner = boundary_owner(classes, previous)
    for c in range(num_classes):
        deadline.check()
        size = float(classes.sizes[c])
        for k in range(num_steps):
            if classes.codes[c, k] < 0:
                continue
            if k == 0:
                o = int(owner[c])
                if o < 0:
                    continue
                if (c, 0, o) not in y:
                    constant += size
                    continue
                d = len(upper)  # d >= size - y[c, 0, o]
                upper.append(size)
                cost.append(1.0)
                rows.add([d, y[c, 0, o]], [1.0, 1.0], size, math.inf)
                continue
            if classes.codes[c, k - 1] < 0:
                continue
            for m in classes.eligible[c][k - 1].tolist():
                before = y[c, k - 1, m]
                if (c, k, m) not in y:  # it may not keep them: all move
                    cost[before] += 1.0
                    continue
                d = len(upper)  # d >= y[c, k - 1, m] - y[c, k, m]
                upper.append(size)
                cost.append(1.0)
                rows.add([d, before, y[c, k, m]], [1.0, -1.0, 1.0], 0.0, math.inf)
    if not any(cost):
        return math.ceil(constant - MARGIN)
    duals = _pdlp_duals(np.array(cost), np.array(upper), rows, deadline)
    if duals is None:
        return math.ceil(constant - MARGIN)
    # Either sign convention of the solver's duals gives a valid bound: take the better one.
    value = max(_dual_bound(np.array(cost), np.array(upper), rows, u) for u in (duals, -duals))
    return max(0, math.ceil(constant + value - MARGIN))


def _add_counts(
    steps: GroupSteps,
    k: int,
    step: StepLevels,
    y: dict[tuple[int, int, int], int],
    rows: _Rows,
) -> None:
    """Each member's count at step ``k`` in its box; each box group's sum where the box is exact
    (the constraints :mod:`models.horizon.cpsat` holds the step's level 1 with)."""
    problem = steps.problems[k]
    local = steps.local_members(k)
    gets: list[list[int]] = [[] for _ in range(problem.num_members)]
    for (_c, step_k, m), col in y.items():
        if step_k == k:
            gets[int(local[m])].append(col)
    if step.kind == "lag-aware":  # the box is the member's reach: nothing more to say
        return
    low, high = count_box(problem, step.owner)
    for m, cols in enumerate(gets):
        if cols:
            rows.add(cols, [1.0] * len(cols), float(low[m]), float(high[m]))
    if problem.num_members > BOX_MEMBERS:
        return
    counts = np.bincount(step.owner[step.owner >= 0], minlength=problem.num_members)
    groups: dict[int, list[int]] = {}
    for m, cols in enumerate(gets):
        if cols and high[m] > low[m]:
            groups.setdefault(int(low[m]), []).extend(cols)
    for lo, cols in groups.items():
        total = float(counts[(high > low) & (low == lo)].sum())
        rows.add(cols, [1.0] * len(cols), total, total)


def _pdlp_duals(
    cost: np.ndarray, upper: np.ndarray, rows: _Rows, deadline: Deadline
) -> np.ndarray | None:
    """PDLP's dual values of ``min cost x`` over ``rows`` and ``0 <= x <= upper``, built and
    solved by ``deadline`` (:class:`OutOfTime` while building past it)."""
    solver = pywraplp.Solver.CreateSolver("PDLP")
    if solver is None:
        return None
    x = []
    for j, u in enumerate(upper.tolist()):
        if not j % CHECK_EVERY:
            deadline.check()
        x.append(solver.NumVar(0.0, float(u), ""))
    constraints = []
    for i, (lo, hi) in enumerate(zip(rows.lo, rows.hi)):
        if not i % CHECK_EVERY:
            deadline.check()
        constraints.append(
            solver.Constraint(
                -solver.infinity() if lo == -math.inf else lo,
                solver.infinity() if hi == math.inf else hi,
            )
        )
    for i, (row, col, val) in enumerate(zip(rows.rows, rows.cols, rows.vals)):
        if not i % CHECK_EVERY:
            deadline.check()
        constraints[row].SetCoefficient(x[col], val)
    objective = solver.Objective()
    for var, c in zip(x, cost.tolist()):
        if c:
            objective.SetCoefficient(var, c)
    objective.SetMinimization()
    seconds = deadline.at - time.perf_counter()
    if seconds <= 0:
        raise OutOfTime
    solver.SetTimeLimit(max(1, int(1000 * seconds)))
    solver.SetNumThreads(1)
    status = solver.Solve()
    if status not in (pywraplp.Solver.OPTIMAL, pywraplp.Solver.FEASIBLE):
        return None  # out of time: no dual values to read
    duals = np.array([constraint.dual_value() for constraint in constraints], dtype=np.float64)
    return duals if np.isfinite(duals).all() else None


def _dual_bound(cost: np.ndarray, upper: np.ndarray, rows: _Rows, u: np.ndarray) -> float:
    """Weak duality's bound for multipliers ``u`` (the module docstring); ``-inf`` is never
    returned: a multiplier on an infinite row bound counts as 0."""
    lo, hi = np.array(rows.lo), np.array(rows.hi)
    u = np.where((u > 0) & ~np.isfinite(lo), 0.0, u)
    u = np.where((u < 0) & ~np.isfinite(hi), 0.0, u)
    reduced = cost - np.bincount(
        np.array(rows.cols, dtype=np.int64),
        weights=np.array(rows.vals) * u[np.array(rows.rows, dtype=np.int64)],
        minlength=len(cost),
    )
    rows_part = float(
        np.where(u > 0, u * np.where(np.isfinite(lo), lo, 0.0), 0.0).sum()
        + np.where(u < 0, u * np.where(np.isfinite(hi), hi, 0.0), 0.0).sum()
    )
    return rows_part + float(np.minimum(reduced * upper, 0.0).sum())
