"""Kafka's ``ConsumerAssignorBenchmark`` construction: the arithmetic of its groups, by hand.

The benchmark's javadoc and its parameters fix the numbers checked here (worked out by hand from the
rules it states); ``tests/peers/test_benchmark_grid.py`` checks whole groups against Kafka's classes.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from experiments.experiment import expand, load_suite
from experiments.kafka_grid import (
    EVENTS,
    added_topic_count,
    benchmark_document,
    benchmark_problem,
    bucket_count,
    bucket_ranges,
    partition_counts,
    previous_member_count,
    with_added_partitions,
)
from problems import GroupProblem, ProblemError, load_problem


def test_skewed_tiers_of_fifty_topics_worked_by_hand():
    """Tests SKEWED at 50 topics and 5,000 partitions: tiers 33, 11, 4, 1, 1 (two thirds, then a third
    of the previous share each, rounded); the 33 first-tier topics last with one partition; the other
    4,967 partitions by weights 11, 8, 4, 8 (size << (tier - 1)) over 31, running totals rounded down:
    1281, then 1922 - 1281 = 641, then 3204 - 1922 = 1282 over four topics, then 4967 - 3204 over 11."""
    counts = partition_counts("skewed", 50, 5000)
    assert counts[:2].tolist() == [1281, 641]
    assert counts[2:6].tolist() == [321, 321, 320, 320]
    assert counts[6:17].tolist() == [161] * 3 + [160] * 8  # 1763 = 11 * 160 + 3
    assert counts[17:].tolist() == [1] * 33
    assert counts.sum() == 5000


def test_skewed_without_room_to_double_and_equal_with_a_remainder():
    """Tests SKEWED with too few partitions (5,000 topics, 5,000 partitions: one each), a five-topic
    group (tiers 3, 1, 1), and EQUAL's remainder handed out from the first topic."""
    assert partition_counts("skewed", 5000, 5000).tolist() == [1] * 5000
    assert partition_counts("skewed", 5, 20000).tolist() == [13331, 6666, 1, 1, 1]
    assert partition_counts("equal", 3, 20).tolist() == [7, 7, 6]
    assert partition_counts("equal", 5000, 5000).tolist() == [1] * 5000


@given(
    st.sampled_from(["equal", "skewed"]),
    st.integers(1, 400),
    st.integers(1, 30_000),
)
def test_counts_are_largest_first_at_least_one_and_add_up(distribution, topics, partitions):
    """Tests every distribution: one count per topic, at least one, largest first, the total kept
    whenever there are at least as many partitions as topics."""
    counts = partition_counts(distribution, topics, partitions)
    assert len(counts) == topics and counts.min() >= 1
    assert np.all(np.diff(counts) <= 0)
    if partitions >= topics:
        assert counts.sum() == partitions


def test_buckets_as_the_javadoc_example_says():
    """Tests the javadoc's example: 20 members, 10 topics, 5 buckets; bucket 0 holds members 0, 5, 10
    and 15, range 0 holds topics 0 and 1; nested bucket b subscribes to ranges 0 to b."""
    assert bucket_count(20, 10) == 5 and bucket_count(3, 10) == 3 and bucket_count(20, 2) == 2
    document = benchmark_document("fresh", 20, 10, 100, pattern="disjoint")
    members = document["members"]
    assert [m["id"] for m in members if m["topics"] == ["topic-0", "topic-1"]] == [
        "member0",
        "member5",
        "member10",
        "member15",
    ]
    assert bucket_ranges("nested", 10, 5) == [(0, 2), (0, 4), (0, 6), (0, 8), (0, 10)]
    assert bucket_ranges("disjoint", 7, 3) == [(0, 2), (2, 4), (4, 7)]
    assert bucket_ranges("equal", 7, 3) == [(0, 7)] * 3


def test_events_change_a_tenth_rounded_up():
    """Tests the event sizes: JOIN_MANY / LEAVE_MANY a tenth of the members rounded up, JOIN_ONE /
    LEAVE_ONE one, PARTITIONS_ADDED a tenth of the topics rounded up at regular intervals."""
    assert previous_member_count("join-many", 5) == 4
    assert previous_member_count("join-many", 5000) == 4500
    assert previous_member_count("leave-many", 50) == 55
    assert previous_member_count("member-leaves", 5) == 6
    assert previous_member_count("member-joins", 5) == 4
    assert previous_member_count("stable", 5) == 5
    assert added_topic_count("partitions-grow", 5) == 1
    assert added_topic_count("partitions-grow", 500) == 50
    assert added_topic_count("fresh", 500) == 0
    grown = with_added_partitions(np.zeros(50, dtype=np.int64), 5)
    assert np.flatnonzero(grown).tolist() == [0, 10, 20, 30, 40]


