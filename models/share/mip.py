"""Exact share-group (KIP-932) model as a MIP (PuLP with HiGHS or CBC).

The formulation of :mod:`models.share.cpsat` for PuLP, the squares linear through ordered unit
increments; ranked solving is :func:`models.common.mip_ranked.solve_ranked`.  The formulation:
docs/strategies/share.md.
"""

from __future__ import annotations

import time

import numpy as np
import pulp

from models.common.mip_ranked import solve_ranked
from models.options import SolveOptions
from models.share.pairs import share_pairs
from problems import GroupProblem, Result
from problems.share import pairs_array


def _squares(
    model: pulp.LpProblem, name: str, groups: list[list[pulp.LpVariable]]
) -> pulp.LpAffineExpression:
    """``sum_g (sum of group g)^2`` as unit increments with convex costs (see the module's text)."""
    total = []
    for g, terms in enumerate(groups):
        if not terms:
            continue
        steps = [pulp.LpVariable(f"{name}_{g}_{k}", cat="Binary") for k in range(1, len(terms) + 1)]
        model += pulp.lpSum(terms) == pulp.lpSum(steps), f"{name}_count_{g}"
        for k in range(1, len(steps)):
            model += steps[k] <= steps[k - 1], f"{name}_order_{g}_{k}"
        total += [(2 * k + 1) * step for k, step in enumerate(steps)]
    return pulp.lpSum(total)


def solve(problem: GroupProblem, options: SolveOptions) -> Result:
    """Solve the share objective exactly (``options.extra["backend"]``: ``highs`` or ``cbc``).

    Returns
    -------
    Result
        ``optimal`` when every level is proven, else ``feasible`` with the proven bound, or
        ``unknown``.
    """
    started = time.perf_counter()  # the time limit covers building the model
    pairs = share_pairs(problem)
    model = pulp.LpProblem("share", pulp.LpMinimize)
    x = [
        pulp.LpVariable(f"x_{i}", cat="Binary")  # pair i: (pairs.member[i], pairs.partition[i])
        for i in range(pairs.count)
    ]
    by_member, by_partition = pairs.by_end(problem, x)
    for m in np.flatnonzero(pairs.wants).tolist():
        model += pulp.lpSum(by_member[m]) >= 1, f"member_{m}"
    for p in np.flatnonzero(pairs.needed).tolist():
        model += pulp.lpSum(by_partition[p]) >= 1, f"partition_{p}"
    counts = _squares(model, "c", by_member)
    readers = _squares(model, "r", by_partition)
    kept = pulp.lpSum(v for v, was in zip(x, pairs.previous.tolist()) if was)
    moves = int(pairs.previous.sum()) + pairs.forced_moves - kept
    ranked = solve_ranked(model, [counts, readers, moves], options, started=started)
    answer = None
    if ranked.has_solution:
        chosen = np.array([ranked.value(v) > 0 for v in x], dtype=bool)
        answer = pairs_array(pairs.member[chosen], pairs.partition[chosen])
    return Result(problem, "share", answer, ranked.status, ranked.bound, objective_name="share")
