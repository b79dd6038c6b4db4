"""Exact replica placement with OR-Tools CP-SAT (the model PR 18903's heuristic approximates).

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from ortools.graph.python import min_cost_flow
from ortools.sat.python import cp_model

from heuristics import sticky_replica as sticky_heuristic
from models.common.cpsat_ranked import Ranked, add_hint, solve_ranked
from models.common.ranked_outcome import OutOfTime
from models.options import SolveOptions, answer_of, ignoring
from models.sticky_replica.data import (
    balanced_level1,
    check_model_size,
    count_bounds,
    original_sets,
    rack_count_bounds,
    read_answer,
    replica_result,
    secant_range,
    solve_frontier,
    target_levels,
)
from problems import PlacementProblem, Result, Status

#: A counted variable, its square and the booleans it counts (to complete the hint).
Counted = tuple[cp_model.IntVar, cp_model.IntVar, list[cp_model.IntVar]]


def _square(
    model: cp_model.CpModel, value: cp_model.LinearExprT, low: int, high: int, name: str
) -> cp_model.IntVar:
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


def _hint(
    problem: PlacementProblem,
    max_moves: int | None,
    target: tuple[int, int, int] | None,
    start: np.ndarray | None,
) -> np.ndarray | None:
    """``start`` (a valid answer), or else the sticky heuristic's answer, evened out when counts are
    confined to ``{q, q + 1}``, its leaders chosen by :func:`_best_leaders`; none when it exceeds
    the move limit."""
    answer = sticky_heuristic.assign(problem) if start is None else _replica_result(problem, start)
    if max_moves is None and target is None:
        return _best_leaders(problem, _balanced(problem, answer_of(answer)))
    if max_moves is not None and answer.objective[3] > max_moves:
        return None
    return _best_leaders(problem, answer_of(answer))


def _replica_result(problem: PlacementProblem, replicas: np.ndarray) -> Result:
    return Result(problem, "sticky-replica", replicas, objective_name="replica")


@dataclass
class _Model:
    """The CP-SAT model of one solve while it is built: its variables by key and its deadline."""

    problem: PlacementProblem
    deadline: float
    model: cp_model.CpModel = field(default_factory=cp_model.CpModel)
    #: ``x[p, b]``: partition ``p`` has a replica on live broker ``b``; ``y[p, b]``: ``b`` leads it.
    x: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)
    y: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)
    #: Every counted variable by key (``("r", b)``, ``("l", b)``, ``("c", p, k)``), its square
    #: and what it counts.
    squares: dict[tuple[str | int, ...], Counted] = field(default_factory=dict)

    def check_time(self) -> None:
        if time.perf_counter() > self.deadline:
            raise OutOfTime

    def add_placements(self) -> None:
        """``x`` and ``y``: each partition on exactly its replication factor of brokers, one leader
        among them (none without replicas)."""
        problem, model, total = self.problem, self.model, cp_model.LinearExpr.sum
        brokers = range(problem.num_brokers)
        for p, factor in enumerate(problem.replication_factors.tolist()):
            self.check_time()
            xs = [model.new_bool_var(f"x[{p},{b}]") for b in brokers]
            ys = [model.new_bool_var(f"y[{p},{b}]") for b in brokers]
            self.x.update(((p, b), v) for b, v in zip(brokers, xs))
            self.y.update(((p, b), v) for b, v in zip(brokers, ys))
            model.add(total(xs) == factor)
            model.add(total(ys) == min(factor, 1))
            for b in brokers:
                model.add_implication(ys[b], xs[b])

    def broker_levels(
        self, bounds: list[tuple[int, int]]
    ) -> tuple[cp_model.LinearExprT, cp_model.LinearExprT]:
        """Levels 1 and 3: the sums of the squared replica counts ``r[b]`` and leader counts
        ``l[b]`` of the brokers, ``r[b]`` within ``bounds[b]``."""
        model, total, partitions = self.model, cp_model.LinearExpr.sum, self.problem.num_partitions
        brokers = range(len(bounds))
        replicas, leaders = {}, {}
        for b, (low, high) in enumerate(bounds):
            self.check_time()
            replicas[b] = model.new_int_var(low, high, f"r[{b}]")
            model.add(replicas[b] == total([self.x[p, b] for p in range(partitions)]))
            leaders[b] = model.new_int_var(0, high, f"l[{b}]")
            model.add(leaders[b] == total([self.y[p, b] for p in range(partitions)]))
        for name, counts, chosen in (("r", replicas, self.x), ("l", leaders, self.y)):
            for b in brokers:
                low = bounds[b][0] if name == "r" else 0
                square = _square(model, counts[b], low, bounds[b][1], f"{name}2[{b}]")
                self.squares[name, b] = (
                    counts[b],
                    square,
                    [chosen[p, b] for p in range(partitions)],
                )
        return (
            total([self.squares["r", b][1] for b in brokers]),
            total([self.squares["l", b][1] for b in brokers]),
        )

    def rack_spread(self) -> cp_model.LinearExprT:
        """Level 2: the sum over partitions and racks of the squared replicas on the rack."""
        problem, model, total = self.problem, self.model, cp_model.LinearExpr.sum
        factors, rack = problem.replication_factors.tolist(), problem.broker_rack.tolist()
        racks = range(len(problem.rack_names))
        if len(racks) == 1:  # one rack: every replica is on it
            spread: cp_model.LinearExprT = total([]) + sum(f * f for f in factors)
            return spread
        rack_size = np.bincount(problem.broker_rack, minlength=len(racks)).tolist()
        terms = []
        for p, factor in enumerate(factors):
            self.check_time()
            for k in racks:
                low, high = rack_count_bounds(factor, rack_size[k], problem.num_brokers)
                c = model.new_int_var(low, high, f"c[{p},{k}]")
                on_rack = [self.x[p, b] for b in range(problem.num_brokers) if rack[b] == k]
                model.add(c == total(on_rack))
                self.squares["c", p, k] = (c, _square(model, c, low, high, f"c2[{p},{k}]"), on_rack)
                terms.append(self.squares["c", p, k][1])
        return total(terms)

    def moves(self) -> cp_model.LinearExprT:
        """Level 4: replicas on a broker outside their partition's original set."""
        original = original_sets(self.problem)
        return cp_model.LinearExpr.sum(
            [var for (p, b), var in self.x.items() if b not in original[p]]
        )

    def add_hint(self, hint: np.ndarray) -> None:
        """Hint every variable (squares included) from the ``replicas`` array ``hint``: CP-SAT
        spends its time repairing an incomplete hint."""
        problem, index, start = self.problem, self.problem.broker_index, self.problem.replica_start
        brokers = range(problem.num_brokers)
        values: dict[cp_model.IntVar, int] = {}
        for p, factor in enumerate(problem.replication_factors.tolist()):
            chosen = {index[int(v)] for v in hint[start[p] : start[p + 1]]}
            leader = index[int(hint[start[p]])] if factor else -1
            values.update({self.x[p, b]: int(b in chosen) for b in brokers})
            values.update({self.y[p, b]: int(b == leader) for b in brokers})
        for counted, square, members in self.squares.values():
            count = sum(values[v] for v in members)
            values[counted], values[square] = count, count * count
        add_hint(self.model, values.items())

    def answer(self, ranked: Ranked) -> np.ndarray:
        """The ``replicas`` array of the ranked solve's solution."""
        return read_answer(self.problem, self.x, self.y, ranked.value)


