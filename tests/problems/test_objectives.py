"""Tests of problems.objectives: the catalogue of objectives and of the objective each strategy is judged on."""

from __future__ import annotations

from models.registry import STRATEGIES
from problems import evaluate, load_problem
from problems.objectives import (
    GROUP_STRATEGIES,
    LEVELS,
    OBJECTIVES,
    PLACEMENT_STRATEGIES,
    RACK_JUDGED,
    STRATEGY_OBJECTIVE,
    STREAMS_STRATEGIES,
    objective_of,
)


def test_every_registered_strategy_has_its_registry_objective():
    """Tests the catalogue against the strategy table: the same strategies, each judged on the same objective."""
    assert set(STRATEGY_OBJECTIVE) == set(STRATEGIES)
    assert {name: entry.objective for name, entry in STRATEGIES.items()} == STRATEGY_OBJECTIVE
    assert set(STRATEGY_OBJECTIVE.values()) <= set(OBJECTIVES)


def test_families_split_the_strategies_and_levels_fit_every_objective():
    """Tests that the group, placement and streams strategies partition the catalogue, and LEVELS
    is the widest objective."""
    assert set(GROUP_STRATEGIES).isdisjoint(PLACEMENT_STRATEGIES)
    assert set(GROUP_STRATEGIES).isdisjoint(STREAMS_STRATEGIES)
    assert set(GROUP_STRATEGIES) | set(PLACEMENT_STRATEGIES) | set(STREAMS_STRATEGIES) == set(
        STRATEGY_OBJECTIVE
    )
    assert LEVELS == len(OBJECTIVES["streams"]) == 6
    assert RACK_JUDGED <= set(GROUP_STRATEGIES)


def test_the_evaluator_scores_on_the_catalogue_objective():
    """Tests that evaluate names the levels of objective_of's objective (one catalogue, read by the evaluator)."""
    problem = load_problem(
        {"topics": {"t": 2}, "members": [{"id": "c0", "topics": ["t"]}], "lags": {"t": [3, 4]}}
    )
    for strategy in GROUP_STRATEGIES:
        assert (
            evaluate(problem, [0, 0], strategy).names == OBJECTIVES[objective_of(problem, strategy)]
        )
