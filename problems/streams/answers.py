"""A streams answer as JSON (the ``assignment`` of ``rebalance-lab assign``) and read back from it."""

from __future__ import annotations

from typing import Any

import numpy as np

from problems.errors import ProblemError
from problems.streams.format import task_lists
from problems.streams.problem import (
    TASK_KINDS,
    StreamsAssignment,
    StreamsProblem,
    pairs,
)


def streams_assignment_json(
    problem: StreamsProblem, answer: StreamsAssignment
) -> dict[str, dict[str, dict[str, list[int]]]]:
    """``{member: {"active": {s: [numbers]}, "standby": {...}, "warmup": {...}}}``: every member,
    in problem order, with all three kinds (possibly ``{}``); subtopologies in problem order, each
    list ascending, subtopologies with nothing omitted."""
    out: dict[str, dict[str, dict[str, list[int]]]] = {
        m: {"active": {}, "standby": {}, "warmup": {}} for m in problem.members
    }
    rows = [
        ("active", np.flatnonzero(answer.active >= 0), answer.active[answer.active >= 0]),
        ("standby", answer.standby[:, 0], answer.standby[:, 1]),
        ("warmup", answer.warmup[:, 0], answer.warmup[:, 1]),
    ]
    sub = problem.task_subtopology
    number = problem.task_partition
    for kind, tasks, members in rows:
        order = np.lexsort((tasks, members))
        for t, m in zip(np.asarray(tasks)[order].tolist(), np.asarray(members)[order].tolist()):
            out[problem.members[m]][kind].setdefault(problem.subtopologies[int(sub[t])], []).append(
                int(number[t])
            )
    return out


def streams_answer_from_json(
    problem: StreamsProblem, doc: Any, source: str = "<assignment>"
) -> StreamsAssignment:
    """Parse an assignment JSON (:func:`streams_assignment_json`'s shape; kinds may be omitted)
    into a :class:`StreamsAssignment`.  An active task given to two members is an error; replica
    pairs are kept as given (the evaluator judges them).

    Raises
    ------
    ProblemError
        Unknown member, kind or subtopology, a task that does not exist, or one given twice to a
        member in one kind.
    """
    if not isinstance(doc, dict):
        raise ProblemError(
            "", "an assignment must be an object of member -> {active, standby, warmup}", source
        )
    active = np.full(problem.n_tasks, -1, dtype=np.int64)
    found: dict[str, tuple[list[int], list[int]]] = {"standby": ([], []), "warmup": ([], [])}
    for member, kinds in doc.items():
        m = problem.member_index.get(member)
        if m is None:
            raise ProblemError(member, "not a member of the group", source)
        if not isinstance(kinds, dict):
            raise ProblemError(
                member, "must be an object of kind (active, standby, warmup) -> tasks", source
            )
        for kind, subs in kinds.items():
            if kind not in TASK_KINDS:
                raise ProblemError(
                    f"{member}.{kind}", "not a kind of task (active, standby, warmup)", source
                )
            try:
                tasks = task_lists(
                    subs,
                    f"{member}.{kind}",
                    problem.subtopology_index,
                    problem.partitions,
                    problem.task_start,
                )
            except ProblemError as error:
                raise error.with_source(source) from None
            if kind == "active":
                for t in tasks:
                    if active[t] >= 0:
                        raise ProblemError(
                            f"{member}.active",
                            f"task {problem.task_name(t)} is also active on {problem.members[int(active[t])]}",
                            source,
                        )
                    active[t] = m
            else:
                found[kind][0].extend(tasks)
                found[kind][1].extend([m] * len(tasks))
    return StreamsAssignment(active, pairs(*found["standby"]), pairs(*found["warmup"]))
