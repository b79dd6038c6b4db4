"""One comparison of default ``sticky`` with Kafka's Java ``StickyAssignor`` (test support for tests/peers/)."""

from __future__ import annotations

import json

import numpy as np

import heuristics.sticky as sticky
from problems import evaluate, load_problem


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
    kafka_verdict = evaluate(problem, theirs, "sticky")
    assert not kafka_verdict.valid and ours.valid, json.dumps(doc)
    assert all("does not subscribe" in v or v.startswith("... and") for v in kafka_verdict.violations), json.dumps(doc)
    return "kafka-invalid"
