"""The horizon of a consumer group with CP-SAT: every step at its per-step optimum, then the fewest
trace moves (DESIGN "Over a trace"), for the objectives the flow does not answer exactly.

Partitions are grouped into *trace classes*: two partitions are in one class when, at every step
of the window, both are assignable or neither is, and where assignable they have the same
subscribers and the same data the step's objective reads (replica racks for ``rack-aware``, topic
and lag for ``lag-aware``), and the same owner before the window.  Swapping two partitions of a
class in every step's answer changes no level and no move, so the model decides only counts:
``y[c, k, m]`` partitions of class ``c`` go to member ``m`` at step ``k``, and ``s[c, k, m] <=
min(y[c, k - 1, m], y[c, k, m])`` of them stay with ``m`` from step ``k - 1`` (a member keeps any
of its partitions of a class).  The trace moves are the partitions owned at both steps minus the
kept ones.  Each step is constrained to the levels :mod:`models.horizon.levels` found for it
(sum of squared counts through unit increments in the box of
:func:`models.horizon.levels.count_box`, rack mismatches, per-topic shares and lags); the
step policy is the hint.  Why the answer is what its status says: docs/design/formulations.md,
"Horizon".
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np
from ortools.sat.python import cp_model

from models.common.cpsat_ranked import add_hint, solve_ranked
from models.common.ranked_outcome import Deadline, OutOfTime
from models.horizon import bound as horizon_bound
from models.horizon import descent as horizon_descent
from models.horizon.classes import TraceClasses, boundary_owner, live_cells, trace_classes
from models.horizon.levels import BOX_MEMBERS, StepLevels, count_box
from models.horizon.steps import GroupSteps, wide_moves
from models.options import SolveOptions
from problems import GroupProblem, Status

Key = tuple[int, int, int]  # (class, step, trace-wide member)
#: :func:`count_bound` builds a member x partition table per step up to this many cells (else 0).
BOUND_CELLS = 20_000_000


@dataclass(frozen=True)
class HorizonSolve:
    """The CP-SAT horizon's outcome: trace-wide owners per step (``None`` without an answer),
    its status, the proven lower bound on the window's trace moves and its moves."""

    owners: list[np.ndarray] | None
    status: str
    bound: int | None
    moves: int | None


def solve(
    steps: GroupSteps,
    levels: list[StepLevels],
    previous: np.ndarray | None,
    hint: list[np.ndarray],
    options: SolveOptions,
) -> HorizonSolve:
    """The fewest trace moves over the window with every step at ``levels`` (see the module
    docstring).

    ``previous``: the trace-wide owner before the window (``None``: its first step is free);
    ``hint``: a valid answer (trace-wide owners per step, e.g. the step policy's).  The status is
    ``optimal`` only when CP-SAT proves the moves (the levels' own proof is the caller's), or
    when the moves meet :func:`count_bound` or the relaxation's bound of
    :func:`models.horizon.bound.lp_bound` (at most :data:`BOUND_SHARE` of the time limit); else
    the bound is the largest of them.  Where every
    step is judged on ``sticky``, the hint is first lowered by the step-by-step descent of
    :mod:`models.horizon.descent` (at most :data:`DESCENT_SHARE` of the time limit).
    """
    started = time.perf_counter()
    lower = count_bound(steps, levels, previous)
    classes = trace_classes(steps, [step.kind for step in levels], previous)
    if horizon_descent.applies(steps, levels):
        until = started + DESCENT_SHARE * options.time_limit
        hint = horizon_descent.descend(steps, levels, previous, hint, until)
    found = _window_moves(hint, previous)
    if found > lower:
        seconds = BOUND_SHARE * options.time_limit
        lower = max(lower, horizon_bound.lp_bound(steps, levels, previous, classes, seconds))
    if found > lower and len(steps) > ROLL_STEPS:
        until = time.perf_counter() + ROLL_SHARE * options.time_limit
        rolled = _rolling(steps, levels, previous, hint, options, until)
        if _window_moves(rolled, previous) < found:
            hint, found = rolled, _window_moves(rolled, previous)
    if found <= lower:  # a bound is met: nothing to search
        return HorizonSolve(hint, Status.OPTIMAL, found, found)
    left = max(0.01, options.time_limit - (time.perf_counter() - started))
    limited = replace(options, time_limit=left)
    try:
        solved = _solve_model(
            steps, levels, previous, hint, limited, classes, lower, time.perf_counter()
        )
    except OutOfTime:  # the model did not fit the time limit
        solved = HorizonSolve(None, str(Status.UNKNOWN), None, None)
    return _with_bound(solved, lower)


