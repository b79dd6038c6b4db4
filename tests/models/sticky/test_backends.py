"""One behaviour suite for every sticky backend: heuristic, CP-SAT, MIP (HiGHS, CBC), min-cost flow.

PyJobShop style: the same tiny hand-checked instances and the same properties
run against each backend; then the exact backends are checked against each
other, against an exhaustive search and against the heuristic.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings

import heuristics.sticky.sticky as heuristic
import models.sticky.cpsat as cpsat
import models.sticky.flow as flow
import models.sticky.mip as mip
from experiments.cli import main
from models.options import SolveOptions
from problems import load_problem
from support import exhaustive
from support.problem_strategies import groups
from support.sticky_strategies import rebalances

EXAMPLES = Path(__file__).parents[3] / "examples" / "group"

BACKENDS = {
    "heuristic": heuristic.assign,
    # Generous limits: these instances prove in milliseconds, but a loaded CI machine must not
    # turn a slow child process into a status other than "optimal".
    "cpsat": functools.partial(cpsat.solve, options=SolveOptions(time_limit=60)),
    "mip-highs": functools.partial(mip.solve, options=SolveOptions(time_limit=60)),
    "mip-cbc": functools.partial(mip.solve, options=SolveOptions.of(backend="cbc", time_limit=60)),
    "flow": functools.partial(flow.solve, options=SolveOptions()),
}
EXACT = [name for name in BACKENDS if name != "heuristic"]

# name: (problem, heuristic's objective, optimal objective)
CASES = {
    "kafka-12464-c2-joins": (
        load_problem(EXAMPLES / "kafka-12464-c2-joins.json"),
        (34, 3),
        (34, 3),
    ),
    "kafka-12464-one-member-leaves": (
        load_problem(EXAMPLES / "kafka-12464-one-member-leaves.json"),
        (17, 0),
        (17, 0),
    ),
    "kip54-three-consumers": (
        load_problem(EXAMPLES / "kip-54-three-consumers.json"),
        (22, 0),
        (22, 0),
    ),
    # KIP-54's unequal subscriptions: counts 1, 2, 3 cannot be evened (C2 alone takes t2).
    "kip54-unequal": (
        load_problem(
            {
                "topics": {"t0": 1, "t1": 2, "t2": 3},
                "members": [
                    {"id": "C0", "topics": ["t0"]},
                    {"id": "C1", "topics": ["t0", "t1"]},
                    {"id": "C2", "topics": ["t0", "t1", "t2"]},
                ],
            }
        ),
        (14, 0),
        (14, 0),
    ),
    # KIP-54's condition is local: C (t only) 3, A (t, u) 2, B (u only) 1 allow no single move,
    # but the chain C -> A -> B (two moves) evens them out.  The heuristic keeps everything.
    "kip54-local-not-global": (
        load_problem(
            {
                "topics": {"t": 3, "u": 3},
                "members": [
                    {"id": "A", "topics": ["t", "u"], "owned": {"u": [1, 2]}, "generation": 1},
                    {"id": "B", "topics": ["u"], "owned": {"u": [0]}, "generation": 1},
                    {"id": "C", "topics": ["t"], "owned": {"t": [0, 1, 2]}, "generation": 1},
                ],
            }
        ),
        (14, 0),
        (12, 2),
    ),
    # KIP-341: A (5) beats stale B (3) on t0, A and C tie on t2: nobody keeps t2.
    "stale-and-tied-claims": (
        load_problem(
            {
                "topics": {"t": 3},
                "members": [
                    {"id": "A", "topics": ["t"], "owned": {"t": [0, 2]}, "generation": 5},
                    {"id": "B", "topics": ["t"], "owned": {"t": [0, 1]}, "generation": 3},
                    {"id": "C", "topics": ["t"], "owned": {"t": [2]}, "generation": 5},
                ],
            }
        ),
        (3, 0),
        (3, 0),
    ),
    "no-members": (load_problem({"topics": {"t": 3}, "members": []}), (0, 0), (0, 0)),
    "nobody-subscribes": (
        load_problem({"topics": {"t": 2}, "members": [{"id": "a", "topics": ["gone"]}]}),
        (0, 0),
        (0, 0),
    ),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_hand_checked_instances(backend, case):
    """Tests each backend's objective, status and validity on the hand-checked instances."""
    problem, by_heuristic, optimal = CASES[case]
    result = BACKENDS[backend](problem)
    assert result.valid, result.evaluation.violations
    assert tuple(result.objective) == (by_heuristic if backend == "heuristic" else optimal)
    assert result.status == ("heuristic" if backend == "heuristic" else "optimal")
    if backend != "heuristic":
        assert tuple(result.bound) == optimal


