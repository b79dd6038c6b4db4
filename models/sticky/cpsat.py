"""Exact sticky assignment with CP-SAT: min sum n_m^2, then min moves (docs/design/objectives.md).

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

import time

import numpy as np
from ortools.sat.python import cp_model

from heuristics.sticky import sticky as heuristic
from models.common.classes import count_bounds, partition_classes, pooled_counts, solved_owner
from models.common.cpsat_ranked import add_hint, add_member_squares, solve_ranked
from models.options import SolveOptions
from problems import GroupProblem, Result


def solve(problem: GroupProblem, options: SolveOptions) -> Result:
    """Solve the sticky objective exactly with CP-SAT (both levels within ``options.time_limit``).

    Returns
    -------
    Result
        ``optimal`` (both levels proven), ``feasible`` with the proven
        lexicographic bound, or ``unknown`` when time ran out without an answer.
    """
    started = time.perf_counter()  # the time limit covers building the model
    classes = partition_classes(problem)
    start = options.start(problem, "sticky", heuristic.assign)
    lo, hi = count_bounds(problem, classes, start)
    model = cp_model.CpModel()
    owned = np.flatnonzero(classes.keep >= 0)
    kept = {int(c): model.new_int_var(0, int(classes.sizes[c]), f"kept[{c}]") for c in owned}
    pool_size = np.bincount(classes.set_of_class, weights=classes.sizes).astype(np.int64)
    z = [
        model.new_int_var(0, int(pool_size[s]), f"z[{s},{m}]")
        for s, m in zip(classes.edge_set, classes.edge_member)
    ]
    moved_into: list[list[cp_model.LinearExprT]] = [[] for _ in pool_size]
    for c, s in enumerate(classes.set_of_class):
        moved_into[s].append(
            int(classes.sizes[c]) - kept[c] if c in kept else int(classes.sizes[c])
        )
    gets: list[list[cp_model.LinearExprT]] = [[] for _ in range(problem.num_members)]
    for e, m in enumerate(classes.edge_member):
        gets[m].append(z[e])
    for c, var in kept.items():
        gets[classes.keep[c]].append(var)
    for s, parts in enumerate(moved_into):
        model.add(sum(z[e] for e in np.flatnonzero(classes.edge_set == s)) == sum(parts))
    squares, b = add_member_squares(model, gets, lo, hi)
    moves = sum(int(classes.sizes[c]) - var for c, var in kept.items())
    hinted_kept, hinted_pooled = pooled_counts(problem, classes, start)
    counts = np.bincount(start[start >= 0], minlength=problem.num_members)
    add_hint(model, [(var, hinted_kept[c]) for c, var in kept.items()])
    add_hint(model, zip(z, hinted_pooled))
    add_hint(model, [(var, counts[m] >= k) for (m, k), var in b.items()])
    ranked = solve_ranked(model, [sum(squares), moves], options, started=started)
    if not ranked.has_solution:
        return ranked.result(problem, "sticky", objective="sticky")
    owner = solved_owner(problem, classes, ranked.value, kept, z)
    return ranked.result(problem, "sticky", owner, objective="sticky")