def _add_beat(
    model: cp_model.CpModel,
    levels: tuple[cp_model.LinearExprT, cp_model.LinearExprT, cp_model.LinearExprT],
    target: tuple[int, int, int],
) -> None:
    """Levels 1-3 match or beat ``target`` lexicographically."""
    level1, level2, level3 = levels
    better1, better2, within = (model.new_bool_var(n) for n in ("beat1", "beat2", "match3"))
    model.add(level1 <= target[0])
    model.add(level1 <= target[0] - 1).only_enforce_if(better1)
    model.add(level2 <= target[1] - 1).only_enforce_if(better2)
    model.add(level2 <= target[1]).only_enforce_if(within)
    model.add(level3 <= target[2]).only_enforce_if(within)
    model.add_bool_or([better1, better2, within])


def solve(problem: PlacementProblem, options: SolveOptions) -> Result:
    """Place replicas optimally: levels 1-4 lexicographically, within ``options.time_limit``.

    ``options.max_moves`` allows at most that many moves (the frontier's ``k``);
    ``options.beat`` (a ``replicas`` array) admits only placements that match or beat it on levels
    1-3 (lexicographically) and ranks moves first, then levels 1-3 (:func:`fewest_moves`).  A
    valid ``options.hint`` replaces the heuristic's answer as the hint (not when it exceeds
    ``max_moves``: then it is named in ``info["ignored_options"]``).

    Returns
    -------
    Result
        ``optimal`` only when every level is proven; otherwise ``feasible``
        with the proven bound, or ``infeasible`` / ``unknown``.
    """
    start = options.hint_answer(problem, "replica")
    unusable = (
        start is not None
        and options.max_moves is not None
        and _replica_result(problem, start).objective[3] > options.max_moves
    )
    result = _solve(problem, options, None if unusable else start, None)
    return ignoring(result, ["hint"] if unusable else [])


