"""Tests of the replica flow model (models.sticky_replica.flow): exhaustive references, CP-SAT, the two-move case.

Two references without the flow: :func:`support.exhaustive.optimum` enumerates every placement (up
to 3 partitions), and :func:`support.replica_exhaustive.exhaustive` (dynamic programming over broker
counts, every placement covered) reaches 12 partitions; it is itself checked against the
enumeration.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings

from experiments.scenarios import Scenario, build_problem
from models.options import SolveOptions
from models.sticky_replica import cpsat, flow
from problems import load_problem
from support import exhaustive
from support.cluster_strategies import clusters
from support.replica_exhaustive import exhaustive as dynamic_optimum

ROOT = Path(__file__).parents[3]
TWO_MOVE = "examples/placement/pr-18903-two-move-limit.json"


def test_two_move_case_shows_the_swap():
    """Tests the PR's limitation case by flow alone: [4, 8, 2, 0] -> [4, 4, 2, 2], proven."""
    result = flow.solve(load_problem(TWO_MOVE), SolveOptions())
    assert result.status == "optimal" and result.valid
    assert result.objective == [4, 4, 2, 2]
    assert result.bound == (4, 4, 2, 2)
    assert result.info["method"] == "flow"


def test_two_move_case_from_the_command_line():
    """Tests `reassign --strategy sticky-replica --solver flow --report` on the two-move case."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "experiments.cli",
            "reassign",
            "--strategy",
            "sticky-replica",
            "--solver",
            "flow",
            "--report",
            TWO_MOVE,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    placed = [sorted(p["replicas"]) for p in json.loads(done.stdout)["partitions"]]
    assert sorted(placed) != [[1, 2], [3, 4]]
    assert "levels before: (4, 8, 2, 0)" in done.stderr
    assert "levels after:  [4, 4, 2, 2]" in done.stderr
    assert "sticky-replica/flow: optimal" in done.stderr


@settings(max_examples=25, deadline=None)
@given(
    clusters(
        max_brokers=4, max_racks=2, max_topics=2, max_partitions=2, max_factor=3, max_removed=2
    )
)
def test_levels_equal_the_exhaustive_optimum(problem):
    """Tests that the flow's four levels equal the exhaustive lexicographic optimum (tiny clusters)."""
    assume(problem.num_partitions <= 3)
    result = flow.solve(problem, SolveOptions.of(time_limit=20))
    assert result.valid and result.status == "optimal"
    assert tuple(result.objective) == exhaustive.optimum(problem, "sticky-replica")
    assert result.bound == tuple(result.objective)


@settings(max_examples=25, deadline=None)
@given(
    clusters(
        max_brokers=4, max_racks=2, max_topics=2, max_partitions=2, max_factor=3, max_removed=2
    )
)
def test_dynamic_reference_equals_the_enumeration(problem):
    """Tests the dynamic-programming reference against the plain enumeration (tiny clusters)."""
    assume(problem.num_partitions <= 3)
    assert dynamic_optimum(problem) == exhaustive.optimum(problem, "sticky-replica")


def _flow_equals_exhaustive_and_cpsat(problem):
    result = flow.solve(problem, SolveOptions.of(time_limit=20))
    exact = cpsat.solve(problem, SolveOptions.of(time_limit=20, workers=1, seed=0))
    assert exact.status == "optimal"
    assert result.valid and result.status == "optimal"
    assert tuple(result.objective) == dynamic_optimum(problem) == tuple(exact.objective)
    assert result.bound == tuple(result.objective)


@settings(max_examples=20, deadline=None)
@given(
    clusters(
        max_brokers=6, max_racks=3, max_topics=3, max_partitions=4, max_factor=3, max_removed=2
    )
)
def test_levels_equal_exhaustive_and_cpsat_up_to_12_partitions(problem):
    """Tests flow = exhaustive search = CP-SAT on all four levels on clusters of at most 12 partitions, proven."""
    _flow_equals_exhaustive_and_cpsat(problem)


@settings(max_examples=8, deadline=None)
@given(
    clusters(
        max_brokers=6,
        max_racks=3,
        min_topics=3,
        max_topics=3,
        min_partitions=3,
        max_partitions=4,
        max_factor=3,
        max_removed=2,
    )
)
def test_levels_equal_exhaustive_and_cpsat_at_9_to_12_partitions(problem):
    """Tests the same at the top of the range (9 to 12 partitions), where hypothesis rarely goes by itself."""
    assert 9 <= problem.num_partitions <= 12
    _flow_equals_exhaustive_and_cpsat(problem)


@settings(max_examples=8, deadline=None)
@given(
    clusters(
        max_brokers=12, max_racks=4, max_topics=6, max_partitions=8, max_factor=3, max_removed=2
    )
)
def test_larger_clusters_agree_when_both_proven_and_bounds_hold(problem):
    """Tests flow = CP-SAT whenever both claim optimal, and every bound is at most the best known answer."""
    result = flow.solve(problem, SolveOptions.of(time_limit=5))
    exact = cpsat.solve(problem, SolveOptions.of(time_limit=5, workers=1, seed=0))
    assert result.valid and result.status in ("optimal", "feasible")
    best = min(
        tuple(result.objective), tuple(exact.objective) if exact.answer is not None else (np.inf,)
    )
    assert result.bound <= best
    if exact.bound is not None:
        assert exact.bound <= tuple(result.objective)
    # Levels 1 and 2 are always proven by the flow.
    assert result.bound[:2] == tuple(result.objective[:2])
    if exact.status == "optimal":
        assert tuple(result.objective[:2]) == tuple(exact.objective[:2])
    if result.status == exact.status == "optimal":
        assert result.objective == exact.objective


