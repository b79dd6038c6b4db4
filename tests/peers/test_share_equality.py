"""heuristics/share.py against Kafka's own share-group ``SimpleAssignor`` (KIP-932), through JPype.

Random share groups (Hypothesis draws the shape, a seed the contents): homogeneous and
heterogeneous subscriptions (topics missing from the cluster included), more members than
partitions and fewer, random current assignments (several members per partition, partitions of
topics a member no longer subscribes, stale claims beyond a topic's partition count or on
deleted topics), random ``topic_ids`` or none.  The pairs must be the same, member by member.
"""

from __future__ import annotations

import base64

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heuristics import share
from problems import evaluate, load_problem
from problems.share import pairs_array, share_assignment_json

TOPICS = [f"topic-{i}" for i in range(8)]


@st.composite
def share_documents(draw) -> dict:
    """A random share group; ``many`` members (up to 40) over few partitions, or the reverse."""
    topic_count = draw(st.integers(1, 6))
    many = draw(st.booleans())
    member_count = draw(st.integers(1, 40 if many else 10))
    homogeneous = draw(st.booleans())
    previous = draw(st.sampled_from(["none", "random", "random", "crowded"]))
    ids = draw(st.booleans())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    largest = 4 if many else 24
    topics = {name: int(rng.integers(0, largest + 1)) for name in TOPICS[:topic_count]}
    everything = [*topics, "not-created"]

    def subset(minimum: int = 0) -> list[str]:
        chosen = [everything[i] for i in rng.permutation(len(everything)) if rng.random() < 0.5]
        return chosen or everything[:minimum]

    shared = subset(1)
    buckets = [subset() for _ in range(int(rng.integers(1, 5)))]
    members = []
    for i in range(member_count):
        member_id = "".join(rng.choice(list("abcXYZ019-"), size=int(rng.integers(1, 7)))) + f"#{i}"
        member: dict = {
            "id": member_id,
            "topics": list(shared if homogeneous else buckets[rng.integers(len(buckets))]),
        }
        if previous != "none" and rng.random() < (0.9 if previous == "crowded" else 0.5):
            owned = {}
            for topic in rng.permutation(everything)[: int(rng.integers(0, 5))].tolist():
                limit = topics.get(topic, 2) + (2 if previous == "random" else 0)
                owned[topic] = rng.permutation(limit)[: int(rng.integers(0, limit + 1))].tolist()
            member["owned"] = owned
        members.append(member)
    doc = {"topics": topics, "members": members}
    if ids:
        doc["topic_ids"] = {
            t: base64.urlsafe_b64encode(rng.bytes(16)).decode().rstrip("=") for t in topics
        }
    return doc


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(doc=share_documents())
def test_share_equals_kafka_on_random_groups(kafka_java, doc):
    """Tests that the share heuristic gives every member the partitions Kafka 4.4's SimpleAssignor gives it."""
    problem = load_problem(doc)
    ours = share.assign(problem).answer
    theirs = kafka_java.share_assign(problem)
    assert share_assignment_json(problem, ours) == share_assignment_json(problem, theirs)


#: ``test_share_example_equals_kafka``'s group, and Kafka's ``SimpleAssignor`` answer to it by
#: release (the first release of each behaviour).  4.0: every member gets every partition of its
#: topics.  4.1: one partition per member here (``orders-0`` read by ``b`` alone).  4.2 to 4.4:
#: the balanced builders as heuristics/share.py reproduces them (``orders-0`` read by two).
EXAMPLE = {
    "topics": {"orders": 2, "audit": 3},
    "members": [
        {"id": "a", "topics": ["orders"], "owned": {"orders": [0, 1]}},
        {"id": "b", "topics": ["orders"], "owned": {"orders": [0]}},
        {"id": "c", "topics": ["orders"], "owned": {"audit": [1]}},
    ],
}
BY_RELEASE = (
    ((4, 0), {"a": {"orders": [0, 1]}, "b": {"orders": [0, 1]}, "c": {"orders": [0, 1]}}),
    ((4, 1), {"a": {"orders": [1]}, "b": {"orders": [0]}, "c": {"orders": [1]}}),
    ((4, 2), {"a": {"orders": [0, 1]}, "b": {"orders": [0]}, "c": {"orders": [1]}}),
)


def test_share_behaviour_of_each_release(kafka_java):
    """Tests the built release's SimpleAssignor on one group against the answer recorded for its
    release line (docs/kafka-versions.md); from 4.2 on that answer is heuristics/share.py's."""
    release = tuple(int(part) for part in kafka_java.kafka_version().split(".")[:2])
    expected = [answer for first, answer in BY_RELEASE if first <= release][-1]
    problem = load_problem(EXAMPLE)
    assert share_assignment_json(problem, kafka_java.share_assign(problem)) == expected
    assert share_assignment_json(problem, share.assign(problem).answer) == BY_RELEASE[-1][1]


def test_share_example_equals_kafka(kafka_java):
    """Tests a hand-made group: three members on one 2-partition topic (each partition read by two)
    and a member that left its topic, against the Java class; the answer is valid and scored."""
    problem = load_problem(EXAMPLE)
    ours = share.assign(problem).answer
    assert np.array_equal(ours, kafka_java.share_assign(problem))
    verdict = evaluate(problem, ours, "share")
    assert verdict.valid, verdict.violations
    readers = np.bincount(ours[:, 1], minlength=problem.num_partitions)
    assert readers[:2].tolist() == [2, 2] and readers[2:].sum() == 0  # sharing ceil(3 / 2)
    assert verdict.objective[1] == 8  # sum over partitions of squared reader counts


@pytest.mark.parametrize("members", [0, 1])
def test_share_trivial_groups_equal_kafka(kafka_java, members):
    """Tests an empty group and a lone member subscribing nothing that exists."""
    doc = {
        "topics": {"t": 3},
        "members": [
            {"id": f"m{i}", "topics": ["gone"], "owned": {"t": [1]}} for i in range(members)
        ],
    }
    problem = load_problem(doc)
    assert np.array_equal(share.assign(problem).answer, kafka_java.share_assign(problem))
    assert np.array_equal(share.assign(problem).answer, pairs_array([], []))
