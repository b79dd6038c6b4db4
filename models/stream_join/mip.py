"""Exact stream-join (KIP-315) model as a MIP (PuLP with HiGHS or CBC).

The formulation of :mod:`models.stream_join.cpsat`, written for PuLP: per
eligible member ``m``, ``n[m] = floor(K / E) + extra[m]`` with a binary
``extra[m]`` (fixed to 0 when E divides K; no level-1 optimum leaves that
window, :attr:`models.stream_join.classes.NumberClasses.window`) and an integer
``keep[m]`` of its previous numbers kept; ``sum_m n[m] = K``,
``keep[m] <= n[m]``, ``keep[m] <= previous[m]``.  Level 1 min
``sum_m floor^2 + (2 floor + 1) extra[m]`` (= sum of squared counts), level 2
min ``sum_m previous[m] - keep[m]`` (moves of partition numbers).
Co-partitioning holds by construction: the decision is per partition number.
Ranked solving is :func:`models.common.mip_ranked.solve_ranked`.
"""

from __future__ import annotations

import time

import pulp

from models.common.mip_ranked import solve_ranked
from models.options import SolveOptions
from models.stream_join.classes import number_classes, result
from problems import GroupProblem, Result


def solve(problem: GroupProblem, options: SolveOptions) -> Result:
    """Solve the stream-join objective exactly (both levels within ``options.time_limit``).

    Returns
    -------
    Result
        ``optimal`` when both levels are proven, else ``feasible`` with the
        proven bound, or ``unknown``; ``info["epoch"]`` as the heuristic's.
    """
    started = time.perf_counter()  # the time limit covers building the model
    classes = number_classes(problem)
    low, high = classes.window
    members = classes.members.tolist()
    model = pulp.LpProblem("stream_join", pulp.LpMinimize)
    extra = {m: pulp.LpVariable(f"extra_{m}", 0, high - low, cat="Integer") for m in members}
    keep = {
        m: pulp.LpVariable(f"keep_{m}", 0, min(int(owned), high), cat="Integer")
        for m, owned in zip(members, classes.previous.tolist())
    }
    n = {m: low + extra[m] for m in members}
    for m in members:
        model += keep[m] <= n[m], f"kept_within_count_{m}"
    model += pulp.lpSum(n.values()) == classes.count, "numbers"
    balance = pulp.lpSum(low * low + (2 * low + 1) * extra[m] for m in members)
    moves = int(classes.previous.sum()) - pulp.lpSum(keep.values())

    ranked = solve_ranked(model, [balance, moves], options, started=started)
    counts = [ranked.value(n[m]) for m in members]
    kept = [ranked.value(keep[m]) for m in members]
    return result(problem, classes, ranked, counts, kept)
