"""The toy strategy's exact backend (tests/models/test_toy_strategy.py): the sticky objective with
CP-SAT over one boolean per (partition, subscribed member), min sum n_m^2, then min moves.

A backend module's one entry point is ``solve(problem, options) -> Result``; the status is what the
ranked solve proved (``optimal`` only when both levels are proven).
"""

from __future__ import annotations

import time

import numpy as np
from ortools.sat.python import cp_model

from models.common.cpsat_ranked import add_member_squares, solve_ranked
from models.options import SolveOptions
from problems import GroupProblem, Result, previous_owners


def solve(problem: GroupProblem, options: SolveOptions) -> Result:
    """Solve the sticky objective exactly (both levels within ``options.time_limit``)."""
    started = time.perf_counter()
    model = cp_model.CpModel()
    previous = previous_owners(problem)
    gets: list[list[cp_model.IntVar]] = [[] for _ in range(problem.num_members)]
    choices: list[list[tuple[int, cp_model.IntVar]]] = []
    moved: list[cp_model.LinearExprT] = []
    for partition, topic in enumerate(problem.partition_topic):
        members = np.flatnonzero(problem.subscribes[:, topic])
        pairs = [(int(m), model.new_bool_var(f"x[{partition},{m}]")) for m in members]
        if pairs:
            model.add_exactly_one(var for _, var in pairs)
        for member, var in pairs:
            gets[member].append(var)
        choices.append(pairs)
        if previous[partition] >= 0:
            kept = [var for member, var in pairs if member == previous[partition]]
            moved.append(1 - sum(kept))
    squares, _ = add_member_squares(model, gets, 0, [problem.num_partitions] * problem.num_members)
    ranked = solve_ranked(model, [sum(squares), sum(moved)], options, started=started)
    if not ranked.has_solution:
        return ranked.result(problem, "toy-least-loaded", objective="sticky")
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    for partition, pairs in enumerate(choices):
        for member, var in pairs:
            if ranked.value(var):
                owner[partition] = member
    return ranked.result(problem, "toy-least-loaded", owner, objective="sticky")