def refine(
    problem: PlacementProblem, options: SolveOptions, answer: np.ndarray, level2_optimum: int
) -> Result:
    """Levels 3 and 4 with levels 1-2 fixed at their proven optima, hinted with ``answer`` (the
    flow model's: it has them); the bound starts with those optima."""
    return _solve(problem, options, answer, level2_optimum, as_is=True)


def _solve(
    problem: PlacementProblem,
    options: SolveOptions,
    start: np.ndarray | None,
    level2_optimum: int | None,
    as_is: bool = False,
) -> Result:
    """:func:`solve` from the valid answer ``start`` (``None``: the heuristic's); ``as_is``: hint
    ``start`` unchanged; ``level2_optimum``: level 2 constrained to it, levels 3 and 4 searched."""
    started = time.perf_counter()  # the time limit covers building the model (and the hint)
    check_model_size(problem, "CP-SAT")
    max_moves, beat = options.max_moves, options.beat
    target = None if beat is None else target_levels(problem, beat)
    info: dict[str, object] = {} if max_moves is None else {"max_moves": max_moves}
    balanced = max_moves is None and target is None
    hint = start if as_is else _hint(problem, max_moves, target, start)
    built = _Model(problem, started + options.time_limit)
    try:
        objectives = _build(built, max_moves, target, level2_optimum if balanced else None)
        if hint is not None:
            built.add_hint(hint)
        built.check_time()
    except OutOfTime:
        return _late(problem, hint, target, balanced, info)
    ranked = solve_ranked(
        built.model, objectives, options, started=started, complete_hint=target is not None
    )
    if (
        ranked.status == "unknown"
    ):  # no answer in time: the hint's answer, without CP-SAT completing it
        return _late(problem, hint, target, balanced, info)
    if not ranked.has_solution:
        return ranked.result(problem, "sticky-replica", info=info, objective="replica")
    bound = ranked.bound
    if balanced and bound is not None:
        fixed = () if level2_optimum is None else (level2_optimum,)
        bound = (balanced_level1(problem), *fixed, *bound)
    return replica_result(problem, built.answer(ranked), ranked.status, bound, target, info)


def _build(
    built: _Model,
    max_moves: int | None,
    target: tuple[int, int, int] | None,
    level2_optimum: int | None,
) -> list[cp_model.LinearExprT]:
    """Build the model; its objectives, most important first (:class:`OutOfTime` past the
    deadline)."""
    problem, model = built.problem, built.model
    built.add_placements()
    level1, level3 = built.broker_levels(count_bounds(problem, max_moves, target))
    level2 = built.rack_spread()
    moves = built.moves()
    if max_moves is not None:
        model.add(moves <= max_moves)
    if target is not None:
        _add_beat(model, (level1, level2, level3), target)
        return [moves, level1, level2, level3]
    if max_moves is not None:
        return [level1, level2, level3, moves]
    if level2_optimum is not None:  # levels 1-2 proven elsewhere: fixed
        model.add(level2 <= level2_optimum)
        return [level3, moves]
    return [level2, level3, moves]  # level 1 is fixed by the {q, q + 1} counts: nothing to search


def _late(
    problem: PlacementProblem,
    hint: np.ndarray | None,
    target: tuple[int, int, int] | None,
    balanced: bool,
    info: dict[str, object],
) -> Result:
    """Out of time while building, or before any answer: the hint's answer (``feasible``), or
    ``unknown`` without one."""
    if hint is None or target is not None:  # with ``beat``, the hint need not match or beat it
        return Result(
            problem, "sticky-replica", None, Status.UNKNOWN, info=info, objective_name="replica"
        )
    bound = (balanced_level1(problem),) if balanced else None
    return Result(
        problem,
        "sticky-replica",
        np.asarray(hint),
        Status.FEASIBLE,
        bound,
        info,
        objective_name="replica",
    )


def fewest_moves(
    problem: PlacementProblem, placement: Iterable[int] | np.ndarray, options: SolveOptions
) -> Result:
    """The fewest moves that match or beat ``placement`` on levels 1-3 (lexicographically).

    :func:`solve` with ``beat=placement``: its answer's level 4 is the number of moves, optimal
    when the status is ``optimal``.
    """
    return solve(problem, options.with_extra(beat=placement))


def frontier(problem: PlacementProblem, max_k: int, options: SolveOptions) -> list[Result]:
    """The moves/quality frontier: :func:`solve` with ``max_moves=k`` for ``k = 0..max_k``.

    ``options.time_limit`` bounds the whole frontier: each point gets the time left
    (:func:`models.sticky_replica.data.frontier`; points past it are not solved, ``unknown``).
    """
    return solve_frontier(solve, problem, max_k, options)
