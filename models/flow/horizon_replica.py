"""The replica-placement horizon: every step at its per-step optimum, then the fewest trace moves.

Level 1 of a step (``sum_b r_b^2``) is least exactly when every live broker holds ``q`` or
``q + 1`` replicas (``q = T // B``), so the brokers' counts over the window are the count flow of
:mod:`models.flow.horizon_counts` over (broker, step) nodes: a broker keeps replicas for free,
every other replica of an existing partition is a move.  Its cost is a lower bound on the trace
moves of any placement whose steps are level-1 optimal (it leaves out that a partition's replicas
sit on distinct brokers).  Each step is then realised on those counts: a broker keeps its planned
number of replicas, and the others are matched to the brokers that take replicas, never to one
that already holds the partition (a bipartite b-matching, by max flow); the leaders come from the
per-step leader flow (:func:`models.flow.sticky_replica._leaders`).  When every step is realised
with the planned moves, the rack spread of every step is its optimum (always so without racks)
and the leaders meet their bound, the answer is proven optimal; otherwise it is reported
``feasible`` with the flow's bound.  Why: docs/design/formulations.md, "Horizon".

The trace's step 0 costs no trace move; among the placements that tie, the one with the fewest
moves from the starting replicas is taken (the step-0 arcs cost 1, every later move ``W`` above
all of them).
"""

from __future__ import annotations

import numpy as np
from ortools.graph.python import max_flow

from models.flow.horizon_counts import solve_counts
from models.flow.sticky_replica import _leaders
from models.horizon_steps import PlacementSteps
from problems import PlacementProblem
from problems.evaluate import replica_levels

#: Sets of replicas: trace-wide broker ids per trace-wide partition (``None``: no such partition).
Sets = list[list[int] | None]


def leader_bound(problem: PlacementProblem) -> int:
    """Level 3's lower bound: leaders as even as the partitions with replicas allow."""
    led, brokers = int(np.count_nonzero(problem.replication_factors)), problem.num_brokers
    q, extra = divmod(led, brokers)
    return (brokers - extra) * q * q + extra * (q + 1) * (q + 1)


def solve(
    steps: PlacementSteps, previous: Sets | None
) -> tuple[list[np.ndarray], int, bool, dict[str, object]]:
    """Every step's ``replicas`` array, the proven lower bound on the window's trace moves, whether
    the answer is proven optimal, and what was measured.

    ``previous``: each partition's replicas before the window (trace-wide ids), or ``None``: the
    window starts the trace (its first step is free; ties go to the fewest moves from the
    starting replicas).
    """
    tie_break = previous is None
    before: Sets = _starting(steps) if previous is None else previous
    present, low, high, births = [], [], [], []
    start = np.zeros(steps.num_brokers, dtype=np.int64)
    live0 = np.zeros(steps.num_brokers, dtype=bool)
    live0[steps.broker_of[0]] = True
    for held in before:
        for b in held or ():
            if live0[b]:
                start[b] += 1
    existing = np.array([held is not None for held in before] + [False], dtype=bool)
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
            new = ~existing[np.minimum(steps.part_of[k], len(existing) - 1)]
            births.append(int(problem.replication_factors[new].sum()))
        existing = np.zeros(steps.num_parts + 1, dtype=bool)
        existing[steps.part_of[k]] = True
    weight = int(start.sum()) + 1 if tie_break else 1
    costs = [1 if tie_break else weight] + [weight] * (len(steps) - 1)
    plan = solve_counts(present, low, high, births, start, costs, steps.num_brokers)
    bound = plan.cost // weight  # the step-0 arcs add less than ``weight`` in all
    answers: list[np.ndarray] = []
    moves: list[int] = []
    proven = True
    notes: list[str] = []
    sets = before
    for k in range(len(steps)):
        problem = steps.problems[k]
        target = np.zeros(steps.num_brokers, dtype=np.int64)
        target[steps.broker_of[k]] = plan.held[k]
        chosen, moved = _realize(steps, k, sets, target)
        if chosen is None:
            return [], bound, False, {"realized": False, "note": f"step {k}: no matching"}
        replicas = _answer(steps, k, chosen)
        answers.append(replicas)
        if k > 0 or not tie_break:
            moves.append(moved)
        level1, level2, level3, _ = replica_levels(problem, replicas)
        if level3 != leader_bound(problem):
            proven = False
            notes.append(f"step {k}: leaders {level3} above the bound {leader_bound(problem)}")
        if problem.rack_aware:
            proven = False
            notes.append(f"step {k}: rack spread {level2} not checked against its optimum")
        sets = chosen
    total = sum(moves)
    if total != bound:
        proven = False
        notes.append(f"realised {total} moves, the count flow's bound is {bound}")
    info: dict[str, object] = {"step_moves": moves, "count_bound": bound}
    if notes:
        info["notes"] = notes
    return answers, bound, proven, info


