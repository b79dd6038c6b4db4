"""The exact optimum over a whole trace (the horizon), and the online lookahead policy.

DESIGN "Over a trace": the horizon objective of a strategy holds every step at the optimum of the
strategy's levels above moves (each step's level 1, then level 2, ... taken step by step), then
asks for the fewest trace moves in total (:func:`problems.trace.trace_moves`: by member id; every
partition of a leaving member moves; new partitions do not count).  Baselines are judged as for
one step (``sticky``, or ``rack-aware`` where the step has racks), placements on the replica
objective.

Which model answers (docs/design/formulations.md, "Horizon"):

* ``sticky`` (and the baselines judged on it) when every step's members subscribe the same topics
  and no partition stops being assignable: the count flow of :mod:`models.horizon.flow`,
  polynomial, always ``optimal``;
* every other group objective (subscriptions that differ, racks, lags, partitions that disappear):
  :mod:`models.horizon.cpsat`, the steps' levels fixed by exact per-step solves first
  (:mod:`models.horizon.levels`); ``optimal`` only when CP-SAT proves the moves and every step's
  levels are proven, else ``feasible`` with the proven bound;
* placements: :mod:`models.horizon.replica`.

``lookahead=K`` is an online policy: at step ``k`` it knows steps ``k .. k + K``, solves that
window's horizon problem from the committed answer of step ``k - 1``, and commits step ``k``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from models.horizon import cpsat as cpsat_horizon
from models.horizon import flow as flow_horizon
from models.horizon import replica as horizon_replica
from models.horizon.levels import judged_on, step_policy
from models.horizon.steps import (
    GroupSteps,
    PlacementSteps,
    group_steps,
    placement_steps,
    wide_moves,
)
from models.options import SolveOptions
from models.registry import STRATEGIES
from problems import (
    GroupProblem,
    PlacementProblem,
    ProblemError,
    Status,
    assignment_json,
    number_owners,
    reassignment_json,
)
from problems.trace import Trace, step_problems


@dataclass(frozen=True)
class HorizonAnswer:
    """The horizon's answer to a trace.

    Attributes
    ----------
    assignments
        Per step 0..T, the assignment JSON (groups) or the reassignment JSON (placements);
        empty when there is no answer (``infeasible``).
    status
        ``optimal`` (levels and total moves proven), ``feasible`` (a valid answer; ``bound``
        holds what is proven) or ``infeasible``; a lookahead policy is ``feasible`` (it is not
        the horizon's optimum), with ``bound`` ``None``.
    bound
        A proven lower bound on the total trace moves (equal to them when ``optimal``).
    info
        ``method`` (``flow``, ``cpsat``, ``flow+matching``), ``moves`` (total) and
        ``step_moves``, ``seconds``, and per model what it measured.
    """

    assignments: list[dict[str, Any] | None]
    status: str
    bound: int | None
    info: dict[str, Any] = field(default_factory=dict)


def solve_horizon(
    trace: Trace,
    strategy: str,
    options: SolveOptions | None = None,
    lookahead: int | None = None,
) -> HorizonAnswer:
    """The horizon optimum of ``strategy`` over ``trace``, or the lookahead policy (``lookahead``
    steps ahead).

    ``options.time_limit`` is one budget for all of it: the per-step solves that fix the steps'
    levels and the CP-SAT horizon model share it (with ``lookahead``, every window gets an equal
    share of the time left; within a window the steps' levels take at most
    :data:`LEVELS_SHARE` of the window's time, the model the rest).  Once it has run out, every
    per-step solve returns its backend's best heuristic answer (unproven) and no model is solved:
    the answer is then the step policy's, ``feasible``.  ``workers``, ``seed`` and ``log`` are
    CP-SAT's.  The flows ignore them.

    Raises
    ------
    ProblemError
        A strategy without a horizon model (``share``; ``stream-join`` where members subscribe
        different topics or partition numbers disappear), or a placement strategy on a group
        trace and the reverse.
    """
    options = SolveOptions() if options is None else options
    if lookahead is not None and lookahead < 0:
        raise ProblemError("lookahead", f"must be >= 0, not {lookahead}")
    started = time.perf_counter()
    problems = step_problems(trace)
    if strategy not in STRATEGIES:
        raise ProblemError("strategy", f"{strategy} is not a strategy")
    placement = STRATEGIES[strategy].family == "placement"
    if placement != trace.is_placement:
        family = "placement" if placement else "group"
        raise ProblemError("strategy", f"{strategy} is a {family} strategy, not for a {trace.kind}")
    if placement:
        answer = _placement(placement_steps([_placed(p) for p in problems]), lookahead)
    else:
        until = started + options.time_limit
        steps = group_steps([_grouped(p) for p in problems])
        answer = _group(steps, strategy, options, lookahead, until)
    answer.info["seconds"] = time.perf_counter() - started
    return answer


def _grouped(problem: GroupProblem | PlacementProblem) -> GroupProblem:
    assert isinstance(problem, GroupProblem)
    return problem


def _placed(problem: GroupProblem | PlacementProblem) -> PlacementProblem:
    assert isinstance(problem, PlacementProblem)
    return problem


# ------------------------------------------------------------------ groups
@dataclass(frozen=True)
class _Window:
    """One solved window: trace-wide owners per step, status, bound on its moves, its method."""

    owners: list[np.ndarray]
    status: str
    bound: int | None
    method: str
    info: dict[str, Any] = field(default_factory=dict)


#: The share of a window's time its per-step solves (the steps' levels) may take.
LEVELS_SHARE = 0.5


def _solve_group_window(
    steps: GroupSteps,
    strategy: str,
    options: SolveOptions,
    previous: tuple[GroupProblem, np.ndarray] | None,
    wide_previous: np.ndarray | None,
    first_step: int,
    until: float,
) -> _Window:
    """The horizon of one window (all of it when there is no lookahead): ``previous`` is the
    committed step before it (its problem and owner), ``wide_previous`` that owner trace-wide;
    ``until`` the window's deadline (``time.perf_counter()``)."""
    kinds = judged_on(steps, strategy)
    if all(kind == "sticky" for kind in kinds):
        reason = flow_horizon.refusal(steps, wide_previous)
        if reason is None:
            owners, moves = flow_horizon.solve(steps, wide_previous)
            return _Window(owners, Status.OPTIMAL, moves, "flow")
    elif all(kind == "stream-join" for kind in kinds):
        numbers = None if previous is None else _numbers(steps, previous)
        reason = flow_horizon.stream_join_refusal(steps, numbers)
        if reason is None:
            owners, moves = flow_horizon.solve_stream_join(steps, numbers)
            return _Window(owners, Status.OPTIMAL, moves, "flow")
        raise ProblemError("strategy", f"{strategy}: no exact horizon model here ({reason})")
    else:
        reason = "the steps are judged on " + ", ".join(sorted(set(kinds)))
    now = time.perf_counter()
    levels_until = now + LEVELS_SHARE * max(0.0, until - now)
    levels = step_policy(steps, strategy, options, previous, first_step, levels_until)
    hint = [steps.to_wide(k, step.owner) for k, step in enumerate(levels)]
    proven = all(step.proven for step in levels)
    info: dict[str, Any] = {"flow_refused": reason, "levels_proven": proven}
    left = until - time.perf_counter()
    if left <= 0:  # no time for the model: the step policy, its moves unproven
        info["not_solved"] = "the time limit ran out before the horizon model"
        return _Window(hint, Status.FEASIBLE, None, "step", info)
    solved = cpsat_horizon.solve(
        steps, levels, wide_previous, hint, replace(options, time_limit=left)
    )
    if solved.owners is None:  # out of time before any answer: the step policy, unproven
        return _Window(hint, Status.FEASIBLE, solved.bound if proven else None, "step", info)
    status = solved.status if proven else Status.FEASIBLE
    return _Window(solved.owners, status, solved.bound if proven else None, "cpsat", info)


def _numbers(steps: GroupSteps, previous: tuple[GroupProblem, np.ndarray]) -> flow_horizon.Numbers:
    """The committed stream-join answer before a window: its numbers' owners (trace-wide) and
    the topics subscribed then."""
    problem, owner = previous
    index = {m: i for i, m in enumerate(steps.member_ids)}
    wide = np.append(np.array([index[m] for m in problem.members], dtype=np.int64), -1)
    numbers = wide[number_owners(problem, np.asarray(owner, dtype=np.int64))]
    subscribed = problem.subscribes.any(axis=0) & (problem.partition_counts > 0)
    return numbers, [problem.topics[t] for t in np.flatnonzero(subscribed)]


def _group(
    steps: GroupSteps,
    strategy: str,
    options: SolveOptions,
    lookahead: int | None,
    until: float,
) -> HorizonAnswer:
    last = len(steps) - 1
    if lookahead is None or lookahead >= last:
        window = _solve_group_window(steps, strategy, options, None, None, 0, until)
        owners = window.owners
        status, bound, method, info = window.status, window.bound, window.method, window.info
    else:
        owners, methods, proven = [], set(), 0
        previous: tuple[GroupProblem, np.ndarray] | None = None
        for k in range(last + 1):
            part = steps.window(k, min(k + lookahead, last))
            wide = owners[-1] if owners else None
            now = time.perf_counter()
            share = now + max(0.0, until - now) / (last + 1 - k)  # the time left, shared
            window = _solve_group_window(part, strategy, options, previous, wide, k, share)
            owners.append(window.owners[0])
            methods.add(window.method)
            proven += window.status == Status.OPTIMAL
            previous = (steps.problems[k], steps.to_local(k, window.owners[0]))
        status, bound, method = Status.FEASIBLE, None, "+".join(sorted(methods))
        info = {"lookahead": lookahead, "windows_proven": proven, "windows": last + 1}
    moves = [0] + [wide_moves(owners[k - 1], owners[k]) for k in range(1, last + 1)]
    assignments: list[dict[str, Any] | None] = [
        assignment_json(steps.problems[k], steps.to_local(k, owners[k])) for k in range(last + 1)
    ]
    if status == Status.OPTIMAL and bound != sum(moves):  # the models count what is re-scored
        raise RuntimeError(f"horizon {method}: {sum(moves)} moves, its optimum says {bound}")
    if bound is not None:
        bound = min(bound, sum(moves))
    return HorizonAnswer(
        assignments,
        str(status),
        bound,
        {**info, "method": method, "moves": sum(moves), "step_moves": moves},
    )


# --------------------------------------------------------------- placements
def _placement(steps: PlacementSteps, lookahead: int | None) -> HorizonAnswer:
    last = len(steps) - 1
    if lookahead is None or lookahead >= last:
        replicas, bound, proven, info = horizon_replica.solve(steps, None)
        status = Status.OPTIMAL if proven else Status.FEASIBLE
        step_moves = info.pop("step_moves")
        assert isinstance(step_moves, list)
        moves = [0, *step_moves]
    else:
        replicas, windows_proven, moves = [], 0, [0]
        previous: horizon_replica.Placed | None = None
        info = {"lookahead": lookahead, "windows": last + 1}
        for k in range(last + 1):
            part = steps.window(k, min(k + lookahead, last))
            answer, _, proven, _ = horizon_replica.solve(part, previous)
            if not answer:
                raise RuntimeError(f"step {k}: the placement window was not realised")
            if previous is not None:
                moves.append(horizon_replica.trace_moves_into(steps, k, previous, answer[0]))
            replicas.append(answer[0])
            windows_proven += proven
            previous = horizon_replica.placed(steps, k, answer[0])
        info["windows_proven"] = windows_proven
        status, bound = Status.FEASIBLE, None
    if not replicas:
        return HorizonAnswer([], Status.INFEASIBLE, None, {**info, "method": "flow+matching"})
    assignments: list[dict[str, Any] | None] = [
        reassignment_json(steps.problems[k], replicas[k]) for k in range(last + 1)
    ]
    return HorizonAnswer(
        assignments,
        str(status),
        bound,
        {**info, "method": "flow+matching", "moves": sum(moves), "step_moves": moves},
    )