def test_frontier_and_fewest_moves_say_what_proved_them():
    """Tests which frontier points are flow-exact (k >= the optimum's moves, k < forced) and which CP-SAT's."""
    points = flow.frontier(load_problem(TWO_MOVE), 3, SolveOptions.of(time_limit=20))
    assert [p.status for p in points] == ["optimal"] * 4
    assert [p.info["method"] for p in points] == ["cpsat", "cpsat", "flow", "flow"]
    assert [p.objective for p in points] == [[4, 8, 2, 0], [4, 8, 2, 0], [4, 4, 2, 2], [4, 4, 2, 2]]
    problem = load_problem(
        {
            "brokers": [{"id": 1, "rack": "a"}, {"id": 2, "rack": "b"}, {"id": 3, "rack": "b"}],
            "partitions": [
                {"topic": "t", "partition": 0, "replicas": [9, 1]},
                {"topic": "t", "partition": 1, "replicas": [1, 2]},
            ],
        }
    )
    below = flow.solve(problem, SolveOptions.of(max_moves=0))
    assert below.status == "infeasible" and below.info["method"] == "flow"
    best = flow.solve(problem, SolveOptions())
    same = flow.fewest_moves(problem, best.answer, SolveOptions())
    assert same.status == "optimal" and same.info["method"] == "flow"
    assert same.objective[3] == best.objective[3] == same.info["moves_bound"]


def test_scenario_at_1000_partitions_is_proven_on_all_levels():
    """Tests the target shape (1,000 x RF 3, 30 brokers, 3 racks, 2 removed): optimal, bound = levels."""
    scenario = Scenario(
        "placement", "sticky-replica", "broker-removed", 1000, 30, 3, 1, replication=3
    )
    problem = load_problem(build_problem(scenario))
    result = flow.solve(problem, SolveOptions())
    assert result.status == "optimal" and result.valid
    assert result.bound == tuple(result.objective)
    assert result.objective[3] == int(np.count_nonzero(problem.replica_positions < 0))


def test_cost_range_is_checked():
    """Tests that weights beyond the exact 64-bit range are refused, not solved inexactly."""
    with pytest.raises(Exception, match="64-bit"):
        flow._check_cost_range(2**40, 2**30, 10)


def _two_stage(problem):
    sets, _ = flow._stage_a(problem)
    return flow.Result(
        problem,
        "sticky-replica",
        flow._replicas(problem, sets, flow.balanced_leaders(problem, sets)),
        objective_name="replica",
    )


def test_two_stage_is_not_always_lexicographic_and_cpsat_repairs_it():
    """Tests the pinned case where level 3 needs a move the flow's stage A does not make.

    Stage A's fewest moves (1) with leaders chosen after it give level 3 = 6; one
    more move lets the leaders even out (level 3 = 4, the bound), which the
    lexicographic order prefers.  CP-SAT on top (levels 1-2 fixed) proves it.
    """
    problem = load_problem(
        {
            "brokers": [{"id": b} for b in range(4)],
            "partitions": [
                {"topic": "t0", "partition": 0, "replicas": [3, 1000, 2]},
                {"topic": "t1", "partition": 0, "replicas": [2]},
                {"topic": "t1", "partition": 1, "replicas": [1]},
                {"topic": "t1", "partition": 2, "replicas": [1]},
            ],
        }
    )
    assert _two_stage(problem).objective == [10, 12, 6, 1]
    result = flow.solve(problem, SolveOptions.of(time_limit=20))
    assert result.status == "optimal" and result.info["method"] == "flow+cpsat"
    assert result.objective == [10, 12, 4, 2] == list(exhaustive.optimum(problem, "sticky-replica"))


def test_tied_replica_sets_can_hide_the_best_leaders():
    """Tests the pinned case where stage A's sets (among equally few moves) miss the leader bound; CP-SAT finds
    other sets with the same moves that meet it."""
    problem = load_problem(
        {
            "brokers": [{"id": b} for b in range(5)],
            "partitions": [
                {"topic": "t0", "partition": 0, "replicas": [1]},
                {"topic": "t0", "partition": 1, "replicas": [4]},
                {"topic": "t1", "partition": 0, "replicas": [1]},
                {"topic": "t2", "partition": 0, "replicas": [2, 0]},
                {"topic": "t2", "partition": 1, "replicas": [2, 0]},
            ],
        }
    )
    assert _two_stage(problem).objective == [11, 11, 7, 1]
    result = flow.solve(problem, SolveOptions.of(time_limit=20))
    assert result.status == "optimal" and result.objective == [11, 11, 5, 1]
