"""The replica-placement horizon: every step at its per-step optimum, then the fewest trace moves.

Level 1 of a step (``sum_b r_b^2``) is least exactly when every live broker holds ``q`` or
``q + 1`` replicas (``q = T // B``), so the brokers' counts over the window are the count flow of
:mod:`models.horizon.counts` over (broker, step) nodes: a broker keeps replicas for free,
every other replica of an existing partition is a move.  Its cost is a lower bound on the trace
moves of any placement whose steps are level-1 optimal (it leaves out that a partition's replicas
sit on distinct brokers).  Each step is then realised on those counts: a broker keeps its planned
number of replicas, and the others are matched to the brokers that take replicas, never to one
that already holds the partition (a bipartite b-matching, by max flow); the leaders come from the
per-step leader flow (:func:`models.sticky_replica.flow.balanced_leaders`).  When every step is realised
with the planned moves, the rack spread of every step is its optimum (always so without racks)
and the leaders meet their bound, the answer is proven optimal; otherwise it is reported
``feasible`` with the flow's bound.  Why: docs/design/formulations.md, "Horizon".

The trace's step 0 costs no trace move; among the placements that tie, the one with the fewest
moves from the starting replicas is taken (the step-0 arcs cost 1, every later move ``W`` above
all of them).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from ortools.graph.python import max_flow

from models.common.min_cost_flow import solve_network
from models.horizon.counts import solve_counts
from models.horizon.steps import PlacementSteps
from models.options import SolveOptions
from models.sticky_replica import flow as replica_flow
from models.sticky_replica.flow import balanced_leaders
from problems import PlacementProblem
from problems.evaluate import replica_levels


def leader_bound(problem: PlacementProblem) -> int:
    """Level 3's lower bound: leaders as even as the partitions with replicas allow."""
    led, brokers = int(np.count_nonzero(problem.replication_factors)), problem.num_brokers
    q, extra = divmod(led, brokers)
    return (brokers - extra) * q * q + extra * (q + 1) * (q + 1)


def leader_level(problem: PlacementProblem, replicas: np.ndarray) -> int:
    """Level 3 of a placement: the sum of squared leaders per broker (first replicas)."""
    first = np.asarray(replicas)[problem.replica_start[:-1][problem.replication_factors > 0]]
    ids = problem.broker_ids
    order = np.argsort(ids)
    leaders = np.bincount(order[np.searchsorted(ids[order], first)], minlength=len(ids))
    return int(leaders @ leaders)


@dataclass(frozen=True)
class Placed:
    """Every partition's replicas: ``table[p]`` the trace-wide broker ids of trace-wide partition
    ``p`` (-1 in unused slots), ``exists[p]`` whether the partition exists."""

    table: np.ndarray
    exists: np.ndarray

    def counts(self, live: np.ndarray) -> np.ndarray:
        """Replicas per trace-wide broker, on the brokers ``live`` marks."""
        held = self.table[self.exists]
        held = held[held >= 0]
        return np.bincount(held[live[held]], minlength=len(live)).astype(np.int64)


def placed(steps: PlacementSteps, k: int, replicas: np.ndarray) -> Placed:
    """Step ``k``'s ``replicas`` array as a :class:`Placed` (replicas on brokers not live at
    ``k``: empty slots, to be placed)."""
    problem = steps.problems[k]
    ids = problem.broker_ids.astype(np.int64)
    order = np.argsort(ids)
    flat = np.asarray(replicas, dtype=np.int64)
    at = np.minimum(np.searchsorted(ids[order], flat), len(ids) - 1)
    found = ids[order][at] == flat
    wide = np.where(found, steps.broker_of[k][order][at], -1)
    rf = problem.replication_factors.astype(np.int64)
    row = np.repeat(np.arange(problem.num_partitions), rf)
    slot = np.arange(len(flat)) - np.repeat(problem.replica_start[:-1], rf)
    table = np.full((steps.num_parts, steps.width), -1, dtype=np.int64)
    table[steps.part_of[k][row], slot] = wide
    exists = np.zeros(steps.num_parts, dtype=bool)
    exists[steps.part_of[k]] = True
    return Placed(table, exists)


def trace_moves_into(steps: PlacementSteps, k: int, before: Placed, replicas: np.ndarray) -> int:
    """Trace moves into step ``k``: replicas of partitions that existed before on a broker that
    did not hold the partition then."""
    after = placed(steps, k, replicas)
    rows = steps.part_of[k][before.exists[steps.part_of[k]]]
    new, old = after.table[rows], before.table[rows]
    fresh = (new >= 0) & ~(new[:, :, None] == old[:, None, :]).any(axis=2)
    return int(np.count_nonzero(fresh))


