"""One comparison of default ``sticky`` with Kafka's Java ``StickyAssignor`` (test support for tests/peers/)."""

from __future__ import annotations

import json

import numpy as np

import heuristics.sticky.sticky as sticky
from problems import evaluate, load_problem
from problems.group import GroupProblem


def unsubscribed_earlier_owner(problem: GroupProblem, answer: np.ndarray) -> np.ndarray:
    """Partitions ``answer`` gives to a member that does not subscribe their topic but claimed them.

    Fails unless that is the answer's only defect: every assignable partition
    assigned, and every partition given to a non-subscriber given back to a
    member that owned it (docs/strategies/client-assignors.md: "an earlier owner that no longer subscribes
    the topic").  Read from the arrays, not from the evaluator's (truncated)
    violation lines.
    """
    assigned = answer >= 0
    assert not (problem.assignable & ~assigned).any(), "a subscribed partition is left unassigned"
    wrong = np.flatnonzero(
        assigned & ~problem.subscribes[np.maximum(answer, 0), problem.partition_topic]
    )
    members, partitions = problem.owned_claims
    claims = members.astype(np.int64) * problem.num_partitions + partitions
    given = answer[wrong].astype(np.int64) * problem.num_partitions + wrong
    assert np.isin(given, claims).all(), "a partition goes to a non-subscriber that never owned it"
    return wrong


def compare(kafka_java, doc: dict) -> str:
    """``"equal"``, or which documented way Kafka's answer is broken; fails on any other difference."""
    problem = load_problem(doc)
    ours = sticky.assign(problem)
    try:
        theirs = kafka_java.assign(problem, "sticky")
    except Exception as error:  # noqa: BLE001 - Kafka's exception, named below
        assert "NullPointerException" in f"{type(error).__name__} {error}", json.dumps(doc)
        assert ours.valid
        return "kafka-throws"
    if np.array_equal(ours.answer, theirs):
        return "equal"
    assert ours.valid and not evaluate(problem, theirs, "sticky").valid, json.dumps(doc)
    assert len(unsubscribed_earlier_owner(problem, theirs)) > 0, json.dumps(doc)
    return "kafka-invalid"
