"""KIP-848's ``uniform``: Kafka's own builder tests (pinned), balance and stickiness properties.

Equality with Kafka's Java ``UniformAssignor`` on random groups is in
``tests/peers/test_server_assignors.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

import heuristics.uniform as uniform
from heuristics.server_input import homogeneous
from problems import evaluate, load_problem, member_counts, previous_owners
from support.kip848_scenarios import (
    COORDINATOR_ANSWERS,
    UNIFORM_HETEROGENEOUS,
    UNIFORM_HOMOGENEOUS,
    group,
)
from support.problem_strategies import groups


@pytest.mark.parametrize("name", sorted(UNIFORM_HOMOGENEOUS))
def test_kafka_homogeneous_builder_scenarios(name):
    """Tests OptimizedUniformAssignmentBuilderTest's scenarios (homogeneous builder) give Kafka's expected
    answers (the coordinator's, where the test's ordered map gives another: ``COORDINATOR_ANSWERS``)."""
    doc, expected = UNIFORM_HOMOGENEOUS[name]
    problem = load_problem(doc)
    assert homogeneous(problem)
    assert uniform.assign(problem).assignment == COORDINATOR_ANSWERS.get(name, expected)


@pytest.mark.parametrize("name", sorted(UNIFORM_HETEROGENEOUS))
def test_kafka_heterogeneous_builder_scenarios(name):
    """Tests UniformHeterogeneousAssignmentBuilderTest's scenarios give Kafka's expected answers."""
    doc, expected = UNIFORM_HETEROGENEOUS[name]
    problem = load_problem(doc)
    assert homogeneous(problem) == all(not m["topics"] for m in doc["members"])
    assert uniform.assign(problem).assignment == expected


def test_kafka_large_sample_is_valid_and_balanced():
    """Tests testValidityAndBalanceForLargeSampleSet: 49 members on 99 topics of 3 partitions each."""
    topics = {f"topic-{i}": 3 for i in range(1, 100)}
    doc = {
        "topics": topics,
        "members": [{"id": f"member{i}", "topics": list(topics)} for i in range(1, 50)],
    }
    problem = load_problem(doc)
    counts = member_counts(problem, uniform.assign(problem).answer)
    assert counts.sum() == 297 and counts.max() - counts.min() <= 1


def test_overlapping_subscriptions_can_stay_almost_balanced():
    """Tests the heterogeneous builder's own caveat (balanceTopics' javadoc): members 1 and 2 on the
    first topic, 2 and 3 on the second, 9 / 10 / 11 partitions: each topic's subscribers differ by
    at
    most one, so nothing moves, though 10 / 10 / 10 exists (a sticky gap at level 1)."""
    doc = group(
        {"a": 14, "b": 16},
        [
            ("m1", ["a"], {"a": list(range(9))}),
            ("m2", ["a", "b"], {"a": list(range(9, 14)), "b": list(range(5))}),
            ("m3", ["b"], {"b": list(range(5, 16))}),
        ],
        ids=False,
    )
    problem = load_problem(doc)
    answer = uniform.assign(problem).answer
    assert member_counts(problem, answer).tolist() == [9, 10, 11]
    assert evaluate(problem, answer, "sticky").objective == (9**2 + 10**2 + 11**2, 0)
    assert (answer == previous_owners(problem)).all()  # 3 * 10**2 = 300 < 302 was reachable


@settings(max_examples=100)
@given(problem=groups(max_members=7, max_partitions=9))
def test_homogeneous_groups_are_balanced_and_keep_what_they_can(problem):
    """Tests that in homogeneous groups counts differ by at most one, and every member keeps
    min(what it validly owned, its count) of its previous partitions (balance, then stickiness)."""
    if not homogeneous(problem) or problem.num_members == 0:
        return
    answer = uniform.assign(problem).answer
    counts = member_counts(problem, answer)
    assert counts.max() - counts.min() <= 1
    assert (answer >= 0).sum() == problem.assignable.sum()
    previous = previous_owners(problem)
    held = previous >= 0
    kept = np.bincount(
        previous[held][answer[held] == previous[held]], minlength=problem.num_members
    )
    owned = np.bincount(previous[held], minlength=problem.num_members)
    assert (kept == np.minimum(owned, counts)).all()


@settings(max_examples=100)
@given(problem=groups(max_members=7, max_partitions=9))
def test_every_subscribed_partition_goes_to_a_subscriber(problem):
    """Tests validity on any group: each partition of a subscribed topic goes to one subscriber."""
    answer = uniform.assign(problem).answer
    assigned = answer >= 0
    assert (assigned == problem.assignable).all()
    assert problem.subscribes[answer[assigned], problem.partition_topic[assigned]].all()
