"""Exact formulations, and the one way to run any strategy.

``models.solve(problem, strategy, solver)`` runs a strategy's heuristic or one of
its exact backends as listed in :data:`models.registry.STRATEGIES`:
``models/<family>/cpsat.py`` (OR-Tools CP-SAT), ``models/<family>/mip.py``
(PuLP with HiGHS or CBC) and ``models/<family>/flow.py`` (OR-Tools min-cost
flow, where it is exact), beside the modules only that family uses; what every family
shares is in ``models/common/``, the horizon of a trace in ``models/horizon/``.  Every backend
returns a :class:`problems.Result` whose objective is re-scored by the evaluator.
``models.trace(trace, strategy, solver)`` runs a strategy through a trace of rebalances, each
step's input the previous step's output.
"""

from models.options import DEFAULT_TIME_LIMIT, SolveOptions
from models.registry import STRATEGIES, UsageError, frontier, solve
from models.trace import trace

__all__ = [
    "DEFAULT_TIME_LIMIT",
    "STRATEGIES",
    "SolveOptions",
    "UsageError",
    "frontier",
    "solve",
    "trace",
]
