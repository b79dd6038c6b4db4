"""Exact rack-aware assignment with CP-SAT: balance, then rack alignment, then moves (docs/design/objectives.md).

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

import time

import numpy as np
from ortools.sat.python import cp_model

from models.common.cpsat_ranked import add_hint, add_member_squares, solve_ranked
from models.options import SolveOptions
from models.rack_aware.classes import model_inputs, ranked_result
from problems import GroupProblem, Result


def solve(problem: GroupProblem, options: SolveOptions) -> Result:
    """Solve the rack-aware objective exactly with CP-SAT (all levels within ``options.time_limit``).

    Returns
    -------
    Result
        ``optimal`` (all three levels proven), ``feasible`` with the proven lexicographic bound, or
        ``unknown`` when time ran out without an answer.
    """
    started = time.perf_counter()  # the time limit covers building the model
    classes, start, lo, hi, pairs = model_inputs(
        problem, "CP-SAT", options.hint_answer(problem, "rack-aware")
    )
    model = cp_model.CpModel()
    x = [
        model.new_int_var(0, int(classes.sizes[c]), f"x[{c},{m}]")
        for c, m in zip(pairs.cls, pairs.member)
    ]
    for c in range(len(classes.sizes)):
        model.add(
            sum(x[i] for i in range(pairs.start[c], pairs.start[c + 1])) == int(classes.sizes[c])
        )
    gets: list[list[cp_model.IntVar]] = [[] for _ in range(problem.num_members)]
    for i, m in enumerate(pairs.member.tolist()):
        gets[m].append(x[i])
    squares, b = add_member_squares(model, gets, lo, hi)
    mismatches = sum(x[i] for i in np.flatnonzero(pairs.mismatch))
    moves = sum(int(classes.sizes[pairs.cls[i]]) - x[i] for i in np.flatnonzero(pairs.kept))
    counts = np.bincount(start[start >= 0], minlength=problem.num_members)
    add_hint(model, zip(x, pairs.hint))
    add_hint(model, [(var, counts[m] >= k) for (m, k), var in b.items()])
    ranked = solve_ranked(model, [sum(squares), mismatches, moves], options, started=started)
    return ranked_result(problem, classes, pairs, ranked, x)
