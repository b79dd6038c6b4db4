"""One behaviour suite for every lag-aware solver backend (heuristic, CP-SAT, MIP), and their agreement."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import heuristics.lag_aware as heuristic
import models.common.mip_ranked as mip_common
import models.lag_aware.cpsat as cpsat
import models.lag_aware.data as lag_aware_data
import models.lag_aware.mip as mip
from models.options import SolveOptions
from problems import evaluate, load_problem
from support.exhaustive import lag_aware_optimum
from support.lag_strategies import lag_groups

EXAMPLES = Path(__file__).parents[3] / "examples" / "group"

BACKENDS = {
    "heuristic": lambda problem, **options: heuristic.assign(problem, **options),
    "cpsat": lambda problem, **options: cpsat.solve(
        problem, SolveOptions.of(time_limit=20, **options)
    ),
    "mip": lambda problem, **options: mip.solve(problem, SolveOptions.of(time_limit=20, **options)),
}
EXACT = ["cpsat", "mip"]
#: Small enough for every backend's bounds (the MIP's is the tightest) and for brute force.
SMALL = dict(max_members=3, max_partitions=4, shapes=("uniform", "skewed", "ties", "equal", "zero"))


@contextmanager
def models_alone() -> Iterator[None]:
    """The exact solvers without the search of models.lag_aware.search (which answers small groups
    before any model is built): their own formulations answer."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lag_aware_data, "SEARCH_SECONDS", 0.0)
        yield


@pytest.mark.parametrize("backend", BACKENDS)
def test_kip169_example_table(backend):
    """Tests that KIP-169's example gives its table: c_0 t0p0 (100,000), c_1 t0p1, t0p2 (110,000)."""
    result = BACKENDS[backend](load_problem(EXAMPLES / "kip-169-three-lags.json"))
    assert result.assignment == {"c_0": {"t0": [0]}, "c_1": {"t0": [1, 2]}}
    assert result.objective == [110_000, 100_000**2 + 110_000**2]
    assert result.status == ("heuristic" if backend == "heuristic" else "optimal")


@pytest.mark.parametrize("backend", EXACT)
def test_greedy_is_strictly_worse_than_optimal(backend):
    """Tests the instance where the greedy's level 1 is 70,000 and the proven optimum 60,000."""
    problem = load_problem(EXAMPLES / "lag-aware-greedy-not-optimal.json")
    greedy = heuristic.assign(problem)
    exact = BACKENDS[backend](problem)
    assert greedy.objective == [70_000, 70_000**2 + 50_000**2]
    assert exact.status == "optimal" and exact.objective == [60_000, 3 * 20_000**2 * 3 + 60_000**2]
    assert list(exact.bound) == exact.objective
    # c_0 and c_1 are interchangeable and both end at 60,000: either may take the three 20,000s.
    assert sorted(owned["t0"] for owned in exact.assignment.values()) == [[0, 1], [2, 3, 4]]


@pytest.mark.parametrize("backend", BACKENDS)
def test_empty_group_and_topics_without_subscribers(backend):
    """Tests that a group without members leaves every partition unassigned, validly."""
    problem = load_problem({"topics": {"t0": 2}, "members": [], "lags": {"t0": [3, 4]}})
    result = BACKENDS[backend](problem)
    assert result.valid and result.answer.tolist() == [-1, -1] and result.objective == [0, 0]


@pytest.mark.parametrize("backend", EXACT)
def test_sticky_variant_on_kip169_example_keeps_level_one_then_moves(backend):
    """Tests that with c_0 owning everything the sticky variant keeps level 1 = 110,000 and moves one partition."""
    doc = {
        "topics": {"t0": 3},
        "members": [
            {"id": "c_0", "topics": ["t0"], "owned": {"t0": [0, 1, 2]}},
            {"id": "c_1", "topics": ["t0"]},
        ],
        "lags": {"t0": [100_000, 60_000, 50_000]},
    }
    result = BACKENDS[backend](load_problem(doc), variant="sticky")
    assert result.status == "optimal"
    assert result.assignment == {"c_0": {"t0": [1, 2]}, "c_1": {"t0": [0]}}
    assert result.objective[0] == 110_000 and list(result.bound) == [110_000]
    assert result.info == {"moves": 1, "moves_bound": 1}


