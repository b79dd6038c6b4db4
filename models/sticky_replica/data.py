"""What both exact replica models share: bounds, the answer layout, the two PR questions.

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from models.options import SolveOptions
from problems import PlacementProblem, ProblemError, Result, Status, evaluate

#: The CP-SAT and MIP replica models build two booleans per (partition, live broker); beyond this
#: many pairs they refuse (build time alone passes any useful time limit: measured, the MIP spent
#: 104 s and CP-SAT 11 s without an answer at 1,000 partitions x 28 brokers): ``--solver flow``.
MODEL_PAIRS = {"CP-SAT": 500_000, "MIP": 20_000}
#: ``info["not_solved"]`` of a frontier point reached after the frontier's deadline.
NOT_SOLVED = "the time limit is spent"


def check_model_size(problem: PlacementProblem, backend: str) -> None:
    """Refuse (:class:`problems.ProblemError`) a cluster beyond ``MODEL_PAIRS`` partition x broker pairs."""
    pairs = problem.num_partitions * problem.num_brokers
    if pairs > MODEL_PAIRS[backend]:
        raise ProblemError(
            "partitions",
            f"{problem.num_partitions:,} partitions x {problem.num_brokers:,} brokers = "
            f"{pairs:,} pairs is beyond the {backend} replica model ({MODEL_PAIRS[backend]:,}); "
            "use --solver flow",
        )


def original_sets(problem: PlacementProblem) -> list[set[int]]:
    """Each partition's original live brokers (positions)."""
    start, positions = problem.replica_start, problem.replica_positions
    return [
        set(positions[start[p] : start[p + 1]].tolist()) - {-1}
        for p in range(problem.num_partitions)
    ]


def secant_range(low: int, high: int) -> range:
    """The ``t`` of the secants that make ``s >= v^2`` exact for integer ``v`` in ``[low, high]``."""
    return range(low, max(high, low + 1))


def balanced_level1(problem: PlacementProblem) -> int:
    """The optimum of level 1: counts ``q`` and ``q + 1`` (see :func:`count_bounds`)."""
    total, brokers = int(problem.replication_factors.sum()), problem.num_brokers
    q, extra = divmod(total, brokers)
    return (brokers - extra) * q * q + extra * (q + 1) * (q + 1)


def count_bounds(
    problem: PlacementProblem, max_moves: int | None, beat: tuple[int, ...] | None
) -> list[tuple[int, int]]:
    """Bounds ``(low, high)`` of each broker's replica count ``r[b]``.

    Level 1 needs no search: every partition can take its ``RF_p`` brokers from
    one cyclic walk over all brokers, so counts ``q = T // B`` or ``q + 1`` are
    always reachable and minimise ``sum_b r_b^2``; without a move limit or a
    placement to beat, ``r[b]`` is confined to them.  With at most ``k`` moves a
    broker loses and gains at most ``k`` replicas (a replica leaves a broker
    only for one outside the partition's set, a move).  Beating level 1 value
    ``v`` bounds every count by ``sqrt(v)``.
    """
    factors = problem.replication_factors
    total, brokers = int(factors.sum()), problem.num_brokers
    nonempty = int(np.count_nonzero(factors))
    if max_moves is None and beat is None:
        q = total // brokers
        return [(q, q + (total % brokers > 0))] * brokers
    high = nonempty if beat is None else min(nonempty, math.isqrt(beat[0]))
    if max_moves is None:
        return [(0, high)] * brokers
    positions = problem.replica_positions
    current = np.bincount(positions[positions >= 0], minlength=brokers)
    return [(max(0, int(n) - max_moves), min(high, int(n) + max_moves)) for n in current]


def rack_count_bounds(factor: int, rack_size: int, brokers: int) -> tuple[int, int]:
    """Bounds of ``c[p, k]``: replicas of a partition of ``factor`` replicas on one rack."""
    return max(0, factor - (brokers - rack_size)), min(factor, rack_size)


