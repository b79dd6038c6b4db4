"""Exact replica placement by min-cost flow: levels 1, 2 and moves, then leaders (docs/design/objectives.md).

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from models.common.min_cost_flow import check_cost_range, solve_convex_assignment, solve_network
from models.options import SolveOptions
from models.sticky_replica import cpsat as cpsat_replica
from models.sticky_replica.data import balanced_level1, target_levels
from models.sticky_replica.data import frontier as _frontier
from problems import PlacementProblem, Result, Status

#: CP-SAT refines level 3 only up to this many partition x broker pairs.
REFINE_CELLS = 60_000


def _classes(problem: PlacementProblem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Partitions grouped by (replication factor, original live broker set).

    Returns ``(class_of_partition, members, key)``: ``members`` the partitions
    sorted by class then id, ``key`` rows ``[RF, sorted live brokers padded
    with B]`` per class.
    """
    rf = problem.replication_factors.astype(np.int64)
    partitions, brokers = problem.num_partitions, problem.num_brokers
    width = int(rf.max(initial=0))
    table = np.full((partitions, width), brokers, dtype=np.int64)
    owner = np.repeat(np.arange(partitions), rf)
    slot = np.arange(len(owner)) - np.repeat(problem.replica_start[:-1], rf)
    positions = problem.replica_positions.astype(np.int64)
    table[owner, slot] = np.where(positions >= 0, positions, brokers)
    table.sort(axis=1)
    key, inverse = np.unique(np.column_stack((rf, table)), axis=0, return_inverse=True)
    inverse = inverse.ravel()
    return inverse, np.argsort(inverse, kind="stable"), key


def _check_cost_range(max_cost: int, nodes: int, units: int) -> None:
    check_cost_range(max_cost, nodes, units, "partitions", "replicas")


def _stage_a(problem: PlacementProblem) -> tuple[np.ndarray, int]:
    """Replica sets with levels 1, 2 and moves proven optimal: ``(sets, moves)``.

    ``sets`` is ``int64[P, RFmax]`` of broker positions (padded with -1).
    """
    rf = problem.replication_factors.astype(np.int64)
    brokers = problem.num_brokers
    inverse, members, key = _classes(problem)
    classes = len(key)
    sizes = np.bincount(inverse, minlength=classes).astype(np.int64)
    factor = key[:, 0]
    original = key[:, 1:]
    rack = problem.broker_rack.astype(np.int64)
    racks = len(problem.rack_names)
    rack_size = np.bincount(rack, minlength=racks)
    total = int(rf.sum())
    weight = total + 1

    # Node ids: classes, then (class, rack), then brokers, then the sink.
    rack_node = classes + np.arange(classes * racks).reshape(classes, racks)
    broker_node = classes + classes * racks + np.arange(brokers)
    sink = classes + classes * racks + brokers
    nodes = sink + 1

    # class -> (class, rack): t = 1 .. min(RF, rack size), capacity n_c, cost W (2t - 1).
    c_grid, k_grid = np.meshgrid(np.arange(classes), np.arange(racks), indexing="ij")
    c_idx, k_idx = c_grid.ravel(), k_grid.ravel()
    steps = np.minimum(factor[c_idx], rack_size[k_idx])
    a_class = np.repeat(c_idx, steps)
    a_rack = np.repeat(k_idx, steps)
    a_t = np.arange(int(steps.sum())) - np.repeat(np.cumsum(steps) - steps, steps) + 1
    tails = [a_class]
    heads = [rack_node[a_class, a_rack]]
    caps = [sizes[a_class]]
    costs = [weight * (2 * a_t - 1)]

    # (class, rack) -> broker: capacity n_c, cost 1 outside the original set; ordered by
    # class, rack, broker (the dealing below relies on that order).
    by_rack = np.argsort(rack, kind="stable")
    b_class = np.repeat(np.arange(classes), brokers)
    b_broker = np.tile(by_rack, classes)
    in_original = (original[b_class] == b_broker[:, None]).any(axis=1)
    tails.append(rack_node[b_class, rack[b_broker]])
    heads.append(broker_node[b_broker])
    caps.append(sizes[b_class])
    costs.append((~in_original).astype(np.int64))
    first_broker_arc = len(a_class)

    # broker -> sink: lower bound q (as demands), one more unit when T % B > 0.
    q, extra = divmod(total, brokers)
    if extra:
        tails.append(broker_node)
        heads.append(np.full(brokers, sink))
        caps.append(np.ones(brokers, np.int64))
        costs.append(np.zeros(brokers, np.int64))

    max_cost = weight * (2 * int(factor.max(initial=1)) - 1)
    _check_cost_range(max_cost, nodes, total)
    supplies = np.zeros(nodes, dtype=np.int64)
    supplies[:classes] = sizes * factor
    supplies[broker_node] = -q
    supplies[sink] = -extra
    flow = solve_network(tails, heads, caps, costs, supplies)
    arcs = np.arange(first_broker_arc, first_broker_arc + len(b_class), dtype=np.int32)
    units = flow.flows(arcs).astype(np.int64)
    moves = int(units[~in_original].sum())

    # Deal each class's units (class, rack, broker order) to its partitions cyclically.
    unit_class = np.repeat(b_class, units)
    unit_broker = np.repeat(b_broker, units)
    class_units = sizes * factor
    class_first_unit = np.cumsum(class_units) - class_units
    rank = np.arange(len(unit_class)) - class_first_unit[unit_class]
    class_first_member = np.cumsum(sizes) - sizes
    partition = members[class_first_member[unit_class] + rank % sizes[unit_class]]
    column = rank // sizes[unit_class]
    width = int(rf.max(initial=0))
    sets = np.full((problem.num_partitions, width), -1, dtype=np.int64)
    sets[partition, column] = unit_broker
    return sets, moves