def solve(
    steps: PlacementSteps, previous: Placed | None
) -> tuple[list[np.ndarray], int, bool, dict[str, object]]:
    """Every step's ``replicas`` array, the proven lower bound on the window's trace moves, whether
    the answer is proven optimal, and what was measured (``step_moves``, ``count_bound``).

    ``previous``: each partition's replicas before the window, or ``None``: the window starts the
    trace (its first step is free; ties go to the fewest moves from the starting replicas).
    """
    tie_break = previous is None
    before = placed(steps, 0, steps.problems[0].replica_brokers) if previous is None else previous
    present, low, high, births = [], [], [], []
    live0 = np.zeros(steps.num_brokers, dtype=bool)
    live0[steps.broker_of[0]] = True
    start = before.counts(live0)
    existing = before.exists
    for k in range(len(steps)):
        problem = steps.problems[k]
        total = int(problem.replication_factors.sum())
        q, r = divmod(total, problem.num_brokers)
        present.append(steps.broker_of[k])
        low.append(np.full(problem.num_brokers, q, np.int64))
        high.append(np.full(problem.num_brokers, q + (r > 0), np.int64))
        if k == 0:
            births.append(total - int(start.sum()))
        else:
            new = ~existing[steps.part_of[k]]
            births.append(int(problem.replication_factors[new].sum()))
        existing = np.zeros(steps.num_parts, dtype=bool)
        existing[steps.part_of[k]] = True
    weight = int(start.sum()) + 1 if tie_break else 1
    costs = [1 if tie_break else weight] + [weight] * (len(steps) - 1)
    plan = solve_counts(present, low, high, births, start, costs, steps.num_brokers)
    bound = plan.cost // weight  # the step-0 arcs add less than ``weight`` in all
    answers: list[np.ndarray] = []
    moves: list[int] = []
    proven = True
    notes: list[str] = []
    current = before
    for k in range(len(steps)):
        problem = steps.problems[k]
        target = np.zeros(steps.num_brokers, dtype=np.int64)
        target[steps.broker_of[k]] = plan.held[k]
        realize = _realize_racks if problem.rack_aware else _realize
        chosen = realize(steps, k, current, target)
        if chosen is None:
            return [], bound, False, {"realized": False, "note": f"step {k}: no matching"}
        replicas = _answer(steps, k, chosen)
        answers.append(replicas)
        if k > 0 or not tie_break:
            moves.append(trace_moves_into(steps, k, current, replicas))
        level3 = leader_level(problem, replicas)
        if level3 != leader_bound(problem):
            proven = False
            notes.append(f"step {k}: leaders {level3} above the bound {leader_bound(problem)}")
        if problem.rack_aware:
            level2 = replica_levels(problem, replicas)[1]
            best = int(replica_flow.solve(problem, SolveOptions()).objective[1])
            if level2 != best:
                proven = False
                notes.append(f"step {k}: rack spread {level2} above its optimum {best}")
        current = chosen
    total = sum(moves)
    if total != bound:
        proven = False
        notes.append(f"realised {total} moves, the count flow's bound is {bound}")
    levels_met = not any("above its optimum" in note for note in notes)
    if any(problem.rack_aware for problem in steps.problems) and not proven:
        # The counts ignore racks; the step policy keeps every step's levels: the better one.
        policy, policy_moves = _step_policy(steps, previous)
        if not levels_met or sum(policy_moves) < total:
            answers, moves, total = policy, policy_moves, sum(policy_moves)
            notes = [f"the counts' answer ({'; '.join(notes)}) gave way to the step policy's"]
            proven = total == bound and all(
                leader_level(p, a) == leader_bound(p) for p, a in zip(steps.problems, answers)
            )
    info: dict[str, object] = {"step_moves": moves, "count_bound": bound}
    if notes:
        info["notes"] = notes
    return answers, bound, proven, info


def _step_policy(
    steps: PlacementSteps, previous: Placed | None
) -> tuple[list[np.ndarray], list[int]]:
    """Each step solved alone by the replica flow, the previous answer as its replicas (the
    window's first step: ``previous``, or the starting replicas); and its trace moves."""
    answers: list[np.ndarray] = []
    moves: list[int] = []
    current = previous
    for k, problem in enumerate(steps.problems):
        claimed = problem if current is None else _with_placed(steps, k, current)
        replicas = np.asarray(replica_flow.solve(claimed, SolveOptions()).answer)
        if current is not None:
            moves.append(trace_moves_into(steps, k, current, replicas))
        answers.append(replicas)
        current = placed(steps, k, replicas)
    return answers, moves


