"""``sticky`` (default) against Kafka's own Java ``StickyAssignor`` (peers/kafka_java.py), byte for byte.

Random groups with equal subscriptions (Kafka's constrained path) and unequal
ones (its general path): owned partitions, generations, conflicting claims,
deleted and added topics, members leaving and joining (``sticky_strategies.kafka_documents``), and
a few large groups.  Every answer must equal Kafka's, except where Kafka's own
answer is broken, which docs/strategies/client-assignors.md lists
and ``test_sticky_differences.py`` pins: Kafka gives a partition to an earlier
owner that no longer subscribes its topic, or throws ``NullPointerException``
on an earlier owner that cannot take part in the balancing.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings

import heuristics.sticky.sticky as sticky
from problems import load_problem
from support.sticky_kafka_check import compare
from support.sticky_strategies import kafka_documents as documents

RANDOM_GROUPS = 300


@settings(max_examples=RANDOM_GROUPS)
@given(documents(equal=True))
def test_equal_subscriptions_equal_kafka(kafka_java, doc):
    """Tests that with equal subscriptions every answer is Kafka's (its constrained path), byte for byte."""
    assert compare(kafka_java, doc) == "equal", json.dumps(doc)
    assert sticky.assign(load_problem(doc)).info == {"algorithm": "kafka-constrained"}


@settings(max_examples=RANDOM_GROUPS)
@given(documents(equal=False))
def test_unequal_subscriptions_equal_kafka(kafka_java, doc):
    """Tests that with unequal subscriptions every answer is Kafka's (its general path) or Kafka's is broken."""
    assert compare(kafka_java, doc) in ("equal", "kafka-invalid", "kafka-throws"), json.dumps(doc)
    unequal = (
        len({frozenset(member["topics"]) for member in doc["members"]}) > 1
    )  # one member: equal
    assert sticky.assign(load_problem(doc)).info["algorithm"] == (
        "kafka-general" if unequal else "kafka-constrained"
    )


def test_kafka_fresh_two_consumers_two_topics(kafka_java):
    """Tests Kafka's own expectation: consumer1 gets topic1 [0, 2] and topic2 [1, 3] (round robin by topic)."""
    problem = load_problem(
        {
            "topics": {"topic1": 3, "topic2": 4},
            "members": [
                {"id": "consumer1", "topics": ["topic1", "topic2"]},
                {"id": "consumer2", "topics": ["topic1", "topic2"]},
            ],
        }
    )
    expected = {
        "consumer1": {"topic1": [0, 2], "topic2": [1, 3]},
        "consumer2": {"topic1": [1], "topic2": [0, 2]},
    }
    assert sticky.assign(problem).assignment == expected
    assert kafka_java.assignment(problem, "sticky") == expected


def _large(topics: int, partitions: int, members: int, seed: int, equal: bool) -> list[dict]:
    """A fresh group and, owning its answer, the group after 3 members leave and 1 joins."""
    rng = np.random.default_rng(seed)
    names = [f"topic{t:02d}" for t in range(topics)]

    def subscription():
        return (
            names
            if equal
            else [
                names[t]
                for t in np.sort(rng.choice(topics, int(rng.integers(1, topics)), replace=False))
            ]
        )

    docs = [{"id": f"consumer{m:03d}", "topics": subscription()} for m in range(members)]
    fresh = {"topics": {name: partitions for name in names}, "members": docs}
    first = sticky.assign(load_problem(fresh)).assignment
    owned = [{**d, "owned": first[d["id"]], "generation": 1} for d in docs[3:]]
    return [
        fresh,
        {
            "topics": fresh["topics"],
            "members": [*owned, {"id": "joiner", "topics": subscription()}],
        },
    ]


@pytest.mark.parametrize("equal", [True, False], ids=["equal", "unequal"])
def test_large_groups_equal_kafka(kafka_java, equal):
    """Tests 1,000 partitions (20 topics x 50) and 60 members, fresh then 3 leave and 1 joins, against Kafka."""
    for doc in _large(20, 50, 60, seed=7, equal=equal):
        assert compare(kafka_java, doc) == "equal"


def test_general_join_at_4000_partitions_equals_kafka(kafka_java, monkeypatch):
    """Tests the scaling benchmark's case (2 topics, 10 members, every third on one topic) at 4,000 partitions."""
    import importlib.util
    from pathlib import Path

    folder = Path(__file__).parents[2] / "benchmarks"
    monkeypatch.syspath_prepend(str(folder))  # the script's own imports (benchmarks/timing.py)
    path = folder / "sticky_general.py"
    spec = importlib.util.spec_from_file_location("sticky_general_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert compare(kafka_java, module.two_topic_join(4000)) == "equal"