def _starting(steps: PlacementSteps) -> Sets:
    """The starting replicas of step 0 (live brokers only), by trace-wide partition."""
    sets: Sets = [None] * steps.num_parts
    for p, held in zip(steps.part_of[0].tolist(), steps.starting_sets(0)):
        sets[p] = held
    return sets


def _realize(
    steps: PlacementSteps, k: int, before: Sets, target: np.ndarray
) -> tuple[Sets | None, int]:
    """Step ``k``'s replica sets on the planned counts: each broker keeps what it may (its
    lowest-numbered partitions first), the rest is matched; and the moves made."""
    problem = steps.problems[k]
    live = np.zeros(steps.num_brokers, dtype=bool)
    live[steps.broker_of[k]] = True
    factors = problem.replication_factors.tolist()
    parts = steps.part_of[k].tolist()
    kept: dict[int, list[int]] = {}
    holding: dict[int, list[int]] = {}  # broker -> partitions it held, ascending
    for p in parts:
        for b in before[p] or ():
            if live[b]:
                holding.setdefault(b, []).append(p)
    room = target.copy()
    for b, held in holding.items():
        for p in held[: int(target[b])]:
            kept.setdefault(p, []).append(b)
        room[b] -= min(len(held), int(target[b]))
    need: list[tuple[int, int, bool]] = []  # (partition, replicas missing, existed before)
    for p, factor in zip(parts, factors):
        have = len(kept.get(p, ()))
        if have < factor:
            need.append((p, factor - have, before[p] is not None))
    takers = np.flatnonzero(room > 0)
    chosen: Sets = [None] * steps.num_parts
    for p in parts:
        chosen[p] = list(kept.get(p, ()))
    if need:
        flow = max_flow.SimpleMaxFlow()
        source, sink = 0, 1
        node_of_taker = {int(b): 2 + len(need) + i for i, b in enumerate(takers.tolist())}
        tails, heads, caps = [], [], []
        for i, (p, missing, _) in enumerate(need):
            tails.append(source)
            heads.append(2 + i)
            caps.append(missing)
            holders = set(kept.get(p, ()))
            for b, node in node_of_taker.items():
                if b not in holders:
                    tails.append(2 + i)
                    heads.append(node)
                    caps.append(1)
        for b, node in node_of_taker.items():
            tails.append(node)
            heads.append(sink)
            caps.append(int(room[b]))
        flow.add_arcs_with_capacity(
            np.array(tails, np.int32), np.array(heads, np.int32), np.array(caps, np.int64)
        )
        if flow.solve(source, sink) != flow.OPTIMAL:
            return None, 0
        if flow.optimal_flow() != sum(missing for _, missing, _ in need):
            return None, 0
        flows = flow.flows(np.arange(flow.num_arcs(), dtype=np.int32))
        taker_of_node = {node: b for b, node in node_of_taker.items()}
        for arc in np.flatnonzero(flows > 0).tolist():
            tail, head = int(tails[arc]), int(heads[arc])
            if 2 <= tail < 2 + len(need) and head in taker_of_node:
                got = chosen[need[tail - 2][0]]
                assert got is not None
                got.append(taker_of_node[head])
    moved = 0
    for p, _, existed in need:
        old, new = before[p], chosen[p]
        if existed and old is not None and new is not None:
            moved += len(set(new) - set(old))
    return chosen, moved


def _answer(steps: PlacementSteps, k: int, sets: Sets) -> np.ndarray:
    """The ``replicas`` array of step ``k``: brokers ascending, the leader flow's leader first."""
    problem = steps.problems[k]
    position = np.full(steps.num_brokers, -1, dtype=np.int64)
    position[steps.broker_of[k]] = np.arange(problem.num_brokers)
    width = int(problem.replication_factors.max(initial=0))
    table = np.full((problem.num_partitions, width), -1, dtype=np.int64)
    for i, p in enumerate(steps.part_of[k].tolist()):
        held = sorted(position[b] for b in sets[p] or ())
        table[i, : len(held)] = held
    leaders = _leaders(problem, table)
    first = np.argmax(table == leaders[:, None], axis=1)
    rows = np.arange(problem.num_partitions)
    lead = table[rows, first].copy()
    table[rows, first] = table[rows, 0]
    table[rows, 0] = lead
    flat = table[table >= 0]
    replicas: np.ndarray = problem.broker_ids[flat]
    return replicas
