"""Byte-for-byte equality with Kafka's KIP-848 server assignors (``UniformAssignor``, server ``RangeAssignor``).

The Java side gets the ``GroupSpec`` the group coordinator builds
(``peers.kafka_java.server_input``); ours gets the document.  Random groups cover homogeneous and
heterogeneous subscriptions (by topic *name*, missing topics included, as ``ModernGroup`` decides),
static members, random ``topic_ids`` or none, KIP-881 racks or none (the server assignors of Kafka
4.0.2 to 4.4.0 ignore them), and current assignments of three kinds: random claims (stale, conflicting, on
unsubscribed topics), Kafka's own previous answer after members joined, left or changed their
subscriptions (the incremental case), and none.  The Java hash orders the heuristics reproduce are
checked against ``java.util.HashMap`` / ``HashSet`` directly.
"""

from __future__ import annotations

import base64

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import heuristics.server_range as server_range
import heuristics.uniform as uniform
from heuristics.java import (
    from_collection_capacity,
    grouped_hash_order,
    hash_table_order,
    java_string_hash,
)
from heuristics.kafka_orders import uuid_hashes
from problems import assignment_json, load_problem
from support.kip848_scenarios import (
    COORDINATOR_ANSWERS,
    SERVER_RANGE,
    UNIFORM_HETEROGENEOUS,
    UNIFORM_HOMOGENEOUS,
)

RANDOM_GROUPS = 300
TOPICS = [f"topic-{i}" for i in range(12)]


@st.composite
def server_documents(draw, max_members: int = 12, max_partitions: int = 24) -> dict:
    """A random KIP-848 consumer group: subscriptions, static members, topic ids, racks, current assignment.

    Hypothesis draws the shape (a handful of values); the contents come from a drawn seed
    (numpy's PCG64), which keeps 300 examples cheap.
    """
    topic_count = draw(st.integers(1, len(TOPICS)))
    member_count = draw(st.integers(1, max_members))
    homogeneous = draw(st.booleans())
    owned_kind = draw(st.sampled_from(["none", "random", "random"]))
    racks, ids = draw(st.integers(0, 3)) == 0, draw(st.booleans())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    topics = {name: int(rng.integers(0, max_partitions + 1)) for name in TOPICS[:topic_count]}
    everything = [*topics, "not-created"]

    def subset(minimum: int = 0) -> list[str]:
        chosen = [everything[i] for i in rng.permutation(len(everything)) if rng.random() < 0.5]
        return chosen or everything[:minimum]

    shared = subset(1)
    buckets = [subset() for _ in range(int(rng.integers(1, 5)))]
    members = []
    for i in range(member_count):
        member_id = "".join(rng.choice(list("abcXYZ019-"), size=int(rng.integers(1, 7)))) + f"{i}"
        member: dict = {
            "id": member_id,
            "topics": list(shared if homogeneous else buckets[rng.integers(len(buckets))]),
        }
        if rng.random() < 0.25:
            member["instance_id"] = f"instance-{rng.integers(1000)}-{i}"
        if owned_kind == "random" and rng.random() < 0.5:
            owned = {}
            for topic in rng.permutation(everything)[: int(rng.integers(0, 5))].tolist():
                limit = topics.get(topic, 2) + 2  # sometimes beyond the partition count: stale
                owned[topic] = rng.permutation(limit + 1)[
                    : int(rng.integers(0, limit + 1))
                ].tolist()
            member["owned"] = owned
            if rng.random() < 0.67:
                member["generation"] = int(rng.integers(0, 3))
        if racks:  # KIP-881 racks: the server assignors of Kafka 4.0.2 to 4.4.0 do not read them
            member["rack"] = f"r{rng.integers(3)}"
        members.append(member)
    doc = {"topics": topics, "members": members}
    if racks:
        doc["partition_racks"] = {
            t: [[f"r{r}" for r in range(3) if rng.random() < 0.5] for _ in range(n)]
            for t, n in topics.items()
        }
    if ids:
        doc["topic_ids"] = {
            t: base64.urlsafe_b64encode(rng.bytes(16)).decode().rstrip("=") for t in topics
        }
    return doc


