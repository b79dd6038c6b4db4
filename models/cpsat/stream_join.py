"""Exact stream-join (KIP-315) model with OR-Tools CP-SAT.

Objective: DESIGN.md section 3, row ``stream-join``: partition number ``k < K``
goes to one member, who gets ``(t, k)`` of every topic it subscribes (the
co-partitioning constraint holds by construction: the decision is per number,
and :mod:`models.stream_join_classes` turns numbers into topic-partitions); level 1
min sum over members of (numbers per member)^2, level 2 min moves of
numbers away from their valid previous owner.

Numbers with the same previous owner are interchangeable (every eligible
member may own every number), so instead of one boolean ``x[k, m]`` per number
and member the model has, per eligible member ``m``, the integers
``n[m]`` (numbers it gets) and ``keep[m]`` (of its own previous numbers), as
:mod:`models.stream_join_classes` explains.  Every level-1 optimum gives each member
``floor(K / E)`` or ``ceil(K / E)`` numbers (:attr:`NumberClasses.window`), so
``n[m] = floor(K / E) + extra[m]`` with ``extra[m]`` in ``{0, 1}`` (``{0}``
when E divides K), over which ``n[m]^2`` is linear:

* ``sum_m n[m] = K``, ``keep[m] <= n[m]``, ``keep[m] <= previous[m]``;
* level 1: ``sum_m floor^2 + (2 floor + 1) extra[m]`` (= sum of squared counts);
* level 2: ``sum_m previous[m] - keep[m]``.

The model is checked against an exhaustive search over every map of numbers
to members in the tests.  Ranked solving (bound-and-resolve, honest status and bound) is
:func:`models.cpsat.ranked.solve_ranked`; the KIP-315 heuristic's answer is
the hint.
"""

from __future__ import annotations

import time

from ortools.sat.python import cp_model

from heuristics import stream_join as heuristic
from models.cpsat.ranked import add_hint, solve_ranked
from models.options import SolveOptions
from models.stream_join_classes import counts_and_kept, number_classes, result
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
