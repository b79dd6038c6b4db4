"""A strategy run through a trace of rebalances, as real members would (docs/traces.md).

``models.trace(trace, strategy, solver)`` assigns every step of a :class:`problems.trace.Trace`:
step 0 the starting problem as it is, step ``k`` the problem of
:func:`problems.trace.next_document` (step ``k``'s events, with step ``k - 1``'s answer as the
members' claims).  Every step's answer is re-scored by the evaluator on that problem, and its
trace ``moves`` counted from the previous step's answer (:func:`problems.trace.trace_moves`).

Solvers:

* ``heuristic``, ``cpsat``, ``mip``, ``flow``: each step solved alone by :func:`models.solve`
  (``time_limit`` is the whole run's: each step gets the time left).  ``cooperative-sticky``
  runs Kafka's follow-up rounds inside the step (a step ends when the group is stable: its
  assignment is the completed one, ``rounds`` the rebalances it took and ``pending`` what
  members received after the first round).
  ``uniform`` and ``server-range`` are KIP-848's broker-side assignors: the group coordinator
  keeps its target assignment from one rebalance to the next and hands it to the assignor as the
  members' current assignment, so the previous step's answer is that input (a restarted dynamic
  member, a new member id in Kafka, has none);
* ``step``: the strategy's exact per-step optimum: each step alone, solved by the best exact
  backend the registry has for the objective the strategy is judged on (min-cost flow where it is
  exact, else CP-SAT), its moves level counted from the previous step's answer; knows nothing of
  the steps to come;
* ``horizon`` (and ``lookahead=K``): :func:`models.horizon.horizon.solve_horizon` answers every step at
  once (the horizon objective of docs/design/objectives.md: each step at the optimum of the
  levels above moves, then the least total moves; ``lookahead=K`` an online policy that sees the
  next K steps); each of its step answers is re-scored here, and the moves counted here.

The steps are built one at a time (:func:`problems.trace.iter_steps`) and each is handed on
(``on_step``) as soon as it is solved, so memory holds one step and the previous answer whatever
the number of steps; the horizon, which decides every step at once, holds them all (its own,
lower size limit).  The input of each step is built from arrays (the step's problem, and the
previous answer's owner array: :func:`problems.trace.with_claims`), never by a
round trip of every partition through JSON; what that builds is what parsing
:func:`problems.trace.next_document` gives.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np

from models.options import SolveOptions
from models.registry import STRATEGIES, UsageError, best_exact, check, judged, run
from problems import (
    GroupProblem,
    PlacementProblem,
    ProblemError,
    Result,
    Status,
    assignment_json,
    load_problem,
    owner_from_assignment,
    reassignment_json,
)
from problems.arrays import frozen
from problems.share import is_pairs, share_assignment_json
from problems.trace import (
    MAX_TRACE_SIZE,
    BuiltStep,
    Trace,
    check_size,
    claimed_document,
    iter_steps,
    load_trace,
    partition_map,
    placement_trace_moves,
    placement_with_replicas,
    trace_moves,
    with_claims,
)

#: The solvers of a trace beyond the registry's: the per-step optimum and the horizon.
TRACE_SOLVERS = ("heuristic", "cpsat", "mip", "flow", "step", "horizon")
#: How weak a status is, for the summary (the weakest step's).
_WEAKNESS = {
    Status.OPTIMAL: 0,
    Status.HEURISTIC: 1,
    Status.FEASIBLE: 2,
    Status.UNKNOWN: 3,
    Status.INFEASIBLE: 4,
}
#: The largest trace the horizon solver takes by default (it holds every step at once):
#: partitions summed over the rebalances (``max_size`` raises it).
MAX_HORIZON_SIZE = 10_000_000
#: What a step that the time limit left unsolved says (``info["not_solved"]``).
OUT_OF_TIME = "the time limit ran out before this step"


@dataclass(frozen=True)
class TraceStep:
    """One rebalance of a trace.

    Attributes
    ----------
    step
        Its index (0: the starting problem).
    status
        The answer's status (``heuristic``, ``optimal``, ``feasible``, ``unknown``...).
    objective
        Its objective levels, re-scored by the evaluator on the step's input (empty without an
        answer).
    moves
        The trace moves of this step (:func:`problems.trace.trace_moves`; 0 at step 0).
    rounds, pending
        ``cooperative-sticky``: the rebalances the step took, and the partitions each member
        received after the first round; ``None`` for other strategies.
    runtime
        Seconds the step cost: its input built from the previous answer, the solve, the moves.
    info
        Anything else (violations of an answer that breaks a hard constraint, the backend a
        ``step`` run used, what the solver reported).
    result
        The :class:`problems.Result` of the step (its problem is the step's input).
    """

    step: int
    status: str
    objective: tuple[int, ...]
    moves: int
    rounds: int | None = None
    pending: dict[str, Any] | None = None
    runtime: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)
    result: Result | None = field(default=None, repr=False, compare=False)

    @cached_property
    def assignment(self) -> dict[str, Any] | None:
        """The step's output JSON: an assignment (group) or a reassignment (placement), the
        completed one for ``cooperative-sticky``; ``None`` without an answer (built on first
        access)."""
        answered = _answered(self.result)
        return None if answered is None else _answer_json(*answered)

    def to_json(self) -> dict[str, Any]:
        """The step's line of ``rebalance-lab trace``."""
        placement = self.result is not None and isinstance(self.result.problem, PlacementProblem)
        doc: dict[str, Any] = {
            "step": self.step,
            "reassignment" if placement else "assignment": self.assignment,
            "status": str(self.status),
            "objective": list(self.objective),
            "moves": self.moves,
        }
        if self.rounds is not None:
            doc["rounds"] = self.rounds
            doc["pending"] = self.pending
        doc.update(self.info)
        return doc


@dataclass(frozen=True)
class TraceResult:
    """A strategy's run through a trace.

    Attributes
    ----------
    strategy, solver
        What ran.
    steps
        One :class:`TraceStep` per rebalance, step 0 first.
    moves
        The total trace moves.
    objective_sums
        Each objective level summed over the steps (empty when the steps are judged on different
        objectives, e.g. racks given from some step on: ``info["objectives"]`` names them).
    status
        The weakest step's status.
    bound
        A proven lower bound on the total moves when the horizon solver did not prove its answer
        optimal (``None`` otherwise).
    info
        ``runtime`` (seconds, every step), ``objective`` (the objective's name) and what the
        horizon solver reported.
    """

    strategy: str
    solver: str
    steps: list[TraceStep]
    moves: int
    objective_sums: tuple[int, ...]
    status: str
    bound: int | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """The summary line's object: ``steps`` (T, the steps after step 0), ``moves``,
        ``objective_sums``, ``status`` (and ``bound`` when there is one)."""
        doc: dict[str, Any] = {
            "steps": len(self.steps) - 1,
            "moves": self.moves,
            "objective_sums": list(self.objective_sums),
            "status": str(self.status),
        }
        if self.bound is not None:
            doc["bound"] = self.bound
        return doc

    def lines(self) -> Iterator[dict[str, Any]]:
        """What ``rebalance-lab trace`` prints: every step's object, then ``{"summary": ...}``."""
        for step in self.steps:
            yield step.to_json()
        yield {"summary": self.summary()}


# ------------------------------------------------------------------- helpers
def _answer_json(problem: GroupProblem | PlacementProblem, answer: np.ndarray) -> dict[str, Any]:
    if isinstance(problem, PlacementProblem):
        return reassignment_json(problem, answer)
    if is_pairs(answer):
        return share_assignment_json(problem, answer)
    return dict(assignment_json(problem, answer))


def _answered(
    result: Result | None,
) -> tuple[GroupProblem | PlacementProblem, np.ndarray] | None:
    """The problem and the answer (an array) of a step's result; ``None`` without an answer."""
    if result is None or result.answer is None:
        return None
    problem, answer = result.problem, result.answer
    if not isinstance(problem, (GroupProblem, PlacementProblem)) or not isinstance(
        answer, np.ndarray
    ):
        raise TypeError(f"{result.strategy}: not an answer to a group or a placement")
    return problem, answer


def _member_map(previous: GroupProblem, current: GroupProblem) -> np.ndarray:
    """Previous member position -> current position of the same id (-2: gone); slot -1 -> -1."""
    index = current.member_index
    mapping = np.fromiter(
        (index.get(m, -2) for m in previous.members), dtype=np.int64, count=previous.num_members
    )
    return np.append(mapping, -1)


def group_moves(
    previous: GroupProblem, before: np.ndarray, current: GroupProblem, after: np.ndarray
) -> int:
    """:func:`problems.trace.trace_moves` of two owner arrays: partitions owned in ``before``
    (answering ``previous``) that another member, by id, owns in ``after``."""
    to_partition = partition_map(previous, current)
    owner = np.asarray(before, dtype=np.int64)
    held = (owner >= 0) & (to_partition >= 0)
    was = _member_map(previous, current)[owner[held]]
    now = np.asarray(after, dtype=np.int64)[to_partition[held]]
    return int(np.count_nonzero((now >= 0) & (now != was)))


def placement_moves(
    previous: PlacementProblem,
    before: np.ndarray,
    current: PlacementProblem,
    after: np.ndarray,
) -> int:
    """:func:`problems.trace.placement_trace_moves` of two replica arrays: replicas of partitions
    of ``previous`` on a broker that did not hold the partition in ``before``."""
    if not _prefix(previous, current):
        return placement_trace_moves(
            reassignment_json(previous, before), reassignment_json(current, after)
        )
    n = previous.num_partitions
    factors = np.diff(previous.replica_start)
    width = int(factors.max(initial=0))
    old = _padded(np.asarray(before), previous.replica_start[: n + 1], width)
    new = _padded(np.asarray(after), current.replica_start[: n + 1], width)
    present = new >= 0
    held = (new[:, :, None] == old[:, None, :]).any(axis=2)
    return int(np.count_nonzero(present & ~held))


def _padded(flat: np.ndarray, start: np.ndarray, width: int) -> np.ndarray:
    """The replicas of each partition as rows of ``width`` (-1 after a partition's last)."""
    rows = len(start) - 1
    table = np.full((rows, width), -1, dtype=np.int64)
    factors = np.diff(start)
    if rows == 0:
        return table
    column = np.arange(int(start[-1] - start[0])) - np.repeat(start[:-1] - start[0], factors)
    table[np.repeat(np.arange(rows), factors), column] = flat[int(start[0]) : int(start[-1])]
    return table


def _prefix(previous: PlacementProblem, current: PlacementProblem) -> bool:
    """Whether ``previous``'s partitions are ``current``'s first ones, in order, with the same
    replication factors (a placement trace only adds partitions at the end)."""
    n = previous.num_partitions
    return (
        current.num_partitions >= n
        and current.topics[:n] == previous.topics
        and bool(np.array_equal(current.partitions[:n], previous.partitions))
        and bool(np.array_equal(current.replica_start[: n + 1], previous.replica_start))
    )


def _with_replicas(
    problem: PlacementProblem, previous: PlacementProblem, replicas: np.ndarray
) -> PlacementProblem:
    """``problem`` whose partitions of ``previous`` sit where ``replicas`` put them."""
    if not _prefix(previous, problem):  # never for a trace's steps; the general route
        return placement_with_replicas(problem, previous, replicas)
    own = problem.replica_brokers[int(previous.replica_start[-1]) :]
    flat = frozen(np.concatenate([np.asarray(replicas, dtype=np.int64), own]))
    return replace(problem, replica_brokers=flat)


# --------------------------------------------------------------------- runner
class _Runner:
    """Steps a trace: the input of each step from the previous answer, the answer, the moves."""

    def __init__(self, trace: Trace, strategy: str) -> None:
        self.trace = trace
        self.strategy = strategy

    def input(
        self, k: int, step: BuiltStep, previous: Result | None
    ) -> GroupProblem | PlacementProblem:
        """Step ``k``'s problem (built as ``step``) with ``previous`` (step ``k - 1``'s answer)
        as the claims."""
        if k == 0:
            start = load_problem(self.trace.start)
            assert isinstance(start, (GroupProblem, PlacementProblem))  # the trace checked it
            return start
        base = step.problem
        answered = _answered(previous)
        if answered is None:
            return base
        before, answer = answered
        if isinstance(base, PlacementProblem):
            assert isinstance(before, PlacementProblem)
            return _with_replicas(base, before, answer)
        assert isinstance(before, GroupProblem)
        if is_pairs(answer):  # a share answer: through the documents
            doc = _answer_json(before, answer)
            problem = load_problem(claimed_document(self.trace, k, step, doc))
            assert isinstance(problem, GroupProblem)
            return problem
        cooperative = self.strategy == "cooperative-sticky"  # claims as such a consumer sends them
        return with_claims(base, before, answer, k, step.fresh, cooperative=cooperative)

    def moves(self, previous: Result | None, current: Result) -> int:
        old, new = _answered(previous), _answered(current)
        if old is None or new is None:
            return 0
        (before, was), (after, now) = old, new
        if isinstance(before, PlacementProblem) and isinstance(after, PlacementProblem):
            return placement_moves(before, was, after, now)
        assert isinstance(before, GroupProblem) and isinstance(after, GroupProblem)
        if is_pairs(was) or is_pairs(now):
            return trace_moves(_answer_json(before, was), _answer_json(after, now))
        return group_moves(before, was, after, now)


def _step(
    k: int,
    result: Result,
    moves: int,
    runtime: float,
    extra: dict[str, Any] | None = None,
) -> TraceStep:
    info: dict[str, Any] = dict(extra or {})
    evaluation = result.evaluation
    if evaluation is not None and not evaluation.valid:
        info["violations"] = list(evaluation.violations)
    if result.bound is not None and result.status != Status.OPTIMAL:
        info["bound"] = list(result.bound)
    rounds = result.info.get("rounds") if result.strategy == "cooperative-sticky" else None
    pending = result.info.get("pending") if rounds is not None else None
    for key in ("ignored_options", "epoch"):
        if key in result.info:
            info[key] = result.info[key]
    return TraceStep(
        step=k,
        status=str(result.status),
        objective=tuple(result.objective),
        moves=moves,
        rounds=rounds,
        pending=pending,
        runtime=runtime,
        info=info,
        result=result,
    )


def _unsolved(k: int) -> TraceStep:
    """Step ``k`` not solved: the time limit ran out before it."""
    return TraceStep(k, str(Status.UNKNOWN), (), 0, info={"not_solved": OUT_OF_TIME})


def _light(step: TraceStep) -> TraceStep:
    """``step`` without its answer (its problem, assignment and ``pending``): what a run that
    does not keep answers holds of a step once it is handed on."""
    return replace(step, pending=None, result=None)


def _summarise(
    strategy: str,
    solver: str,
    steps: list[TraceStep],
    names: set[str],
    bound: int | None = None,
    info: dict[str, Any] | None = None,
) -> TraceResult:
    """The run's result; ``names``: the objectives its steps were judged on."""
    statuses = [Status(s.status) for s in steps]
    weakest = max(statuses, key=_WEAKNESS.__getitem__)
    names = set(names)
    answered = [s.objective for s in steps if s.objective]
    sums: tuple[int, ...] = ()
    extra = dict(info or {})
    if len(names) == 1 and answered and len({len(o) for o in answered}) == 1:
        sums = tuple(int(sum(levels)) for levels in zip(*answered))
        extra.setdefault("objective", names.pop())
    elif len(names) > 1:
        extra["objectives"] = sorted(names)
    extra.setdefault("runtime", sum(s.runtime for s in steps))
    return TraceResult(
        strategy=strategy,
        solver=solver,
        steps=steps,
        moves=sum(s.moves for s in steps),
        objective_sums=sums,
        status=str(weakest),
        bound=bound,
        info=extra,
    )


def _check_family(trace: Trace, strategy: str) -> None:
    entry = STRATEGIES.get(strategy)
    if entry is None:
        raise UsageError(
            f"--strategy {strategy} is not a strategy (strategies: {', '.join(STRATEGIES)})"
        )
    want = "placement" if trace.is_placement else "group"
    if entry.family != want:
        raise ProblemError(
            "kind",
            f"a {trace.kind} needs a {want} strategy, not --strategy {strategy}",
            trace.name,
        )


def step_backend(strategy: str, problem: GroupProblem | PlacementProblem) -> tuple[str, str]:
    """The ``(strategy, solver)`` whose exact backend answers ``strategy``'s objective on
    ``problem`` (the ``step`` solver): the objective's own strategy, its best backend."""
    return best_exact(STRATEGIES[strategy].objective_on(problem))


# ----------------------------------------------------------------------- API
def trace(
    trace: Trace | str | os.PathLike[str] | bytes | dict[str, Any],
    strategy: str,
    solver: str | None = None,
    *,
    time_limit: float | None = None,
    lookahead: int | None = None,
    max_size: int | None = None,
    on_step: Callable[[TraceStep], None] | None = None,
    keep_answers: bool = True,
    **options: Any,
) -> TraceResult:
    """Run ``strategy`` through ``trace``, every step as real members would see it.

    The steps are built one at a time as they are solved (the horizon solver, which decides
    every step at once, holds them all): memory holds the step being solved and the previous
    answer, whatever the number of steps, when ``keep_answers`` is false.

    Parameters
    ----------
    trace
        A :class:`problems.trace.Trace`, or what :func:`problems.trace.load_trace` reads.
    strategy
        A key of :data:`models.registry.STRATEGIES` of the trace's family.
    solver
        ``heuristic`` (``None``: the default, or ``horizon`` with a ``lookahead``), ``cpsat``,
        ``mip``, ``flow`` (each step alone, through :func:`models.solve`), ``step`` (the
        strategy's exact per-step optimum) or ``horizon`` (the whole trace at once; with
        ``lookahead=K``, an online policy seeing K steps ahead).
    time_limit
        Seconds for the whole run (every solver but ``heuristic``; default
        :data:`models.options.DEFAULT_TIME_LIMIT`): every step's exact solve gets the time left,
        and the horizon's per-step levels and its model share it.  The steps the limit leaves
        unsolved are ``unknown``, without an answer (``info["not_solved"]``).
    lookahead
        The steps ahead the online policy sees (``horizon`` only; implies it).
    max_size
        The largest trace taken: partitions summed over its rebalances (default
        :data:`problems.trace.MAX_TRACE_SIZE`, and :data:`MAX_HORIZON_SIZE` for the horizon
        solver); a larger one is refused (:class:`ProblemError`).
    on_step
        Called with every step as soon as it is solved (the command line prints it then).
    keep_answers
        Whether the result keeps every step's answer; if not, its steps keep their status,
        objective, moves and rounds only (each step's answer is handed to ``on_step``).
    **options
        The other options of :func:`models.solve` (``variant``, ``seed``, ``workers``...).

    Raises
    ------
    ProblemError
        A malformed or too large trace, or a strategy of the other family (named ``kind``).
    UsageError
        An unknown strategy or solver, or an option the runner does not take.
    """
    loaded = (
        trace
        if isinstance(trace, Trace)
        else load_trace(trace, max_size=MAX_TRACE_SIZE if max_size is None else max_size)
    )
    if max_size is not None:
        _sized(loaded, max_size)
    _check_family(loaded, strategy)
    if solver is not None and solver not in TRACE_SOLVERS:
        raise UsageError(
            f"--solver {solver} is not a solver of a trace (solvers: {', '.join(TRACE_SOLVERS)})"
        )
    if lookahead is not None:
        if solver not in (None, "horizon"):
            raise UsageError(f"--lookahead is an option of --solver horizon, not {solver}")
        if type(lookahead) is not int or lookahead < 0:
            raise UsageError(f"--lookahead must be an integer >= 0, got {lookahead!r}")
        solver = "horizon"
    solver = solver or "heuristic"
    opts = SolveOptions.of(time_limit=time_limit, **options)
    started = time.perf_counter()
    if solver == "horizon":
        _sized(loaded, MAX_HORIZON_SIZE if max_size is None else max_size, "the horizon solver's")
        return _horizon(loaded, strategy, opts, lookahead, on_step, keep_answers)
    # ``step``: a variant names the strategy's heuristic (checked there) and reaches the exact
    # backend only where it has the variant too (lag-aware's ``sticky``).
    if solver == "step":
        check(strategy, "heuristic", replace(opts, extra={}))
    else:
        check(strategy, solver, opts)
    deadline = None if solver == "heuristic" else started + opts.time_limit
    runner = _Runner(loaded, strategy)
    steps: list[TraceStep] = []
    names: set[str] = set()
    previous: Result | None = None
    for k, built in enumerate(iter_steps(loaded)):
        begun = time.perf_counter()
        if deadline is not None and k > 0 and begun >= deadline:
            for late in range(k, len(loaded)):
                _hand_on(_unsolved(late), steps, on_step, keep_answers)
            break
        step_opts = opts if deadline is None else replace(opts, time_limit=deadline - begun)
        problem = runner.input(k, built, previous)
        extra: dict[str, Any] = {}
        if solver == "step":
            exact, backend = step_backend(strategy, problem)
            entry = STRATEGIES[exact].exact[backend]
            kept = step_opts if opts.variant in entry.variants else replace(step_opts, variant=None)
            raw = run(problem, exact, backend, kept)
            result = replace_strategy(raw, strategy)
            extra["backend"] = f"{exact}/{backend}"
        else:
            result = run(problem, strategy, solver, step_opts)
        moves = runner.moves(previous, result)
        names.add(STRATEGIES[strategy].objective_on(problem))
        _hand_on(
            _step(k, result, moves, time.perf_counter() - begun, extra),
            steps,
            on_step,
            keep_answers,
        )
        if result.answer is not None:  # else (no answer in time) the last assignment stands
            previous = result
    return _summarise(strategy, solver, steps, names)


def _sized(loaded: Trace, limit: int, whose: str = "") -> None:
    """``check_size`` naming the trace's file (``whose``: the limit's owner, for its message)."""
    try:
        check_size(loaded, limit, whose)
    except ProblemError as error:
        raise error.with_source(loaded.name) from None


def _hand_on(
    step: TraceStep,
    steps: list[TraceStep],
    on_step: Callable[[TraceStep], None] | None,
    keep_answers: bool,
) -> None:
    """Give ``step`` to ``on_step`` and keep it (without its answer unless ``keep_answers``)."""
    if on_step is not None:
        on_step(step)
    steps.append(step if keep_answers else _light(step))


def replace_strategy(result: Result, strategy: str) -> Result:
    """``result`` judged as ``strategy``'s answer (the same answer, status, bound and info)."""
    if result.strategy == strategy:
        return result
    return judged(
        Result(
            result.problem,
            strategy,
            result.answer,
            result.status,
            result.bound,
            dict(result.info),
            result.shown,
        ),
        strategy,
    )


def _horizon(
    loaded: Trace,
    strategy: str,
    opts: SolveOptions,
    lookahead: int | None,
    on_step: Callable[[TraceStep], None] | None = None,
    keep_answers: bool = True,
) -> TraceResult:
    """The horizon solver's answer, re-scored step by step, moves counted here."""
    try:
        from models.horizon.horizon import solve_horizon  # type: ignore[import-not-found,unused-ignore]
    except ModuleNotFoundError as error:
        if error.name != "models.horizon.horizon":
            raise
        raise UsageError("--solver horizon is not available in this installation") from None

    started = time.perf_counter()
    try:
        answer = solve_horizon(loaded, strategy, opts, lookahead)
    except ProblemError as error:  # a refusal: it names the trace's file
        raise (error if error.source else error.with_source(loaded.name)) from None
    elapsed = time.perf_counter() - started
    runner = _Runner(loaded, strategy)
    status = Status(answer.status)
    steps: list[TraceStep] = []
    names: set[str] = set()
    previous: Result | None = None
    assignments = list(answer.assignments) or [None] * len(loaded)  # none: no answer at all
    if len(assignments) != len(loaded):
        raise ValueError(f"the horizon solver answered {len(assignments)} steps of {len(loaded)}")
    for k, (built, doc) in enumerate(zip(iter_steps(loaded), assignments)):
        begun = time.perf_counter()
        problem = runner.input(k, built, previous)
        if doc is None:
            result = Result(problem, strategy, None, status)
        elif isinstance(problem, PlacementProblem):
            result = Result(problem, strategy, _replicas_of(problem, doc), status)
        else:
            owner = owner_from_assignment(problem, doc, f"{loaded.name} (horizon step {k})")
            result = Result(problem, strategy, owner, status)
        result = judged(result, strategy)
        moves = runner.moves(previous, result)
        names.add(STRATEGIES[strategy].objective_on(problem))
        _hand_on(_step(k, result, moves, time.perf_counter() - begun), steps, on_step, keep_answers)
        if result.answer is not None:
            previous = result
    name = "horizon" if lookahead is None else f"lookahead={lookahead}"
    info = {"horizon_runtime": elapsed, **dict(answer.info)}
    if lookahead is not None:
        info["lookahead"] = lookahead
    bound = answer.bound if status != Status.OPTIMAL else None
    return _summarise(strategy, name, steps, names, bound, info)


def _replicas_of(problem: PlacementProblem, doc: dict[str, Any]) -> np.ndarray:
    """A reassignment JSON as ``problem``'s replicas array (partitions in its order)."""
    parts = {(p["topic"], p["partition"]): p["replicas"] for p in doc.get("partitions", [])}
    flat: list[int] = []
    for key in zip(problem.topics, problem.partitions.tolist()):
        chosen = parts.get(key)
        if chosen is None:
            raise ProblemError(
                "partitions", f"the horizon answer has no replicas for {key[0]}-{key[1]}"
            )
        flat.extend(int(b) for b in chosen)
    return np.array(flat, dtype=np.int64)


def trace_answers(
    trace: Trace | str | os.PathLike[str] | bytes | dict[str, Any],
    judged_on: str,
    answer: Callable[[GroupProblem | PlacementProblem, float | None], Result],
    name: str,
    *,
    time_limit: float | None = None,
    on_step: Callable[[TraceStep], None] | None = None,
    keep_answers: bool = True,
) -> TraceResult:
    """Run an outside assignor through ``trace``: ``answer(problem, seconds)`` answers each step
    (a plugin, docs/plugins.md), judged on ``judged_on``; a step without an answer keeps the last
    assignment, as a solver's step does.  The result's strategy is ``name``, its solver ``plugin``.

    ``time_limit`` is one budget for the whole trace, as :func:`trace`'s: each call gets the
    seconds left (``seconds``; ``None`` without a budget), and the steps after it runs out are
    ``unknown`` without an answer (``info["not_solved"]``), not asked.  The steps are built,
    answered and handed on one at a time (``on_step``, ``keep_answers``: as :func:`trace`'s)."""
    loaded = trace if isinstance(trace, Trace) else load_trace(trace)
    _check_family(loaded, judged_on)
    runner = _Runner(loaded, judged_on)
    steps: list[TraceStep] = []
    names: set[str] = set()
    previous: Result | None = None
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    for k, built in enumerate(iter_steps(loaded)):
        started = time.perf_counter()
        if deadline is not None and k > 0 and started >= deadline:
            for late in range(k, len(loaded)):
                _hand_on(_unsolved(late), steps, on_step, keep_answers)
            break
        problem = runner.input(k, built, previous)
        result = answer(problem, None if deadline is None else deadline - started)
        moves = runner.moves(previous, result)
        names.add(STRATEGIES[judged_on].objective_on(problem))
        extra = {"error": result.info["error"]} if "error" in result.info else None
        step = _step(k, result, moves, time.perf_counter() - started, extra)
        _hand_on(step, steps, on_step, keep_answers)
        if result.answer is not None:
            previous = result
    return replace(_summarise(judged_on, "plugin", steps, names), strategy=name)