@st.composite
def changes(draw) -> dict:
    """How a group changes between two rounds: members leave, join, or change subscriptions."""
    return {
        "leave": draw(st.lists(st.integers(0, 11), unique=True, max_size=3)),
        "join": draw(st.integers(0, 3)),
        "resubscribe": draw(st.lists(st.integers(0, 11), unique=True, max_size=2)),
        "seed": draw(st.integers(0, 2**16)),
    }


def _next_round(doc: dict, previous: dict, change: dict) -> dict:
    """``doc`` after ``change``, every remaining member owning its ``previous`` assignment."""
    rng = np.random.default_rng(change["seed"])
    members = [dict(m) for i, m in enumerate(doc["members"]) if i not in change["leave"]]
    names = [*doc["topics"], "not-created"]
    for i in change["resubscribe"]:
        if i < len(members):
            members[i]["topics"] = [n for n in names if rng.random() < 0.5]
    for j in range(change["join"]):
        members.append(
            {
                "id": f"joined-{j}",
                "topics": list(members[0]["topics"])
                if members and rng.random() < 0.7
                else [n for n in names if rng.random() < 0.5],
            }
        )
    for member in members:
        member.pop("owned", None)
        member.pop("generation", None)
        if previous.get(member["id"]):
            member["owned"] = previous[member["id"]]
    return {**doc, "members": members}


def _equal(ours, java) -> None:
    assert np.array_equal(ours, java), f"ours {ours.tolist()} != Kafka's {java.tolist()}"


@settings(max_examples=RANDOM_GROUPS)
@given(doc=server_documents())
def test_uniform_equals_kafka_on_random_groups(kafka_java, doc):
    """Tests that ``uniform`` gives Kafka's UniformAssignor's exact output (both builders)."""
    problem = load_problem(doc)
    _equal(uniform.assign(problem).answer, kafka_java.server_assign(problem, "uniform"))


