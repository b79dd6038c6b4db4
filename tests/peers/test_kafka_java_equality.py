"""Byte-for-byte equality with Kafka's own Java code (peers/kafka_java.py, Kafka as pinned in peers/java/pom.xml).

Range and round robin against ``org.apache.kafka.clients.consumer.RangeAssignor`` /
``RoundRobinAssignor`` on random groups (dynamic and static members, racks, owned partitions and
generations, subscriptions to missing topics), and kafka-default against
``org.apache.kafka.admin.AdminUtils.assignReplicasToBrokers`` with a fixed start index, with and
without racks.  The JVM starts once per test session (the ``kafka_java`` fixture).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import heuristics.kafka_default as kafka_default
import heuristics.range as range_assignor
import heuristics.roundrobin as roundrobin_assignor
from problems import assignment_json, evaluate, load_problem
from support.problem_strategies import group_documents

ASSIGNORS = {"range": range_assignor, "roundrobin": roundrobin_assignor}
RANDOM_GROUPS = 300


@st.composite
def static_and_dynamic_documents(draw) -> dict:
    """Random groups (up to 8 members, up to 42 partitions) where any member may be static, with
    ``group.instance.id`` values whose order differs from the member ids' order."""
    doc = draw(group_documents(max_members=8, max_partitions=7))
    members = doc["members"]
    labels = draw(st.permutations(range(len(members)))) if members else []
    for member, label in zip(members, labels):
        member.pop("instance_id", None)
        if draw(st.integers(0, 2)) == 0:
            member["instance_id"] = f"static-{label}"
    return doc


def _same(ours: dict, kafka: dict) -> None:
    assert json.dumps(ours) == json.dumps(kafka)


def test_range_example_equals_kafka(kafka_java):
    """Tests one hand-written group (a static member, a missing topic, an owned claim) against Kafka's RangeAssignor."""
    problem = load_problem(
        {
            "topics": {"t0": 6, "t1": 3},
            "members": [
                {"id": "A", "topics": ["t0", "t1"]},
                {"id": "B", "topics": ["t0"], "instance_id": "z"},
                {"id": "C", "topics": ["t1", "t0", "gone"], "owned": {"t0": [1]}, "generation": 3},
            ],
        }
    )
    expected = {
        "A": {"t0": [2, 3], "t1": [0, 1]},
        "B": {"t0": [0, 1]},
        "C": {"t0": [4, 5], "t1": [2]},
    }
    assert kafka_java.assignment(problem, "range") == expected
    assert range_assignor.assign(problem).assignment == expected


@pytest.mark.parametrize("strategy", sorted(ASSIGNORS))
@settings(max_examples=RANDOM_GROUPS)
@given(doc=static_and_dynamic_documents())
def test_equals_kafka_on_random_groups(kafka_java, strategy, doc):
    """Tests that range and round robin give Kafka's Java assignors' exact output on random groups."""
    problem = load_problem(doc)
    _same(ASSIGNORS[strategy].assign(problem).assignment, kafka_java.assignment(problem, strategy))


def _large_document(seed: int, topics: int, partitions: int, members: int, equal: bool) -> dict:
    rng = np.random.default_rng(seed)
    names = [f"topic-{t}" for t in range(topics)]
    docs = []
    for m in range(members):
        subscription = names if equal else [n for n in names if rng.random() < 0.5] or names[:1]
        member = {"id": f"consumer-{m}-{int(rng.integers(10**6))}", "topics": list(subscription)}
        if rng.random() < 0.3:
            member["instance_id"] = f"instance-{int(rng.integers(10**6))}-{m}"
        docs.append(member)
    return {"topics": {n: int(rng.integers(1, partitions + 1)) for n in names}, "members": docs}


LARGE = [
    (0, 50, 200, 60, True),
    (1, 50, 200, 60, False),
    (2, 200, 40, 300, False),
    (3, 3, 5000, 7, True),
]


