"""Exact stream-join (KIP-315) solver by min-cost flow over partition numbers.

The stream-join objective (docs/design/objectives.md: min sum of squared partition
numbers per member, then min moves of numbers) is the convex, sticky
assignment that :func:`models.common.min_cost_flow.solve_convex_assignment` solves
exactly, with partition numbers ``k < K`` as the items: one class per
previous owner (its numbers, ``keep`` = that owner) and one class of unowned
numbers (``keep`` = -1), every class eligible to every member that subscribes
an existing topic (:mod:`models.stream_join.classes`).  Co-partitioning holds by
construction: whole numbers are assigned, then turned into topic-partitions.
Polynomial, so there is no time limit; the status is always ``optimal``.
"""

from __future__ import annotations

import numpy as np

from models.common.min_cost_flow import solve_convex_assignment
from models.options import SolveOptions
from models.stream_join.classes import number_classes, owner_from_counts
from problems import GroupProblem, Result, Status, next_epoch


def solve(problem: GroupProblem, options: SolveOptions) -> Result:
    """Solve the stream-join objective exactly by min-cost flow (no option is used: polynomial,
    always proven).

    Returns
    -------
    Result
        Status ``optimal``, the bound equal to the levels reached;
        ``info["epoch"]`` as the heuristic's.
    """
    classes = number_classes(problem)
    eligible = len(classes.members)
    owners = np.flatnonzero(classes.previous > 0)
    unowned = classes.count - int(classes.previous.sum())
    sizes = np.append(classes.previous[owners], unowned)
    keep = np.append(owners, -1)
    cls, member, count = solve_convex_assignment(
        sizes,
        np.arange(len(sizes) + 1) * eligible,
        np.tile(np.arange(eligible), len(sizes)),
        keep,
        eligible,
    )
    counts = np.bincount(member, weights=count, minlength=eligible).astype(np.int64)
    stays = keep[cls] == member
    kept = np.bincount(member[stays], weights=count[stays], minlength=eligible).astype(np.int64)
    bound = (int(counts @ counts), int(classes.previous.sum() - kept.sum()))
    return Result(
        problem,
        "stream-join",
        owner_from_counts(problem, classes, counts, kept),
        Status.OPTIMAL,
        bound,
        info={"epoch": next_epoch(problem)},
        objective_name="stream-join",
    )
