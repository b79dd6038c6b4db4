"""KIP-881 rack awareness: byte-for-byte equality with Kafka's Java client assignors on racked groups.

Random groups (up to 8 members, 6 topics of up to 7 partitions: equal partition counts, hence
co-partitioned topics, are common) where members may have a rack among three and every partition
has the replica racks of ``partition_racks`` (a random subset of the three racks, empty
included), with static members, owned partitions, generations and subscriptions to missing topics.
The Java side gets the same racks (``Subscription.rackId``, a ``Cluster`` whose partitions have
replicas on nodes with those racks).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import heuristics.range as range_assignor
from experiments.scenarios import Scenario, build_problem
from models.options import SolveOptions
from models.registry import STRATEGIES
from problems import load_problem
from support.problem_strategies import group_documents
from support.sticky_kafka_check import compare
from support.sticky_strategies import kafka_documents

RANDOM_GROUPS = 300
RACKS = ["r0", "r1", "r2"]


@st.composite
def racked_documents(draw) -> dict:
    """A random group document with ``partition_racks`` and member racks (see the module docstring)."""
    doc = draw(group_documents(max_members=8, max_partitions=7))
    for i, member in enumerate(doc["members"]):
        member.pop("rack", None)
        rack = draw(st.sampled_from([None, *RACKS]))
        if rack is not None:
            member["rack"] = rack
        if draw(st.integers(0, 3)) == 0:
            member["instance_id"] = f"static-{draw(st.integers(0, 99))}-{i}"
        else:
            member.pop("instance_id", None)
    replicas = st.lists(st.sampled_from(RACKS), min_size=0, max_size=3)
    doc["partition_racks"] = {
        t: draw(st.lists(replicas, min_size=n, max_size=n)) for t, n in doc["topics"].items()
    }
    return doc


@settings(max_examples=RANDOM_GROUPS)
@given(doc=racked_documents())
def test_range_equals_kafka_with_racks(kafka_java, doc):
    """Tests that rack-aware range gives Kafka's client RangeAssignor's exact output on racked groups."""
    problem = load_problem(doc)
    ours = range_assignor.assign(problem).assignment
    assert json.dumps(ours) == json.dumps(kafka_java.assignment(problem, "range"))


def _add_racks(draw, doc: dict) -> dict:
    """``doc`` with member racks (or none) and ``partition_racks`` over three racks."""
    for member in doc["members"]:
        rack = draw(st.sampled_from([None, *RACKS]))
        if rack is not None:
            member["rack"] = rack
    replicas = st.lists(st.sampled_from(RACKS), min_size=0, max_size=3)
    doc["partition_racks"] = {
        t: draw(st.lists(replicas, min_size=n, max_size=n)) for t, n in doc["topics"].items()
    }
    return doc


@st.composite
def racked_sticky_documents(draw) -> dict:
    """Kafka's sticky test groups (``sticky_strategies.kafka_documents``: equal and unequal
    subscriptions, churn, generations, conflicting claims) with racks."""
    return _add_racks(
        draw, draw(st.one_of(kafka_documents(equal=True), kafka_documents(equal=False)))
    )


@settings(max_examples=RANDOM_GROUPS)
@given(doc=racked_sticky_documents())
def test_sticky_equals_kafka_with_racks(kafka_java, doc):
    """Tests that rack-aware sticky gives Kafka's client StickyAssignor's exact output on racked groups
    (or Kafka's answer is broken in one of the documented ways, as without racks)."""
    assert compare(kafka_java, doc) in ("equal", "kafka-invalid", "kafka-throws"), json.dumps(doc)


@pytest.mark.parametrize("pattern", ["equal", "random-subsets"])
@pytest.mark.parametrize("assignor", ["range", "sticky"])
def test_rack_aware_assignors_equal_kafka_on_a_harness_group(kafka_java, assignor, pattern):
    """Tests range and sticky against Kafka's Java classes on a larger racked group of the harness (100 members,
    10 topics, 1,000 partitions on 2 of 3 racks, a member joining): the rack steps' bookkeeping
    (slots, heaps,
    the vectorised range deal) at a size where many members share a rack."""
    scenario = Scenario(
        "group", "rack-aware", "member-joins", 1000, 100, 10, 1, pattern, replication=2
    )
    problem = load_problem(build_problem(scenario))
    ours = STRATEGIES[assignor].heuristic.load().solve(problem, SolveOptions()).answer
    assert np.array_equal(ours, kafka_java.assign(problem, assignor))
