"""Exact replica placement with OR-Tools CP-SAT (the model PR 18903's heuristic approximates).

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

import time

import numpy as np
from ortools.graph.python import min_cost_flow
from ortools.sat.python import cp_model

from heuristics import sticky_replica as sticky_heuristic
from models.cpsat.ranked import add_hint, solve_ranked
from models.replica_data import (
    TIME_LIMIT,
    balanced_level1,
    build_answer,
    check_model_size,
    count_bounds,
    original_sets,
    rack_count_bounds,
    secant_range,
    solve_frontier,
    target_levels,
)
from problems import PlacementProblem, Result


def _square(model: cp_model.CpModel, value, low: int, high: int, name: str) -> cp_model.IntVar:
    """An integer ``s >= value^2`` (equal at the optimum) for ``value`` in ``[low, high]``."""
    square = model.new_int_var(low * low, high * high, name)
    for t in secant_range(low, high):
        model.add(square >= (2 * t + 1) * value - t * (t + 1))
    return square


def _balanced(problem: PlacementProblem, replicas: np.ndarray) -> np.ndarray:
    """``replicas`` with broker counts evened out: one replica at a time from the fullest broker
    to an emptiest one (on the same rack if there is one, so rack spread is kept) that lacks its partition."""
    index = problem.broker_index
    positions = np.array([index[int(b)] for b in replicas], dtype=np.int64)
    part = np.repeat(np.arange(problem.num_partitions), problem.replication_factors)
    counts = np.bincount(positions, minlength=problem.num_brokers)
    has = np.zeros((problem.num_partitions, problem.num_brokers), dtype=bool)
    has[part, positions] = True
    rack = problem.broker_rack
    while counts.max() - counts.min() > 1:
        full, emptiest = int(counts.argmax()), np.flatnonzero(counts == counts.min())
        same_rack = emptiest[rack[emptiest] == rack[full]]
        empty = int(same_rack[0] if len(same_rack) else emptiest[0])
        slot = np.flatnonzero((positions == full) & ~has[part, empty])[0]
        has[part[slot], full], has[part[slot], empty] = False, True
        positions[slot] = empty
        counts[full] -= 1
        counts[empty] += 1
    return problem.broker_ids[positions]


def _best_leaders(problem: PlacementProblem, replicas: np.ndarray) -> np.ndarray:
    """``replicas`` reordered (no move) so that the leaders minimise level 3: a min-cost flow
    partition -> one of its brokers -> sink, with unit arcs of cost 1, 3, 5, ... per broker."""
    index = problem.broker_index
    start, partitions, brokers = problem.replica_start, problem.num_partitions, problem.num_brokers
    flow = min_cost_flow.SimpleMinCostFlow()
    source, sink = partitions + brokers, partitions + brokers + 1
    led = [p for p in range(partitions) if start[p + 1] > start[p]]
    arcs = {}
    for p in led:
        flow.add_arc_with_capacity_and_unit_cost(source, p, 1, 0)
        for slot in range(start[p], start[p + 1]):
            arcs[slot] = flow.add_arc_with_capacity_and_unit_cost(
                p, partitions + index[int(replicas[slot])], 1, 0
            )
    for b in range(brokers):
        for t in range(1, len(led) + 1):
            flow.add_arc_with_capacity_and_unit_cost(partitions + b, sink, 1, 2 * t - 1)
    flow.set_node_supply(source, len(led))
    flow.set_node_supply(sink, -len(led))
    if flow.solve() != flow.OPTIMAL:
        return replicas
    out = np.array(replicas)
    for p in led:
        lead = next(slot for slot in range(start[p], start[p + 1]) if flow.flow(arcs[slot]))
        out[start[p]], out[lead] = out[lead], out[start[p]]
    return out


def _hint(problem: PlacementProblem, max_moves: int | None, target) -> np.ndarray | None:
    """The sticky heuristic's answer, evened out when counts are confined to ``{q, q + 1}``;
    none when it exceeds the move limit."""
    answer = sticky_heuristic.assign(problem)
    if max_moves is None and target is None:
        return _best_leaders(problem, _balanced(problem, answer.answer))
    if max_moves is not None and answer.objective[3] > max_moves:
        return None
    return _best_leaders(problem, answer.answer)


def solve(
    problem: PlacementProblem,
    time_limit: float = TIME_LIMIT,
    max_moves: int | None = None,
    beat=None,
    workers: int = 1,
    seed: int = 0,
    log: bool = False,
    hint=None,
    level2_optimum: int | None = None,
) -> Result:
    """Place replicas optimally: levels 1-4 lexicographically.

    Parameters
    ----------
    problem
        The cluster and its current placement.
    time_limit
        Seconds for all levels together.
    max_moves
        At most this many moves (the frontier's ``k``).
    beat
        A ``replicas`` array: only placements that match or beat it on levels
        1-3 (lexicographically); the objective becomes moves first, then
        levels 1-3 (:func:`fewest_moves`).
    workers, seed, log
        CP-SAT's ``num_workers``, ``random_seed`` and search log.
    hint
        A ``replicas`` array to hint instead of the heuristic's answer.
    level2_optimum
        Level 2's optimum, proven by the caller (the flow model): level 2 is
        constrained to it and only levels 3 and 4 are searched (without
        ``max_moves`` / ``beat`` only).

    Returns
    -------
    Result
        ``optimal`` only when every level is proven; otherwise ``feasible``
        with the proven bound, or ``infeasible`` / ``unknown``.
    """
    started = time.perf_counter()  # the time limit covers building the model (and the hint)
    deadline = started + time_limit
    check_model_size(problem, "CP-SAT")
    target = None if beat is None else target_levels(problem, beat)
    info = {} if max_moves is None else {"max_moves": max_moves}
    balanced = max_moves is None and target is None
    if hint is None:
        hint = _hint(problem, max_moves, target)

    def late() -> Result:
        """Out of time while building: the hint's answer (``feasible``), or ``unknown`` without one."""
        if hint is None or target is not None:  # with ``beat``, the hint need not match or beat it
            return Result(problem, "sticky-replica", None, "unknown", info=info)
        bound = (balanced_level1(problem),) if balanced else None
        return Result(problem, "sticky-replica", np.asarray(hint), "feasible", bound, info)

    model = cp_model.CpModel()
    brokers, partitions = range(problem.num_brokers), range(problem.num_partitions)
    factors = problem.replication_factors.tolist()
    rack = problem.broker_rack.tolist()
    racks = range(len(problem.rack_names))
    rack_size = np.bincount(problem.broker_rack, minlength=len(racks)).tolist()
    original = original_sets(problem)
    total = cp_model.LinearExpr.sum

    x, y = {}, {}
    for p in partitions:
        if time.perf_counter() > deadline:
            return late()
        xs = [model.new_bool_var(f"x[{p},{b}]") for b in brokers]
        ys = [model.new_bool_var(f"y[{p},{b}]") for b in brokers]
        x.update(((p, b), v) for b, v in zip(brokers, xs))
        y.update(((p, b), v) for b, v in zip(brokers, ys))
        model.add(total(xs) == factors[p])
        model.add(total(ys) == min(factors[p], 1))
        for b in brokers:
            model.add_implication(ys[b], xs[b])

    bounds = count_bounds(problem, max_moves, target)
    r, l = {}, {}
    for b in brokers:
        if time.perf_counter() > deadline:
            return late()
        low, high = bounds[b]
        r[b] = model.new_int_var(low, high, f"r[{b}]")
        model.add(r[b] == total([x[p, b] for p in partitions]))
        l[b] = model.new_int_var(0, high, f"l[{b}]")
        model.add(l[b] == total([y[p, b] for p in partitions]))
    # Each counted variable, its square and the booleans it counts (to complete the hint).
    squares = {
        ("r", b): (
            r[b],
            _square(model, r[b], *bounds[b], f"r2[{b}]"),
            [x[p, b] for p in partitions],
        )
        for b in brokers
    }
    squares.update(
        {
            ("l", b): (
                l[b],
                _square(model, l[b], 0, bounds[b][1], f"l2[{b}]"),
                [y[p, b] for p in partitions],
            )
            for b in brokers
        }
    )
    level1 = total([squares["r", b][1] for b in brokers])
    level3 = total([squares["l", b][1] for b in brokers])

    level2_terms, level2_constant = [], 0
    for p in partitions:
        if time.perf_counter() > deadline:
            return late()
        for k in racks:
            if len(racks) == 1:
                level2_constant += factors[p] ** 2  # one rack: every replica is on it
                continue
            low, high = rack_count_bounds(factors[p], rack_size[k], problem.num_brokers)
            c = model.new_int_var(low, high, f"c[{p},{k}]")
            on_rack = [x[p, b] for b in brokers if rack[b] == k]
            model.add(c == total(on_rack))
            squares["c", p, k] = (c, _square(model, c, low, high, f"c2[{p},{k}]"), on_rack)
            level2_terms.append(squares["c", p, k][1])
    level2 = total(level2_terms) + level2_constant

    moves = total([x[p, b] for p in partitions for b in brokers if b not in original[p]])
    if max_moves is not None:
        model.add(moves <= max_moves)
    if balanced and level2_optimum is not None:  # levels 1-2 proven elsewhere: fixed
        model.add(level2 <= level2_optimum)
        objectives = [level3, moves]
    elif balanced:  # level 1 is fixed by the {q, q + 1} counts: nothing to search
        objectives = [level2, level3, moves]
    elif target is None:
        objectives = [level1, level2, level3, moves]
    else:
        objectives = [moves, level1, level2, level3]
        better1, better2, within = (model.new_bool_var(n) for n in ("beat1", "beat2", "match3"))
        model.add(level1 <= target[0])
        model.add(level1 <= target[0] - 1).only_enforce_if(better1)
        model.add(level2 <= target[1] - 1).only_enforce_if(better2)
        model.add(level2 <= target[1]).only_enforce_if(within)
        model.add(level3 <= target[2]).only_enforce_if(within)
        model.add_bool_or([better1, better2, within])

    if hint is not None:  # a complete hint: CP-SAT spends its time repairing an incomplete one
        index = problem.broker_index
        start = problem.replica_start
        values = {}
        for p in partitions:
            chosen = {index[int(v)] for v in hint[start[p] : start[p + 1]]}
            leader = index[int(hint[start[p]])] if factors[p] else -1
            values.update({x[p, b]: int(b in chosen) for b in brokers})
            values.update({y[p, b]: int(b == leader) for b in brokers})
        for counted, square, members in squares.values():
            count = sum(values[v] for v in members)
            values[counted], values[square] = count, count * count
        add_hint(model, values.items())
    if time.perf_counter() > deadline:
        return late()

    ranked = solve_ranked(
        model,
        objectives,
        time_limit=time_limit,
        workers=workers,
        seed=seed,
        log=log,
        started=started,
        complete_hint=target is not None,
    )
    if (
        ranked.status == "unknown"
    ):  # no answer in time: the hint's answer, without CP-SAT completing it
        return late()
    if not ranked.has_solution:
        return ranked.result(problem, "sticky-replica", info=info)
    holds = [[b for b in brokers if ranked.value(x[p, b])] for p in partitions]
    leaders = [next((b for b in brokers if ranked.value(y[p, b])), -1) for p in partitions]
    answer = build_answer(problem, holds, leaders)
    bound = ranked.bound
    if balanced and bound is not None:
        bound = (
            balanced_level1(problem),
            *(() if level2_optimum is None else (level2_optimum,)),
            *bound,
        )
    if target is not None:  # the ranked order is (moves, 1, 2, 3): keep only the moves bound
        info["moves_bound"] = bound[0] if bound else None
        bound = None
    return Result(problem, "sticky-replica", answer, ranked.status, bound, info)


def fewest_moves(problem: PlacementProblem, placement, **options) -> Result:
    """The fewest moves that match or beat ``placement`` on levels 1-3 (lexicographically).

    ``solve(problem, beat=placement, **options)``: its answer's level 4 is the
    number of moves, optimal when the status is ``optimal``.
    """
    return solve(problem, beat=placement, **options)


def frontier(
    problem: PlacementProblem, max_k: int, time_limit: float = TIME_LIMIT, **options
) -> list[Result]:
    """The moves/quality frontier: ``solve(problem, max_moves=k, **options)`` for ``k = 0..max_k``.

    ``time_limit`` bounds the whole frontier: each point gets the time left
    (:func:`models.replica_data.frontier`; points past it are not solved, ``unknown``).
    """
    return solve_frontier(solve, problem, max_k, time_limit, **options)
