"""Tests of sticky-replica, PR 18903's two-stage heuristic (seed 004).

Pinned, hand-checked instances (the PR's two-move limitation among them), then
the PR's own jqwik properties as hypothesis properties over random clusters,
plus a brute-force check that the heuristic stops exactly when no possible
move is left, scored by the one evaluator.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from heuristics import kafka_default, sticky_replica
from problems import evaluate, load_problem
from support.cluster_strategies import clusters

TWO_MOVE = "examples/placement/pr-18903-two-move-limit.json"
PINNED = json.loads(
    (Path(__file__).parents[1] / "data" / "sticky_replica_pinned.json").read_text()
)["cases"]


def levels(problem, replicas):
    verdict = evaluate(problem, replicas, "replica")
    assert verdict.valid, verdict.violations
    return verdict.objective


def after_stage_one(problem) -> np.ndarray:
    """The placement after stage 1 (every replica on a live broker)."""
    return sticky_replica.stage_one(problem)


def pinned_document(cluster: dict) -> dict:
    """A pinned cluster from its compact form (brokers ``[id, rack]``, partitions ``[topic, index, replicas]``)."""
    return {
        "brokers": [
            {"id": b} if rack is None else {"id": b, "rack": rack} for b, rack in cluster["brokers"]
        ],
        "partitions": [
            {"topic": t, "partition": i, "replicas": r} for t, i, r in cluster["partitions"]
        ],
    }


@pytest.mark.parametrize("case", range(len(PINNED)))
def test_pinned_outputs_of_the_scoring_implementation(case):
    """Tests the answers against the pinned answers of a reference implementation, which scores every
    movable replica against every broker on each step: 50 random clusters with removed brokers, added
    empty brokers, racks and RF 1-3, and three larger kafka-default placements (1,200 partitions
    with 2 brokers removed, with one empty broker added; 600 on one rack).  The fast search must
    pick the same moves in the same order, so its answers and counts equal the reference's.
    """
    pinned = PINNED[case]
    result = sticky_replica.assign(load_problem(pinned_document(pinned["cluster"])))
    assert result.answer.tolist() == pinned["answer"]
    assert result.info == pinned["info"]


def test_two_move_limit_proposes_no_move():
    """Tests the PR's limitation: A on rack1's two brokers, B on rack2's; every single move worsens level 1."""
    problem = load_problem(TWO_MOVE)
    result = sticky_replica.assign(problem)
    assert result.answer.tolist() == [1, 2, 3, 4]
    assert result.objective == [4, 8, 2, 0]
    assert result.info == {"placed": 0, "moved": 0}
    # Every single move (any replica to any broker without its partition) worsens level 1.
    for slot, others in ((0, (3, 4)), (1, (3, 4)), (2, (1, 2)), (3, (1, 2))):
        for broker in others:
            moved = problem.replica_brokers.copy()
            moved[slot] = broker
            assert levels(problem, moved)[0] > 4


def test_stage_one_ranks_by_the_new_state():
    """Tests stage 1: replicas on removed broker 9 go to the empty broker of the other rack, the leader too."""
    problem = load_problem(
        {
            "brokers": [{"id": 1, "rack": "a"}, {"id": 2, "rack": "a"}, {"id": 3, "rack": "b"}],
            "partitions": [{"topic": "t", "partition": 0, "replicas": [9, 1]}],
        }
    )
    # Brokers 2 and 3 both reach r = 1; rack a already holds a replica, so level 2 picks 3.
    result = sticky_replica.assign(problem)
    assert result.answer.tolist() == [3, 1]
    assert result.objective == [2, 2, 1, 1]
    assert result.info == {"placed": 1, "moved": 0}


def test_stage_one_may_worsen_when_nothing_better_exists():
    """Tests that stage 1 places even when every choice is bad: one broker per rack left, both rack-mates gone."""
    problem = load_problem(
        {
            "brokers": [{"id": 1, "rack": "a"}, {"id": 2, "rack": "a"}],
            "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 7]}],
        }
    )
    assert sticky_replica.assign(problem).answer.tolist() == [1, 2]


def test_a_leader_move_that_keeps_levels_1_and_2():
    """Tests stage 2 moving a first replica for level 3 alone: t1-0 leaves broker 1 (2 leaders) for broker 2."""
    problem = load_problem(
        {
            "brokers": [{"id": 1}, {"id": 2}],
            "partitions": [
                {"topic": "t0", "partition": 0, "replicas": [1, 2]},
                {"topic": "t1", "partition": 0, "replicas": [1]},
            ],
        }
    )
    result = sticky_replica.assign(problem)
    assert result.answer.tolist() == [1, 2, 2]
    assert result.objective == [5, 5, 2, 1]
    assert result.info == {"placed": 0, "moved": 1}


def test_best_move_first_then_balanced():
    """Tests the ranking: from counts (4, 0, 0) the moves improve level 1 most first, then stop at equilibrium."""
    problem = load_problem(
        {
            "brokers": [{"id": 1}, {"id": 2}, {"id": 3}],
            "partitions": [{"topic": "t", "partition": i, "replicas": [1]} for i in range(4)],
        }
    )
    result = sticky_replica.assign(problem)
    counts = np.bincount(result.answer, minlength=4)[1:]
    assert sorted(counts.tolist()) == [1, 1, 2]
    assert result.objective == [6, 4, 6, 2]
    assert result.info["moved"] == 2


