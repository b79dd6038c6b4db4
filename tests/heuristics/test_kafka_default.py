"""Tests of kafka-default: Kafka's own replica-assignment test scenarios, replayed.

Scenarios (broker -> rack maps, partition counts, replication factors, fixed
start indices and expected placements) come from Apache Kafka's test suite in
the apache/kafka repository:

* core/src/test/scala/unit/kafka/admin/AdminRackAwareTest.scala (every test),
  with the checks of RackAwareTest.checkReplicaDistribution (no broker twice in
  a partition; each partition on ``RF`` racks; every broker leads exactly
  ``P / B`` partitions; every broker holds exactly ``P * RF / B`` replicas);
* AdminTest.testReplicaAssignment (rack-unaware, 5 brokers, 10 partitions,
  RF 3, fixed start index 0).

Kafka runs its "random start index" scenarios once with a random draw; here
they run for 20 seeds and for every fixed start index.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from heuristics import kafka_default
from heuristics.kafka_default import _rack_alternated
from problems import evaluate, load_problem
from support.cluster_strategies import clusters


def cluster(racks: dict[int, str | None], partitions: int, factor: int, first_partition: int = 0):
    """One topic ``t`` over brokers sorted by id (Kafka's toBrokerMetadata); current replicas arbitrary."""
    ids = sorted(racks)
    brokers = [{"id": b} if racks[b] is None else {"id": b, "rack": racks[b]} for b in ids]
    parts = [
        {"topic": "t", "partition": first_partition + i, "replicas": ids[:factor]}
        for i in range(partitions)
    ]
    return load_problem({"brokers": brokers, "partitions": parts})


def placement(result) -> dict[int, list[int]]:
    """Partition index -> replica list, as Kafka's assignment maps."""
    problem = result.problem
    start = problem.replica_start
    return {
        int(problem.partitions[p]): result.answer[start[p] : start[p + 1]].tolist()
        for p in range(problem.num_partitions)
    }


def check_replica_distribution(result, racks, factor, rack_aware=True, leaders=True, replicas=True):
    """Kafka's RackAwareTest.checkReplicaDistribution."""
    assignment = placement(result)
    brokers, partitions = len(racks), len(assignment)
    for replica_list in assignment.values():
        assert len(set(replica_list)) == len(replica_list)
    if rack_aware:
        assert [len({racks[b] for b in r}) for r in assignment.values()] == [factor] * partitions
    if leaders:
        counts = np.bincount([r[0] for r in assignment.values()], minlength=max(racks) + 1)[
            sorted(racks)
        ]
        assert counts.tolist() == [partitions // brokers] * brokers
    if replicas:
        counts = np.bincount([b for r in assignment.values() for b in r], minlength=max(racks) + 1)[
            sorted(racks)
        ]
        assert counts.tolist() == [partitions * factor // brokers] * brokers


SIX = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}
STARTS = [{"seed": s} for s in range(20)] + [{"start_index": i} for i in range(6)]


def test_rack_alternated_broker_list():
    """Tests that the rack-alternated list is Kafka's (testGetRackAlternatedBrokerListAndAssignReplicasToBrokers)."""
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert _rack_alternated(racks, racks.values()) == [0, 3, 1, 5, 4, 2]
    del racks[5]
    assert _rack_alternated(racks, racks.values()) == [0, 3, 1, 4, 2]


def test_rack_aware_placement_equals_kafkas_with_fixed_start_index():
    """Tests Kafka's exact rack-aware placement: 7 partitions, RF 3, fixedStartIndex 0, startPartitionId 0."""
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    result = kafka_default.assign(cluster(racks, 7, 3), start_index=0)
    assert placement(result) == {
        0: [0, 3, 1],
        1: [3, 1, 5],
        2: [1, 5, 4],
        3: [5, 4, 2],
        4: [4, 2, 0],
        5: [2, 0, 3],
        6: [0, 4, 2],
    }


def test_rack_unaware_placement_equals_kafkas_with_fixed_start_index():
    """Tests Kafka's exact rack-unaware placement (AdminTest.testReplicaAssignment): 5 brokers, 10 x RF 3."""
    result = kafka_default.assign(cluster(dict.fromkeys(range(5)), 10, 3), start_index=0)
    assert placement(result) == {
        0: [0, 1, 2],
        1: [1, 2, 3],
        2: [2, 3, 4],
        3: [3, 4, 0],
        4: [4, 0, 1],
        5: [0, 2, 3],
        6: [1, 3, 4],
        7: [2, 4, 0],
        8: [3, 0, 1],
        9: [4, 1, 2],
    }


def test_assignment_with_rack_aware_fixed_start_index_2():
    """Tests testAssignmentWithRackAware: 6 partitions x RF 3 on 6 brokers, 3 racks, fixedStartIndex 2."""
    check_replica_distribution(kafka_default.assign(cluster(SIX, 6, 3), start_index=2), SIX, 3)


@pytest.mark.parametrize("start", STARTS, ids=str)
@pytest.mark.parametrize(
    "racks, partitions, factor, checks",
    [
        (SIX, 6, 3, {}),  # testAssignmentWithRackAwareWithRandomStartIndex
        (
            {0: "rack1", 1: "rack1", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"},
            12,
            3,
            {"replicas": False},
        ),  # testAssignmentWithRackAwareWithUnevenRacks
        (SIX, 12, 2, {}),  # testAssignmentWith2ReplicasRackAware
        (SIX, 6, 2, {}),  # testAssignmentWith2ReplicasRackAwareWith6Partitions
        ({0: "rack1", 1: "rack2", 4: "rack3"}, 3, 2, {}),  # ...With6PartitionsAnd3Brokers
        (
            {**SIX, 6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack1", 11: "rack3"},
            96,
            3,
            {},
        ),  # testLargeNumberPartitionsAssignment
    ],
    ids=[
        "random-start",
        "uneven-racks",
        "rf2",
        "rf2-6-partitions",
        "rf2-3-brokers",
        "96-partitions",
    ],
)
def test_kafka_rack_aware_distribution_scenarios(racks, partitions, factor, checks, start):
    """Tests Kafka's rack-aware scenarios whose start is random: the distribution checks hold for every start."""
    result = kafka_default.assign(cluster(racks, partitions, factor), **start)
    check_replica_distribution(result, racks, factor, **checks)


@pytest.mark.parametrize("start", STARTS, ids=str)
def test_rack_aware_expansion_from_partition_12(start):
    """Tests testRackAwareExpansion: brokers 6-11, partitions 12-23 (startPartitionId 12), RF 2."""
    racks = {6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack3", 11: "rack1"}
    result = kafka_default.assign(cluster(racks, 12, 2, first_partition=12), **start)
    assert sorted(placement(result)) == list(range(12, 24))
    check_replica_distribution(result, racks, 2)


def test_uneven_replicas_fixed_start_index_0():
    """Tests testAssignmentWithRackAwareWithUnevenReplicas: 13 x RF 3, fixedStartIndex 0: rack-aware."""
    result = kafka_default.assign(cluster(SIX, 13, 3), start_index=0)
    check_replica_distribution(result, SIX, 3, leaders=False, replicas=False)


@pytest.mark.parametrize("start", STARTS, ids=str)
@pytest.mark.parametrize(
    "factor, spread", [(5, 3), (2, 2)], ids=["more-replicas-than-racks", "less"]
)
def test_replicas_spread_over_racks(factor, spread, start):
    """Tests testMoreReplicasThanRacks (RF 5 on 3 racks: all 3) and testLessReplicasThanRacks (RF 2: 2 racks)."""
    racks = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"}
    assignment = placement(kafka_default.assign(cluster(racks, 6, factor), **start))
    assert all(len(r) == factor for r in assignment.values())
    assert [len({racks[b] for b in r}) for r in assignment.values()] == [spread] * 6


@pytest.mark.parametrize("start", STARTS, ids=str)
def test_single_rack(start):
    """Tests testSingleRack: one rack, 6 x RF 3: one rack per partition, one leader per broker."""
    racks = dict.fromkeys(range(6), "rack1")
    assignment = placement(kafka_default.assign(cluster(racks, 6, 3), **start))
    assert all(len(r) == 3 for r in assignment.values())
    assert sorted(r[0] for r in assignment.values()) == list(range(6))


def test_skip_broker_with_replica_already_assigned():
    """Tests testSkipBrokerWithReplicaAlreadyAssigned: racks a,b,c,a,a, 6 x RF 4, fixedStartIndex 2."""
    racks = {0: "a", 1: "b", 2: "c", 3: "a", 4: "a"}
    result = kafka_default.assign(cluster(racks, 6, 4), start_index=2)
    check_replica_distribution(result, racks, 4, rack_aware=False, leaders=False, replicas=False)
    assert result.valid


def test_seed_reproduces_and_start_index_wins():
    """Tests that a seed gives the same placement twice and that a fixed start index ignores the seed."""
    problem = cluster(SIX, 12, 3)
    assert placement(kafka_default.assign(problem, seed=7)) == placement(
        kafka_default.assign(problem, seed=7)
    )
    assert placement(kafka_default.assign(problem, seed=1, start_index=0)) == placement(
        kafka_default.assign(problem, start_index=0)
    )


def test_two_move_example_with_seed():
    """Tests kafka-default on the PR 18903 example: the two topics draw separate starts (seed 3: both spread)."""
    problem = load_problem("examples/placement/pr-18903-two-move-limit.json")
    result = kafka_default.assign(problem, seed=3)
    assert result.answer.tolist() == [3, 1, 2, 4]
    assert result.objective == [4, 4, 2, 2]


@settings(max_examples=60)
@given(clusters())
def test_output_is_a_valid_placement_that_ignores_the_current_one(problem):
    """Tests that kafka-default always places validly, and that only replication factors of the input matter."""
    result = kafka_default.assign(problem, seed=0)
    assert evaluate(problem, result.answer, "replica").valid
    assert result.status == "heuristic"
    # Kafka ignores the current placement: feed it its own answer, get the same answer back.
    start = problem.replica_start
    again = load_problem(
        {
            "brokers": [
                {"id": int(b)} if r is None else {"id": int(b), "rack": r}
                for b, r in zip(problem.broker_ids, problem.broker_racks)
            ],
            "partitions": [
                {
                    "topic": problem.topics[p],
                    "partition": int(problem.partitions[p]),
                    "replicas": result.answer[start[p] : start[p + 1]].tolist(),
                }
                for p in range(problem.num_partitions)
            ],
        }
    )
    assert kafka_default.assign(again, seed=0).answer.tolist() == result.answer.tolist()