def _with_placed(steps: PlacementSteps, k: int, before: Placed) -> PlacementProblem:
    """Step ``k``'s placement with each existing partition's replicas taken from ``before``
    (replicas on brokers gone since: on an id no broker has, to be placed)."""
    problem = steps.problems[k]
    ids = np.array(steps.broker_ids, dtype=np.int64)
    rf = problem.replication_factors.astype(np.int64)
    row = np.repeat(np.arange(problem.num_partitions), rf)
    slot = np.arange(len(row)) - np.repeat(problem.replica_start[:-1], rf)
    wide = before.table[steps.part_of[k][row], slot]
    lowest = min(int(problem.replica_brokers.min(initial=0)), int(ids.min(initial=0)))
    unplaced = lowest - 1 - np.arange(len(row))  # ids no broker has
    flat = np.where(wide >= 0, ids[np.maximum(wide, 0)], unplaced)
    own = ~before.exists[steps.part_of[k][row]]
    flat = np.where(own, problem.replica_brokers, flat)
    return dataclasses.replace(problem, replica_brokers=flat.astype(np.int64))


def _realize(steps: PlacementSteps, k: int, before: Placed, target: np.ndarray) -> Placed | None:
    """Step ``k``'s replicas on the planned counts: each broker keeps its lowest-numbered
    partitions up to its count, the replicas still missing are matched (max flow) to the brokers
    with room, never to one that holds the partition; ``None`` if no matching places them all."""
    problem = steps.problems[k]
    live = np.zeros(steps.num_brokers + 1, dtype=bool)
    live[steps.broker_of[k]] = True
    rows = steps.part_of[k]
    rf = problem.replication_factors.astype(np.int64)
    old = np.where(before.exists[rows][:, None], before.table[rows], -1)
    # Keep: per broker, its partitions in ascending order up to the target.
    i, slot = np.nonzero((old >= 0) & live[old])
    b = old[i, slot]
    order = np.lexsort((rows[i], b))
    i, slot, b = i[order], slot[order], b[order]
    rank = np.arange(len(b)) - np.searchsorted(b, b, side="left")
    keep = rank < target[b]
    kept = np.full((len(rows), steps.width), -1, dtype=np.int64)
    kept[i[keep], slot[keep]] = b[keep]
    kept = -np.sort(-kept, axis=1)  # kept brokers first, then the empty slots
    have = (kept >= 0).sum(axis=1)
    need = rf - have
    room = target - np.bincount(b[keep], minlength=steps.num_brokers)
    wanting = np.flatnonzero(need > 0)
    takers = np.flatnonzero(room > 0)
    if len(wanting):
        pair_row = np.repeat(wanting, len(takers))
        pair_taker = np.tile(takers, len(wanting))
        allowed = ~(kept[pair_row] == pair_taker[:, None]).any(axis=1)
        pair_row, pair_taker = pair_row[allowed], pair_taker[allowed]
        row_node = np.full(len(rows), -1, dtype=np.int64)
        row_node[wanting] = 2 + np.arange(len(wanting))
        taker_node = np.full(steps.num_brokers, -1, dtype=np.int64)
        taker_node[takers] = 2 + len(wanting) + np.arange(len(takers))
        tails = np.concatenate(
            (np.zeros(len(wanting), np.int64), row_node[pair_row], taker_node[takers])
        )
        heads = np.concatenate(
            (row_node[wanting], taker_node[pair_taker], np.ones(len(takers), np.int64))
        )
        caps = np.concatenate((need[wanting], np.ones(len(pair_row), np.int64), room[takers]))
        flow = max_flow.SimpleMaxFlow()
        flow.add_arcs_with_capacity(
            tails.astype(np.int32), heads.astype(np.int32), caps.astype(np.int64)
        )
        if flow.solve(0, 1) != flow.OPTIMAL or flow.optimal_flow() != int(need[wanting].sum()):
            return None
        arcs = len(wanting) + np.arange(len(pair_row))
        used = flow.flows(arcs.astype(np.int32)) > 0
        got_row, got_taker = pair_row[used], pair_taker[used]
        order = np.argsort(got_row, kind="stable")
        got_row, got_taker = got_row[order], got_taker[order]
        offset = np.arange(len(got_row)) - np.searchsorted(got_row, got_row, side="left")
        kept[got_row, have[got_row] + offset] = got_taker
    table = before.table.copy()
    table[rows] = kept
    exists = np.zeros(steps.num_parts, dtype=bool)
    exists[rows] = True
    return Placed(table, exists)


