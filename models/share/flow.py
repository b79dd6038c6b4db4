"""Exact share-group (KIP-932) solver: a b-matching with convex costs as one min-cost flow.

Objective: ``share`` (:mod:`problems.share`).  One unit of flow per ``(member, partition)`` pair
(OR-Tools ``SimpleMinCostFlow``), convex unit-arc ladders for the squared counts, the levels
folded into one cost by weights bounded over minimal covers; ``unknown`` when the costs could pass
64 bits.  The network and why the weights are exact: docs/strategies/share.md.
"""

from __future__ import annotations

import numpy as np
from ortools.graph.python import min_cost_flow

from models.common.min_cost_flow import FlowFailed, solve_network
from models.options import SolveOptions
from models.share.pairs import share_pairs
from problems import GroupProblem, Result, Status
from problems.share import pairs_array, previous_pairs

#: The largest total cost the network may reach (OR-Tools computes costs in int64).
COST_LIMIT = 2**62


def solve(problem: GroupProblem, options: SolveOptions) -> Result:
    """Solve the share objective exactly by one min-cost flow (no option is used: polynomial,
    always proven unless the costs would overflow); a group whose allowed pairs are complete
    (:func:`complete_optimum`) in closed form."""
    closed = complete_optimum(problem)
    return closed if closed is not None else network_optimum(problem)


def complete_optimum(problem: GroupProblem) -> Result | None:
    """The proven optimum when every member that may read a partition may read every partition
    any member may read, and nobody holds a pair that stays allowed (a fresh homogeneous group);
    ``None`` otherwise.

    Every answer then has at least ``K = max(M, P)`` pairs (each of the ``M`` readers and ``P``
    partitions needs one), level 1 is least for the fewest pairs split evenly over the members,
    level 2 for those pairs split evenly over the partitions, and level 3 is the same for every
    answer.  Pair ``t < K`` joins reader ``t mod M`` and partition ``t mod P``: both splits even,
    and no pair twice (``K <= lcm(M, P)``).
    """
    rows = problem.subscribes & (problem.partition_counts > 0)[None, :]
    readers = np.flatnonzero(rows.any(axis=1))
    if len(readers) == 0:
        return None
    common = rows[readers[0]]
    if not (rows[readers] == common[None, :]).all():
        return None
    previous = previous_pairs(problem)
    if len(previous) and rows[previous[:, 0], problem.partition_topic[previous[:, 1]]].any():
        return None
    partitions = np.flatnonzero(common[problem.partition_topic])
    turn = np.arange(max(len(readers), len(partitions)))
    answer = pairs_array(readers[turn % len(readers)], partitions[turn % len(partitions)])
    result = Result(
        problem,
        "share",
        answer,
        Status.OPTIMAL,
        info={"method": "closed form (complete pairs)"},
        objective_name="share",
    )
    result.bound = tuple(result.objective)
    return result


def network_optimum(problem: GroupProblem) -> Result:
    """The optimum by the min-cost flow network (docs/strategies/share.md)."""
    pairs = share_pairs(problem)
    members, partitions = problem.num_members, problem.num_partitions
    per_member = np.bincount(pairs.member, minlength=members)
    per_partition = np.bincount(pairs.partition, minlength=partitions)
    cover = int(pairs.wants.sum() + pairs.needed.sum())  # N: pairs of a minimal cover, at most
    w2 = min(cover, int(pairs.previous.sum())) + 1
    w1 = w2 * (cover * int(per_partition.max(initial=0)) + 1)
    dearest = w1 * (2 * min(int(per_member.max(initial=0)), cover) + 1)
    if dearest * (members + partitions + 2) >= COST_LIMIT:
        return _unknown(problem, "the weighted levels could overflow the flow's 64-bit costs")
    source, sink = members + partitions, members + partitions + 1
    supplies = np.zeros(sink + 1, dtype=np.int64)
    tails, heads, caps, costs = [], [], [], []

    def ladder(node: int, count: int, weight: int, outward: bool, forced: bool) -> None:
        first = 2 if forced else 1  # the forced first unit lives in the supplies
        for k in range(first, count + 1):
            tails.append(node if outward else source)
            heads.append(sink if outward else node)
            caps.append(1)
            costs.append(weight * (2 * k - 1))

    for m in range(members):
        forced = bool(pairs.wants[m])
        if forced:
            supplies[source] -= 1
            supplies[m] += 1
        ladder(m, min(int(per_member[m]), cover), w1, outward=False, forced=forced)
    for p in range(partitions):
        forced = bool(pairs.needed[p])
        if forced:
            supplies[members + p] -= 1
            supplies[sink] += 1
        ladder(members + p, min(int(per_partition[p]), cover), w2, outward=True, forced=forced)
    first_pair = len(tails)
    tails += pairs.member.tolist()
    heads += (members + pairs.partition).tolist()
    caps += [1] * pairs.count
    costs += (-pairs.previous.astype(np.int64)).tolist()
    tails.append(sink)
    heads.append(source)
    caps.append(pairs.count)
    costs.append(0)
    try:  # a minimal cover always exists within the ladders
        flow = solve_network(
            np.asarray(tails, dtype=np.int64),
            np.asarray(heads, dtype=np.int64),
            np.asarray(caps, dtype=np.int64),
            np.asarray(costs, dtype=np.int64),
            supplies,
        )
    except FlowFailed as failed:
        if failed.status == min_cost_flow.SimpleMinCostFlow.BAD_COST_RANGE:
            return _unknown(problem, "the flow's costs are out of OR-Tools' range")
        raise
    used = flow.flows(np.arange(first_pair, first_pair + pairs.count, dtype=np.int32)) > 0
    answer = pairs_array(pairs.member[used], pairs.partition[used])
    result = Result(problem, "share", answer, Status.OPTIMAL, objective_name="share")
    result.bound = tuple(result.objective)
    return result


def _unknown(problem: GroupProblem, reason: str) -> Result:
    return Result(
        problem, "share", None, Status.UNKNOWN, info={"reason": reason}, objective_name="share"
    )