@pytest.mark.parametrize("strategy", sorted(ASSIGNORS))
@pytest.mark.parametrize(
    "shape",
    LARGE,
    ids=lambda s: f"seed{s[0]}-t{s[1]}-p{s[2]}-m{s[3]}-{'equal' if s[4] else 'mixed'}",
)
def test_equals_kafka_on_large_groups(kafka_java, strategy, shape):
    """Tests equality with Kafka on a few large groups (up to 10,000 partitions, 300 members)."""
    problem = load_problem(_large_document(*shape))
    ours = ASSIGNORS[strategy].assign(problem)
    kafka = kafka_java.assign(problem, strategy)
    assert np.array_equal(ours.answer, kafka)
    assert evaluate(problem, kafka, "sticky").valid


@st.composite
def placement_cases(draw, racks: bool) -> tuple[dict, int]:
    """A cluster of 1-12 brokers (ids shuffled or not; 1-5 racks or none) and 1-4 whole topics of
    1-30 partitions, one replication factor each, plus a fixed start index in 0 .. 2n."""
    n = draw(st.integers(1, 12))
    ids = draw(st.permutations(range(n))) if draw(st.booleans()) else list(range(n))
    rack_of = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)) if racks else None
    brokers = [
        {"id": b} if rack_of is None else {"id": b, "rack": f"r{rack_of[i]}"}
        for i, b in enumerate(ids)
    ]
    partitions = []
    for t, (count, factor) in enumerate(
        draw(
            st.lists(
                st.tuples(st.integers(1, 30), st.integers(1, min(4, n))), min_size=1, max_size=4
            )
        )
    ):
        partitions += [
            {"topic": f"t{t}", "partition": i, "replicas": list(ids[:factor])} for i in range(count)
        ]
    return {"brokers": brokers, "partitions": partitions}, draw(st.integers(0, 2 * n))


@pytest.mark.parametrize("racks", [False, True], ids=["no-racks", "racks"])
@settings(max_examples=RANDOM_GROUPS)
@given(data=st.data())
def test_kafka_default_equals_admin_utils(kafka_java, racks, data):
    """Tests that kafka-default with a fixed start index places every replica as Kafka's AdminUtils does."""
    doc, start_index = data.draw(placement_cases(racks))
    problem = load_problem(doc)
    ours = kafka_default.assign(problem, start_index=start_index)
    assert np.array_equal(ours.answer, kafka_java.kafka_default(problem, start_index))


def test_kafka_default_partitions_added_equal_admin_utils(kafka_java):
    """Tests a topic listed from partition 12 up (partitions added to a 12-partition topic): Kafka's
    ``startPartitionId``, with and without racks."""
    for racks in (None, ["a", "b", "a", "c", "b"]):
        brokers = [{"id": b} if racks is None else {"id": b, "rack": racks[b]} for b in range(5)]
        partitions = [{"topic": "t", "partition": 12 + i, "replicas": [0, 1, 2]} for i in range(9)]
        problem = load_problem({"brokers": brokers, "partitions": partitions})
        for start_index in range(5):
            ours = kafka_default.assign(problem, start_index=start_index)
            assert np.array_equal(ours.answer, kafka_java.kafka_default(problem, start_index))


def test_kafka_version_is_pinned(kafka_java):
    """Tests that the JVM runs the Kafka release ``make peers`` built (its stamp), and that the
    default release of the Makefile and of peers/java/pom.xml is one and the same."""
    import re
    from pathlib import Path

    root = Path(__file__).parents[2]
    pom = (root / "peers" / "java" / "pom.xml").read_text()
    makefile = (root / "Makefile").read_text()
    default = re.search(r"<kafka.version>(.*)</kafka.version>", pom).group(1)
    assert re.search(r"^KAFKA_VERSION \?= (.*)$", makefile, re.M).group(1) == default
    assert kafka_java.kafka_version() == kafka_java.built_version()


def test_assignment_json_round_trip(kafka_java):
    """Tests that the adapter's owner array and its JSON agree (no partition lost or doubled)."""
    problem = load_problem(_large_document(7, 5, 20, 4, False))
    owner = kafka_java.assign(problem, "roundrobin")
    assert kafka_java.assignment(problem, "roundrobin") == assignment_json(problem, owner)
    assert evaluate(problem, owner, "sticky").valid