def balanced_leaders(problem: PlacementProblem, sets: np.ndarray) -> np.ndarray:
    """Each partition's leader (broker position, -1 without replicas), level 3 optimal on ``sets``."""
    partitions, brokers = problem.num_partitions, problem.num_brokers
    leaders = np.full(partitions, -1, dtype=np.int64)
    led = np.flatnonzero(problem.replication_factors > 0)
    if len(led) == 0:
        return leaders
    rows = np.sort(np.where(sets[led] >= 0, sets[led], brokers), axis=1)
    distinct, inverse = np.unique(rows, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    counts = np.bincount(inverse, minlength=len(distinct)).astype(np.int64)
    valid = distinct < brokers
    start = np.concatenate(([0], np.cumsum(valid.sum(axis=1))))
    cls, member, count = solve_convex_assignment(
        counts, start, distinct[valid], np.full(len(distinct), -1), brokers
    )
    # Hand the leaderships of each distinct set to its partitions in order.
    order = np.lexsort((cls,))
    cls, member, count = cls[order], member[order], count[order]
    by_set = led[np.argsort(inverse, kind="stable")]
    leaders[by_set] = np.repeat(member, count)
    return leaders


def _replicas(problem: PlacementProblem, sets: np.ndarray, leaders: np.ndarray) -> np.ndarray:
    """The ``replicas`` array: kept replicas in their slots, new ones in the freed slots, leader first."""
    partitions, brokers = problem.num_partitions, problem.num_brokers
    rf = problem.replication_factors.astype(np.int64)
    width = sets.shape[1]
    owner = np.repeat(np.arange(partitions), rf)
    slot = np.arange(len(owner)) - np.repeat(problem.replica_start[:-1], rf)
    current = np.full((partitions, width), -2, dtype=np.int64)
    current[owner, slot] = problem.replica_positions
    kept = (current[:, :, None] == sets[:, None, :]).any(axis=2) & (current >= 0)
    is_new = ~(sets[:, :, None] == current[:, None, :]).any(axis=2) & (sets >= 0)
    out = np.where(kept, current, -1)
    # Fill the freed slots (in slot order) with the new brokers (ascending).
    new_sorted = np.sort(np.where(is_new, sets, brokers + 1), axis=1)
    freed = ~kept & (np.arange(width)[None, :] < rf[:, None])
    fill_rank = np.cumsum(freed, axis=1) - 1
    out[freed] = new_sorted[freed.nonzero()[0], fill_rank[freed]]
    # Leader into the first slot.
    has = rf > 0
    at = np.argmax(out == leaders[:, None], axis=1)
    rows = np.flatnonzero(has)
    first = out[rows, 0].copy()
    out[rows, 0] = out[rows, at[rows]]
    out[rows, at[rows]] = first
    replicas: np.ndarray = problem.broker_ids[out[owner, slot]]
    return replicas


def _leader_bound(problem: PlacementProblem) -> int:
    led, brokers = int(np.count_nonzero(problem.replication_factors)), problem.num_brokers
    q, extra = divmod(led, brokers)
    return (brokers - extra) * q * q + extra * (q + 1) * (q + 1)


def solve(problem: PlacementProblem, options: SolveOptions) -> Result:
    """Place replicas optimally: levels 1-4, by flow (levels 1, 2, moves), leaders by a second flow.

    ``options.max_moves`` (a point of :func:`frontier`) and ``options.beat``
    (:func:`fewest_moves`) as :func:`models.sticky_replica.cpsat.solve` takes them.  The flows
    always finish; ``time_limit``, ``workers``, ``seed`` and ``log`` are CP-SAT's, when it runs
    (level 3 not met by the flow bound; ``max_moves`` / ``beat`` outside the flow-exact cases).

    Returns
    -------
    Result
        ``optimal`` only when all four levels are proven; otherwise
        ``feasible`` with the proven bound.  ``info["method"]`` says what
        proved it: ``flow``, ``flow+cpsat`` or ``cpsat``.
    """
    options = replace(options, hint=None)  # CP-SAT's hint here is the flow's answer
    beat, max_moves = options.beat, options.max_moves
    plain = options.with_extra(beat=None, max_moves=None)
    if beat is not None:
        return fewest_moves(problem, beat, plain)
    if max_moves is not None:
        return _frontier_point(problem, max_moves, _optimum(problem, plain), plain)
    return _optimum(problem, plain)


def _optimum(problem: PlacementProblem, options: SolveOptions) -> Result:
    """The lexicographic optimum (levels 1-4): flows, then CP-SAT on level 3 when the flows' leaders
    miss its bound (``options`` are CP-SAT's)."""
    if problem.num_partitions == 0:
        return Result(
            problem,
            "sticky-replica",
            problem.replica_brokers.copy(),
            Status.OPTIMAL,
            (0, 0, 0, 0),
            {"method": "flow", "flow_moves": 0},
            objective_name="replica",
        )
    sets, moves = _stage_a(problem)
    leaders = balanced_leaders(problem, sets)
    answer = _replicas(problem, sets, leaders)
    result = Result(
        problem,
        "sticky-replica",
        answer,
        Status.OPTIMAL,
        None,
        {"method": "flow", "flow_moves": moves},
        objective_name="replica",
    )
    level1, level2, level3, _ = result.objective
    if level1 != balanced_level1(problem):  # the flow is exact: this would be a bug
        raise RuntimeError(
            f"flow placement has level 1 {level1}, not the optimum {balanced_level1(problem)}"
        )
    lower3 = _leader_bound(problem)
    if level3 == lower3:
        result.bound = (level1, level2, level3, moves)
        return result
    bound = (level1, level2, lower3, moves)
    if problem.num_partitions * problem.num_brokers > REFINE_CELLS:
        result.status, result.bound = Status.FEASIBLE, bound
        return result
    return _refined(result, cpsat_replica.refine(problem, options, answer, level2), lower3, moves)


def _refined(result: Result, refined: Result, lower3: int, moves: int) -> Result:
    """The flow's ``result`` or CP-SAT's ``refined`` answer, whichever is better, with what both
    prove: ``optimal`` when CP-SAT proves its levels, else the bound ``(L1*, L2*, l3, m)``."""
    problem = result.problem
    level1, level2 = result.objective[:2]
    best = result
    if refined.answer is not None and tuple(refined.objective) < tuple(result.objective):
        best = Result(
            problem,
            "sticky-replica",
            refined.answer,
            info=dict(result.info),
            objective_name="replica",
        )
    best.info["method"] = "flow+cpsat"
    if refined.status == "optimal":
        best.status, best.bound = Status.OPTIMAL, tuple(best.objective)
        return best
    cp_bound = refined.bound or ()  # (L1, L2, level 3, moves) as far as CP-SAT got
    level3_bound = max(lower3, cp_bound[2]) if len(cp_bound) > 2 else lower3
    moves_bound = max(moves, cp_bound[3]) if len(cp_bound) > 3 else moves
    best.status, best.bound = Status.FEASIBLE, (level1, level2, level3_bound, moves_bound)
    return best


def _frontier_point(
    problem: PlacementProblem, k: int, optimum: Result, options: SolveOptions
) -> Result:
    forced = int(np.count_nonzero(problem.replica_positions < 0))
    info: dict[str, object] = {"max_moves": k}
    if k < forced:
        return Result(
            problem,
            "sticky-replica",
            None,
            Status.INFEASIBLE,
            info={**info, "method": "flow"},
            objective_name="replica",
        )
    if optimum.status == "optimal" and optimum.objective[3] <= k:
        return Result(
            problem,
            "sticky-replica",
            optimum.answer,
            Status.OPTIMAL,
            optimum.bound,
            {**info, "method": optimum.info["method"]},
            objective_name="replica",
        )
    result = cpsat_replica.solve(problem, options.with_extra(max_moves=k))
    result.info["method"] = "cpsat"
    return result


def fewest_moves(problem: PlacementProblem, placement: np.ndarray, options: SolveOptions) -> Result:
    """The fewest moves that match or beat ``placement`` on levels 1-3 (lexicographically).

    Exact by flow when ``placement`` has the optimal levels 1-2 and the proven
    optimum meets its level 3 with stage A's moves; otherwise CP-SAT's
    :func:`models.sticky_replica.cpsat.fewest_moves` (its status).
    """
    target = target_levels(problem, placement)
    optimum = _optimum(problem, options)
    if (
        optimum.status == "optimal"
        and tuple(optimum.objective[:2]) == target[:2]
        and optimum.objective[2] <= target[2]
        and optimum.objective[3] == optimum.info.get("flow_moves")
    ):
        moves = optimum.objective[3]
        return Result(
            problem,
            "sticky-replica",
            optimum.answer,
            Status.OPTIMAL,
            None,
            {"moves_bound": moves, "method": optimum.info["method"]},
            objective_name="replica",
        )
    result = cpsat_replica.fewest_moves(problem, placement, options)
    result.info["method"] = "cpsat"
    return result


def frontier(problem: PlacementProblem, max_k: int, options: SolveOptions) -> list[Result]:
    """The moves/quality frontier for ``k = 0..max_k`` (see the module docstring for which points are flow).

    ``options.time_limit`` bounds the whole frontier, the optimum every point starts
    from included: each point gets the time left (:func:`models.sticky_replica.data.frontier`;
    points past it are not solved, ``unknown``).
    """
    options = replace(options, hint=None).with_extra(max_moves=None, beat=None)
    deadline = time.perf_counter() + options.time_limit
    optimum: list[Result] = []  # found once, by the first point started

    def point(k: int, left: float) -> Result:
        if not optimum:
            optimum.append(_optimum(problem, replace(options, time_limit=left)))
        left = deadline - time.perf_counter()
        return _frontier_point(problem, k, optimum[0], replace(options, time_limit=left))

    return _frontier(point, problem, max_k, deadline)
