"""The ``streams`` objective: an answer's hard constraints and its levels (docs/strategies/streams.md)."""

from __future__ import annotations

from math import lcm
from typing import Any

import numpy as np

from problems.streams.problem import (
    STREAMS_LEVELS,
    IntArray,
    StreamsAssignment,
    StreamsProblem,
)
from problems.verdict import Evaluation, examples, repeated


# ================================================================= evaluation
def streams_shape_problem(problem: StreamsProblem, answer: Any) -> str | None:
    """Why ``answer`` is not a :class:`StreamsAssignment` of ``problem`` at all (``None``: it is)."""
    if not isinstance(answer, StreamsAssignment):
        return f"a streams answer is a StreamsAssignment, got {type(answer).__name__}"
    if answer.active.shape != (problem.n_tasks,):
        return (
            f"answer has {answer.active.size} active owners, the group has {problem.n_tasks} tasks"
        )
    for kind, replicas in (("standby", answer.standby), ("warmup", answer.warmup)):
        if replicas.ndim != 2 or replicas.shape[1] != 2:
            return f"{kind} replicas must be (task, member) pairs of shape (K, 2), got {replicas.shape}"
        if len(replicas) and (
            replicas[:, 0].min() < 0
            or replicas[:, 0].max() >= problem.n_tasks
            or replicas[:, 1].min() < 0
            or replicas[:, 1].max() >= problem.num_members
        ):
            return f"{kind} replicas hold tasks or members that do not exist"
    if np.any((answer.active < -1) | (answer.active >= problem.num_members)):
        return "active owners hold positions that are not members"
    return None


def required_standbys(problem: StreamsProblem) -> IntArray:
    """The standby replicas each task must have: ``min(num_standby_replicas, processes - 1)`` for
    a task of a stateful subtopology (one per process besides the active's, as many as
    configured), none for a stateless one.  Kafka's assignors place that many whenever a process
    without a copy of the task is left, which this count guarantees; fewer would cost availability
    that no level of the objective measures (a standby's only cost is its balance, level 3)."""
    per_task = min(problem.configs.num_standby_replicas, max(problem.num_processes - 1, 0))
    return np.where(problem.task_stateful, per_task, 0).astype(np.int64)


def streams_validity(problem: StreamsProblem, answer: StreamsAssignment) -> list[str]:
    """The hard constraints of the ``streams`` objective (one line per broken kind, a few examples)."""
    violations: list[str] = []
    name = problem.task_name
    violations += examples(
        np.flatnonzero(answer.active < 0), lambda t: f"task {name(t)} has no active member"
    )
    # copies of each task per process: active, standbys and warm-ups together
    assigned = np.flatnonzero(answer.active >= 0)
    copy_task = np.concatenate([assigned, answer.standby[:, 0], answer.warmup[:, 0]])
    copy_member = np.concatenate(
        [answer.active[assigned], answer.standby[:, 1], answer.warmup[:, 1]]
    )
    copy_process = problem.member_process[copy_member] if len(copy_member) else copy_member
    keys = copy_task * max(problem.num_processes, 1) + copy_process
    violations += examples(
        repeated(keys),
        lambda k: (
            f"process {problem.processes[k % max(problem.num_processes, 1)]} holds task "
            f"{name(k // max(problem.num_processes, 1))} more than once (active, standby, warm-up)"
        ),
    )
    for kind, replicas in (("standby", answer.standby), ("warm-up", answer.warmup)):
        stateless = (
            np.flatnonzero(~problem.task_stateful[replicas[:, 0]])
            if len(replicas)
            else replicas[:0, 0]
        )

        def replica(i: int, r: IntArray = replicas, k: str = kind) -> str:
            return (
                f"task {name(int(r[i, 0]))} of a stateless subtopology has a {k} replica on "
                f"{problem.members[int(r[i, 1])]}"
            )

        violations += examples(stateless, replica)
    standbys = np.bincount(answer.standby[:, 0], minlength=problem.n_tasks)
    required = required_standbys(problem)
    violations += examples(
        np.flatnonzero(standbys != required),
        lambda t: (
            f"task {name(t)} has {int(standbys[t])} standby replicas, not "
            f"min(num_standby_replicas, processes - 1) = {int(required[t])}"
        ),
    )
    warmups = len(answer.warmup)
    if warmups > problem.configs.max_warmup_replicas:
        violations.append(
            f"{warmups} warm-up replicas, more than max_warmup_replicas = {problem.configs.max_warmup_replicas}"
        )
    return violations


