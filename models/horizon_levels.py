"""Each step's optimum of the levels above moves, and the step policy, for the horizon models.

The horizon objective (DESIGN "Over a trace") holds every step at its strategy's per-step optimum
of the levels above moves; those values do not depend on the claims (only moves do), so one
exact solve per step gives them.  Solving the steps in order, each with the previous step's
answer as its claims, is also the *step policy* (each step optimal alone): a valid answer to the
horizon problem, the hint its CP-SAT model starts from.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from models.horizon_steps import GroupSteps
from models.options import SolveOptions
from models.registry import run
from problems import GroupProblem, ProblemError, Status, objective_of
from problems.trace import with_claims

#: Per objective: the exact per-step solver, and how many levels stand above moves.
EXACT: dict[str, tuple[str, int]] = {
    "sticky": ("flow", 1),
    "rack-aware": ("flow", 2),
    "stream-join": ("flow", 1),
    "lag-aware": ("cpsat", 2),
}


@dataclass(frozen=True)
class StepLevels:
    """One step of the step policy.

    Attributes
    ----------
    kind
        The objective the step is judged on (:func:`problems.objective_of`).
    levels
        Its optimum of the levels above moves (all levels where the objective has no moves).
    proven
        Whether the per-step solver proved them.
    owner
        The step's answer (member positions), the previous step's answer as its claims.
    """

    kind: str
    levels: tuple[int, ...]
    proven: bool
    owner: np.ndarray


def judged_on(steps: GroupSteps, strategy: str) -> list[str]:
    """The objective of every step (a baseline is judged on ``rack-aware`` at a step with racks)."""
    kinds = [objective_of(problem, strategy) for problem in steps.problems]
    for k, kind in enumerate(kinds):
        if kind not in EXACT:
            raise ProblemError(
                "strategy", f"{strategy} (judged on {kind} at step {k}) has no horizon model"
            )
    return kinds


def step_policy(
    steps: GroupSteps,
    strategy: str,
    options: SolveOptions,
    previous: tuple[GroupProblem, np.ndarray] | None,
    first_step: int = 0,
) -> list[StepLevels]:
    """Solve the steps in order, each exactly and alone (see the module docstring).

    ``previous`` is the step before the window, ``(problem, owner)``, or ``None``; ``first_step``
    the trace index of the window's first step (the claims' generation).
    """
    kinds = judged_on(steps, strategy)
    options = replace(options, hint=None, variant=None, extra={})
    answers: list[StepLevels] = []
    for k, (problem, kind) in enumerate(zip(steps.problems, kinds)):
        claimed = problem
        if previous is not None:
            claimed = with_claims(problem, previous[0], previous[1], first_step + k)
        solver, above = EXACT[kind]
        result = run(claimed, kind, solver, options)
        if result.answer is None:
            raise RuntimeError(f"step {first_step + k}: {kind} {solver} found no answer")
        owner = np.asarray(result.answer, dtype=np.int32)
        answers.append(
            StepLevels(
                kind,
                tuple(int(v) for v in result.objective[:above]),
                result.status == Status.OPTIMAL,
                owner,
            )
        )
        previous = (problem, owner)
    return answers