def test_racks_put_members_on_rack_i_mod_3_and_replicas_on_two_adjacent_racks():
    """Tests PROVIDED: member i on rack i mod 3, partition p's replicas on racks p mod 3, p + 1 mod 3."""
    document = benchmark_document("fresh", 7, 5, 50, racks=True)
    assert [m["rack"] for m in document["members"]] == [f"rack{i % 3}" for i in range(7)]
    assert document["partition_racks"]["topic-0"][:4] == [
        ["rack0", "rack1"],
        ["rack1", "rack2"],
        ["rack2", "rack0"],
        ["rack0", "rack1"],
    ]
    assert "partition_racks" not in benchmark_document("fresh", 7, 5, 50)


def _assert_same_problem(built: GroupProblem, loaded: GroupProblem) -> None:
    """Every field, and the owned claims derived from them, equal in value, type and dtype."""
    for field in dataclasses.fields(loaded):
        ours, theirs = getattr(built, field.name), getattr(loaded, field.name)
        if isinstance(theirs, np.ndarray):
            assert isinstance(ours, np.ndarray) and ours.dtype == theirs.dtype, field.name
            assert np.array_equal(ours, theirs) and not ours.flags.writeable, field.name
        else:
            assert ours == theirs, field.name
    for name in ("owned_entry_topic", "owned_claim_topic"):
        ours, theirs = getattr(built, name), getattr(loaded, name)
        assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs), name
    for ours, theirs in zip(built.owned_claims, loaded.owned_claims):
        assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs)


@pytest.mark.parametrize("assignor", ["uniform", "range"])
@pytest.mark.parametrize("churn", sorted(EVENTS))
def test_the_group_built_from_arrays_is_the_loaded_document(churn, assignor):
    """Tests that ``benchmark_problem`` (the harness's arrays) is ``load_problem`` of
    ``benchmark_document`` (checked against Kafka's classes) field by field: every subscription,
    distribution and rack setting, at sizes with fewer members or topics than buckets, with one
    partition a topic, with leavers holding the most and with joiners holding nothing."""
    for members, topics, partitions in ((7, 5, 50), (2, 3, 4), (1, 1, 1), (20, 10, 100)):
        for distribution, pattern, racks in itertools.product(
            ("equal", "skewed"), ("equal", "disjoint", "nested"), (False, True)
        ):
            shape = dict(distribution=distribution, pattern=pattern, racks=racks, assignor=assignor)
            _assert_same_problem(
                benchmark_problem(churn, members, topics, partitions, **shape),
                load_problem(benchmark_document(churn, members, topics, partitions, **shape)),
            )


def test_the_grid_file_is_the_benchmark_grid():
    """Tests the shipped grid: 4,032 groups per assignor, every factor at the benchmark's levels."""
    experiment = load_suite("kafka-benchmark-grid")
    grid = [s for s in experiment.scenarios if s.assignor]
    assert len(grid) == 8064
    for assignor in ("range", "uniform"):
        assert sum(s.assignor == assignor for s in grid) == 4032
    assert {s.members for s in grid} == {5, 50, 500, 5000}
    assert {s.topics for s in grid} == {5, 50, 500, 5000}
    assert {s.partitions for s in grid} == {5000, 10000, 20000}
    assert {(s.judged_on, s.replication) for s in grid} == {("sticky", 0), ("rack-aware", 2)}


@pytest.mark.parametrize(
    ("factor", "value", "message"),
    [
        ("assignor", "sticky", "must be one of range, uniform"),
        ("churn", "zombie", "a Kafka benchmark group"),
        ("pattern", "random-subsets", "a Kafka benchmark group"),
    ],
)
def test_a_bad_benchmark_block_is_one_line_naming_the_field(factor, value, message):
    """Tests the assignor factor's checks: its levels, and the benchmark's events and shapes."""
    block = {
        "judged_on": "sticky",
        "churn": "fresh",
        "size": [30, 4, 3],
        "seed": 1,
        "assignor": "uniform",
    }
    with pytest.raises(ProblemError, match=message):
        expand({"name": "x", "description": "x", "scenarios": [{**block, factor: value}]})


@pytest.mark.parametrize("pattern", ["disjoint", "nested"])
def test_a_benchmark_subscription_without_an_assignor_is_refused(pattern):
    """Tests that a benchmark subscription pattern needs the block's assignor: without one, the
    experiment file is refused when read (as ``experiment show`` reads it), never in a worker."""
    block = {"judged_on": "sticky", "churn": "fresh", "size": [30, 4, 3], "seed": 1}
    with pytest.raises(ProblemError, match=r"pattern\[0\].*give the block an assignor"):
        expand({"name": "x", "description": "x", "scenarios": [{**block, "pattern": pattern}]})
    scenarios = expand(
        {
            "name": "x",
            "description": "x",
            "scenarios": [{**block, "pattern": pattern, "assignor": "range"}],
        }
    )
    assert [s.pattern for s in scenarios.scenarios] == [pattern]