def _weighted_squares(counts: IntArray, threads: IntArray) -> int:
    """``sum(L * c**2 / threads)`` with ``L`` the lcm of the thread counts (exact integers)."""
    if len(counts) == 0:
        return 0
    scale = lcm(*{int(t) for t in threads.tolist()})
    return sum(scale // t * c * c for c, t in zip(counts.tolist(), threads.tolist()))


def streams_levels(problem: StreamsProblem, answer: StreamsAssignment) -> tuple[int, ...]:
    """The levels of :data:`STREAMS_LEVELS` of a well-shaped answer (docs/strategies/streams.md)."""
    assigned = np.flatnonzero(answer.active >= 0)
    owner = answer.active[assigned]
    process = problem.member_process[owner]
    restore = int(problem.restore_cost[process, assigned].sum()) if len(assigned) else 0
    actives = np.bincount(owner, minlength=problem.num_members).astype(np.int64)
    standbys = np.bincount(answer.standby[:, 1], minlength=problem.num_members).astype(np.int64)
    traffic = cross_rack_traffic(problem, answer)
    prev = problem.prev_active
    had = prev >= 0
    active_moves = int(np.count_nonzero(answer.active[had] != prev[had]))
    # new standby copies: pairs whose member held the task in no role before
    width = max(problem.num_members, 1)
    before = np.concatenate(
        [
            np.flatnonzero(had) * width + prev[had],
            problem.prev_standby[:, 0] * width + problem.prev_standby[:, 1],
            problem.prev_warmup[:, 0] * width + problem.prev_warmup[:, 1],
        ]
    )
    now = answer.standby[:, 0] * width + answer.standby[:, 1]
    standby_moves = int(np.count_nonzero(~np.isin(now, before)))
    return (
        restore,
        _weighted_squares(actives, problem.threads),
        _weighted_squares(standbys, problem.threads),
        traffic,
        active_moves,
        standby_moves,
    )


def cross_rack_traffic(problem: StreamsProblem, answer: StreamsAssignment) -> int:
    """KIP-925's cross-rack traffic of the active tasks: source partitions (with known replica
    racks) of a task whose active member has a rack holding none of the partition's replicas.
    A partition listed with no racks has no known replica racks: it never counts (Kafka computes
    no traffic cost for it: its rack-aware assignor is not enabled then)."""
    if not problem.has_racks:
        return 0
    owners = answer.active[problem.source_task]
    total = 0
    for owner, racks in zip(owners.tolist(), problem.source_racks):
        rack = problem.racks[owner] if owner >= 0 else None
        if rack is not None and racks and rack not in racks:
            total += 1
    return total


def evaluate_streams(problem: StreamsProblem, answer: Any) -> Evaluation:
    """Check ``answer`` against the ``streams`` objective's hard constraints and score it.

    An answer of the wrong shape is invalid with no levels; an answer breaking a hard constraint
    is invalid and still scored (so that a report can show it).
    """
    shape = streams_shape_problem(problem, answer)
    if shape is not None:
        return Evaluation(False, (shape,), (), STREAMS_LEVELS)
    violations = streams_validity(problem, answer)
    return Evaluation(
        not violations, tuple(violations), streams_levels(problem, answer), STREAMS_LEVELS
    )