#: Lags whose level-2 coefficients (2 lag_p lag_q) stay within the MIP's trusted magnitude
#: (models.common.mip_ranked.TRUSTED_MAGNITUDE = 2**28); beyond, its answers are `feasible`.
TRUSTED = dict(SMALL, shapes=("uniform", "ties", "equal", "zero"))


@pytest.mark.parametrize("backend, shapes", [("cpsat", SMALL), ("mip", TRUSTED)], ids=EXACT)
@settings(max_examples=40)
@given(data=st.data())
def test_exact_equals_brute_force_on_both_levels(backend, shapes, data):
    """Tests that symmetry breaking and the co-assignment level 2 lose no optimum (vs enumeration),
    the models answering alone and with the search first."""
    problem = data.draw(lag_groups(**shapes))
    with models_alone():
        alone = BACKENDS[backend](problem)
    assert alone.status == "optimal" and alone.valid
    assert tuple(alone.objective) == lag_aware_optimum(problem) == tuple(alone.bound)
    result = BACKENDS[backend](problem)
    assert result.status == "optimal" and result.valid
    assert tuple(result.objective) == lag_aware_optimum(problem) == tuple(result.bound)


@settings(max_examples=20)
@given(lag_groups(**dict(SMALL, shapes=("skewed",))))
def test_mip_beyond_its_trusted_magnitude_never_claims_a_beaten_optimum(problem):
    """Tests the MIP with lags up to 1e6 (level-2 coefficients up to 2e12, beyond 2**28): `optimal`
    only if brute force agrees, a bound never above the optimum."""
    result = BACKENDS["mip"](problem)
    best = lag_aware_optimum(problem)
    assert result.valid and tuple(result.objective) >= best
    assert result.bound is None or tuple(result.bound) <= best
    if result.status == "optimal":
        assert tuple(result.objective) == best


@pytest.mark.parametrize("backend", EXACT)
@settings(max_examples=40)
@given(lag_groups(**SMALL))
def test_sticky_variant_equals_brute_force(backend, problem):
    """Tests the sticky variant's (level 1, moves) against enumeration."""
    result = BACKENDS[backend](problem, variant="sticky")
    moves = evaluate(problem, result.answer, "sticky").objective[1]
    assert result.status == "optimal" and result.valid
    assert (result.objective[0], moves) == lag_aware_optimum(problem, sticky=True)
    assert (*result.bound, result.info["moves_bound"]) == lag_aware_optimum(problem, sticky=True)
    assert result.info["moves"] == moves


@settings(max_examples=40)
@given(lag_groups(max_members=5, max_partitions=6, shapes=SMALL["shapes"]))
def test_cpsat_equals_mip_and_never_loses_to_the_heuristic(problem):
    """Tests cpsat = mip on both levels when both prove optimality, and exact <= heuristic on level 1."""
    greedy = heuristic.assign(problem)
    with models_alone():  # the two formulations, not the search they share
        by_cpsat, by_mip = (
            cpsat.solve(problem, SolveOptions.of(time_limit=20)),
            mip.solve(problem, SolveOptions.of(time_limit=20)),
        )
    assert by_cpsat.valid and by_mip.valid and greedy.valid
    assert by_cpsat.status == "optimal"
    # The MIP proves it too unless level 2's coefficients (2 lag_p lag_q / gcd**2) pass its trusted
    # magnitude.
    lags = sorted(problem.lags[problem.assignable].tolist()) if problem.lags is not None else []
    scale = math.gcd(*lags) or 1
    assert (
        by_mip.status == "optimal"
        or 2 * lags[-1] * lags[-2] // scale**2 > mip_common.TRUSTED_MAGNITUDE
    )
    assert by_cpsat.objective <= by_mip.objective
    if by_mip.status == "optimal":
        assert by_cpsat.objective == by_mip.objective
    assert by_cpsat.objective <= greedy.objective  # lexicographic: level 1, then level 2
    assert by_cpsat.objective[0] <= greedy.objective[0]
