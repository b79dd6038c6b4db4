"""Lowering a horizon answer's moves one step at a time, each step re-solved exactly by min-cost flow.

With its neighbours fixed, one step of a sticky horizon is a transportation problem: partition
``p`` going to member ``m`` costs one move into the step if ``p``'s owner before was another
member, and one out of it if its owner after is another member; the step must stay at its level-1
optimum.  By :func:`models.horizon.levels.count_box` the optima are exactly the valid assignments
whose counts lie in the per-member boxes (at most one wide) with each group's sum fixed (the
members whose box starts at the same count: an exchange between two optima moves one partition
between members of one group, so each group's sum is the same in every optimum).  Those are flow
constraints: class -> member (cost), member -> its group (the box), group -> sink (the sum).  So
each step's best answer given its neighbours is one min-cost flow, and sweeping the steps until
none improves is a descent that never leaves the horizon's feasible set.  It proves nothing: the
CP-SAT model (:mod:`models.horizon.cpsat`) starts from its answer.
"""

from __future__ import annotations

import time

import numpy as np

from models.common.min_cost_flow import solve_network
from models.horizon.levels import BOX_MEMBERS, StepLevels, count_box
from models.horizon.steps import GroupSteps, wide_moves


def applies(steps: GroupSteps, levels: list[StepLevels]) -> bool:
    """Whether every step is judged on ``sticky`` with exact count boxes."""
    return all(step.kind == "sticky" for step in levels) and all(
        problem.num_members <= BOX_MEMBERS for problem in steps.problems
    )


def descend(
    steps: GroupSteps,
    levels: list[StepLevels],
    previous: np.ndarray | None,
    owners: list[np.ndarray],
    until: float,
) -> list[np.ndarray]:
    """``owners`` (trace-wide, per step) with each step re-solved given its neighbours, sweeping
    until a sweep gains nothing or ``until`` (``time.perf_counter()``) passes."""
    owners = [np.asarray(o, dtype=np.int64).copy() for o in owners]
    boxes = [_box(problem, step) for problem, step in zip(steps.problems, levels)]
    improved = True
    while improved and time.perf_counter() < until:
        improved = False
        for k in range(len(steps)):
            before = previous if k == 0 else owners[k - 1]
            after = owners[k + 1] if k + 1 < len(steps) else None
            old = _cost(before, owners[k], after)
            new = _best_step(steps, k, boxes[k], before, after)
            if _cost(before, new, after) < old:
                owners[k] = new
                improved = True
            if time.perf_counter() >= until:
                break
    return owners


def forward(
    steps: GroupSteps, levels: list[StepLevels], previous: np.ndarray | None
) -> list[np.ndarray]:
    """The step policy from ``previous``: each step in turn at its level-1 optimum with the fewest
    moves from the answer before it (trace-wide owners per step)."""
    owners: list[np.ndarray] = []
    before = previous
    for k, (problem, step) in enumerate(zip(steps.problems, levels)):
        before = _best_step(steps, k, _box(problem, step), before, None)
        owners.append(before)
    return owners


def _cost(before: np.ndarray | None, owner: np.ndarray, after: np.ndarray | None) -> int:
    return (0 if before is None else wide_moves(before, owner)) + (
        0 if after is None else wide_moves(owner, after)
    )


def _box(problem: object, step: StepLevels) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The boxes and each member's group sum target: ``(low, high, counts)``."""
    from problems import GroupProblem

    assert isinstance(problem, GroupProblem)
    low, high = count_box(problem, step.owner)
    counts = np.bincount(step.owner[step.owner >= 0], minlength=problem.num_members)
    return low, high, counts


def _best_step(
    steps: GroupSteps,
    k: int,
    box: tuple[np.ndarray, np.ndarray, np.ndarray],
    before: np.ndarray | None,
    after: np.ndarray | None,
) -> np.ndarray:
    """Step ``k``'s level-optimal owner with the fewest moves from ``before`` and into ``after``."""
    problem = steps.problems[k]
    low, high, counts = box
    members = problem.num_members
    parts = np.flatnonzero(problem.assignable)
    if len(parts) == 0:
        return steps.to_wide(k, np.full(problem.num_partitions, -1, dtype=np.int64))
    wide = steps.part_of[k][parts]
    local = steps.local_members(k)
    none = np.full(len(parts), -1, dtype=np.int64)
    prev = none if before is None else local[before[wide]]
    prev_owned = none.copy() if before is None else before[wide]
    nxt = none if after is None else local[after[wide]]
    nxt_owned = none.copy() if after is None else after[wide]
    # Classes: (topic's subscriber set, owner before, owner after); the costs depend on nothing else.
    sets: dict[bytes, int] = {}
    set_of_topic = np.array(
        [sets.setdefault(s.tobytes(), len(sets)) for s in problem.topic_subscribers], np.int64
    )
    key = np.column_stack(
        (
            set_of_topic[problem.partition_topic[parts]],
            prev,
            prev_owned >= 0,
            nxt,
            nxt_owned >= 0,
        )
    )
    rows, of_part, sizes = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    of_part = of_part.ravel()
    first = np.zeros(len(rows), dtype=np.int64)
    first[of_part[::-1]] = np.arange(len(parts))[::-1]
    subscribers = problem.topic_subscribers
    group_of = np.full(members, -1, dtype=np.int64)
    flexible = np.flatnonzero(high > low)
    group_ids, group_of[flexible] = np.unique(low[flexible], return_inverse=True)
    groups = len(group_ids)
    classes = len(rows)
    member_node = classes + np.arange(members)
    group_node = classes + members + np.arange(groups)
    nodes = classes + members + groups
    tails, heads, caps, costs = [], [], [], []
    for c in range(classes):
        g = int(parts[first[c]])
        eligible = subscribers[int(problem.partition_topic[g])]
        p_before, had_before, p_after, has_after = rows[c, 1], rows[c, 2], rows[c, 3], rows[c, 4]
        cost = (had_before & (eligible != p_before)).astype(np.int64) + (
            has_after & (eligible != p_after)
        ).astype(np.int64)
        tails.append(np.full(len(eligible), c))
        heads.append(member_node[eligible])
        caps.append(np.full(len(eligible), sizes[c]))
        costs.append(cost)
    tails.append(member_node[flexible])
    heads.append(group_node[group_of[flexible]])
    caps.append(np.ones(len(flexible), np.int64))
    costs.append(np.zeros(len(flexible), np.int64))
    supplies = np.zeros(nodes, dtype=np.int64)
    supplies[:classes] = sizes
    supplies[member_node] = -low
    ups = np.bincount(group_of[flexible], weights=(counts - low)[flexible], minlength=groups)
    supplies[group_node] = -ups.astype(np.int64)
    flow = solve_network(
        tails, heads, caps, costs, supplies, f"step {k}: the level-keeping flow has no solution"
    )
    count = sum(len(t) for t in tails[:classes])
    flows = flow.flows(np.arange(count, dtype=np.int32)).astype(np.int64)
    arc_class = np.concatenate(tails[:classes])
    arc_member = np.concatenate(heads[:classes]) - classes
    used = flows > 0
    arc_class, arc_member, flows = arc_class[used], arc_member[used], flows[used]
    order = np.lexsort((arc_member, arc_class))
    by_class = np.argsort(of_part, kind="stable")
    owner = np.full(problem.num_partitions, -1, dtype=np.int64)
    owner[parts[by_class]] = np.repeat(arc_member[order], flows[order])
    return steps.to_wide(k, owner)
