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
kept ones.  Each step is constrained to the levels :mod:`models.horizon_levels` found for it
(sum of squared counts through unit increments, rack mismatches, per-topic shares and lags); the
step policy is the hint.  Why the answer is what its status says: docs/design/formulations.md,
"Horizon".
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from models.cpsat.ranked import add_hint, add_member_squares, solve_ranked
from models.horizon_levels import StepLevels
from models.horizon_steps import GroupSteps
from models.options import SolveOptions
from models.sticky_classes import count_bounds, partition_classes
from problems import Status

Key = tuple[int, int, int]  # (class, step, trace-wide member)


@dataclass(frozen=True)
class HorizonSolve:
    """The CP-SAT horizon's outcome: trace-wide owners per step (``None`` without an answer),
    its status, the proven lower bound on the window's trace moves and its moves."""

    owners: list[np.ndarray] | None
    status: str
    bound: int | None
    moves: int | None


@dataclass(frozen=True)
class _Classes:
    of_part: np.ndarray  # class of each trace-wide partition (-1: never assignable)
    codes: np.ndarray  # [class, step]: the per-step key, -1 where not assignable
    sizes: np.ndarray
    eligible: list[list[np.ndarray]]  # [class][step]: trace-wide members that may take it
    rep: list[list[int]]  # [class][step]: a global id (at that step) of one of its partitions


def _step_codes(steps: GroupSteps, k: int, kind: str) -> tuple[np.ndarray, list[np.ndarray]]:
    """Per trace-wide partition, step ``k``'s key (-1: not assignable), and each key's global id."""
    problem = steps.problems[k]
    codes = np.full(steps.num_parts, -1, dtype=np.int64)
    parts = np.flatnonzero(problem.assignable)
    if len(parts) == 0:
        return codes, []
    topic = problem.partition_topic[parts].astype(np.int64)
    sets: dict[bytes, int] = {}
    set_of_topic = np.array(
        [sets.setdefault(s.tobytes(), len(sets)) for s in problem.topic_subscribers],
        dtype=np.int64,
    )
    columns = [set_of_topic[topic]]
    if kind == "rack-aware" and problem.partition_rack_lists is not None:
        racks: dict[frozenset[str], int] = {}
        lists = problem.partition_rack_lists
        columns.append(
            np.array([racks.setdefault(frozenset(lists[g]), len(racks)) for g in parts.tolist()])
        )
    if kind == "lag-aware":
        columns.append(topic)
        lags = problem.lags if problem.lags is not None else np.zeros(problem.num_partitions)
        columns.append(np.asarray(lags, dtype=np.int64)[parts])
    keys, first, inverse = np.unique(
        np.column_stack(columns), axis=0, return_index=True, return_inverse=True
    )
    codes[steps.part_of[k][parts]] = inverse.ravel()
    return codes, [parts[first]]


