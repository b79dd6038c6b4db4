"""One behaviour suite for every exact rack-aware model (CP-SAT, PuLP-HiGHS, PuLP-CBC, flow), and their agreement.

Each backend answers the pinned cases and tiny random groups against brute force; then on larger
groups every backend that claims ``optimal`` agrees with the others and with its own bound, and no
heuristic judged on ``rack-aware`` (the strategy's own, its baselines, sticky's variants) beats the
exact answer.
"""

from __future__ import annotations

import functools

import pytest
from hypothesis import assume, given, settings

import models
from models.options import SolveOptions
from models.rack_aware import cpsat, flow, mip
from models.registry import STRATEGIES
from problems import ProblemError, evaluate, load_problem
from support import exhaustive
from support.rack_strategies import rack_groups

BACKENDS = {
    "cpsat": functools.partial(cpsat.solve, options=SolveOptions(time_limit=20)),
    "mip-highs": functools.partial(
        mip.solve, options=SolveOptions.of(time_limit=20, backend="highs")
    ),
    "mip-cbc": functools.partial(mip.solve, options=SolveOptions.of(time_limit=20, backend="cbc")),
    "flow": functools.partial(flow.solve, options=SolveOptions()),
}
backends = pytest.mark.parametrize("backend", BACKENDS.values(), ids=BACKENDS.keys())


@backends
def test_alignment_ranks_below_balance_and_above_moves(backend):
    """Tests a hand-checked group: c0 (rack a) owns both partitions, whose replicas are on rack b; c1 is on b.

    Balance first: one partition each (level 1 = 2).  Then alignment: c0 gets a partition off its
    rack
    whatever happens (1 mismatch).  Then moves: c0 keeps one, one moves (1 move)."""
    problem = load_problem(
        {
            "topics": {"t": 2},
            "members": [
                {"id": "c0", "topics": ["t"], "rack": "a", "owned": {"t": [0, 1]}},
                {"id": "c1", "topics": ["t"], "rack": "b"},
            ],
            "partition_racks": {"t": [["b"], ["b", "c"]]},
        }
    )
    result = backend(problem)
    assert result.status == "optimal" and result.valid
    assert result.objective == [2, 1, 1] and tuple(result.bound) == (2, 1, 1)


@backends
def test_alignment_beats_stickiness(backend):
    """Tests that c0 (rack a) gives up its partition on rack b for the one on rack a: 2 moves, 0 mismatches."""
    problem = load_problem(
        {
            "topics": {"t": 2},
            "members": [
                {"id": "c0", "topics": ["t"], "rack": "a", "owned": {"t": [0]}},
                {"id": "c1", "topics": ["t"], "rack": "b", "owned": {"t": [1]}},
            ],
            "partition_racks": {"t": [["b"], ["a"]]},
        }
    )
    result = backend(problem)
    assert result.assignment == {"c0": {"t": [1]}, "c1": {"t": [0]}}
    assert result.objective == [2, 0, 2]


@backends
def test_rackless_members_and_partitions_without_replica_racks(backend):
    """Tests that a rackless member takes anything at no mismatch, and that a partition without replica racks
    counts for every member with a rack (Kafka's racksMismatch)."""
    problem = load_problem(
        {
            "topics": {"t": 2},
            "members": [{"id": "c0", "topics": ["t"], "rack": "a"}, {"id": "c1", "topics": ["t"]}],
            "partition_racks": {"t": [[], ["a"]]},
        }
    )
    assert backend(problem).objective == [2, 0, 0]


@backends
def test_empty_group(backend):
    """Tests that nothing to assign is optimal at (0, 0, 0)."""
    result = backend(
        load_problem({"topics": {"t": 2}, "members": [], "partition_racks": {"t": [["a"], []]}})
    )
    assert (
        result.status == "optimal"
        and result.objective == [0, 0, 0]
        and result.answer.tolist() == [-1, -1]
    )


@backends
@settings(max_examples=40, deadline=None)
@given(rack_groups())
def test_levels_equal_brute_force(backend, problem):
    """Tests all three levels against enumeration of every assignment (tiny groups), and the bound."""
    assume(exhaustive.count(problem) <= 5_000)
    result = backend(problem)
    assert result.status == "optimal" and result.valid, result.evaluation.violations
    assert (
        tuple(result.objective) == exhaustive.optimum(problem, "rack-aware") == tuple(result.bound)
    )


def heuristic_objectives(problem) -> dict[str, list[int]]:
    """Every heuristic judged on rack-aware: the strategy's own and its baselines (and sticky's variants)."""
    entry = STRATEGIES["rack-aware"]
    found = {name: models.solve(problem, name) for name in ("rack-aware", *entry.baselines)}
    for variant in STRATEGIES["sticky"].heuristic.variants:
        found[f"sticky/{variant}"] = models.solve(problem, "sticky", variant=variant)
    return {
        name: list(evaluate(problem, r.answer, "rack-aware").objective) for name, r in found.items()
    }


@settings(max_examples=25, deadline=None)
@given(rack_groups(max_members=7, max_topics=4, max_partitions=10))
def test_backends_agree_and_never_lose_to_a_heuristic(problem):
    """Tests cpsat = mip (both) = flow where all claim optimal, each bound at most the best answer found, and
    exact <= every heuristic lexicographically (level k <= theirs whenever the levels above tie)."""
    results = {name: backend(problem) for name, backend in BACKENDS.items()}
    assert results["flow"].status == "optimal"
    heuristics = heuristic_objectives(problem)
    best = min([r.objective for r in results.values() if r.valid] + list(heuristics.values()))
    for name, result in results.items():
        assert result.answer is None or result.valid, name
        if result.bound is not None:
            assert tuple(result.bound) <= tuple(best)[: len(result.bound)], name
    proven = {name: r.objective for name, r in results.items() if r.status == "optimal"}
    assert len({tuple(v) for v in proven.values()}) == 1, proven
    for name, objective in heuristics.items():
        assert results["flow"].objective <= objective, name


@pytest.mark.parametrize("module", [cpsat, mip])
def test_models_refuse_groups_beyond_their_size(module):
    """Tests that CP-SAT and the MIP refuse (one-line error) a group beyond their pair limit; flow answers it."""
    doc = {
        "topics": {"t": 3000},
        "members": [
            {
                "id": f"c{m}",
                "topics": ["t"],
                "rack": "ab"[m % 2],
                "owned": {"t": list(range(m, 3000, 600))},
            }
            for m in range(600)
        ],
        "partition_racks": {"t": [["a"]] * 3000},
    }
    problem = load_problem(doc)  # 600 classes (one per owner) x 600 members
    with pytest.raises(ProblemError, match="use --solver flow"):
        module.solve(problem, SolveOptions.of(time_limit=5))
    assert flow.solve(problem, SolveOptions()).objective == [
        600 * 5**2,
        300 * 5,
        0,
    ]  # rack b's members misaligned, nothing moves
