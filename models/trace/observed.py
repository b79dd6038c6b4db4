"""What a recorded group's members actually held, as a row beside the strategies (docs/record.md).

A recorded trace (``rebalance-lab record``) carries, for every step, the assignment Kafka's
members held after that rebalance (``observed``).  :func:`observed_run` turns those assignments
into a :class:`models.trace.runner.TraceResult` as if a strategy had answered them: each step's input is
the previous observed assignment as the members' claims, changed by the step's events (what the
members really sent), the observed assignment is re-scored by the evaluator on the judged
strategy's objective (so an assignment that leaves a partition without an owner is a step
marked invalid), and its moves are counted as a strategy's are.  Each step also keeps what the
recording measured: ``rounds``, ``settle_ms``, ``unowned_partition_ms`` and the ``generation``.

:func:`imbalance` is the spread of a step's assignment (the most partitions a member holds minus
the fewest), the one balance figure every strategy's objective shares.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from models.registry import STRATEGIES
from models.trace.runner import TraceResult, TraceStep, _check_family, _Runner, _summarise
from problems import (
    GroupProblem,
    ProblemError,
    Result,
    Status,
    owner_from_assignment,
)
from problems.trace import Trace, iter_steps

#: What a recording measured per step, kept on the observed row's steps.
MEASURED = ("rounds", "settle_ms", "unowned_partition_ms", "generation")
#: The row's name in reports and its solver column.
ROW, SOURCE = "observed", "recorded"


def observed_run(trace: Trace, strategy: str) -> TraceResult:
    """The observed assignments of a recorded ``trace``, judged on ``strategy``'s objective.

    Step 0 is the group as first seen (its members' ``owned``); a step without ``observed`` has
    no answer (status ``unknown``) and the next step's members send no claims.

    Raises
    ------
    ProblemError
        ``trace`` is not a recorded group trace.
    """
    if trace.recorded is None:
        raise ProblemError("recorded", "missing: the trace was not recorded (no observed steps)")
    _check_family(trace, strategy)
    runner = _Runner(trace, strategy)
    steps: list[TraceStep] = []
    names: set[str] = set()
    previous: Result | None = None
    for k, built in enumerate(iter_steps(trace)):
        problem = runner.input(k, built, previous)
        objective = STRATEGIES[strategy].objective_on(problem)
        names.add(objective)
        assert isinstance(problem, GroupProblem)
        seen = _seen(trace, k)
        if seen is None:
            result = Result(problem, strategy, None, Status.UNKNOWN, objective_name=objective)
        else:
            owner = owner_from_assignment(problem, seen["assignment"], trace.name)
            result = Result(problem, strategy, owner, Status.HEURISTIC, objective_name=objective)
        info = {key: seen[key] for key in MEASURED if seen is not None and key in seen}
        evaluation = result.evaluation
        if evaluation is not None and not evaluation.valid:
            info["violations"] = list(evaluation.violations)
        steps.append(
            TraceStep(
                step=k,
                status=str(result.status),
                objective=tuple(result.objective),
                moves=runner.moves(previous, result),
                info=info,
                result=result,
            )
        )
        previous = result
    judged = _summarise(strategy, SOURCE, steps, names, info={"recorded": dict(trace.recorded)})
    return replace(judged, strategy=ROW, info=judged.info | {"judged_on": strategy})


def _seen(trace: Trace, k: int) -> dict[str, Any] | None:
    """Step ``k``'s observed object (step 0: the starting members' ``owned``)."""
    if k == 0:
        return {"assignment": {m["id"]: m.get("owned", {}) for m in trace.start["members"]}}
    return trace.observed[k - 1] if trace.observed else None


def imbalance(step: TraceStep) -> int | None:
    """Most partitions a member holds minus the fewest, at ``step`` (``None`` without an answer
    or without members)."""
    result = step.result
    if result is None or not isinstance(result.answer, np.ndarray):
        return None
    problem = result.problem
    if not isinstance(problem, GroupProblem) or problem.num_members == 0:
        return None
    owner = np.asarray(result.answer, dtype=np.int64)
    loads = np.bincount(owner[owner >= 0], minlength=problem.num_members)
    return int(loads.max() - loads.min())


def measured_total(run: TraceResult, key: str) -> int | None:
    """The sum of a measured figure (``settle_ms``...) over the steps that have it."""
    values = [s.info[key] for s in run.steps if key in s.info]
    return sum(values) if values else None
