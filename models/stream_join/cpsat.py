"""Exact stream-join (KIP-315) model with OR-Tools CP-SAT.

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

import time

from ortools.sat.python import cp_model

from heuristics import stream_join as heuristic
from models.common.cpsat_ranked import add_hint, solve_ranked
from models.options import SolveOptions
from models.stream_join.classes import counts_and_kept, number_classes, result
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
    model = cp_model.CpModel()
    extra = {m: model.new_int_var(0, high - low, f"extra[{m}]") for m in members}
    keep = {
        m: model.new_int_var(0, min(int(owned), high), f"keep[{m}]")
        for m, owned in zip(members, classes.previous.tolist())
    }
    n = {m: low + extra[m] for m in members}
    for m in members:
        model.add(keep[m] <= n[m])
    model.add(sum(n.values()) == classes.count)
    balance = sum(low * low + (2 * low + 1) * extra[m] for m in members)
    moves = int(classes.previous.sum()) - sum(keep.values())

    start = options.start(problem, "stream-join", heuristic.assign)
    counts, kept = counts_and_kept(problem, classes, start)
    add_hint(model, zip(extra.values(), (counts - low).tolist()))
    add_hint(model, zip(keep.values(), kept.tolist()))
    ranked = solve_ranked(model, [balance, moves], options, started=started)
    found = [ranked.value(n[m]) for m in members] if ranked.has_solution else []
    stayed = [ranked.value(keep[m]) for m in members] if ranked.has_solution else []
    return result(problem, classes, ranked, found, stayed)