#: The share of the time limit the descent (:mod:`models.horizon.descent`) may take.
DESCENT_SHARE = 0.3
#: The share of the time limit the relaxation's bound (:mod:`models.horizon.bound`) may take.
BOUND_SHARE = 0.25
#: Windows longer than this many steps are first solved in pieces of this many steps
#: (:func:`_rolling`), each committing its first :data:`ROLL_COMMIT` steps.
ROLL_STEPS = 6
ROLL_COMMIT = 4
#: The share of the time limit the pieces may take together.
ROLL_SHARE = 0.3


def _rolling(
    steps: GroupSteps,
    levels: list[StepLevels],
    previous: np.ndarray | None,
    hint: list[np.ndarray],
    options: SolveOptions,
    until: float,
) -> list[np.ndarray]:
    """A valid answer built piece by piece: the window ``first .. first + ROLL_STEPS - 1`` is
    solved by :func:`solve` from the answer committed before it, its first :data:`ROLL_COMMIT`
    steps are committed, and the next piece starts there (the last piece commits all its steps).
    Every step keeps its levels, so the answer is valid; it only proposes a hint (small windows
    are solved far better than the whole one, whose search starts from the step policy)."""
    owners: list[np.ndarray] = []
    before = previous
    first, count = 0, len(steps)
    while first < count:
        last = min(first + ROLL_STEPS, count) - 1
        left = until - time.perf_counter()
        pieces = -(-(count - first - ROLL_STEPS) // ROLL_COMMIT) + 1 if last < count - 1 else 1
        if left <= 0:
            owners.extend(hint[first:])
            break
        window, window_levels = steps.window(first, last), levels[first : last + 1]
        window_hint = hint[first : last + 1]
        if before is not None and horizon_descent.applies(window, window_levels):
            # The step policy again, from the committed answer: the given hint's first step
            # would move whatever the two answers label differently.
            window_hint = horizon_descent.forward(window, window_levels, before)
        part = solve(
            window,
            window_levels,
            before,
            window_hint,
            replace(options, time_limit=left / max(1, pieces)),
        )
        answer = part.owners if part.owners is not None else hint[first : last + 1]
        commit = answer if last == count - 1 else answer[:ROLL_COMMIT]
        owners.extend(commit)
        before = commit[-1]
        first += len(commit)
    return owners


def _window_moves(owners: list[np.ndarray], before: np.ndarray | None) -> int:
    chain = ([] if before is None else [before]) + list(owners)
    return sum(wide_moves(a, b) for a, b in zip(chain, chain[1:]))


def _with_bound(solved: HorizonSolve, lower: int) -> HorizonSolve:
    """``solved`` with the count bound taken in (proven optimal when it meets the moves)."""
    bound = max(lower, solved.bound or 0)
    if solved.moves is not None and bound >= solved.moves:
        return HorizonSolve(solved.owners, Status.OPTIMAL, solved.moves, solved.moves)
    return HorizonSolve(solved.owners, solved.status, bound, solved.moves)


def _solve_model(
    steps: GroupSteps,
    levels: list[StepLevels],
    previous: np.ndarray | None,
    hint: list[np.ndarray],
    options: SolveOptions,
    classes: TraceClasses,
    lower: int,
    started: float,
) -> HorizonSolve:
    """One CP-SAT model of the window (the module docstring), ``lower`` a proven bound on its
    moves (a cut); :class:`OutOfTime` when building it takes past the time limit from
    ``started``."""
    deadline = Deadline(started + options.time_limit)
    model = cp_model.CpModel()
    y: dict[Key, cp_model.IntVar] = {}
    num_steps = len(steps)
    for c, k, size in live_cells(classes, num_steps, deadline):
        members = classes.eligible[c][k]
        for m in members.tolist():
            y[c, k, m] = model.new_int_var(0, size, f"y[{c},{k},{m}]")
        model.add(sum(y[c, k, m] for m in members.tolist()) == size)
    hint_local = [steps.to_local(k, owner) for k, owner in enumerate(hint)]
    for k in range(num_steps):
        deadline.check()
        hinted = np.bincount(hint_local[k][hint_local[k] >= 0], minlength=len(steps.member_of[k]))
        _add_levels(model, steps, k, levels[k], classes, y, hinted)
    kept: dict[Key, cp_model.IntVar] = {}
    carried = 0
    prev_owner = boundary_owner(classes, previous)
    for c, k, size in live_cells(classes, num_steps, deadline):
        if k == 0:
            owner = int(prev_owner[c])
            if owner < 0:
                continue
            carried += size
            if (c, 0, owner) in y:
                kept[c, 0, owner] = s = model.new_int_var(0, size, f"s[{c},0,{owner}]")
                model.add(s <= y[c, 0, owner])
            continue
        if classes.codes[c, k - 1] < 0:
            continue
        carried += size
        stay = []
        for m in classes.eligible[c][k].tolist():
            if (c, k - 1, m) in y:
                kept[c, k, m] = s = model.new_int_var(0, size, f"s[{c},{k},{m}]")
                model.add(s <= y[c, k - 1, m])
                model.add(s <= y[c, k, m])
                stay.append(s)
        model.add(sum(stay) <= size)  # implied; it gives the relaxation moves >= 0
    moves = carried - sum(kept.values())
    model.add(moves >= lower)
    deadline.check()
    _add_hints(model, classes, y, kept, hint, previous)
    deadline.check()
    ranked = solve_ranked(model, [moves], options, started=started)
    if not ranked.has_solution:
        bound = ranked.bound[0] if ranked.bound else None
        return HorizonSolve(None, str(ranked.status), bound, None)
    counts = {key: ranked.value(var) for key, var in y.items()}
    stays = {key: ranked.value(var) for key, var in kept.items()}
    owners = _realize(steps, classes, counts, stays, previous)
    found = _window_moves(owners, previous)  # at most the model's: re-counted
    if ranked.status == Status.OPTIMAL:
        return HorizonSolve(owners, Status.OPTIMAL, found, found)
    bound = max(0, ranked.bound[0]) if ranked.bound else 0
    return HorizonSolve(owners, str(ranked.status), bound, found)


def count_bound(steps: GroupSteps, levels: list[StepLevels], previous: np.ndarray | None) -> int:
    """A lower bound on the window's trace moves from the members' counts alone.

    Into step ``k`` come ``C_k`` partitions owned at ``k - 1`` and assignable at ``k``; member
    ``m`` keeps at most ``min(n[m, k - 1], n[m, k], E[m, k])`` of them, ``E`` the partitions it
    may hold at both steps, and every other one moves.  With the counts' boxes of
    :func:`models.horizon.levels.count_box` (sticky and rack-aware steps; a lag-aware step's box
    is its reach), ``sum_k max(0, C_k - sum_m min(high[m, k - 1], high[m, k], E[m, k]))``.
    """
    total = 0
    if steps.num_members * steps.num_parts > BOUND_CELLS:
        return 0
    before_owner = None if previous is None else np.asarray(previous, dtype=np.int64)
    before_high = np.zeros(steps.num_members + 1, dtype=np.int64)
    before_low = np.zeros(steps.num_members + 1, dtype=np.int64)
    before_may = None
    before_present = np.zeros(steps.num_members + 1, dtype=bool)
    before_count = 0 if before_owner is None else int(np.count_nonzero(before_owner >= 0))
    for k in range(len(steps)):
        problem = steps.problems[k]
        may = _may_hold(steps, k)  # [trace-wide member, trace-wide partition]
        high = np.zeros(steps.num_members + 1, dtype=np.int64)
        low = np.zeros(steps.num_members + 1, dtype=np.int64)
        low[steps.member_of[k]], high[steps.member_of[k]] = _box(problem, levels[k])
        now = steps.assignable(k)
        present = np.zeros(steps.num_members + 1, dtype=bool)
        present[steps.member_of[k]] = True
        if before_owner is not None:
            owned = (before_owner >= 0) & now
            carried = int(owned.sum())
            if before_may is None:  # the owner before the window keeps what it may hold now
                held = before_owner[owned]
                both = np.bincount(
                    held,
                    weights=may[held, np.flatnonzero(owned)],
                    minlength=steps.num_members + 1,
                ).astype(np.int64)
                before_high = np.bincount(held, minlength=steps.num_members + 1).astype(np.int64)
                before_low = before_high
                was = before_high > 0
            else:
                both = np.append((before_may & may & owned[None, :]).sum(axis=1), 0)
                was = before_present
            keep = int(np.minimum(np.minimum(before_high, high), both)[was & present].sum())
            # Members that join take at least their low count; members that leave hold at least
            # theirs, of which all but the partitions gone since are carried and move.
            joined = int(low[present & ~was].sum())
            left = max(0, int(before_low[was & ~present].sum()) - (before_count - carried))
            keep = min(keep, int(now.sum()) - joined, carried - left)
            total += max(0, carried - keep)
        before_owner = np.where(now, 0, -1)
        before_high, before_low, before_may = high, low, may
        before_present, before_count = present, int(now.sum())
    return total


def _may_hold(steps: GroupSteps, k: int) -> np.ndarray:
    """``[trace-wide member, trace-wide partition]``: ``m`` may hold the partition at step ``k``."""
    problem = steps.problems[k]
    may = np.zeros((steps.num_members, steps.num_parts), dtype=bool)
    parts = np.flatnonzero(problem.assignable)
    rows = problem.subscribes[:, problem.partition_topic[parts]]
    may[np.ix_(steps.member_of[k], steps.part_of[k][parts])] = rows
    return may


def _box(problem: GroupProblem, step: StepLevels) -> tuple[np.ndarray, np.ndarray]:
    """The fewest and most partitions each member holds at the step's optimum."""
    if step.kind == "lag-aware":
        reach: np.ndarray = problem.subscribes[:, problem.partition_topic].sum(axis=1)
        return np.zeros(problem.num_members, dtype=np.int64), reach.astype(np.int64)
    return count_box(problem, step.owner)


def _add_levels(
    model: cp_model.CpModel,
    steps: GroupSteps,
    k: int,
    step: StepLevels,
    classes: TraceClasses,
    y: dict[Key, cp_model.IntVar],
    hinted: np.ndarray,
) -> None:
    """Hold step ``k`` at its levels (``hinted``: the hint's count of every member, so that the
    hint is a complete solution)."""
    problem = steps.problems[k]
    local = steps.local_members(k)
    gets: list[list[cp_model.LinearExprT]] = [[] for _ in range(problem.num_members)]
    terms: list[tuple[int, int, cp_model.IntVar]] = []  # (class, member position, y)
    for (c, step_k, m), var in y.items():
        if step_k == k:
            gets[int(local[m])].append(var)
            terms.append((c, int(local[m]), var))
    if step.kind == "lag-aware":
        _add_lag_levels(model, steps, k, step, classes, terms)
        return
    low, high = count_box(problem, step.owner)
    if problem.num_members <= BOX_MEMBERS:
        # Exact boxes: the optima are the counts in them with each group's sum fixed.
        counts = np.bincount(step.owner[step.owner >= 0], minlength=problem.num_members)
        groups: dict[int, list[cp_model.LinearExprT]] = {}
        for m, parts in enumerate(gets):
            if not parts:  # no partition it may take: its box is [0, 0]
                continue
            if high[m] == low[m]:
                model.add(sum(parts) == int(low[m]))
            else:
                groups.setdefault(int(low[m]), []).extend(parts)
        for lo, parts in groups.items():
            members = (high > low) & (low == lo)
            model.add(sum(parts) == int(counts[members].sum()))
            for m in np.flatnonzero(members).tolist():
                model.add_linear_constraint(sum(gets[m]), lo, lo + 1)
    else:
        squares: list[cp_model.LinearExprT] = []
        for m, parts in enumerate(gets):
            if not parts:
                continue
            lo, hi = int(low[m]), int(high[m])
            steps_up = range(lo + 1, hi + 1)
            b = [model.new_bool_var(f"b[{k},{m},{kk}]") for kk in steps_up]
            model.add(sum(parts) == lo + sum(b))
            for later, earlier in zip(b[1:], b):
                model.add_implication(later, earlier)
            add_hint(model, [(var, hinted[m] >= kk) for kk, var in zip(steps_up, b)])
            squares.append(lo * lo + sum((2 * kk - 1) * var for kk, var in zip(steps_up, b)))
        model.add(sum(squares) <= step.levels[0])
    if step.kind == "rack-aware" and problem.has_racks and problem.member_rack is not None:
        lists = problem.partition_rack_lists or ()
        mismatched = []
        for c, m, var in terms:
            rack = int(problem.member_rack[m])
            if rack >= 0 and problem.rack_names[rack] not in lists[classes.rep[c][k]]:
                mismatched.append(var)
        model.add(sum(mismatched) <= step.levels[1])


def _add_lag_levels(
    model: cp_model.CpModel,
    steps: GroupSteps,
    k: int,
    step: StepLevels,
    classes: TraceClasses,
    terms: list[tuple[int, int, cp_model.IntVar]],
) -> None:
    """Per-topic shares (floor or ceil), then the largest lag and the sum of squared lags."""
    problem = steps.problems[k]
    lags = problem.lags if problem.lags is not None else np.zeros(problem.num_partitions, np.int64)
    total = int(np.asarray(lags)[problem.assignable].sum())
    share: dict[tuple[int, int], list[cp_model.IntVar]] = {}
    lag_terms: list[list[cp_model.LinearExprT]] = [[] for _ in range(problem.num_members)]
    for c, m, var in terms:
        g = classes.rep[c][k]
        share.setdefault((int(problem.partition_topic[g]), m), []).append(var)
        lag_terms[m].append(int(lags[g]) * var)
    for (t, _m), variables in share.items():
        count = int(problem.partition_counts[t])
        subscribers = len(problem.topic_subscribers[t])
        model.add_linear_constraint(sum(variables), count // subscribers, -(-count // subscribers))
    squares = []
    for m, parts in enumerate(lag_terms):
        if not parts:
            continue
        lag = model.new_int_var(0, total, f"lag[{k},{m}]")
        model.add(lag == sum(parts))
        model.add(lag <= step.levels[0])
        square = model.new_int_var(0, total * total, f"lag2[{k},{m}]")
        model.add_multiplication_equality(square, [lag, lag])
        squares.append(square)
    model.add(sum(squares) <= step.levels[1])


def _add_hints(
    model: cp_model.CpModel,
    classes: TraceClasses,
    y: dict[Key, cp_model.IntVar],
    kept: dict[Key, cp_model.IntVar],
    hint: list[np.ndarray],
    previous: np.ndarray | None,
) -> None:
    """The hinted answer's counts and kept partitions, every variable hinted (0 where none)."""
    of_part = classes.of_part
    held = of_part >= 0
    span = max(len(classes.sizes), 1)
    values: dict[Key, int] = {}
    stays: dict[Key, int] = {}
    before = previous
    for k, owner in enumerate(hint):
        owner = np.asarray(owner, dtype=np.int64)
        take = held & (owner >= 0)
        count = np.bincount(of_part[take] + span * owner[take])
        for key in np.flatnonzero(count).tolist():
            values[key % span, k, key // span] = int(count[key])
        if before is not None:
            stay = take & (before == owner)
            still = np.bincount(of_part[stay] + span * owner[stay])
            for key in np.flatnonzero(still).tolist():
                stays[key % span, k, key // span] = int(still[key])
        before = owner
    add_hint(model, [(var, values.get(key, 0)) for key, var in y.items()])
    add_hint(model, [(var, stays.get(key, 0)) for key, var in kept.items()])


def _realize(
    steps: GroupSteps,
    classes: TraceClasses,
    counts: dict[Key, int],
    stays: dict[Key, int],
    previous: np.ndarray | None,
) -> list[np.ndarray]:
    """Owners with the solved counts: each member keeps ``s`` of its class's partitions
    (lowest-numbered first), the rest of the class is dealt in member order."""
    owner = (
        np.full(steps.num_parts, -1, dtype=np.int64)
        if previous is None
        else np.asarray(previous, dtype=np.int64).copy()
    )
    members_of_class = [np.flatnonzero(classes.of_part == c) for c in range(len(classes.sizes))]
    answers = []
    for k in range(len(steps)):
        new = np.full(steps.num_parts, -1, dtype=np.int64)
        for c, parts in enumerate(members_of_class):
            if classes.codes[c, k] < 0:
                continue
            for m in classes.eligible[c][k].tolist():
                keep = stays.get((c, k, m), 0)
                mine = parts[owner[parts] == m][:keep]
                new[mine] = m
            free = parts[new[parts] < 0]
            takers = [
                np.full(counts[c, k, m] - int(np.count_nonzero(new[parts] == m)), m)
                for m in classes.eligible[c][k].tolist()
            ]
            new[free] = np.concatenate(takers) if takers else np.zeros(0, np.int64)
        owner = new
        answers.append(owner.copy())
    return answers