def _classes(steps: GroupSteps, kinds: list[str], previous: np.ndarray | None) -> _Classes:
    columns: list[np.ndarray] = []
    reps: list[np.ndarray] = []
    for k in range(len(steps)):
        codes, firsts = _step_codes(steps, k, kinds[k])
        columns.append(codes)
        reps.append(firsts[0] if firsts else np.zeros(0, np.int64))
    if previous is not None:
        columns.append(np.asarray(previous, dtype=np.int64))
    matrix = np.column_stack(columns)
    rows, of_part = np.unique(matrix, axis=0, return_inverse=True)
    of_part = of_part.ravel()
    live = np.flatnonzero((rows[:, : len(steps)] >= 0).any(axis=1))
    renumber = np.full(len(rows), -1, dtype=np.int64)
    renumber[live] = np.arange(len(live))
    of_part = renumber[of_part]
    codes = rows[live][:, : len(steps)]
    sizes = np.bincount(of_part[of_part >= 0], minlength=len(live)).astype(np.int64)
    eligible: list[list[np.ndarray]] = []
    rep: list[list[int]] = []
    for c in range(len(live)):
        eligible.append([])
        rep.append([])
        for k in range(len(steps)):
            code = int(codes[c, k])
            if code < 0:
                eligible[c].append(np.zeros(0, np.int64))
                rep[c].append(-1)
                continue
            g = int(reps[k][code])
            problem = steps.problems[k]
            subscribers = problem.topic_subscribers[int(problem.partition_topic[g])]
            eligible[c].append(steps.member_of[k][subscribers])
            rep[c].append(g)
    return _Classes(of_part, codes, sizes, eligible, rep)


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
    ``optimal`` only when CP-SAT proves the moves (the levels' own proof is the caller's).
    """
    started = time.perf_counter()
    kinds = [step.kind for step in levels]
    classes = _classes(steps, kinds, previous)
    model = cp_model.CpModel()
    y: dict[Key, cp_model.IntVar] = {}
    num_classes, num_steps = len(classes.sizes), len(steps)
    for c in range(num_classes):
        size = int(classes.sizes[c])
        for k in range(num_steps):
            members = classes.eligible[c][k]
            if classes.codes[c, k] < 0:
                continue
            for m in members.tolist():
                y[c, k, m] = model.new_int_var(0, size, f"y[{c},{k},{m}]")
            model.add(sum(y[c, k, m] for m in members.tolist()) == size)
    for k in range(num_steps):
        _add_levels(model, steps, k, levels[k], classes, y)
    kept: dict[Key, cp_model.IntVar] = {}
    carried = 0
    prev_owner = _previous_owner(classes, previous)
    for c in range(num_classes):
        size = int(classes.sizes[c])
        for k in range(num_steps):
            if classes.codes[c, k] < 0:
                continue
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
            for m in classes.eligible[c][k].tolist():
                if (c, k - 1, m) in y:
                    kept[c, k, m] = s = model.new_int_var(0, size, f"s[{c},{k},{m}]")
                    model.add(s <= y[c, k - 1, m])
                    model.add(s <= y[c, k, m])
    moves = carried - sum(kept.values())
    _add_hints(model, classes, y, kept, hint, previous)
    ranked = solve_ranked(model, [moves], options, started=started)
    if not ranked.has_solution:
        bound = ranked.bound[0] if ranked.bound else None
        return HorizonSolve(None, str(ranked.status), bound, None)
    counts = {key: ranked.value(var) for key, var in y.items()}
    stays = {key: ranked.value(var) for key, var in kept.items()}
    owners = _realize(steps, classes, counts, stays, previous)
    found = ranked.levels[0]
    if ranked.status == Status.OPTIMAL:
        return HorizonSolve(owners, Status.OPTIMAL, found, found)
    bound = max(0, ranked.bound[0]) if ranked.bound else 0
    return HorizonSolve(owners, str(ranked.status), bound, found)


def _previous_owner(classes: _Classes, previous: np.ndarray | None) -> np.ndarray:
    """The owner before the window shared by each class's partitions (-1: none or no window)."""
    owner = np.full(len(classes.sizes), -1, dtype=np.int64)
    if previous is not None:
        held = classes.of_part >= 0
        owner[classes.of_part[held]] = np.asarray(previous, dtype=np.int64)[held]
    return owner


def _add_levels(
    model: cp_model.CpModel,
    steps: GroupSteps,
    k: int,
    step: StepLevels,
    classes: _Classes,
    y: dict[Key, cp_model.IntVar],
) -> None:
    """Hold step ``k`` at its levels."""
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
    lo, hi = count_bounds(problem, partition_classes(problem), step.owner)
    squares, _ = add_member_squares(model, gets, lo, hi)
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
    classes: _Classes,
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
    classes: _Classes,
    y: dict[Key, cp_model.IntVar],
    kept: dict[Key, cp_model.IntVar],
    hint: list[np.ndarray],
    previous: np.ndarray | None,
) -> None:
    """The hinted answer's counts and kept partitions."""
    of_part = classes.of_part
    held = of_part >= 0
    span = max(len(classes.sizes), 1)
    before = previous
    for k, owner in enumerate(hint):
        owner = np.asarray(owner, dtype=np.int64)
        take = held & (owner >= 0)
        count = np.bincount(of_part[take] + span * owner[take])
        pairs: list[tuple[cp_model.IntVar, int]] = []
        for key in np.flatnonzero(count).tolist():
            c, m = key % span, key // span
            if (c, k, m) in y:
                pairs.append((y[c, k, m], int(count[key])))
        if before is not None:
            stay = take & (before == owner)
            still = np.bincount(of_part[stay] + span * owner[stay])
            for key in np.flatnonzero(still).tolist():
                c, m = key % span, key // span
                if (c, k, m) in kept:
                    pairs.append((kept[c, k, m], int(still[key])))
        add_hint(model, pairs)
        before = owner


def _realize(
    steps: GroupSteps,
    classes: _Classes,
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
