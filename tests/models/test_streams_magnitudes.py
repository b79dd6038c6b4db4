"""The ``streams`` objective at every magnitude a document may hold: no overflowed value, no
overflowed ``optimal``.

Lags are int64 in Kafka, and level 1 sums them over the tasks; the balance levels weigh squared
counts by the lcm of the thread counts.  A document whose levels could leave 2**53 is refused when
it is read (one line); within it, every backend's levels are the evaluator's, non-negative, and
the exact backends agree with level 1's optimum computed here in Python integers.
"""

from __future__ import annotations

from math import lcm

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import models
from problems import ProblemError, evaluate, load_problem
from problems.streams.format import MAX_LEVEL

EXACT = ("flow", "cpsat", "mip")


def document(lags: list[list[int]], threads: list[int], standbys: int = 1) -> dict:
    """A stateful subtopology with one task per lag column, one member per process."""
    return {
        "kind": "streams-group",
        "subtopologies": {"s0": {"partitions": len(lags[0]), "stateful": True}},
        "members": [
            {"id": f"m{p}", "process": f"p{p}", "threads": threads[p], "lags": {"s0": row}}
            for p, row in enumerate(lags)
        ],
        "configs": {"num_standby_replicas": standbys},
    }


def test_lags_of_2_to_the_62_are_refused_when_read():
    """Tests the document that gave a negative objective (heuristic, MIP, flow; flow said
    ``optimal``) and a CP-SAT traceback: its restore cost passes int64, so it is refused."""
    doc = document([[2**62, 2**62, 0, 2**62], [-1, 2**62, 2**62, 5]], [1, 1])
    with pytest.raises(ProblemError) as caught:
        load_problem(doc)
    message = str(caught.value)
    assert "\n" not in message and "members: lags:" in message and "2**53" in message


def test_thread_counts_whose_lcm_passes_the_range_are_refused_when_read():
    """Tests the document that gave a traceback from flow and CP-SAT (weights past int64)."""
    doc = {
        "kind": "streams-group",
        "subtopologies": {"s0": {"partitions": 40, "stateful": False}},
        "members": [
            {"id": f"m{i}", "process": f"p{i}", "threads": 2**31 - 1 - i} for i in range(3)
        ],
    }
    with pytest.raises(ProblemError, match=r"members: threads: the lcm .* above 2\*\*53"):
        load_problem(doc)


MAGNITUDE = st.one_of(
    st.integers(-1, 20),
    st.integers(2**40, 2**51),
    st.integers(2**51, 2**53),
    st.integers(2**53, 2**63 - 1),
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lags=st.integers(1, 3).flatmap(
        lambda tasks: st.lists(
            st.lists(MAGNITUDE, min_size=tasks, max_size=tasks), min_size=2, max_size=3
        )
    ),
    threads=st.lists(st.sampled_from([1, 2, 3, 7, 2**20, 2**31 - 1]), min_size=3, max_size=3),
)
def test_every_backend_at_large_magnitudes(lags, threads):
    """Tests the property: a document is refused when read exactly when a level could leave
    2**53; otherwise every backend's levels are the evaluator's, in [0, 2**53], and an exact
    backend's level 1 is the optimum (each task on a process of least restore cost), computed
    here in Python integers; an exact backend that says ``optimal`` agrees with the others."""
    threads = threads[: len(lags)]
    doc = document(lags, threads)
    tasks = len(lags[0])
    largest = sum(max(0, *(row[t] for row in lags)) for t in range(tasks))
    fits = largest <= MAX_LEVEL and lcm(*threads) * tasks * tasks * len(lags) <= MAX_LEVEL
    event("fits" if fits else "refused")
    if not fits:
        with pytest.raises(ProblemError, match=r"2\*\*53"):
            load_problem(doc)
        return
    problem = load_problem(doc)
    full = [max(0, *(row[t] for row in lags)) for t in range(tasks)]
    least = sum(min(full[t] if row[t] < 0 else row[t] for row in lags) for t in range(tasks))
    optimal = {}
    for solver in ("heuristic", *EXACT):
        result = models.solve(problem, "streams-sticky", solver, time_limit=20)
        assert result.answer is not None, solver
        levels = tuple(result.objective)
        assert levels == evaluate(problem, result.answer, "streams").objective
        assert all(0 <= v <= MAX_LEVEL for v in levels), (solver, levels)
        if solver != "heuristic":
            assert levels[0] == least, (solver, levels, least)
            if result.bound:
                assert all(0 <= b <= MAX_LEVEL for b in result.bound)
                assert tuple(result.bound) <= levels
        if result.status == "optimal":
            optimal[solver] = levels
    assert len(set(optimal.values())) <= 1, optimal


def test_a_partition_listed_without_racks_never_counts_as_cross_rack():
    """Tests the ``cross_rack_traffic`` level as docs/strategies/streams.md defines it, the way
    Kafka 4.4.0's RackAwareTaskAssignor does (a partition without rack information gets no
    traffic cost: the assignor is not enabled): a partition listed with an empty rack list never
    counts, for the evaluator and for every exact backend."""
    doc = {
        "kind": "streams-group",
        "subtopologies": {
            "s0": {"partitions": 2, "partition_racks": {"t": [[], ["r2"]]}},
        },
        "members": [
            {"id": "a", "process": "pa", "rack": "r1"},
            {"id": "b", "process": "pb", "rack": "r1"},
        ],
    }
    problem = load_problem(doc)
    result = models.solve(problem, "streams-sticky", "heuristic")
    # Partition t-0 has no known racks: only t-1 (replicas on r2, members on r1) counts.
    assert evaluate(problem, result.answer, "streams").objective[3] == 1
    for solver in EXACT:
        exact = models.solve(problem, "streams-sticky", solver)
        assert exact.status == "optimal" and exact.objective[3] == 1, solver
