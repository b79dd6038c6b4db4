"""Plain-pandas solving of a batch of problems: what the Spark job maps over.

Kept free of Spark so that it runs and is tested in a plain Python session;
:func:`experiments.jobs.score_problems` wraps it in ``mapInPandas``.
"""

from __future__ import annotations

import time

import pandas as pd

from experiments.cli import solver_function
from problems import OBJECTIVES, STRATEGY_OBJECTIVE, ProblemError, load_problem

#: Columns of the frame :func:`solve_frame` returns.
RESULT_COLUMNS = {
    "scenario": "string",
    "strategy": "string",
    "solver": "string",
    "status": "string",
    "valid": "bool",
    "objective": "string",
    "level1": "Int64",
    "level2": "Int64",
    "runtime_s": "float64",
    "error": "string",
}


def solve_row(scenario: str, problem_json: str, strategy: str, solver: str = "heuristic") -> dict:
    """Solve one problem with one strategy and solver; score it with the evaluator."""
    row = {"scenario": scenario, "strategy": strategy, "solver": solver}
    try:
        problem = load_problem(problem_json)
    except ProblemError as error:
        return {**row, "status": "error", "valid": False, "error": str(error)}
    started = time.perf_counter()
    result = solver_function(strategy, solver)(problem)
    runtime = time.perf_counter() - started
    objective = result.objective
    levels = dict(zip(("level1", "level2"), objective))
    names = OBJECTIVES[STRATEGY_OBJECTIVE[strategy]]
    return {
        **row,
        **levels,
        "status": result.status,
        "valid": result.valid,
        "objective": ",".join(f"{n}={v}" for n, v in zip(names, objective)),
        "runtime_s": runtime,
    }


def solve_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Solve every row of ``frame`` (columns scenario, problem, strategy, solver)."""
    rows = [
        solve_row(r.scenario, r.problem, r.strategy, getattr(r, "solver", "heuristic"))
        for r in frame.itertuples(index=False)
    ]
    out = pd.DataFrame(rows, columns=list(RESULT_COLUMNS))
    return out.astype(RESULT_COLUMNS)
