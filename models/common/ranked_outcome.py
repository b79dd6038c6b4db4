"""The outcome of a ranked (lexicographic) solve, whatever the backend.

Both ranked solvers, :func:`models.common.cpsat_ranked.solve_ranked` and
:func:`models.common.mip_ranked.solve_ranked`, bound-and-resolve level by level and
return a :class:`Ranked`; each backend's subclass only adds how to read a
variable's value from its solution.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from problems import GroupProblem, PlacementProblem, Result, Status


class OutOfTime(Exception):
    """The time limit ran out while a model was being built."""


@dataclass(frozen=True)
class Deadline:
    """The moment (``time.perf_counter()``) a solve's time limit runs out."""

    at: float

    def check(self) -> None:
        """Raise :class:`OutOfTime` once the deadline has passed (while a model is built)."""
        if time.perf_counter() > self.at:
            raise OutOfTime


@dataclass
class Ranked:
    """The outcome of a ranked solve.

    Attributes
    ----------
    status
        ``optimal`` (every level proven), ``feasible``, ``infeasible`` or ``unknown``
        (a :class:`problems.Status`).
    levels
        The objective values of the returned solution, as the solver computed them
        (for cross-checks only: answers are re-scored by :mod:`problems`).
    bound
        Proven lexicographic lower bound (one entry per level reached).
    seconds
        Wall time of all solves.
    """

    status: Status
    levels: tuple[int, ...] = ()
    bound: tuple[int, ...] | None = None
    seconds: float = 0.0

    def __post_init__(self) -> None:
        self.status = Status(self.status)

    @property
    def has_solution(self) -> bool:
        """Whether there is a solution to read (status ``optimal`` or ``feasible``)."""
        return self.status.solved

    def value(self, expression: Any) -> int:
        """Value of a variable or linear expression in the returned solution (each backend's)."""
        raise NotImplementedError

    def result(
        self,
        problem: GroupProblem | PlacementProblem,
        strategy: str,
        answer: np.ndarray | None = None,
        bound: tuple[int, ...] | None = None,
        info: dict[str, Any] | None = None,
        *,
        objective: str,
    ) -> Result:
        """The :class:`problems.Result` of this solve: ``answer`` only when there is a solution,
        judged on ``objective``.

        ``bound`` defaults to the ranked bound (``None`` without a solution).
        """
        return Result(
            problem,
            strategy,
            answer if self.has_solution else None,
            self.status,
            self.bound if bound is None else bound,
            info or {},
            objective_name=objective,
        )
