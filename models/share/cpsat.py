"""Exact share-group (KIP-932) model with OR-Tools CP-SAT.

Objective: ``share`` (:mod:`problems.share`).  One boolean per allowed pair
(:mod:`models.share.pairs`), at least one pair per member and per partition that need one, the
squared counts as unit increments, ranked solving (:func:`models.common.cpsat_ranked.solve_ranked`) with
Kafka's ``SimpleAssignor`` answer as the hint.  The formulation: docs/strategies/share.md.
"""

from __future__ import annotations

import time

import numpy as np
from ortools.sat.python import cp_model

from heuristics import share as heuristic
from models.common.cpsat_ranked import add_hint, add_member_squares, solve_ranked
from models.options import SolveOptions
from models.share.pairs import SharePairs, share_pairs
from problems import GroupProblem, Result
from problems.share import pairs_array


def solve(problem: GroupProblem, options: SolveOptions) -> Result:
    """Solve the share objective exactly (all three levels within ``options.time_limit``).

    Returns
    -------
    Result
        ``optimal`` when every level is proven, else ``feasible`` with the proven bound, or
        ``unknown`` (time ran out before any answer).
    """
    started = time.perf_counter()  # the time limit covers building the model
    pairs = share_pairs(problem)
    model = cp_model.CpModel()
    x = [model.new_bool_var(f"x[{m},{p}]") for m, p in zip(pairs.member, pairs.partition)]
    by_member, by_partition = pairs.by_end(problem, x)
    for m in np.flatnonzero(pairs.wants).tolist():
        model.add(sum(by_member[m]) >= 1)
    for p in np.flatnonzero(pairs.needed).tolist():
        model.add(sum(by_partition[p]) >= 1)
    member_squares, _ = add_member_squares(model, by_member, 0, [len(t) for t in by_member])
    reader_squares, _ = add_member_squares(model, by_partition, 0, [len(t) for t in by_partition])
    kept = [variable for variable, was in zip(x, pairs.previous.tolist()) if was]
    moves = int(pairs.previous.sum()) + pairs.forced_moves - sum(kept)
    hint = options.start(problem, "share", heuristic.assign)  # a valid hint, else Kafka's answer
    add_hint(model, zip(x, _chosen(pairs, hint).tolist()))
    ranked = solve_ranked(
        model, [sum(member_squares), sum(reader_squares), moves], options, started=started
    )
    answer = None
    if ranked.has_solution:
        chosen = np.array([ranked.value(v) for v in x], dtype=bool)
        answer = pairs_array(pairs.member[chosen], pairs.partition[chosen])
    return Result(problem, "share", answer, ranked.status, ranked.bound, objective_name="share")


def _chosen(pairs: SharePairs, answer: np.ndarray) -> np.ndarray:
    """Whether each allowed pair is in ``answer`` (a pairs array)."""
    n = int(max(pairs.partition.max(initial=0), answer[:, 1].max(initial=0)) + 1)
    return np.isin(pairs.member * n + pairs.partition, answer[:, 0] * n + answer[:, 1])
