"""Trace classes: the partitions of a horizon window that its models need not tell apart.

Two partitions are in one class when, at every step of the window, both are assignable or neither
is, and where assignable they have the same subscribers and the same data the step's objective
reads (replica racks for ``rack-aware``, topic and lag for ``lag-aware``), and the same owner
before the window.  The CP-SAT horizon (:mod:`models.horizon.cpsat`) and its relaxation bound
(:mod:`models.horizon.bound`) both count partitions per class.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from models.common.ranked_outcome import Deadline
from models.horizon.steps import GroupSteps


@dataclass(frozen=True)
class TraceClasses:
    of_part: np.ndarray  # class of each trace-wide partition (-1: never assignable)
    codes: np.ndarray  # [class, step]: the per-step key, -1 where not assignable
    sizes: np.ndarray
    eligible: list[list[np.ndarray]]  # [class][step]: trace-wide members that may take it
    rep: list[list[int]]  # [class][step]: a global id (at that step) of one of its partitions


def live_cells(
    classes: TraceClasses, num_steps: int, deadline: Deadline
) -> Iterator[tuple[int, int, int]]:
    """Each ``(class, step, class size)`` where the class is assignable at the step, class by class
    and steps ascending; ``deadline`` checked before each class (:class:`OutOfTime` past it)."""
    for c in range(len(classes.sizes)):
        deadline.check()
        size = int(classes.sizes[c])
        for k in range(num_steps):
            if classes.codes[c, k] >= 0:
                yield c, k, size


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


def trace_classes(steps: GroupSteps, kinds: list[str], previous: np.ndarray | None) -> TraceClasses:
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
    return TraceClasses(of_part, codes, sizes, eligible, rep)


def boundary_owner(classes: TraceClasses, boundary: np.ndarray | None) -> np.ndarray:
    """The owner before the window shared by each class's partitions (-1: none)."""
    owner = np.full(len(classes.sizes), -1, dtype=np.int64)
    if boundary is not None:
        held = classes.of_part >= 0
        owner[classes.of_part[held]] = np.asarray(boundary, dtype=np.int64)[held]
    return owner
