"""Exact rack-aware assignment as a MIP (PuLP with HiGHS or CBC): balance, rack alignment, moves.

The formulation of :mod:`models.rack_aware.cpsat`, written for PuLP: integers ``x[c, m]`` per
(rack-refined class, eligible member) pair with ``sum_m x[c, m] = |c|``; member counts ``n_m = lo +
sum_k b[m, k]`` with binary unit increments priced ``2k - 1`` (``b[m, k] <= b[m, k - 1]``); level 1
``sum_m n_m^2``, level 2 the pairs' partitions on a member whose rack is outside the class's replica
racks, level 3 ``sum_c (|c| - x[c, keep_c])``.  ``lo``/``hi_m`` are the proven bounds of
:func:`models.common.classes.count_bounds`.  Coefficients stay small (at most ``2 hi + 1``).  Ranked
solving is :func:`models.common.mip_ranked.solve_ranked` (no hint: PuLP's command-line backends take none).
"""

from __future__ import annotations

import time

import numpy as np
import pulp

from models.common.mip_ranked import solve_ranked
from models.options import SolveOptions
from models.rack_aware.classes import model_inputs, ranked_result
from problems import GroupProblem, Result


def solve(problem: GroupProblem, options: SolveOptions) -> Result:
    """Solve the rack-aware objective exactly with a MIP; the result as
    :func:`models.rack_aware.cpsat.solve` returns it."""
    started = time.perf_counter()  # the time limit covers building the model
    classes, _, lo, hi, pairs = model_inputs(problem, "MIP")
    model = pulp.LpProblem("rack_aware", pulp.LpMinimize)
    x = [
        pulp.LpVariable(f"x_{c}_{m}", 0, int(classes.sizes[c]), cat="Integer")
        for c, m in zip(pairs.cls, pairs.member)
    ]
    for c in range(len(classes.sizes)):
        model += (
            pulp.lpSum(x[pairs.start[c] : pairs.start[c + 1]]) == int(classes.sizes[c]),
            f"class_{c}",
        )
    gets: list[list[pulp.LpVariable]] = [[] for _ in range(problem.num_members)]
    for i, m in enumerate(pairs.member.tolist()):
        gets[m].append(x[i])
    squares = []
    for m, terms in enumerate(gets):
        if terms:
            b = {
                k: pulp.LpVariable(f"b_{m}_{k}", cat="Binary")
                for k in range(lo + 1, int(hi[m]) + 1)
            }
            model += pulp.lpSum(terms) == lo + pulp.lpSum(b.values()), f"count_{m}"
            for k in list(b)[1:]:
                model += b[k] <= b[k - 1], f"order_{m}_{k}"
            squares.append(lo * lo + pulp.lpSum((2 * k - 1) * var for k, var in b.items()))
    mismatches = pulp.lpSum(x[i] for i in np.flatnonzero(pairs.mismatch))
    moves = pulp.lpSum(int(classes.sizes[pairs.cls[i]]) - x[i] for i in np.flatnonzero(pairs.kept))
    ranked = solve_ranked(model, [pulp.lpSum(squares), mismatches, moves], options, started=started)
    return ranked_result(problem, classes, pairs, ranked, x)
