"""What every heuristic and every solver returns, and the JSON of docs/formats.md.

A :class:`Result` carries the raw answer (an ``owner`` array for a consumer
group, a ``replicas`` array for a placement).  The output JSON and the score are
computed on first access, by :mod:`problems.evaluate`, so that timing
``assign(problem)`` measures the algorithm and never trusts a solver's own value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import Any

import numpy as np

from problems.errors import ProblemError
from problems.evaluate import Evaluation, evaluate
from problems.group import GroupProblem
from problems.placement import PlacementProblem
from problems.share import is_pairs, share_assignment_json


class Status(StrEnum):
    """How an answer came about; a ``str``, so it compares, prints and serialises as its value."""

    OPTIMAL = "optimal"  #: every objective level proven optimal
    FEASIBLE = "feasible"  #: a solver's answer, not proven optimal (``bound`` holds what is proven)
    INFEASIBLE = "infeasible"  #: proven: no answer satisfies the hard constraints
    HEURISTIC = "heuristic"  #: a heuristic's answer
    UNKNOWN = "unknown"  #: time ran out before any answer

    @property
    def solved(self) -> bool:
        """Whether a solver with this status has an answer (``optimal`` or ``feasible``)."""
        return self in (Status.OPTIMAL, Status.FEASIBLE)


STATUSES = tuple(Status)


@dataclass(eq=False)
class Result:
    """One answer to one problem.

    Attributes
    ----------
    problem
        The problem answered.
    strategy
        The strategy whose constraints and objective judge the answer.
    answer
        ``owner`` array (group), ``(member, partition)`` pairs (a share group:
        :mod:`problems.share`) or ``replicas`` array (placement); ``None`` when
        a solver found nothing (status ``infeasible`` or ``unknown``).
    status
        ``"heuristic"``, or a solver's ``"optimal"`` (proven), ``"feasible"``
        (with ``bound``), ``"infeasible"`` or ``"unknown"`` (time ran out with
        no answer).
    bound
        A solver's proven lower bounds on the objective levels, where it has them.
    info
        Anything else worth reporting (e.g. KIP-315's next ``epoch``).
    shown
        The ``owner`` array printed as the assignment when it is not the judged
        answer (``cooperative-sticky``: Kafka's round output, partitions changing
        owner left out, while ``answer`` is the completed assignment); ``None``:
        the answer is printed.
    """

    problem: GroupProblem | PlacementProblem
    strategy: str
    answer: np.ndarray | None
    status: Status = Status.HEURISTIC
    bound: tuple[int, ...] | None = None
    info: dict[str, Any] = field(default_factory=dict)
    shown: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}, got {self.status!r}")
        self.status = Status(self.status)

    @cached_property
    def evaluation(self) -> Evaluation | None:
        """The evaluator's verdict (``None`` without an answer)."""
        if self.answer is None:
            return None
        return evaluate(self.problem, self.answer, self.strategy)

    @property
    def objective(self) -> list[int]:
        """The objective levels, re-scored by :func:`problems.evaluate`."""
        return [] if self.evaluation is None else list(self.evaluation.objective)

    @property
    def valid(self) -> bool:
        return self.evaluation is not None and self.evaluation.valid

    @cached_property
    def assignment(self) -> dict | None:
        """The output JSON: an assignment (group) or a reassignment (placement)."""
        if self.answer is None:
            return None
        if isinstance(self.problem, PlacementProblem):
            return reassignment_json(self.problem, self.answer)
        if is_pairs(self.answer):  # a share group's (member, partition) pairs
            return share_assignment_json(self.problem, self.answer)
        return assignment_json(self.problem, self.answer if self.shown is None else self.shown)

    def to_json(self) -> dict[str, Any]:
        """What ``rebalance-lab assign`` prints (:func:`problems.output.result_bytes` writes it fast)."""
        return {"assignment": self.assignment, **self.json_fields()}

    def json_fields(self) -> dict[str, Any]:
        """:meth:`to_json` without the assignment: status, objective, bound, violations, info."""
        doc: dict[str, Any] = {"status": self.status, "objective": self.objective}
        if self.bound is not None:
            doc["bound"] = list(self.bound)
        if self.evaluation is not None and not self.evaluation.valid:
            doc["violations"] = list(self.evaluation.violations)
        doc.update(self.info)
        return doc


# ------------------------------------------------------------------ group JSON
def assignment_json(problem: GroupProblem, owner: np.ndarray) -> dict[str, dict[str, list[int]]]:
    """``owner`` as ``{member: {topic: [indices ascending]}}``, every member present.

    Members and topics keep the problem's input order; topics a member got
    nothing of are omitted.
    """
    owner = np.asarray(owner)
    out: dict[str, dict[str, list[int]]] = {m: {} for m in problem.members}
    assigned = np.flatnonzero(owner >= 0)
    if len(assigned) == 0:
        return out
    # Sort by (member, global id); global ids already order topics and indices.
    order = assigned[np.argsort(owner[assigned], kind="stable")]
    members = owner[order]
    topics = problem.partition_topic[order]
    indices = problem.partition_index[order].tolist()
    keys = members.astype(np.int64) * max(problem.num_topics, 1) + topics
    cuts = np.flatnonzero(np.diff(keys)) + 1
    starts = [0, *cuts.tolist()]
    ends = [*cuts.tolist(), len(order)]
    for s, e in zip(starts, ends):
        out[problem.members[members[s]]][problem.topics[topics[s]]] = indices[s:e]
    return out


def owner_from_assignment(
    problem: GroupProblem, doc: Any, source: str = "<assignment>"
) -> np.ndarray:
    """Parse an assignment JSON into an ``owner`` array (for scoring outside answers).

    Raises
    ------
    ProblemError
        Unknown member or topic, a partition out of range, or a partition given twice.
    """
    if not isinstance(doc, dict):
        raise ProblemError(
            "", "an assignment must be an object of member -> {topic: [partitions]}", source
        )
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    for member, topics in doc.items():
        m = problem.member_index.get(member)
        if m is None:
            raise ProblemError(member, "not a member of the group", source)
        if not isinstance(topics, dict):
            raise ProblemError(member, "must be an object of topic -> partition list", source)
        for topic, indices in topics.items():
            field = f"{member}.{topic}"
            if topic not in problem.topic_index:
                raise ProblemError(field, "topic does not exist", source)
            if not isinstance(indices, list):
                raise ProblemError(field, "must be a list of partition indices", source)
            for index in indices:
                try:
                    g = problem.global_id(topic, index) if type(index) is int else None
                except IndexError:
                    g = None
                if g is None:
                    raise ProblemError(field, f"partition {index!r} does not exist", source)
                if owner[g] >= 0:
                    raise ProblemError(
                        field,
                        f"partition {index} is also given to {problem.members[owner[g]]}",
                        source,
                    )
                owner[g] = m
    return owner


# ------------------------------------------------------------- placement JSON
def reassignment_json(problem: PlacementProblem, replicas: np.ndarray) -> dict:
    """The ``kafka-reassign-partitions --execute`` input, partitions in input order."""
    replicas = np.asarray(replicas).tolist()
    start = problem.replica_start.tolist()
    entries = []
    for p, (topic, index) in enumerate(zip(problem.topics, problem.partitions.tolist())):
        brokers = replicas[start[p] : start[p + 1]]
        entries.append(
            {
                "topic": topic,
                "partition": index,
                "replicas": brokers,
                "log_dirs": ["any"] * len(brokers),
            }
        )
    return {"version": 1, "partitions": entries}
