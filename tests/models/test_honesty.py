"""Issue 11: exact solvers tell the truth (statuses, bounds, hints) and stop on time.

Finding 1 (the MIP said ``optimal`` for beaten answers and ``infeasible`` for
feasible groups, and crashed when a later level failed), finding 2 (time
limits overrun) and finding 7 (CP-SAT lost its hint) are pinned here; the
cross-backend properties check, per family, that two ``optimal`` answers agree
and that no backend beats an ``optimal`` one.
"""

from __future__ import annotations

import random
import time

import pulp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import models.cpsat._common as cpsat_common
import models.cpsat.lag_aware as cpsat_lag
import models.cpsat.sticky_replica as cpsat_replica
import models.mip._common as mip_common
import models.mip.lag_aware as mip_lag
import models.mip.sticky_replica as mip_replica
from heuristics import lag_aware as lag_heuristic
from support.lag_strategies import lag_groups
from models.mip._mps import write_mps
from problems import load_problem

#: Seconds of slack for the Python around a solve (answer scoring) on a loaded 2-core CI machine.
SLACK = 1.5


def one_topic(lags: list[int], members: int):
    return load_problem({"topics": {"t0": len(lags)},
                         "members": [{"id": f"c{i}", "topics": ["t0"]} for i in range(members)],
                         "lags": {"t0": lags}})


def random_lags(seed: int, count: int, low: int, high: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.randrange(low, high) for _ in range(count)]


def beats(a: list[int], b: list[int]) -> bool:
    return tuple(a) < tuple(b)


# ------------------------------------------------------------ finding 1: the MIP
def test_model_file_keeps_every_digit(tmp_path):
    """Tests that a 14-digit coefficient and a 15-digit bound reach the solver exactly (PuLP's writer keeps 13)."""
    model = pulp.LpProblem("exact", pulp.LpMinimize)
    x = pulp.LpVariable("x", 0, 1, cat="Binary")
    z = pulp.LpVariable("z", 0, 362_320_641_679_107)
    model += z >= 12_345_678_901_234 * x
    write_mps(model, 1 * z, str(tmp_path / "m.mps"))
    text = (tmp_path / "m.mps").read_text()
    assert "12345678901234" in text and "362320641679107" in text


@pytest.mark.parametrize("seed", [1, 4])
def test_mip_never_claims_a_beaten_optimum_with_huge_lags(seed):
    """Tests the issue's groups with lags near 1e9: the MIP answered `optimal` beaten by CP-SAT, or
    `infeasible`; now a valid answer, never `optimal` unless CP-SAT agrees, a bound never above it."""
    problem = one_topic(random_lags(seed, 12, 10**8, 10**9), members=3)
    by_mip = mip_lag.solve(problem, time_limit=3, variant="sticky")
    by_cpsat = cpsat_lag.solve(problem, time_limit=6, variant="sticky")
    assert by_mip.status in ("optimal", "feasible") and by_mip.valid
    assert by_mip.objective[0] <= lag_heuristic.assign(problem).objective[0]  # the hint is never lost
    assert by_mip.bound is None or by_mip.bound[0] <= by_mip.objective[0]
    if by_mip.status == "optimal":
        assert by_mip.objective[0] <= by_cpsat.objective[0]
    if by_cpsat.status == "optimal":
        assert by_cpsat.objective[0] <= by_mip.objective[0]


def test_mip_near_1e13_lags_answers_and_bounds_honestly():
    """Tests the issue's 20-partition, 3-member group with lags near 1e13: was `optimal` with a bound above
    its answer (or `infeasible`); now a valid answer no worse than the hint and a bound never above it."""
    problem = one_topic(random_lags(2, 20, 10**12, 10**13), members=3)
    result = mip_lag.solve(problem, time_limit=2, variant="sticky")
    assert result.status == "feasible" and result.valid
    assert result.objective[0] <= lag_heuristic.assign(problem).objective[0]
    assert result.bound is None or result.bound[0] <= result.objective[0]


def test_a_failing_later_level_keeps_the_earlier_answer(monkeypatch):
    """Tests that a level after the first without a solution (solver error, parser time-out) gives
    `feasible` with level 1's answer, not a TypeError traceback."""
    real, calls = mip_common._SOLVE["highs"], []

    def second_level_fails(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs) if len(calls) == 1 else mip_common._Level("unknown")

    monkeypatch.setitem(mip_common._SOLVE, "highs", second_level_fails)
    model = pulp.LpProblem("two", pulp.LpMinimize)
    x, y = pulp.LpVariable("x", 0, 10, cat="Integer"), pulp.LpVariable("y", 0, 10, cat="Integer")
    model += x + y >= 7
    ranked = mip_common.solve_ranked(model, [x + y, 3 * x - y], time_limit=10)
    assert ranked.status == "feasible" and ranked.levels[0] == 7 and ranked.bound == (7,)
    assert ranked.value(x) + ranked.value(y) == 7


