"""The options every solve takes, in one typed value, and the one default time limit.

Every runner of :data:`models.registry.STRATEGIES` (a heuristic or an exact backend) is called as
``runner(problem, options)`` with a :class:`SolveOptions`.  The common options (``time_limit``,
``workers``, ``seed``, ``log``, ``hint``) are accepted by every runner: one that cannot use an
option ignores it and names it in its result's ``info["ignored_options"]``.  Options particular
to some backends (``backend``, ``max_moves``, ``beat``, ``start_index``) travel in ``extra`` and
are refused by the registry, with a one-line usage error, where a runner does not take them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from problems import GroupProblem, PlacementProblem, evaluate
from problems.streams import StreamsAssignment, StreamsProblem

if TYPE_CHECKING:
    from problems import Result

#: Seconds an exact solver gets when the caller names no limit.
DEFAULT_TIME_LIMIT = 10.0
#: The options every runner accepts (each uses them or names them in ``info["ignored_options"]``).
COMMON = ("time_limit", "workers", "seed", "log", "hint")
#: The options particular to some runners (in ``extra``), refused where a runner does not take them.
PARTICULAR = ("backend", "max_moves", "beat", "start_index", "max_size")


@dataclass(frozen=True)
class SolveOptions:
    """What a caller asks of one solve, whatever the strategy and the solver.

    The common options a caller gives are its request (:meth:`requested`): a runner either
    honours each or names it in its result's ``info["ignored_options"]``.

    Attributes
    ----------
    time_limit
        Seconds for the whole solve: the heuristics that give a hint, building the model, writing
        and reading the solver's files and every objective level (README "Time limits").  Unused
        by the heuristics and by the flows that always reach their proven optimum.
    workers
        CP-SAT's search workers (``num_workers``); unused by the MIP, the flows and the heuristics.
    seed
        The solvers' random seed (CP-SAT's ``random_seed``, HiGHS's and CBC's), and
        ``kafka-default``'s random start; ``None``: ``kafka-default`` draws one, solvers use 0.
        With a fixed seed and a limit that is not reached, the same inputs give the same answer.
    log
        Print the solver's search log.
    hint
        A previous answer to this problem (a :class:`problems.Result`, e.g. the last rebalance's)
        that an exact model starts from instead of its heuristic's answer where it can (the CP-SAT
        models, and the lag-aware MIP's cut); an answer that is not a valid answer to the problem
        is not used, and named ignored.
    variant
        One of the runner's variants (``None``: the strategy as documented).
    extra
        Options particular to some runners, by name (``None``: not given):

        * ``backend``: the MIP's solver, ``highs`` (default) or ``cbc``;
        * ``max_moves``: sticky-replica's exact models, at most this many replica moves (a point
          of the moves/quality frontier; ``infeasible`` below the moves removed brokers force);
        * ``beat``: sticky-replica's exact models, a ``replicas`` array to match or beat on levels
          1-3 (lexicographically): the objective becomes moves first, then levels 1-3 (the fewest
          moves that reach it);
        * ``start_index``: ``kafka-default``'s start index and replica shift, fixed as Kafka's own
          tests fix them (its output then equals Kafka's);
        * ``max_size``: the streams exact models, the most task-member pairs taken
          (:data:`models.streams.data.MAX_EXACT_PAIRS` when not given).
    given
        The common options the caller gave, by name (:meth:`of` records them); ``None``: those
        set to something other than their default.
    """

    time_limit: float = DEFAULT_TIME_LIMIT
    workers: int = 1
    seed: int | None = 0
    log: bool = False
    hint: Result | None = None
    variant: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    given: frozenset[str] | None = None

    @classmethod
    def of(cls, **keywords: Any) -> SolveOptions:
        """Options by keyword: the fields above and the particular options (``max_moves=...``).

        A keyword given as ``None`` is not given: its default (``seed=None`` is kept: drawn where
        a runner draws one, 0 for the solvers).  The common options given otherwise are the
        request, recorded in ``given`` (:meth:`requested`).
        """
        common = {name: keywords.pop(name) for name in COMMON if name in keywords}
        variant = keywords.pop("variant", None)
        time_limit, workers, log = (common.get(n) for n in ("time_limit", "workers", "log"))
        return cls(
            time_limit=DEFAULT_TIME_LIMIT if time_limit is None else float(time_limit),
            workers=1 if workers is None else int(workers),
            seed=common.get("seed", 0),
            log=bool(log),
            hint=common.get("hint"),
            variant=variant,
            extra={name: value for name, value in keywords.items() if value is not None},
            given=frozenset(name for name, value in common.items() if value is not None),
        )

    @property
    def solver_seed(self) -> int:
        """The seed a solver is given (``seed``, or 0 when ``None``)."""
        return 0 if self.seed is None else self.seed

    @property
    def backend(self) -> str:
        """The MIP's solver: ``highs`` (default) or ``cbc``."""
        value = self.extra.get("backend")
        return "highs" if value is None else str(value)

    @property
    def max_moves(self) -> int | None:
        """At most this many replica moves (``None``: no limit)."""
        value = self.extra.get("max_moves")
        return None if value is None else int(value)

    @property
    def beat(self) -> np.ndarray | None:
        """A ``replicas`` array to match or beat on levels 1-3 (``None``: none)."""
        value = self.extra.get("beat")
        return None if value is None else np.asarray(value)

    @property
    def start_index(self) -> int | None:
        """``kafka-default``'s fixed start index (``None``: drawn)."""
        value = self.extra.get("start_index")
        return None if value is None else int(value)

    def with_extra(self, **extra: Any) -> SolveOptions:
        """These options with particular options set (``None``: removed)."""
        merged = {**self.extra, **extra}
        return replace(self, extra={k: v for k, v in merged.items() if v is not None})

    def requested(self) -> list[str]:
        """The common options asked for, in :data:`COMMON` order: those in ``given`` (without it,
        those set to something other than their default)."""
        if self.given is not None:
            return [name for name in COMMON if name in self.given]
        defaults = SolveOptions()
        return [
            name
            for name in COMMON
            if getattr(self, name) is not None and getattr(self, name) != getattr(defaults, name)
        ]

    def start(
        self,
        problem: GroupProblem,
        objective: str,
        heuristic: Callable[[GroupProblem], Result],
    ) -> np.ndarray:
        """The answer a model starts from: the hint's when it is valid, else ``heuristic``'s."""
        hinted = self.hint_answer(problem, objective)
        return answer_of(heuristic(problem)) if hinted is None else hinted

    def hint_answer(
        self, problem: GroupProblem | PlacementProblem, objective: str
    ) -> np.ndarray | None:
        """The hint's answer when it is a valid answer to ``problem`` on ``objective``, else ``None``."""
        hint = self.hint
        if hint is None or hint.answer is None or isinstance(hint.answer, StreamsAssignment):
            return None
        if hint.problem is problem and hint.objective_name == objective:
            return hint.answer if hint.valid else None
        size = problem.num_partitions if isinstance(problem, GroupProblem) else None
        answer = np.asarray(hint.answer)
        if size is not None and answer.shape != (size,):
            return None
        try:
            verdict = evaluate(problem, answer, objective)
        except (ValueError, IndexError):  # an answer to another problem's shape
            return None
        return answer if verdict.valid else None

    def hint_streams(self, problem: StreamsProblem, objective: str) -> StreamsAssignment | None:
        """:meth:`hint_answer` for a streams group: the hint's answer when it is a valid answer to
        ``problem`` on ``objective``, else ``None``."""
        hint = self.hint
        if hint is None or not isinstance(hint.answer, StreamsAssignment):
            return None
        answer = hint.answer
        if hint.problem is problem and hint.objective_name == objective:
            return answer if hint.valid else None
        return answer if evaluate(problem, answer, objective).valid else None


def answer_of(result: Result) -> np.ndarray:
    """The array answer of a result that has one (a heuristic's always has)."""
    if result.answer is None:
        raise ValueError(f"{result.strategy}: no answer ({result.status})")
    if isinstance(result.answer, StreamsAssignment):
        raise ValueError(f"{result.strategy}: a streams answer, not an array")
    return result.answer


def ignoring(result: Result, names: list[str] | tuple[str, ...]) -> Result:
    """``result`` with ``names`` added to ``info["ignored_options"]`` (sorted, each once)."""
    if names:
        known = result.info.get("ignored_options", [])
        result.info["ignored_options"] = sorted({*known, *names})
    return result


ProblemT_contra = TypeVar("ProblemT_contra", contravariant=True)


class Runner(Protocol[ProblemT_contra]):
    """The one signature of every heuristic and exact backend the registry reaches."""

    def __call__(self, problem: ProblemT_contra, options: SolveOptions, /) -> Result: ...