def target_levels(problem: PlacementProblem, placement: ArrayLike) -> tuple[int, int, int]:
    """Levels 1-3 of a placement to match or beat (re-scored by the evaluator)."""
    verdict = evaluate(problem, np.asarray(placement), "replica")
    if not verdict.valid:
        raise ValueError(f"the placement to beat is not valid: {verdict.violations[0]}")
    level1, level2, level3 = verdict.objective[:3]
    return level1, level2, level3


def read_answer(
    problem: PlacementProblem,
    x: Mapping[tuple[int, int], Any],
    y: Mapping[tuple[int, int], Any],
    value: Callable[[Any], float],
) -> np.ndarray:
    """The ``replicas`` array of a solved model (a CP-SAT or a MIP one): ``value`` reads its
    solution's ``x[p, b]`` (partition ``p`` on broker ``b``) and ``y[p, b]`` (led by ``b``)."""
    brokers, partitions = range(problem.num_brokers), range(problem.num_partitions)
    held = [[b for b in brokers if value(x[p, b])] for p in partitions]
    leaders = [next((b for b in brokers if value(y[p, b])), -1) for p in partitions]
    return build_answer(problem, held, leaders)


def replica_result(
    problem: PlacementProblem,
    answer: np.ndarray,
    status: Status,
    bound: tuple[int, ...] | None,
    target: tuple[int, int, int] | None,
    info: dict[str, Any],
) -> Result:
    """A solved model's :class:`Result`; with a ``target`` (``--beat``) the ranked order is (moves,
    1, 2, 3), so only the moves bound is kept, as ``info["moves_bound"]``."""
    if target is not None:
        info["moves_bound"] = bound[0] if bound else None
        bound = None
    return Result(problem, "sticky-replica", answer, status, bound, info, objective_name="replica")


def build_answer(
    problem: PlacementProblem, holds: list[list[int]], leaders: list[int]
) -> np.ndarray:
    """The ``replicas`` array: each partition's chosen brokers (positions), its leader first.

    Kept replicas stay in their slots, new brokers (ascending position) fill the
    slots of replicas that left, and the leader swaps into the first slot.
    """
    start, positions = problem.replica_start, problem.replica_positions
    out = np.empty(len(positions), dtype=np.int64)
    for p in range(problem.num_partitions):
        chosen = set(holds[p])
        slots = positions[start[p] : start[p + 1]].tolist()
        incoming = iter(sorted(chosen - set(slots)))
        row = [b if b in chosen else next(incoming) for b in slots]
        if row:
            at = row.index(leaders[p])
            row[0], row[at] = row[at], row[0]
        out[start[p] : start[p + 1]] = row
    return problem.broker_ids[out]


def frontier(
    point: Callable[[int, float], Result], problem: PlacementProblem, max_k: int, deadline: float
) -> list[Result]:
    """``point(k, seconds)`` for ``k = 0..max_k``, every point within one ``deadline`` (``time.perf_counter``).

    Each point gets the time left; its solver reports what it proved in it
    (``optimal`` only when proven, else ``feasible`` with its bound, or no
    answer).  A point reached after the deadline is not started: no answer,
    status ``unknown``, ``info["not_solved"]`` says why.
    """
    points = []
    for k in range(max_k + 1):
        left = deadline - time.perf_counter()
        if left <= 0:
            points.append(
                Result(
                    problem,
                    "sticky-replica",
                    None,
                    Status.UNKNOWN,
                    info={"max_moves": k, "not_solved": NOT_SOLVED},
                    objective_name="replica",
                )
            )
        else:
            points.append(point(k, left))
    return points


def solve_frontier(
    solve: Callable[[PlacementProblem, SolveOptions], Result],
    problem: PlacementProblem,
    max_k: int,
    options: SolveOptions,
) -> list[Result]:
    """``solve`` with ``max_moves=k`` for ``k = 0..max_k``, within one ``options.time_limit``
    (:func:`frontier`)."""
    deadline = time.perf_counter() + options.time_limit
    return frontier(
        lambda k, left: solve(problem, replace(options.with_extra(max_moves=k), time_limit=left)),
        problem,
        max_k,
        deadline,
    )
