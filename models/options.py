"""The options every solve takes, in one typed value, and the one default time limit.

Every runner of :data:`models.registry.STRATEGIES` (a heuristic or an exact backend) is called as
``runner(problem, options)`` with a :class:`SolveOptions`.  The common options (``time_limit``,
``workers``, ``seed``, ``log``, ``hint``) are accepted by every runner: one that cannot use an
option ignores it and names it in its result's ``info["ignored_options"]``.  Options particular
to some backends (``backend``, ``max_moves``, ``beat``, ``start_index``) travel in ``extra`` and
are refused by the registry, with a one-line usage error, where a runner does not take them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from problems import Result

#: Seconds an exact solver gets when the caller names no limit.
DEFAULT_TIME_LIMIT = 10.0


@dataclass(frozen=True)
class SolveOptions:
    """What a caller asks of one solve, whatever the strategy and the solver.

    Attributes
    ----------
    time_limit
        Seconds for the whole solve, the model's construction included.
    workers, seed, log
        Search workers, random seed (``None``: a randomised heuristic draws one), the solver's log.
    hint
        A previous answer to start from, where the runner can use one.
    variant
        One of the runner's variants (``None``: the strategy as documented).
    extra
        Options particular to some runners, by name.
    """

    time_limit: float = DEFAULT_TIME_LIMIT
    workers: int = 1
    seed: int | None = 0
    log: bool = False
    hint: Result | None = None
    variant: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


ProblemT_contra = TypeVar("ProblemT_contra", contravariant=True)


class Runner(Protocol[ProblemT_contra]):
    """The one signature of every heuristic and exact backend the registry reaches."""

    def __call__(self, problem: ProblemT_contra, options: SolveOptions, /) -> Result: ...