@settings(max_examples=RANDOM_GROUPS // 2)
@given(doc=server_documents(), change=changes())
def test_uniform_equals_kafka_incrementally(kafka_java, doc, change):
    """Tests equality on the round after Kafka's own answer, once members joined, left or resubscribed."""
    first = load_problem(doc)
    previous = assignment_json(first, kafka_java.server_assign(first, "uniform"))
    problem = load_problem(_next_round(doc, previous, change))
    _equal(uniform.assign(problem).answer, kafka_java.server_assign(problem, "uniform"))


@settings(max_examples=RANDOM_GROUPS)
@given(doc=server_documents(max_members=16, max_partitions=30))
def test_server_range_equals_kafka_on_random_groups(kafka_java, doc):
    """Tests that ``server-range`` gives Kafka's server RangeAssignor's exact output."""
    problem = load_problem(doc)
    _equal(server_range.assign(problem).answer, kafka_java.server_assign(problem, "range"))


def test_uniform_at_a_larger_size_equals_kafka(kafka_java):
    """Tests equality on groups of 300 members and 100 topics, full and incremental, both builders."""
    rng = np.random.default_rng(7)
    names = [f"topic-{t}" for t in range(100)]
    for homogeneous in (True, False):
        buckets = [names[b::5] for b in range(5)]
        members = [
            {
                "id": f"consumer-{rng.integers(10**9)}-{m}",
                "topics": names if homogeneous else buckets[m % 5],
            }
            for m in range(300)
        ]
        doc = {
            "topics": {n: int(rng.integers(1, 40)) for n in names},
            "members": members,
            "topic_ids": {
                n: base64.urlsafe_b64encode(rng.bytes(16)).decode().rstrip("=") for n in names
            },
        }
        problem = load_problem(doc)
        java = kafka_java.server_assign(problem, "uniform")
        _equal(uniform.assign(problem).answer, java)
        grown = _next_round(
            doc,
            assignment_json(problem, java),
            {"leave": [3], "join": 1, "resubscribe": [], "seed": 1},
        )
        problem = load_problem(grown)
        _equal(uniform.assign(problem).answer, kafka_java.server_assign(problem, "uniform"))


@pytest.mark.parametrize("name", sorted(UNIFORM_HOMOGENEOUS) + sorted(UNIFORM_HETEROGENEOUS))
def test_kafka_uniform_scenarios_on_the_java_class(kafka_java, name):
    """Tests the ported builder scenarios on Kafka's UniformAssignor with the coordinator's structures:
    the expected answers (``COORDINATOR_ANSWERS`` where the tests' ordered maps differ)."""
    doc, expected = {**UNIFORM_HOMOGENEOUS, **UNIFORM_HETEROGENEOUS}[name]
    problem = load_problem(doc)
    assert assignment_json(
        problem, kafka_java.server_assign(problem, "uniform")
    ) == COORDINATOR_ANSWERS.get(name, expected)


@pytest.mark.parametrize("name", sorted(SERVER_RANGE))
def test_kafka_range_scenarios_on_the_java_class(kafka_java, name):
    """Tests the ported RangeAssignorTest scenarios on Kafka's server RangeAssignor."""
    doc, expected = SERVER_RANGE[name]
    problem = load_problem(doc)
    assert assignment_json(problem, kafka_java.server_assign(problem, "range")) == expected


# ------------------------------------------------------------------ Java's hash orders


def _java_order(kafka_java, keys, fill: str) -> list[int]:
    import jpype

    kafka_java.start()
    positions = {k: i for i, k in enumerate(keys)}
    if fill == "collection":
        items = jpype.JClass("java.util.ArrayList")()
        for k in keys:
            items.add(k)
        table = jpype.JClass("java.util.HashSet")(items)
    else:
        table = jpype.JClass("java.util.HashSet")()
        for k in keys:
            table.add(k)
    return [positions[k] for k in table]


@pytest.mark.parametrize("fill", ["one by one", "collection"])
def test_hash_orders_equal_java(kafka_java, fill):
    """Tests the HashSet orders of Uuid, String and Integer keys against ``java.util.HashSet``."""
    import jpype

    kafka_java.start()
    uuid = jpype.JClass("org.apache.kafka.common.Uuid")
    rng = np.random.default_rng(3)
    for n in (1, 5, 12, 13, 40, 97, 300):
        most, least = rng.integers(-(2**63), 2**63 - 1, n), rng.integers(-(2**63), 2**63 - 1, n)
        ids = [uuid(int(a), int(b)) for a, b in zip(most, least)]
        hashes = uuid_hashes(most, least)
        assert [int(i.hashCode()) & 0xFFFFFFFF for i in ids] == hashes.tolist()
        strings = [f"consumer-{rng.integers(10**6)}-{i}" for i in range(n)]
        integers = [jpype.JInt(int(v)) for v in rng.choice(5 * n, n, replace=False)]
        for keys, codes in (
            (ids, hashes.tolist()),
            (strings, [java_string_hash(s) for s in strings]),
            (integers, [int(v) for v in integers]),
        ):
            capacity = from_collection_capacity(n) if fill == "collection" else 16
            expected = _java_order(kafka_java, keys, fill)
            assert hash_table_order(codes, capacity).tolist() == expected
            grouped = grouped_hash_order(
                np.zeros(n, dtype=np.int64),
                np.array(codes, dtype=np.int64),
                from_collection=fill == "collection",
            )
            assert grouped.tolist() == expected


def test_crowded_small_tables_grow_as_java_does(kafka_java):
    """Tests that a 16-bucket table with 9 keys in one bucket grows early (``treeifyBin``), as Java's does."""
    import jpype

    keys = [jpype.JInt(16 * k) for k in range(9)] + [jpype.JInt(1)]
    codes = [int(k) for k in keys]
    for fill in ("one by one", "collection"):
        expected = _java_order(kafka_java, keys, fill)
        grouped = grouped_hash_order(
            np.zeros(len(keys), dtype=np.int64),
            np.array(codes),
            from_collection=fill == "collection",
        )
        assert grouped.tolist() == expected