def test_cpsat_returns_its_hint_when_time_runs_out_first():
    """Tests finding 7: CP-SAT stopped before any solution returns the hinted answer as `feasible`."""
    problem = one_topic(random_lags(3, 200, 1, 10**6), members=7)
    result = cpsat_lag.solve(problem, time_limit=0.01)
    assert result.status == "feasible" and result.valid
    assert result.objective[0] <= lag_heuristic.assign(problem).objective[0]


# -------------------------------------------------------- finding 2: deadlines
def placement(partitions: int, brokers: int, seed: int):
    rng = random.Random(seed)
    doc = {"brokers": [{"id": b, "rack": f"r{b % 3}"} for b in range(brokers)],
           "partitions": [{"topic": f"t{p % 4}", "partition": p // 4, "replicas": rng.sample(range(brokers), 3)}
                          for p in range(partitions)]}
    return load_problem(doc)


LIMITED = {
    "lag-aware cpsat": lambda: cpsat_lag.solve(one_topic(random_lags(5, 80, 1, 10**6), 6), time_limit=1),
    "lag-aware mip": lambda: mip_lag.solve(one_topic(random_lags(5, 80, 1, 10**6), 6), time_limit=1),
    "replica cpsat": lambda: cpsat_replica.solve(placement(300, 9, 0), time_limit=1),
    "replica mip": lambda: mip_replica.solve(placement(300, 9, 0), time_limit=1),
}


@pytest.mark.parametrize("case", LIMITED)
def test_exact_solvers_stop_within_the_limit_plus_grace(case):
    """Tests that the limit covers model building, files and every level: 1 s + the documented grace."""
    started = time.perf_counter()
    result = LIMITED[case]()
    elapsed = time.perf_counter() - started
    grace = mip_common.GRACE_SECONDS if "mip" in case else cpsat_common.HINT_SECONDS
    assert elapsed <= 1 + grace + SLACK, f"{case}: {elapsed:.2f} s for a 1 s limit"
    assert result.status in ("feasible", "optimal", "unknown")
    if result.answer is not None:
        assert result.valid


# ------------------------------------------------ cross-backend, per family
LAG_BACKENDS = {
    "cpsat": lambda problem: cpsat_lag.solve(problem, time_limit=5, variant="sticky"),
    "mip": lambda problem: mip_lag.solve(problem, time_limit=5, variant="sticky"),
}


@settings(max_examples=15)
@given(lag_groups(max_members=3, max_partitions=4, shapes=("large", "skewed", "uniform")))
def test_lag_aware_optimal_answers_agree_and_are_never_beaten(problem):
    """Tests, on groups with lags up to 1e12: two `optimal` answers have equal level 1, and no backend's
    answer (heuristic included) beats an `optimal` one; bounds never exceed the answer."""
    found = {name: solve(problem) for name, solve in LAG_BACKENDS.items()}
    answers = [r.objective[0] for r in found.values() if r.answer is not None]
    answers.append(lag_heuristic.assign(problem).objective[0])
    for name, result in found.items():
        assert result.answer is not None and result.valid, name
        if result.bound is not None:
            assert result.bound[0] <= result.objective[0], name
        if result.status == "optimal":
            assert result.objective[0] <= min(answers), name


def _check_family(problem, strategy: str) -> None:
    """Every backend of ``strategy`` (heuristic included) on ``problem``: `optimal` answers agree and none is
    beaten by another backend's answer; a bound never exceeds its answer (lexicographically)."""
    from models import registry

    solvers = registry.STRATEGIES[strategy].solvers
    found = {s: registry.solve(problem, strategy, s, **({} if s in ("heuristic", "flow") else {"time_limit": 5}))
             for s in solvers}
    answers = {s: tuple(r.objective) for s, r in found.items() if r.answer is not None and r.valid}
    optimal = {s: answers[s] for s, r in found.items() if r.status == "optimal"}
    assert len(set(optimal.values())) <= 1, (strategy, optimal)
    for s, value in optimal.items():
        assert all(value <= other for other in answers.values()), (strategy, s, answers)
    for s, r in found.items():
        if r.answer is not None:
            assert r.valid, (strategy, s)
            if r.bound:
                assert tuple(r.bound) <= tuple(r.objective[: len(r.bound)]), (strategy, s, r.bound, r.objective)


@settings(max_examples=10)
@given(st.data())
def test_sticky_and_stream_join_backends_agree_on_optimal(data):
    """Tests the cross-backend property on sticky groups and stream joins (CP-SAT, MIP, flow, heuristic)."""
    from support.stream_join_strategies import joins
    from support.sticky_strategies import equal_groups

    _check_family(data.draw(equal_groups(max_members=4, max_partitions=5)), "sticky")
    _check_family(data.draw(joins(max_members=4, max_numbers=8)), "stream-join")


@settings(max_examples=8)
@given(st.data())
def test_replica_backends_agree_on_optimal(data):
    """Tests the cross-backend property on small replica placements (CP-SAT, MIP, flow, heuristic)."""
    from support.cluster_strategies import clusters

    _check_family(data.draw(clusters(max_brokers=5, max_racks=2, max_topics=2, max_partitions=3, max_factor=3,
                                     max_removed=1)), "sticky-replica")