@pytest.mark.parametrize("backend", BACKENDS)
def test_c2_joins_keeps_seven_of_ten(backend):
    """Tests that when C2 joins C0 and C1 (5 each), every backend keeps 7 of their partitions and gives C2 three."""
    result = BACKENDS[backend](CASES["kafka-12464-c2-joins"][0])
    owned = {"C0": set(range(5)), "C1": set(range(5, 10))}
    kept = sum(len(owned[m] & set(result.assignment[m].get("t1", []))) for m in owned)
    assert kept == 7
    assert len(result.assignment["C2"]["t1"]) == 3


@pytest.mark.parametrize("solver", ["heuristic", "cpsat", "mip", "flow"])
def test_command_line(solver, capsys):
    """Tests `rebalance-lab assign --strategy sticky --solver S` on the one-member-leaves example."""
    assert (
        main(
            [
                "assign",
                "--strategy",
                "sticky",
                "--solver",
                solver,
                str(EXAMPLES / "kafka-12464-one-member-leaves.json"),
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    assert printed["objective"] == [17, 0]
    assert printed["status"] == ("heuristic" if solver == "heuristic" else "optimal")


def test_command_line_variant(capsys):
    """Tests `--variant kafka-9987` on the seed's example: C2 ends with t1p3, t1p4, t1p9."""
    assert (
        main(
            [
                "assign",
                "--strategy",
                "sticky",
                "--variant",
                "kafka-9987",
                str(EXAMPLES / "kafka-12464-c2-joins.json"),
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    assert printed["assignment"]["C2"] == {"t1": [3, 4, 9]}
    assert printed["algorithm"] == "kafka-9987"


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=20)
@given(problem=rebalances())
def test_churned_groups_valid(backend, problem):
    """Tests that every backend's answer after churn is valid, with the backend's status."""
    result = BACKENDS[backend](problem)
    assert result.valid, result.evaluation.violations
    assert result.status == ("heuristic" if backend == "heuristic" else "optimal")


@settings(max_examples=40)
@given(problem=groups(max_members=7, max_partitions=9))
def test_exact_backends_agree_and_bound_the_heuristic(problem):
    """Tests cpsat = mip (HiGHS, CBC) = flow on both levels, equal to their bound, and flow <= heuristic."""
    results = {name: BACKENDS[name](problem) for name in EXACT}
    assert all(r.status == "optimal" for r in results.values()), {
        n: r.status for n, r in results.items()
    }
    objectives = {tuple(r.objective) for r in results.values()}
    assert len(objectives) == 1, {name: r.objective for name, r in results.items()}
    optimum = objectives.pop()
    assert all(tuple(r.bound) == optimum for r in results.values())
    assert optimum <= tuple(heuristic.assign(problem).objective)


@settings(max_examples=60)
@given(problem=groups(max_members=3, max_partitions=2))
def test_exact_backends_match_exhaustive_search(problem):
    """Tests the models' aggregation into classes: their optimum equals the best of every partition-to-member map."""
    optimum = exhaustive.optimum(problem, "sticky")
    for name in ("cpsat", "flow"):
        assert tuple(BACKENDS[name](problem).objective) == optimum, name
