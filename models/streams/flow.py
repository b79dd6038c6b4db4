"""Streams-group task assignment (KIP-1071) by min-cost flow: levels 1-2 of ``streams`` always
proven, the rest proven or bounded.

Two networks (OR-Tools ``SimpleMinCostFlow``), the levels of each folded into one cost by weights
that exceed every lower level's range (:func:`_weights`):

* **actives** (:func:`active_flow`): one unit per task, an arc ``t -> m`` per task and member on a
  process of least restore cost (level 1 needs no weight: nothing but the task's own process sets
  its cost, so its optimum is exactly those arcs), costing level 4 (cross-rack traffic) and level
  5 (a move); members into their balance group, and per group unit arcs to the sink of cost
  ``w_g (2k - 1)`` (level 2, convex).  This is KIP-925's min-traffic network without its fixed
  per-client counts: the counts are decided by the balance level instead of copied from a
  heuristic's answer.  Its optimum is the exact optimum of levels 1 and 2 of the whole problem:
  those levels depend on the actives alone, and every active assignment has standbys (a task
  needs at most one standby per other process).  With standbys fixed (``exclude``: the processes
  that hold one of ``t``'s standbys), it is the exact optimum of the actives given the standbys.
* **standbys** (:func:`standby_flow`): ``standbys[t]`` units per task, an arc per task and member
  (at most one per process: a node per task and process where a process has several members)
  costing level 4 (the standby's traffic) and level 6 (a new copy); members into their standby
  group and unit arcs of cost ``w_g (2k - 1)`` (level 3).  Given the actives, its optimum is the
  exact optimum of the standbys; without the actives' processes excluded (the *relaxed* network)
  it bounds levels 3, 4 (the standbys' part) and 6 of every answer.

The answer is the active flow's, then the standby flow's given it.  Each level's proven bound is
the active flow's value (levels 1, 2, and the actives' parts of 4 and 5) or the relaxed standby
flow's (level 3, the standbys' part of 4, level 6; the relaxed network still excludes a task's
process where level 1 pins it to one); a level's bound holds given the levels above
at their bound, so the status is ``optimal`` when the answer meets every bound, and otherwise
``feasible`` with the bound up to the first level it does not meet.  Without standbys (stateless
topologies, or none required) levels 3 and 6 are 0 and every answer is proven.  When the weighted
costs could pass OR-Tools' 64-bit range, the lowest levels are dropped from the network until they
fit, and the dropped levels are reported unproven.

Min-cost flow is polynomial; the balance ladders are cut at windows widened until they do not
bind (:func:`_solve_with_ladders`), so 1,000 tasks on 1,000 members (a million task arcs) solves
in seconds.  The networks and why they are exact: docs/design/formulations.md.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from ortools.graph.python import min_cost_flow

from models.common.min_cost_flow import FlowFailed, solve_network
from models.common.ranked_outcome import Deadline, OutOfTime
from models.options import SolveOptions
from models.streams.data import (
    BoolArray,
    IntArray,
    StreamsData,
    check_size,
    streams_data,
    streams_result,
)
from problems import Result, Status
from problems.streams import StreamsProblem

#: The estimated solving time of a network per arc (measured: 13.4 s for the three networks of
#: 1,000 tasks x 1,000 members, about 3 million arcs, on a loaded 2-core machine), and how far
#: past the deadline an estimate may end for the network to be solved.
SECONDS_PER_ARC = 4e-6
OVERRUN_SECONDS = 0.25

#: OR-Tools computes costs in int64 and scales them by the nodes: every cost, times the nodes + 1,
#: and every total stay below this.
COST_LIMIT = 2**62


@dataclass(frozen=True)
class FlowAnswer:
    """A network's optimum: the chosen arcs' level values and how many levels it proved."""

    pairs: IntArray  # (task, member) rows of the units sent
    levels: tuple[int, ...]  # the network's levels, as it minimised them
    proven: int  # how many of those levels the weights covered (the rest were dropped)


def solve(problem: StreamsProblem, options: SolveOptions) -> Result:
    """Solve the ``streams`` objective by min-cost flow within ``options.time_limit``.

    The time limit covers building the networks and solving them: a network is not solved when
    its estimated solving time (:data:`SECONDS_PER_ARC` per arc) would end past the deadline (an
    OR-Tools flow cannot be stopped once started), and then there is no answer (``unknown``).

    Returns
    -------
    Result
        ``optimal`` when the answer meets every level's bound (always without standbys), else
        ``feasible`` with the proven lexicographic bound; ``info["proven_levels"]`` counts the
        levels proven; ``unknown`` without an answer when the time limit ran out.

    Raises
    ------
    ProblemError
        More task-member pairs than ``options``' ``max_size`` (:func:`check_size`).
    """
    started = time.perf_counter()
    check_size(problem, options)
    data = streams_data(problem)
    try:
        active, standby, status, bound = solve_data(data, Deadline(started + options.time_limit))
    except OutOfTime:
        info = {"not_solved": "the time limit ran out before the flows were solved"}
        return streams_result(problem, Status.UNKNOWN, None, None, None, info)
    return streams_result(problem, status, bound, active, standby, {"proven_levels": len(bound)})


def solve_data(
    data: StreamsData, deadline: Deadline | None = None
) -> tuple[IntArray, IntArray, Status, tuple[int, ...]]:
    """The flows' answer to ``data``: ``(active, standby rows, status, proven bound)``
    (:class:`OutOfTime` when a network would not be solved by ``deadline``)."""
    actives = active_flow(data, deadline=deadline)
    active = np.empty(data.num_tasks, dtype=np.int64)
    active[actives.pairs[:, 0]] = actives.pairs[:, 1]
    standbys = standby_flow(data, active, deadline=deadline)
    relaxed = standby_flow(data, None, pinned_processes(data), deadline=deadline)
    achieved = data.levels(active, standbys.pairs)
    l1, l2, l4a, l5 = actives.levels
    l3r, l4sr, l6r = relaxed.levels
    bounds = [l1, l2, l3r, l4a + l4sr, l5, l6r]
    # How far each bound is proven: the active flow covers levels 1, 2, 4, 5 in that order, the
    # relaxed standby flow levels 3, 4, 6.
    sound = [
        actives.proven >= 1,
        actives.proven >= 2,
        relaxed.proven >= 1,
        actives.proven >= 3 and relaxed.proven >= 2,
        actives.proven >= 4,
        relaxed.proven >= 3,
    ]
    bound: list[int] = []
    for level, (value, limit, ok) in enumerate(zip(achieved, bounds, sound)):
        if not ok:
            break
        if value < limit:  # a bound above an answer: the network is wrong
            raise RuntimeError(f"level {level + 1}: answer {value} below its bound {limit}")
        bound.append(limit)
        if value != limit:
            break
    status = Status.OPTIMAL if tuple(bound) == achieved else Status.FEASIBLE
    return active, standbys.pairs, status, tuple(bound)


def active_flow(
    data: StreamsData, exclude: BoolArray | None = None, deadline: Deadline | None = None
) -> FlowAnswer:
    """The actives minimising levels 1, 2, 4 (actives' part) and 5, in that order.

    ``exclude``: ``bool[T, P]``, process ``p`` may not run task ``t`` (it holds one of its
    standbys); ``None``: no exclusion.
    """
    tasks, members, groups = data.num_tasks, data.num_members, data.num_groups
    restore_tm = data.restore[data.member_process].T  # [T, M]
    allowed = (
        np.ones((tasks, members), dtype=bool)
        if exclude is None
        else ~exclude[:, data.member_process]
    )
    # Level 1 is a sum over tasks of a cost of the task's own process, and nothing else binds the
    # actives together: its optimum is every task on a process of least restore cost, and the
    # answers at that optimum are exactly those (the arcs to other processes are dropped).
    least = np.where(allowed, restore_tm, _HIGH).min(axis=1, initial=_HIGH)
    if (least == _HIGH).any():
        raise ValueError("some task has no process it may run on")
    keep = allowed & (restore_tm == least[:, None])
    _estimate(int(np.count_nonzero(keep)), deadline)  # the network's arcs, before it is built
    task, member = np.nonzero(keep)
    task, member = task.astype(np.int64), member.astype(np.int64)
    process = data.member_process[member]
    restore = restore_tm[task, member]
    traffic = data.traffic[task, member]
    moved = ((data.prev_active[task] >= 0) & (data.prev_active[task] != member)).astype(np.int64)
    # A tie-break below level 5: an active on a process whose members held the task before (a
    # standby there would be no new copy, level 6).
    _estimate(len(task), deadline)
    known = _by_column_group(~data.standby_new, data.member_process, data.num_processes, np.add)
    displaced = known[task, process]
    # Level 2's unit arcs: group g's k-th active, k = 1 .. the tasks that may go to g.
    reach = _by_column_group(keep, data.balance_group, groups, np.logical_or).sum(axis=0)
    ranges = [
        0,  # level 1 is fixed by the arcs kept
        int((data.balance_weight * reach * reach).max(initial=0)),
        _spread(data.traffic, keep),
        int((data.prev_active >= 0).sum()),
        int((~data.standby_new).sum()),
    ]
    first_member, first_group = tasks, tasks + members
    sink = first_group + groups
    pair_costs = [np.zeros_like(restore), np.zeros_like(restore), traffic, moved, displaced]
    biggest = int((data.balance_weight * (2 * reach - 1)).max(initial=0))
    weights, proven = _weights(
        ranges,
        [_largest(c) for c in pair_costs],
        [0, biggest, 0, 0, 0],
        sink + 1,
        tasks,
    )
    supplies = np.zeros(sink + 1, np.int64)
    supplies[:tasks] = 1
    supplies[sink] = -tasks
    flows, counts = _solve_with_ladders(
        [task, first_member + np.arange(members)],
        [first_member + member, first_group + data.balance_group],
        [np.ones(len(task), np.int64), np.full(members, tasks, np.int64)],
        [_combine(pair_costs, weights), np.zeros(members, np.int64)],
        supplies,
        _Ladders(first_group, sink, weights[1] * data.balance_weight, reach),
        deadline,
    )
    used = flows[: len(task)] > 0
    chosen_task, chosen_member = task[used], member[used]
    levels = (
        int(restore[used].sum()),
        int((data.balance_weight * counts * counts).sum()),
        int(traffic[used].sum()),
        int(moved[used].sum()),
    )
    return FlowAnswer(np.stack([chosen_task, chosen_member], axis=1), levels, proven)


def standby_flow(
    data: StreamsData,
    active: IntArray | None,
    pinned: IntArray | None = None,
    deadline: Deadline | None = None,
) -> FlowAnswer:
    """The standbys minimising levels 3, 4 (standbys' part) and 6, in that order, given the
    actives (their processes excluded); ``None``: the relaxed network, where only ``pinned[t]``
    (a process every level-1 optimum runs ``t`` on, -1 for none) is excluded."""
    with_standbys = np.flatnonzero(data.standbys > 0)
    n, members, processes = len(with_standbys), data.num_members, data.num_processes
    if n == 0:
        return FlowAnswer(np.zeros((0, 2), np.int64), (0, 0, 0), 3)
    allowed = np.ones((n, members), dtype=bool)
    if active is not None:
        allowed = (
            data.member_process[active[with_standbys]][:, None] != data.member_process[None, :]
        )
    elif pinned is not None:
        allowed = pinned[with_standbys][:, None] != data.member_process[None, :]
    _estimate(int(np.count_nonzero(allowed)), deadline)  # the network's arcs, before it is built
    slot, member = np.nonzero(allowed)
    slot, member = slot.astype(np.int64), member.astype(np.int64)
    task = with_standbys[slot]
    process = data.member_process[member]
    traffic = data.standby_traffic[task, member]
    fresh = data.standby_new[task, member].astype(np.int64)
    need = data.standbys[with_standbys]
    total = int(need.sum())
    groups = data.num_standby_groups
    reach = _by_column_group(allowed, data.standby_group, groups, np.logical_or).sum(axis=0)
    ranges = [
        int((data.standby_weight * reach * reach).max(initial=0)),
        int(((_spread(data.standby_traffic[with_standbys], allowed, per_row=True)) * need).sum()),
        total,
    ]
    # Nodes: slots, (slot, process) pairs where a process has several members, members,
    # standby groups, sink.
    crowded = np.bincount(data.member_process, minlength=processes) > 1
    via = crowded[process]
    keys, pair_of = np.unique(slot[via] * processes + process[via], return_inverse=True)
    first_pair = n
    first_member = first_pair + len(keys)
    first_group = first_member + members
    sink = first_group + groups
    pair_costs = [np.zeros_like(traffic), traffic, fresh]
    biggest = int((data.standby_weight * (2 * reach - 1)).max(initial=0))
    weights, proven = _weights(
        ranges, [_largest(c) for c in pair_costs], [biggest, 0, 0], sink + 1, total
    )
    combined = _combine(pair_costs, weights)
    direct, crossing = np.flatnonzero(~via), np.flatnonzero(via)
    # Arcs: slot -> member (a process of one member) or slot -> (slot, process) -> member (the
    # pair node passes on one unit: one copy per process), member -> group, group -> sink.
    supplies = np.zeros(sink + 1, np.int64)
    supplies[:n] = need
    supplies[sink] = -total
    flows, counts = _solve_with_ladders(
        [slot[direct], keys // processes, first_pair + pair_of, first_member + np.arange(members)],
        [
            first_member + member[direct],
            first_pair + np.arange(len(keys)),
            first_member + member[crossing],
            first_group + data.standby_group,
        ],
        [
            np.ones(len(direct), np.int64),
            np.ones(len(keys), np.int64),
            np.ones(len(crossing), np.int64),
            np.full(members, n, np.int64),
        ],
        [
            combined[direct],
            np.zeros(len(keys), np.int64),
            combined[crossing],
            np.zeros(members, np.int64),
        ],
        supplies,
        _Ladders(first_group, sink, weights[0] * data.standby_weight, reach),
        deadline,
    )
    used = np.zeros(len(slot), bool)
    used[direct] = flows[: len(direct)] > 0
    start = len(direct) + len(keys)
    used[crossing] = flows[start : start + len(crossing)] > 0
    levels = (
        int((data.standby_weight * counts * counts).sum()),
        int(traffic[used].sum()),
        int(fresh[used].sum()),
    )
    order = np.lexsort((member[used], task[used]))
    rows = np.stack([task[used][order], member[used][order]], axis=1)
    return FlowAnswer(rows, levels, proven)


_HIGH = np.iinfo(np.int64).max


def pinned_processes(data: StreamsData) -> IntArray:
    """Per task, the one process of least restore cost (where level 1's optimum runs it in every
    answer), -1 where several processes tie: the relaxed standby network excludes it, a bound
    that holds for every answer at level 1's optimum, the only answers the later bounds speak of."""
    least = data.restore.min(axis=0, initial=_HIGH)
    ties = data.restore == least[None, :]
    one = ties.sum(axis=0) == 1
    return np.where(one, ties.argmax(axis=0), -1).astype(np.int64)


@dataclass(frozen=True)
class _Ladders:
    """The convex balance level of a network: group ``g`` (node ``first + g``) sends its ``k``-th
    unit to ``sink`` at cost ``weight[g] * (2k - 1)``, for ``k`` up to ``reach[g]``."""

    first: int
    sink: int
    weight: IntArray
    reach: IntArray


def _solve_with_ladders(
    tails: list[IntArray],
    heads: list[IntArray],
    caps: list[IntArray],
    costs: list[IntArray],
    supplies: IntArray,
    ladders: _Ladders,
    deadline: Deadline | None = None,
) -> tuple[IntArray, IntArray]:
    """Solve the network with each group's unit arcs cut at a window, widened until no group fills
    its window: a window that does not bind at the optimum of the convex (linear) program does not
    change it, so the answer is the optimum with every unit arc.  Returns the flow on the given
    arcs and each group's count.

    The first window is twice the even share of the units (a group rarely needs more), so a
    group's ladder is not a unit arc per task it could take (a million arcs at 1,000 x 1,000).
    """
    reach = ladders.reach.astype(np.int64)
    units = int(supplies[supplies > 0].sum())
    share = -(-units // max(int(np.count_nonzero(reach)), 1))
    top = np.minimum(reach, 2 * share + 2)
    given = sum(len(t) for t in tails)
    while True:
        group = np.repeat(np.arange(len(reach), dtype=np.int64), top)
        k = np.arange(len(group), dtype=np.int64) - np.repeat(np.cumsum(top) - top, top) + 1
        flows = _solve(
            [*tails, ladders.first + group],
            [*heads, np.full(len(group), ladders.sink)],
            [*caps, np.ones(len(group), np.int64)],
            [*costs, ladders.weight[group] * (2 * k - 1)],
            supplies,
            deadline,
        )
        if flows is None:  # the windows hold fewer units than there are: widen them all
            if (top >= reach).all():
                raise ValueError("the network has no flow: some task cannot be placed")
            top = np.minimum(reach, 2 * top + 1)
            continue
        counts = np.bincount(group, weights=flows[given:], minlength=len(reach)).astype(np.int64)
        full = (counts >= top) & (top < reach)
        if not full.any():
            return flows[:given], counts
        top = np.where(full, np.minimum(reach, 2 * top), top)


def _by_column_group(
    matrix: npt.NDArray[Any], group_of_column: IntArray, groups: int, op: np.ufunc
) -> npt.NDArray[Any]:
    """``matrix``'s columns reduced by ``op`` within each group (``[rows, groups]``; a group
    without a column gets ``op``'s identity)."""
    if groups == matrix.shape[1] and np.array_equal(group_of_column, np.arange(groups)):
        return matrix
    order = np.argsort(group_of_column, kind="stable")
    sorted_groups = group_of_column[order]
    present, starts = np.unique(sorted_groups, return_index=True)
    reduced = op.reduceat(matrix[:, order], starts, axis=1)
    out = np.full((matrix.shape[0], groups), op.identity, dtype=reduced.dtype)
    out[:, present] = reduced
    return out


def _spread(cost: IntArray, allowed: BoolArray, per_row: bool = False) -> Any:
    """How far a level of per-arc costs ``cost[r, c]`` (arcs ``allowed``) can vary: per row, its
    largest minus its smallest allowed cost; summed over rows unless ``per_row``."""
    high = np.where(allowed, cost, np.iinfo(np.int64).min).max(
        axis=1, initial=np.iinfo(np.int64).min
    )
    low = np.where(allowed, cost, _HIGH).min(axis=1, initial=_HIGH)
    spread = np.where(high >= low, high - low, 0)
    return spread if per_row else int(spread.sum())


def _largest(cost: npt.NDArray[np.int64]) -> int:
    return int(np.abs(cost).max(initial=0))


def _weights(
    ranges: list[int], pair_max: list[int], ladder_max: list[int], nodes: int, units: int
) -> tuple[list[int], int]:
    """The weight of each level (the lowest 1, each above it more than the levels below can
    change), and how many levels, from the top, fit OR-Tools' exact range (the others get
    weight 0 and are not proven)."""
    for kept in range(len(ranges), 0, -1):
        weights = [0] * len(ranges)
        w = 1
        for level in reversed(range(kept)):
            weights[level] = w
            w *= ranges[level] + 1
        arc = max(
            sum(wi * c for wi, c in zip(weights, pair_max)),
            sum(wi * c for wi, c in zip(weights, ladder_max)),
        )
        total = arc * 2 * max(units, 1)
        if arc * (nodes + 1) < COST_LIMIT and total < COST_LIMIT:
            return weights, kept
    return [0] * len(ranges), 0


def _combine(costs: list[IntArray], weights: list[int]) -> IntArray:
    out = np.zeros(len(costs[0]), dtype=np.int64)
    for c, w in zip(costs, weights):
        if w:
            out += w * c
    return out


def _estimate(arcs: int, deadline: Deadline | None) -> None:
    """:class:`OutOfTime` when ``deadline`` has passed, or a network of ``arcs`` arcs, solved
    now, would end more than :data:`OVERRUN_SECONDS` past it (by :data:`SECONDS_PER_ARC`)."""
    if deadline is not None:
        if time.perf_counter() + SECONDS_PER_ARC * arcs > deadline.at + OVERRUN_SECONDS:
            raise OutOfTime


def _solve(
    tails: list[npt.ArrayLike],
    heads: list[npt.ArrayLike],
    caps: list[npt.ArrayLike],
    costs: list[npt.ArrayLike],
    supplies: IntArray,
    deadline: Deadline | None = None,
) -> IntArray | None:
    """Solve the network; the flow on every arc, in the order given (``None``: no flow).

    :class:`OutOfTime` instead when ``deadline`` has passed, or the network's estimated solving
    time would end more than :data:`OVERRUN_SECONDS` past it."""
    _estimate(sum(len(np.asarray(a)) for a in tails), deadline)
    try:
        flow = solve_network(tails, heads, caps, costs, supplies)
    except FlowFailed as failed:
        if failed.status == min_cost_flow.SimpleMinCostFlow.INFEASIBLE:
            return None
        raise
    result: IntArray = flow.flows(np.arange(flow.num_arcs(), dtype=np.int32)).astype(np.int64)
    return result
