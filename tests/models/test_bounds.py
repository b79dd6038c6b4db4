"""Every proven bound is at most the best known value, for every exact backend that reports one.

For each family, every exact backend answers under a short time limit (so some stop at ``feasible``
with a bound below their answer) and every heuristic answers too; the best known value is the
lexicographic minimum over all their valid answers, re-scored by the evaluator.  A bound is
lexicographic (``(v_1, ..., v_i)``: no answer beats it on the levels it covers), so it must not
exceed the best known value's first levels.  The sticky variants' second level is moves, bounded by
``info["moves_bound"]``; a move limit bounds only the answers within it.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings

import models
from models.registry import STRATEGIES
from problems import evaluate, load_problem
from support.cluster_strategies import clusters
from support.lag_strategies import lag_groups
from support.problem_strategies import groups
from support.rack_strategies import rack_groups
from support.stream_join_strategies import joins

#: Seconds per exact solve: short, so that some solves end ``feasible`` with a bound.
LIMIT = 0.5


def exact(problem, strategy: str, solver: str, **options):
    """``models.solve`` with the short time limit (the flows, which run to the optimum, ignore it)."""
    return models.solve(problem, strategy, solver, time_limit=LIMIT, **options)


def heuristic_answers(problem, strategy: str) -> list:
    """The answers of the strategy's heuristic (every variant) and of its baselines."""
    entry = STRATEGIES[strategy]
    answers = [models.solve(problem, strategy, variant=v).answer for v in entry.heuristic.variants]
    return answers + [models.solve(problem, b).answer for b in entry.baselines]


def best_known(problem, strategy: str, answers, key=None) -> tuple:
    """The lexicographic least objective over the valid ``answers`` (``key``: another score of an answer)."""
    scores = []
    for answer in answers:
        verdict = evaluate(problem, answer, STRATEGIES[strategy].objective_on(problem))
        if verdict.valid:
            scores.append(tuple(verdict.objective) if key is None else key(answer, verdict))
    return min(scores)


def assert_bounded(bound, best: tuple, name: str) -> None:
    if bound is not None:
        assert tuple(bound) <= best[: len(bound)], (name, bound, best)


def check_family(problem, strategy: str, variants=(None,)) -> int:
    """Solve with every exact backend; check every bound against the best known value.  Returns the
    number of bounds below their own answer (timed-out solves), for the caller's curiosity."""
    results = {
        (solver, variant): exact(problem, strategy, solver, variant=variant)
        for solver in STRATEGIES[strategy].exact
        for variant in variants
    }
    answers = heuristic_answers(problem, strategy) + [
        r.answer for r in results.values() if r.answer is not None
    ]
    best = best_known(problem, strategy, answers)
    open_bounds = 0
    for (solver, variant), result in results.items():
        if variant == "sticky":  # lag-aware's sticky variant: (level 1, moves)

            def moves(answer, verdict):
                return verdict.objective[0], evaluate(problem, answer, "sticky").objective[1]

            sticky_best = best_known(problem, strategy, answers, key=moves)
            assert_bounded(result.bound, sticky_best, solver)
            if "moves_bound" in result.info and result.bound is not None:
                assert_bounded((*result.bound, result.info["moves_bound"]), sticky_best, solver)
        else:
            assert_bounded(result.bound, best, solver)
        if result.answer is not None and result.bound is not None:
            assert result.valid
            open_bounds += tuple(result.bound) < tuple(result.objective)[: len(result.bound)]
    return open_bounds


@settings(max_examples=10, deadline=None)
@given(groups(max_members=7, max_partitions=9))
def test_sticky_bounds(problem):
    """Tests sticky's CP-SAT, MIP and flow bounds against every answer found."""
    check_family(problem, "sticky")


@settings(max_examples=10, deadline=None)
@given(rack_groups(max_members=7, max_topics=4, max_partitions=10))
def test_rack_aware_bounds(problem):
    """Tests rack-aware's CP-SAT, MIP and flow bounds against every answer found."""
    check_family(problem, "rack-aware")


@settings(max_examples=10, deadline=None)
@given(joins(max_members=7, max_numbers=12))
def test_stream_join_bounds(problem):
    """Tests stream-join's CP-SAT, MIP and flow bounds against every answer found."""
    check_family(problem, "stream-join")


@settings(max_examples=12, deadline=None)
@given(
    lag_groups(
        max_members=6, max_partitions=12, shapes=("uniform", "skewed", "ties", "equal", "zero")
    )
)
def test_lag_aware_bounds(problem):
    """Tests lag-aware's CP-SAT and MIP bounds (size-free bounds included), both variants (lags the MIP takes)."""
    check_family(problem, "lag-aware", variants=(None, "sticky"))


@settings(max_examples=10, deadline=None)
@given(
    clusters(
        max_brokers=10, max_racks=4, max_topics=6, max_partitions=8, max_factor=3, max_removed=2
    )
)
def test_replica_bounds(problem):
    """Tests sticky-replica's CP-SAT, MIP and flow bounds, plain and under a move limit of forced + 1."""
    check_family(problem, "sticky-replica")
    limit = int(np.count_nonzero(problem.replica_positions < 0)) + 1
    limited = [
        exact(problem, "sticky-replica", solver, max_moves=limit)
        for solver in STRATEGIES["sticky-replica"].exact
    ]
    within = [
        a
        for a in heuristic_answers(problem, "sticky-replica") + [r.answer for r in limited]
        if a is not None and evaluate(problem, a, "replica").objective[3] <= limit
    ]
    if within:
        best = best_known(problem, "sticky-replica", within)
        for solver, result in zip(STRATEGIES["sticky-replica"].exact, limited):
            assert_bounded(result.bound, best, solver)


def test_lag_aware_out_of_time_bound_is_below_the_answer():
    """Tests that the lag property above meets open bounds: a 200 x 10 group stopped early is feasible with
    a bound strictly below its answer and below every heuristic's."""
    lags = [(7919 * i) % 10_007 * 10**8 + i for i in range(200)]  # too many bits for an even split
    problem = load_problem(
        {
            "topics": {"t": 200},
            "members": [{"id": f"c{m}", "topics": ["t"]} for m in range(10)],
            "lags": {"t": lags},
        }
    )
    assert check_family(problem, "lag-aware") >= 1