def test_moved_replicas_are_preferred():
    """Tests that a replica already moved moves again before an equally good fresh one.

    Brokers 3, 2, 0, 1 (in that order); 1000-1002 are gone.  Stage 1 (by hand):
    t0's second replica -> 3 (the only empty broker), t1's leader -> 3 (fewest
    leaders, listed first), t1's second -> 2, t2's two -> 3 and 2: counts
    3:3, 2:3, 0:1, 1:1.  Stage 2: moving t0's stage-1 replica (3 -> 0) and
    t0's original leader (2 -> 1) score the same (-2, 0, 0), and the fresh
    leader comes first in the list; the moved replica is preferred, then t1's
    from 2 -> 1.  Only the five forced moves are made; without the preference
    t0's leader would move too (six).
    """
    problem = load_problem(
        {
            "brokers": [{"id": 3}, {"id": 2}, {"id": 0}, {"id": 1}],
            "partitions": [
                {"topic": "t0", "partition": 0, "replicas": [2, 1002]},
                {"topic": "t1", "partition": 0, "replicas": [1000, 1002]},
                {"topic": "t2", "partition": 0, "replicas": [0, 1001, 1, 1002]},
            ],
        }
    )
    assert after_stage_one(problem).tolist() == [2, 3, 3, 2, 0, 3, 1, 2]
    result = sticky_replica.assign(problem)
    assert result.answer.tolist() == [2, 0, 3, 1, 0, 3, 1, 2]
    assert result.info == {"placed": 5, "moved": 2}
    assert result.objective[3] == 5


def test_pr_comparison_counterexamples():
    """Tests two clusters where kafka-default beats the PR's comparison: it is a tendency, not a theorem.

    The PR argues its algorithm beats the existing one (which "reassigns replicas
    randomly").  On the two-move case a lucky random start spreads both topics
    (seed 3: levels 1-2 (4, 4) against the heuristic's (4, 8)); and where the
    heuristic moves a first replica only for leader balance, a lucky start gets
    the same levels 1-3 with no move (seed 0), because reordering is free.
    """
    problem = load_problem(TWO_MOVE)
    assert kafka_default.assign(problem, seed=3).objective[:2] == [4, 4]
    assert sticky_replica.assign(problem).objective[:2] == [4, 8]
    problem = load_problem(
        {
            "brokers": [{"id": 1}, {"id": 2}],
            "partitions": [
                {"topic": "t0", "partition": 0, "replicas": [1, 2]},
                {"topic": "t1", "partition": 0, "replicas": [1]},
            ],
        }
    )
    assert kafka_default.assign(problem, seed=0).objective == [5, 5, 2, 0]
    assert sticky_replica.assign(problem).objective == [5, 5, 2, 1]


# ----------------------------------------------------------------- properties
@settings(max_examples=50)
@given(clusters())
def test_never_worsens_levels_1_and_2(problem):
    """Tests the PR's properties 1 and 2: the final levels 1-2 are no worse than after stage 1
    (the input if all live)."""
    result = sticky_replica.assign(problem)
    assert result.valid
    before = levels(problem, after_stage_one(problem))
    if not np.any(problem.replica_positions < 0):
        assert before == levels(problem, problem.replica_brokers)
    after = result.objective
    assert after[0] <= before[0] and after[1] <= before[1]
    # Every replica on a removed broker must move; nothing else moves back and forth for free.
    assert after[3] >= int(np.count_nonzero(problem.replica_positions < 0))


@settings(max_examples=50)
@given(clusters(racks=False))
def test_rack_unaware_reaches_broker_equilibrium(problem):
    """Tests the PR's third property: without racks, replica counts differ by at most one."""
    result = sticky_replica.assign(problem)
    counts = np.bincount(
        [problem.broker_index[int(b)] for b in result.answer], minlength=problem.num_brokers
    )
    assert counts.max() - counts.min() <= 1


@settings(max_examples=40)
@given(clusters(racks=False))
def test_rack_unaware_level_1_never_worse_than_kafka_default(problem):
    """Tests the PR's comparison where it is a theorem: without racks, level 1 beats or ties kafka-default's."""
    sticky = sticky_replica.assign(problem).objective
    for seed in range(3):
        kafka = kafka_default.assign(problem, seed=seed).objective
        assert sticky[0] <= kafka[0] and sticky[1] == kafka[1]


@settings(max_examples=100)
@given(clusters(max_brokers=6, max_topics=4, max_partitions=4))
def test_stops_exactly_when_no_possible_move_is_left(problem):
    """Tests the stopping rule by brute force: no single move improves a level without worsening level 1 or 2."""
    result = sticky_replica.assign(problem)
    answer = result.answer
    current = levels(problem, answer)
    start = problem.replica_start
    for p in range(problem.num_partitions):
        holders = set(answer[start[p] : start[p + 1]].tolist())
        for slot in range(start[p], start[p + 1]):
            for broker in problem.broker_ids.tolist():
                if broker in holders:
                    continue
                moved = answer.copy()
                moved[slot] = broker
                new = levels(problem, moved)
                delta = [new[i] - current[i] for i in range(3)]
                assert not (delta[0] <= 0 and delta[1] <= 0 and min(delta) < 0), (
                    slot,
                    broker,
                    delta,
                )


@settings(max_examples=15)
@given(clusters())
def test_deterministic(problem):
    """Tests that the heuristic gives the same answer twice."""
    assert (
        sticky_replica.assign(problem).answer.tolist()
        == sticky_replica.assign(problem).answer.tolist()
    )
