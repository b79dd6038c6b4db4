"""Exact sticky assignment as a MIP (PuLP with HiGHS or CBC): min sum n_m^2, then min moves.

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

import time

import numpy as np
import pulp

from heuristics.sticky import sticky as heuristic
from models.common.classes import count_bounds, partition_classes, solved_owner
from models.common.mip_ranked import solve_ranked
from models.options import SolveOptions, answer_of
from problems import GroupProblem, Result


def solve(problem: GroupProblem, options: SolveOptions) -> Result:
    """Solve the sticky objective exactly with a MIP (both levels within ``options.time_limit``).

    Returns
    -------
    Result
        ``optimal`` (both levels proven), ``feasible`` with the proven
        lexicographic bound, or ``unknown`` when time ran out without an answer.
    """
    started = time.perf_counter()  # the time limit covers building the model
    classes = partition_classes(problem)
    lo, hi = count_bounds(problem, classes, answer_of(heuristic.assign(problem)))
    model = pulp.LpProblem("sticky", pulp.LpMinimize)
    owned = np.flatnonzero(classes.keep >= 0)
    kept = {
        int(c): pulp.LpVariable(f"kept_{c}", 0, int(classes.sizes[c]), cat="Integer") for c in owned
    }
    z = [
        pulp.LpVariable(f"z_{s}_{m}", 0, cat="Integer")
        for s, m in zip(classes.edge_set, classes.edge_member)
    ]
    gets: list[list[pulp.LpVariable]] = [[] for _ in range(problem.num_members)]
    for e, m in enumerate(classes.edge_member):
        gets[m].append(z[e])
    for c, var in kept.items():
        gets[classes.keep[c]].append(var)
    for s in range(int(classes.edge_set.max(initial=-1)) + 1):
        members_of_s = np.flatnonzero(classes.edge_set == s)
        pooled = [
            int(classes.sizes[c]) - kept[c] if c in kept else int(classes.sizes[c])
            for c in np.flatnonzero(classes.set_of_class == s).tolist()
        ]
        model += pulp.lpSum(z[e] for e in members_of_s) == pulp.lpSum(pooled), f"pool_{s}"
    squares = []
    for m, terms in enumerate(gets):
        if not terms:
            continue
        b = {k: pulp.LpVariable(f"b_{m}_{k}", cat="Binary") for k in range(lo + 1, int(hi[m]) + 1)}
        model += pulp.lpSum(terms) == lo + pulp.lpSum(b.values()), f"count_{m}"
        for k in list(b)[1:]:
            model += b[k] <= b[k - 1], f"order_{m}_{k}"
        squares.append(lo * lo + pulp.lpSum((2 * k - 1) * var for k, var in b.items()))
    balance = pulp.lpSum(squares)
    moves = pulp.lpSum(int(classes.sizes[c]) - var for c, var in kept.items())
    ranked = solve_ranked(model, [balance, moves], options, started=started)
    if not ranked.has_solution:
        return ranked.result(problem, "sticky", objective="sticky")
    owner = solved_owner(problem, classes, ranked.value, kept, z)
    return ranked.result(problem, "sticky", owner, objective="sticky")
