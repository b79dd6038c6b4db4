"""A strategy run through a trace of rebalances (docs/traces.md): the runner and the observed row.

:mod:`models.trace.runner` assigns every step of a trace by a strategy and a solver (each step
alone, the per-step optimum, the horizon) and re-scores each step; :mod:`models.trace.observed`
turns a recorded trace's observed assignments into the same kind of result, the ``observed`` row
beside the strategies.  ``models.trace(trace, strategy, solver)`` is :func:`runner.trace`.
"""

from models.trace.runner import (
    MAX_HORIZON_SIZE,
    OUT_OF_TIME,
    TRACE_SOLVERS,
    TraceResult,
    TraceStep,
    group_moves,
    placement_moves,
    replace_strategy,
    step_backend,
    trace,
    trace_answers,
)

__all__ = [
    "MAX_HORIZON_SIZE",
    "OUT_OF_TIME",
    "TRACE_SOLVERS",
    "TraceResult",
    "TraceStep",
    "group_moves",
    "placement_moves",
    "replace_strategy",
    "step_backend",
    "trace",
    "trace_answers",
]
