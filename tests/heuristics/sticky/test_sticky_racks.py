"""The rack-aware cases of Kafka's ``AbstractStickyAssignorTest`` (Kafka 4.x), ported as pinned tests.

``testRackAwareAssignmentWithUniformSubscription`` and ``...WithNonEqualSubscription`` run on
``StickyAssignor`` and ``CooperativeStickyAssignor``; each ``verifyRackAssignment`` line is one case
(``rack_builders.kafka_rack_group``), checked on Kafka's round output (``cooperative-sticky``'s
``shown``) and on its rack mismatches.  Left out: the lines under ``preferRackAwareLogic(true)``, a
test-only switch no document reaches; and, for ``StickyAssignor``, owned partitions, which Kafka's
test passes in ``Subscription.ownedPartitions`` where ``StickyAssignor`` does not read them (its
user data is empty), so those lines are its fresh lines again.
"""

from __future__ import annotations

import numpy as np
import pytest

import heuristics.sticky.cooperative_sticky as cooperative
import heuristics.sticky.sticky as sticky
from problems import load_problem
from support.rack_builders import kafka_rack_group, null_racks, racks, sorted_strings

ASSIGNORS = {"sticky": sticky, "cooperative-sticky": cooperative}
TOPICS = {"t1": 6, "t2": 7, "t3": 2}
ALL3 = ["t1", "t2", "t3"]
OWNED = [
    "t1-0, t1-1, t1-2, t1-3, t1-4",
    "t1-5, t2-0, t2-1, t2-2, t2-3",
    "t2-4, t2-5, t2-6, t3-0, t3-1",
]


def _check(
    strategy,
    replication,
    broker_racks,
    consumer_racks,
    consumer_topics,
    owned,
    expected,
    mismatches,
):
    problem = load_problem(
        kafka_rack_group(TOPICS, replication, broker_racks, consumer_racks, consumer_topics, owned)
    )
    result = ASSIGNORS[strategy].assign(problem)
    assert sorted_strings(result.assignment) == expected
    if mismatches >= 0:
        shown = result.answer if result.shown is None else result.shown
        assert int(np.count_nonzero(problem.rack_mismatches(shown))) == mismatches


def _both(
    strategy, replication, broker_racks, consumer_racks, consumer_topics, expected, mismatches
):
    """``verifyUniformSubscription`` / ``verifyNonEqualSubscription``: fresh, then owning the answer."""
    _check(
        strategy,
        replication,
        broker_racks,
        consumer_racks,
        consumer_topics,
        None,
        expected,
        mismatches,
    )
    _check(
        strategy,
        replication,
        broker_racks,
        consumer_racks,
        consumer_topics,
        expected,
        expected,
        mismatches,
    )


@pytest.mark.parametrize("strategy", sorted(ASSIGNORS))
def test_rack_aware_assignment_with_uniform_subscription(strategy):
    """Tests testRackAwareAssignmentWithUniformSubscription (Kafka's constrained path)."""
    topics = [ALL3] * 3
    plain = [
        "t1-0, t1-3, t2-0, t2-3, t2-6",
        "t1-1, t1-4, t2-1, t2-4, t3-0",
        "t1-2, t1-5, t2-2, t2-5, t3-1",
    ]
    _both(strategy, 3, null_racks(3), racks(3), topics, plain, -1)
    _both(strategy, 3, racks(3), null_racks(3), topics, plain, -1)
    _both(strategy, 3, racks(3), racks(3), topics, plain, 0)
    _both(strategy, 3, racks(3), ["d", "e", "f"], topics, plain, -1)
    _both(strategy, 3, racks(3), [None, "e", "f"], topics, plain, -1)
    _both(strategy, 1, racks(3), racks(3), topics, plain, 0)  # rack-aligned for lower replication
    _both(strategy, 2, racks(3), racks(3), topics, plain, 0)
    _both(
        strategy, 3, racks(2), racks(3), topics, plain, 5
    )  # a member on a rack without partitions
    if strategy == "cooperative-sticky":  # misaligned owned partitions are revoked first
        _check(
            strategy, 1, racks(3), racks(3), topics, OWNED, ["t1-0, t1-3", "t2-1", "t2-5, t3-1"], 0
        )


@pytest.mark.parametrize("strategy", sorted(ASSIGNORS))
def test_rack_aware_assignment_with_non_equal_subscription(strategy):
    """Tests testRackAwareAssignmentWithNonEqualSubscription (Kafka's general path)."""
    topics = [ALL3, ALL3, ["t1", "t3"]]
    plain = [
        "t1-5, t2-0, t2-2, t2-4, t2-6",
        "t1-3, t2-1, t2-3, t2-5, t3-0",
        "t1-0, t1-1, t1-2, t1-4, t3-1",
    ]
    _both(strategy, 3, null_racks(3), racks(3), topics, plain, -1)
    _both(strategy, 3, racks(3), null_racks(3), topics, plain, -1)
    _both(strategy, 3, racks(3), racks(3), topics, plain, 0)
    _both(strategy, 3, racks(3), ["d", "e", "f"], topics, plain, -1)
    _both(strategy, 3, racks(3), [None, "e", "f"], topics, plain, -1)
    rf1 = [
        "t1-3, t2-0, t2-2, t2-3, t2-6",
        "t1-4, t2-1, t2-4, t2-5, t3-0",
        "t1-0, t1-1, t1-2, t1-5, t3-1",
    ]
    _both(strategy, 1, racks(3), racks(3), topics, rf1, 4)  # best effort: 4 misaligned
    _both(
        strategy,
        2,
        racks(3),
        racks(3),
        topics,
        [
            "t1-3, t2-0, t2-2, t2-5, t2-6",
            "t1-0, t2-1, t2-3, t2-4, t3-0",
            "t1-1, t1-2, t1-4, t1-5, t3-1",
        ],
        0,
    )
    _both(strategy, 3, racks(2), racks(3), topics, plain, 5)
    if strategy == "cooperative-sticky":
        intermediate = ["t1-3", "t2-1", "t3-1"]
        _check(strategy, 1, racks(3), racks(3), topics, OWNED, intermediate, 0)
        _check(strategy, 1, racks(3), racks(3), topics, intermediate, rf1, 4)
        intermediate = ["t1-2, t1-3, t1-4", "t2-0, t2-1, t2-2, t2-3", "t3-0, t3-1"]
        _check(strategy, 3, racks(3), racks(3), topics, OWNED, intermediate, 0)
        _check(
            strategy,
            3,
            racks(3),
            racks(3),
            topics,
            intermediate,
            [
                "t1-2, t1-3, t1-4, t2-4, t2-5",
                "t2-0, t2-1, t2-2, t2-3, t2-6",
                "t1-0, t1-1, t1-5, t3-0, t3-1",
            ],
            0,
        )


def test_cooperative_follow_up_completes_the_misaligned_round():
    """Tests that the completed cooperative answer of Kafka's misaligned-owned case is its follow-up answer."""
    problem = load_problem(kafka_rack_group(TOPICS, 1, racks(3), racks(3), [ALL3] * 3, OWNED))
    result = cooperative.assign(problem)
    assert result.info["rounds"] == 2 and result.valid
    assert result.objective[1] == 0  # every partition on its member's rack once completed
