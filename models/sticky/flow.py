"""Exact sticky assignment by min-cost flow: min sum n_m^2, then min moves (docs/design/objectives.md).

Partitions are aggregated into interchangeable classes (same subscriber set,
same valid previous owner: :mod:`models.common.classes`) and the classes
solved by :func:`models.common.min_cost_flow.solve_convex_assignment` (convex unit
costs ``2k - 1`` per member, weighted above every possible move count, plus
one per moved partition).  The graph grows with the number of classes and
subscriber sets, not with members x partitions: at 1,000,000 partitions and
2,000 members it has a few thousand class nodes.  Min-cost flow is polynomial,
so the answer is always a proven optimum.
"""

from __future__ import annotations

import numpy as np

from models.common.classes import expand, partition_classes
from models.common.min_cost_flow import solve_convex_assignment
from models.options import SolveOptions
from problems import GroupProblem, Result, Status


def solve(problem: GroupProblem, options: SolveOptions) -> Result:
    """Solve the sticky objective exactly (no option is used: the flow always runs to its proven
    optimum in polynomial time).

    Returns
    -------
    Result
        Status ``"optimal"``, ``bound`` equal to the optimum's levels.
    """
    classes = partition_classes(problem)
    if len(classes.sizes) == 0:
        return Result(
            problem,
            "sticky",
            np.full(problem.num_partitions, -1, np.int32),
            status=Status.OPTIMAL,
            bound=(0, 0),
            objective_name="sticky",
        )
    cls, member, count = solve_convex_assignment(
        classes.sizes, classes.start, classes.eligible, classes.keep, problem.num_members
    )
    owner = expand(problem, classes, cls, member, count)
    counts = np.bincount(member, weights=count, minlength=problem.num_members).astype(np.int64)
    moved = int(count[(classes.keep[cls] >= 0) & (member != classes.keep[cls])].sum())
    return Result(
        problem,
        "sticky",
        owner,
        status=Status.OPTIMAL,
        bound=(int(counts @ counts), moved),
        objective_name="sticky",
    )
