"""Exact share-group (KIP-932) solver: a b-matching with convex costs as one min-cost flow.

Objective: ``share`` (:mod:`problems.share`).  Each unit of flow is one ``(member, partition)``
pair of the answer, on this network (OR-Tools ``SimpleMinCostFlow``):

* source -> member ``m``: unit arcs ``k = 1 .. P_m`` (``P_m``: the partitions ``m`` may get) at
  ``W1 (2k - 1)``, the marginal costs of ``c_m^2``: convex, so the cheap ones fill first;
* member ``m`` -> partition ``p``, one arc of capacity 1 per allowed pair
  (:mod:`models.share_pairs`), at cost ``-1`` for a previous pair (each one kept is a move
  saved) and 0 otherwise;
* partition ``p`` -> sink: unit arcs ``k = 1 .. M_p`` at ``W2 (2k - 1)``, the marginal costs of
  ``r_p^2``;
* sink -> source, uncapacitated at cost 0: the number of pairs is free (a circulation).

"At least one" is a lower bound of 1 on the first unit arc of every member that must get a
partition and of every partition that must get a member, moved into the nodes' supplies (the
source sends that unit to the member, the partition to the sink).  Every cycle through the
source costs more than 0 (``W1 > 1``), so the circulation is bounded.

``W2 = L3 + 1`` and ``W1 = W2 (L2 + 1)`` with ``L2``, ``L3`` the largest values levels 2 and 3
can take (:meth:`models.share_pairs.SharePairs.level_ranges`), so the flow's cost
``W1 level1 + W2 level2 + moves`` orders answers exactly as the levels do: one min-cost flow
is the lexicographic optimum.  The cost must fit OR-Tools' 64-bit arithmetic: when the
weighted cost could exceed 2**62 the solver answers ``unknown`` (``info["reason"]``) rather
than risk an overflow.  Polynomial, so there is no time limit; the status is ``optimal``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ortools.graph.python import min_cost_flow

from models.options import SolveOptions
from models.share_pairs import keyword_options, share_pairs
from problems import GroupProblem, Result, Status
from problems.share import pairs_array

#: The largest total cost the network may reach (OR-Tools computes costs in int64).
COST_LIMIT = 2**62


def solve(problem: GroupProblem, options: SolveOptions | None = None) -> Result:
    """Solve the share objective exactly by one min-cost flow (``options``: nothing to tune)."""
    pairs = share_pairs(problem)
    members, partitions = problem.num_members, problem.num_partitions
    level1, level2, level3 = pairs.level_ranges(members, partitions)
    w2 = level3 + 1
    w1 = w2 * (level2 + 1)
    if w1 * (level1 + 1) >= COST_LIMIT:
        return Result(
            problem,
            "share",
            None,
            Status.UNKNOWN,
            info={"reason": "the weighted levels could overflow the flow's 64-bit costs"},
        )
    per_member = np.bincount(pairs.member, minlength=members)
    per_partition = np.bincount(pairs.partition, minlength=partitions)
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
        ladder(m, int(per_member[m]), w1, outward=False, forced=forced)
    for p in range(partitions):
        forced = bool(pairs.needed[p])
        if forced:
            supplies[members + p] -= 1
            supplies[sink] += 1
        ladder(members + p, int(per_partition[p]), w2, outward=True, forced=forced)
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
    if status != flow.OPTIMAL:  # choosing every allowed pair is feasible: never reached
        raise RuntimeError(f"min-cost flow failed with status {status}")
    used = flow.flows(np.arange(first_pair, first_pair + pairs.count, dtype=np.int32)) > 0
    answer = pairs_array(pairs.member[used], pairs.partition[used])
    result = Result(problem, "share", answer, Status.OPTIMAL)
    result.bound = tuple(result.objective)
    return result


def solve_keywords(problem: GroupProblem, **keywords: Any) -> Result:
    """:func:`solve` with the options as keywords (``time_limit=...``), as the registry passes them."""
    return solve(problem, keyword_options(**keywords))
