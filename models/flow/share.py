"""Exact share-group (KIP-932) solver: a b-matching with convex costs as one min-cost flow.

Objective: ``share`` (:mod:`problems.share`).  Each unit of flow is one ``(member, partition)``
pair of the answer, on this network (OR-Tools ``SimpleMinCostFlow``):

* source -> member ``m``: unit arcs ``k = 1 .. min(P_m, N)`` (``P_m``: the partitions ``m`` may
  get; ``N`` below) at ``W1 (2k - 1)``, the marginal costs of ``c_m^2``: convex, so the cheap
  ones fill first;
* member ``m`` -> partition ``p``, one arc of capacity 1 per allowed pair
  (:mod:`models.share_pairs`), at cost ``-1`` for a previous pair (each one kept is a move
  saved) and 0 otherwise;
* partition ``p`` -> sink: unit arcs ``k = 1 .. min(M_p, N)`` at ``W2 (2k - 1)``, the marginal
  costs of ``r_p^2``;
* sink -> source at cost 0: the number of pairs is free (a circulation).

"At least one" is a lower bound of 1 on the first unit arc of every member that must get a
partition and of every partition that must get a member, moved into the nodes' supplies (the
source sends that unit to the member, the partition to the sink).  Every cycle through the
source costs more than 0 (``W1 > 1``), so the circulation is bounded.

**Weights.**  Both the lexicographic optimum and the flow's optimum are *minimal covers*: with a
pair dropped, a member or a partition that needs one would go without (dropping any other pair
lowers level 1, and the flow's cost by more than ``W1 - 1 > 0``).  In a minimal cover each pair
is the only one of some member or partition that needs one, so it has at most ``N`` pairs, ``N``
= the members and partitions that need one; hence no count exceeds ``N`` (the ladders' length),
level 2 is at most ``N * max_p M_p`` (``sum r_p^2 <= max r * sum r``), and the pairs kept at most
``K = min(N, previous allowed pairs)``.  With ``W2 = K + 1`` and ``W1 = W2 (N max_p M_p + 1)``,
between minimal covers a lower level 1 outweighs any level-2 and level-3 difference, and a lower
level 2 any level-3 difference: the flow's optimum ``W1 level1 + W2 level2 - kept`` is the
lexicographic optimum.  OR-Tools computes in 64 bits: when the dearest arc times the nodes could
pass 2**62, or the solver reports a bad cost range, the answer is ``unknown``
(``info["reason"]``), not a guess.  Polynomial, so there is no time limit; otherwise the status
is ``optimal``.
"""

from __future__ import annotations

import numpy as np
from ortools.graph.python import min_cost_flow

from models.options import SolveOptions
from models.share_pairs import share_pairs
from problems import GroupProblem, Result, Status
from problems.share import pairs_array

#: The largest total cost the network may reach (OR-Tools computes costs in int64).
COST_LIMIT = 2**62


def solve(problem: GroupProblem, options: SolveOptions) -> Result:
    """Solve the share objective exactly by one min-cost flow (no option is used: polynomial,
    always proven unless the costs would overflow)."""
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
    flow = min_cost_flow.SimpleMinCostFlow()
    flow.add_arcs_with_capacity_and_unit_cost(
        np.asarray(tails, dtype=np.int32),
        np.asarray(heads, dtype=np.int32),
        np.asarray(caps, dtype=np.int64),
        np.asarray(costs, dtype=np.int64),
    )
    flow.set_nodes_supplies(np.arange(sink + 1, dtype=np.int32), supplies)
    status = flow.solve()
    if status == flow.BAD_COST_RANGE:
        return _unknown(problem, "the flow's costs are out of OR-Tools' range")
    if status != flow.OPTIMAL:  # a minimal cover always exists within the ladders
        raise RuntimeError(f"min-cost flow failed with status {status}")
    used = flow.flows(np.arange(first_pair, first_pair + pairs.count, dtype=np.int32)) > 0
    answer = pairs_array(pairs.member[used], pairs.partition[used])
    result = Result(problem, "share", answer, Status.OPTIMAL)
    result.bound = tuple(result.objective)
    return result


def _unknown(problem: GroupProblem, reason: str) -> Result:
    return Result(problem, "share", None, Status.UNKNOWN, info={"reason": reason})