def _realize_racks(
    steps: PlacementSteps, k: int, before: Placed, target: np.ndarray
) -> Placed | None:
    """Step ``k``'s replica sets on the planned counts with the least rack spread, then the fewest
    moves: stage A of :mod:`models.sticky_replica.flow` with every broker's count fixed.

    Partitions with the same replication factor and the same live brokers before (or new) are a
    class; a class sends its replicas to (class, rack) nodes at the convex cost ``W (2t - 1)`` of
    the ``t``-th replica on a rack, then to the rack's brokers (cost 1 outside the class's brokers
    before, 0 for a new partition), each broker taking exactly its planned count; each broker
    takes at most one replica per partition of the class, so dealing a class's units to its
    partitions in turn gives every partition distinct brokers."""
    problem = steps.problems[k]
    position = np.full(steps.num_brokers, -1, dtype=np.int64)
    position[steps.broker_of[k]] = np.arange(problem.num_brokers)
    brokers = problem.num_brokers
    factors = problem.replication_factors.astype(np.int64)
    parts = steps.part_of[k].tolist()
    keys: dict[tuple[int, ...], int] = {}
    class_of = np.empty(len(parts), dtype=np.int64)
    position = np.append(position, -1)  # slot -1: no broker
    for i, (p, factor) in enumerate(zip(parts, factors.tolist())):
        old = position[before.table[p]] if before.exists[p] else None
        held = () if old is None else tuple(sorted(int(b) for b in old if b >= 0))
        class_of[i] = keys.setdefault((int(old is None), factor, *held), len(keys))
    classes = len(keys)
    key_list = list(keys)
    sizes = np.bincount(class_of, minlength=classes).astype(np.int64)
    rack = problem.broker_rack.astype(np.int64)
    racks = len(problem.rack_names)
    rack_size = np.bincount(rack, minlength=racks)
    weight = int(factors.sum()) + 1
    rack_node = classes + np.arange(classes * racks).reshape(classes, racks)
    broker_node = classes + classes * racks + np.arange(brokers)
    nodes = classes + classes * racks + brokers
    tails, heads, caps, costs = [], [], [], []
    for c, key in enumerate(key_list):
        factor = key[1]
        for r in range(racks):
            for t in range(1, min(factor, int(rack_size[r])) + 1):
                tails.append(c)
                heads.append(int(rack_node[c, r]))
                caps.append(int(sizes[c]))
                costs.append(weight * (2 * t - 1))
    first_broker_arc = len(tails)
    by_rack = np.argsort(rack, kind="stable")
    arc_class, arc_broker = [], []
    for c, key in enumerate(key_list):
        new, held_set = key[0], set(key[2:])
        for b in by_rack.tolist():
            tails.append(int(rack_node[c, rack[b]]))
            heads.append(int(broker_node[b]))
            caps.append(int(sizes[c]))
            costs.append(0 if new or b in held_set else 1)
            arc_class.append(c)
            arc_broker.append(b)
    supplies = np.zeros(nodes, dtype=np.int64)
    supplies[:classes] = sizes * np.array([key[1] for key in key_list], dtype=np.int64)
    supplies[broker_node] = -target[steps.broker_of[k]]
    flow = solve_network(
        np.array(tails, np.int64),
        np.array(heads, np.int64),
        np.array(caps, np.int64),
        np.array(costs, np.int64),
        supplies,
        f"step {k}: the rack-aware realisation flow has no solution",
    )
    units = flow.flows(
        np.arange(first_broker_arc, first_broker_arc + len(arc_class), dtype=np.int32)
    )
    members = np.argsort(class_of, kind="stable")
    first_member = np.cumsum(sizes) - sizes
    dealt = np.zeros(classes, dtype=np.int64)
    table = before.table.copy()
    table[steps.part_of[k]] = -1
    filled = np.zeros(len(parts), dtype=np.int64)
    for c, b, count in zip(arc_class, arc_broker, units.tolist()):
        for _ in range(count):
            i = int(members[first_member[c] + dealt[c] % sizes[c]])
            dealt[c] += 1
            table[parts[i], filled[i]] = int(steps.broker_of[k][b])
            filled[i] += 1
    exists = np.zeros(steps.num_parts, dtype=bool)
    exists[steps.part_of[k]] = True
    return Placed(table, exists)


def _answer(steps: PlacementSteps, k: int, chosen: Placed) -> np.ndarray:
    """The ``replicas`` array of step ``k``: brokers ascending, the leader flow's leader first."""
    problem = steps.problems[k]
    if problem.num_partitions == 0:
        return problem.replica_brokers.copy()
    position = np.full(steps.num_brokers + 1, -1, dtype=np.int64)
    position[steps.broker_of[k]] = np.arange(problem.num_brokers)
    width = int(problem.replication_factors.max(initial=0))
    table = position[chosen.table[steps.part_of[k]][:, :width]]
    table = np.where(table >= 0, table, problem.num_brokers)
    table.sort(axis=1)
    table = np.where(table < problem.num_brokers, table, -1)
    leaders = balanced_leaders(problem, table)
    first = np.argmax(table == leaders[:, None], axis=1)
    rows = np.arange(problem.num_partitions)
    lead = table[rows, first].copy()
    table[rows, first] = table[rows, 0]
    table[rows, 0] = lead
    flat = table[table >= 0]
    replicas: np.ndarray = problem.broker_ids[flat]
    return replicas
