"""The class network (the ``aggregate`` solver): exact on every group, against the flow and CP-SAT.

Random small groups (hypothesis: mixed subscriptions, deleted topics, stale and conflicting claims,
members with and without racks, partitions with 0-3 replica racks) get the same objective levels
from the class network as from the general min-cost flow and CP-SAT, with status ``optimal``, a
bound equal to the evaluator's levels and a valid answer; Kafka benchmark cells agree with the
general flow; and the certificate is a real check (a wrong balance range is caught and the general
flow answers instead).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from experiments.kafka_grid import benchmark_document
from models.common import class_network
from models.options import SolveOptions
from models.rack_aware import cpsat as cpsat_rack_aware
from models.rack_aware import flow as flow_rack_aware
from models.registry import STRATEGIES
from models.sticky import cpsat as cpsat_sticky
from models.sticky import flow as flow_sticky
from problems import evaluate, load_problem
from support.problem_strategies import groups
from support.rack_strategies import rack_groups


def _checked(problem, strategy: str):
    result = class_network.solve(problem, strategy)
    verdict = evaluate(problem, result.answer, strategy)
    assert result.status == "optimal" and verdict.valid
    assert list(result.bound) == list(verdict.objective)
    return result


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups(racks=True))
def test_sticky_levels_match_the_general_flow(problem):
    """Tests random groups on sticky: the class network's levels are the general flow's."""
    ours = _checked(problem, "sticky")
    reference = flow_sticky.solve(problem, SolveOptions())
    assert list(ours.bound) == list(reference.bound)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rack_groups())
def test_rack_aware_levels_match_the_general_flow(problem):
    """Tests random racked groups on rack-aware: the class network's levels are the general flow's."""
    ours = _checked(problem, "rack-aware")
    reference = flow_rack_aware.solve(problem, SolveOptions())
    assert list(ours.bound) == list(reference.bound)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rack_groups(max_members=3, max_topics=2, max_partitions=3))
def test_levels_match_cp_sat(problem):
    """Tests tiny groups against CP-SAT on both objectives (CP-SAT proves its optimum too)."""
    for strategy, model in (("sticky", cpsat_sticky), ("rack-aware", cpsat_rack_aware)):
        ours = _checked(problem, strategy)
        reference = model.solve(problem, SolveOptions(time_limit=20))
        assert reference.status == "optimal"
        assert list(ours.bound) == list(reference.objective)


CELLS = [
    ("stable", 50, 50, 5000, "skewed", "nested", True, "uniform"),
    ("join-many", 50, 5, 5000, "equal", "disjoint", True, "range"),
    ("leave-many", 50, 50, 5000, "skewed", "equal", False, "uniform"),
    ("partitions-grow", 5, 50, 5000, "skewed", "nested", True, "range"),
    ("member-leaves", 500, 50, 5000, "equal", "nested", False, "range"),
    ("fresh", 50, 500, 5000, "skewed", "disjoint", True, "uniform"),
]


@pytest.mark.parametrize("cell", CELLS, ids=lambda c: "-".join(map(str, c)))
def test_benchmark_cells_match_the_general_flow_on_the_classes_alone(cell):
    """Tests Kafka benchmark cells: the class network answers them itself, with the flow's levels."""
    event, members, topics, partitions, distribution, pattern, racks, assignor = cell
    problem = load_problem(
        benchmark_document(
            event,
            members,
            topics,
            partitions,
            distribution=distribution,
            pattern=pattern,
            racks=racks,
            assignor=assignor,
        )
    )
    strategy = "rack-aware" if racks else "sticky"
    ours = _checked(problem, strategy)
    assert ours.info["method"] == "class-flow"
    reference = (flow_rack_aware if racks else flow_sticky).solve(problem, SolveOptions())
    assert list(ours.bound) == list(reference.bound)


def test_a_wrong_balance_range_is_caught_and_the_general_flow_answers(monkeypatch):
    """Tests the certificate: a balance range shifted off the optimum fails it (or the network), and
    the answer still comes proven, from the general flow."""
    problem = load_problem(benchmark_document("stable", 50, 50, 5000, pattern="nested"))

    def shifted(self):
        x = original(self)
        return np.stack((x[:, 0] + 3 * x[:, 1], x[:, 1]), axis=1)

    original = class_network.ClassNetwork._balance_range
    monkeypatch.setattr(class_network.ClassNetwork, "_balance_range", shifted)
    result = class_network.solve(problem, "sticky")
    assert result.info["method"].startswith("general flow")
    assert result.status == "optimal"
    assert list(result.bound) == list(flow_sticky.solve(problem, SolveOptions()).bound)


def test_many_subscription_classes_go_to_the_general_flow():
    """Tests a group with more subscription classes than the peeling takes: the general flow."""
    topics = {f"t{i}": 2 for i in range(class_network.MAX_PEELED_CLASSES + 2)}
    members = [{"id": f"m{i}", "topics": [f"t{i}"]} for i in range(len(topics))]
    problem = load_problem({"topics": topics, "members": members})
    result = class_network.solve(problem, "sticky")
    assert result.status == "optimal" and "subscription classes" in result.info["method"]
    assert list(result.bound) == [4 * len(topics), 0]


def test_the_registry_names_it_aggregate_for_sticky_and_rack_aware():
    """Tests the registration: ``aggregate`` is an exact backend of sticky and rack-aware."""
    assert "aggregate" in STRATEGIES["sticky"].exact
    assert "aggregate" in STRATEGIES["rack-aware"].exact
    problem = load_problem({"topics": {"t": 3}, "members": [{"id": "a", "topics": ["t"]}]})
    backend = STRATEGIES["rack-aware"].exact["aggregate"].load()
    assert backend.solve(problem, SolveOptions()).bound == (9, 0, 0)
