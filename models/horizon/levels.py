"""Each step's optimum of the levels above moves, and the step policy, for the horizon models.

The horizon objective (DESIGN "Over a trace") holds every step at its strategy's per-step optimum
of the levels above moves; those values do not depend on the claims (only moves do), so one
exact solve per step gives them.  Solving the steps in order, each with the previous step's
answer as its claims, is also the *step policy* (each step optimal alone): a valid answer to the
horizon problem, the hint its CP-SAT model starts from.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from models.common.classes import count_bounds, partition_classes
from models.horizon.steps import GroupSteps
from models.options import SolveOptions
from models.registry import STRATEGIES, best_exact, run
from problems import GroupProblem, ProblemError, Status, above_moves
from problems.trace import with_claims

#: Members up to which :func:`count_box` computes the exchange closure (a boolean matrix product
#: per doubling, members^3 / 64 word operations); beyond it the box is the looser
#: :func:`models.common.classes.count_bounds`.
BOX_MEMBERS = 600

#: The least time a step's solve gets once the deadline has passed (its exact backend then returns
#: its best heuristic answer, unproven).
MIN_STEP_SECONDS = 0.01

#: The objectives a group horizon models (share groups, streams groups and placements: not here).
OBJECTIVES = ("sticky", "rack-aware", "stream-join", "lag-aware")


@dataclass(frozen=True)
class StepLevels:
    """One step of the step policy.

    Attributes
    ----------
    kind
        The objective the step is judged on (:meth:`models.registry.Strategy.objective_on`).
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
    record = STRATEGIES[strategy]
    kinds = [record.objective_on(problem) for problem in steps.problems]
    for k, kind in enumerate(kinds):
        if kind not in OBJECTIVES:
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
    until: float | None = None,
) -> list[StepLevels]:
    """Solve the steps in order, each exactly and alone (see the module docstring).

    ``previous`` is the step before the window, ``(problem, owner)``, or ``None``; ``first_step``
    the trace index of the window's first step (the claims' generation).  ``until`` (a
    ``time.perf_counter()`` moment; ``None``: ``options.time_limit`` from now) is the deadline
    the steps share: each step's solve gets an equal share of the time left (at least
    :data:`MIN_STEP_SECONDS`), so a step's solve that stops short leaves its time to the next.
    """
    kinds = judged_on(steps, strategy)
    until = time.perf_counter() + options.time_limit if until is None else until
    options = replace(options, hint=None, variant=None, extra={})
    answers: list[StepLevels] = []
    for k, (problem, kind) in enumerate(zip(steps.problems, kinds)):
        claimed = problem
        if previous is not None:
            claimed = with_claims(problem, previous[0], previous[1], first_step + k)
        exact, solver = best_exact(kind)
        above = above_moves(kind)
        share = (until - time.perf_counter()) / (len(steps) - k)
        result = run(
            claimed, exact, solver, replace(options, time_limit=max(share, MIN_STEP_SECONDS))
        )
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


def count_box(problem: GroupProblem, owner: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bounds ``low[m] <= n_m <= high[m]`` that every minimum of ``sum_m n_m^2`` satisfies, from
    one minimum ``owner``.

    The count vectors of all valid assignments form an M-convex set, and so do its minimisers of
    ``sum n_m^2`` (Frank and Murota, "Discrete decreasing minimization, Part I", 2022).  If some
    minimiser ``y`` has ``y_m > x_m`` (``x``: ``owner``'s counts), the exchange axiom gives a
    member ``b`` with ``x + e_m - e_b`` a minimiser; equal sums of squares force
    ``x_b = x_m + 1``, and validity needs a chain of partition transfers from ``b`` to ``m``:
    ``b`` reaches ``m`` in the graph with an arc ``a -> c`` when ``a`` holds a partition ``c`` may
    take.  So ``n_m`` can exceed ``x_m`` only if such a ``b`` reaches ``m``, and then by one at
    most (``x + e_m - e_b`` is again a minimiser: repeat); symmetrically below.  Beyond
    :data:`BOX_MEMBERS` members: :func:`models.common.classes.count_bounds`.
    """
    members = problem.num_members
    owner = np.asarray(owner, dtype=np.int64)
    counts = np.bincount(owner[owner >= 0], minlength=members).astype(np.int64)
    if members > BOX_MEMBERS:
        lo, hi = count_bounds(problem, partition_classes(problem), owner)
        return np.full(members, lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)
    held = owner >= 0
    holds = np.zeros((members, problem.num_topics), dtype=bool)
    holds[owner[held], problem.partition_topic[held]] = True
    step = (holds.astype(np.int64) @ problem.subscribes.T.astype(np.int64)) > 0
    reach = step | np.eye(members, dtype=bool)
    while True:  # transitive closure by squaring
        wider = (reach.astype(np.int64) @ reach.astype(np.int64)) > 0
        if (wider == reach).all():
            break
        reach = wider
    above = counts[:, None] == counts[None, :] + 1  # [b, m]: x_b = x_m + 1
    up = (above & reach).any(axis=0)
    down = (above & reach).any(axis=1)  # [m, b]: x_m = x_b + 1 and m reaches b
    return counts - down, counts + up
