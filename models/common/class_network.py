"""Exact sticky and rack-aware assignment on classes of members: balance, then racks, then moves.

The objectives (docs/design/objectives.md): ``sticky`` minimises ``sum n_m^2``, then moves;
``rack-aware`` minimises ``sum n_m^2``, then partitions on a member outside their replicas' racks,
then moves.  The general flows (:mod:`models.sticky.flow`, :mod:`models.rack_aware.flow`) build a
node per member or per (partition class, member) pair; this one aggregates both sides, so that a
group of 10,000 members and 100,000 partitions is a network of a few hundred nodes:

* partitions fall into *pools* (same subscribers, and for rack-aware the same member racks among
  their replicas' racks), each split into its validly owned and its unowned partitions;
* members fall into *classes*: same subscription, same rack and the same number of owned partitions
  in every pool.  Members of a class are interchangeable, so the network decides only how many
  partitions of each pool a class keeps and takes; a class of ``s`` members taking ``N`` partitions
  has ``sum n^2`` at least ``s q^2 + r (2q + 1)`` (``q, r = divmod(N, s)``), reached by dealing the
  kept partitions round the members (each keeps at most what it owned in every pool, the kept
  totals within one of each other) and topping each up to ``q`` or ``q + 1`` -- so the network's
  optimum is the group's;
* the balance level is first located without the network: the fractional optimum ``x*`` of
  ``sum n^2`` over the subscription classes (the min-norm point of the assignment polymatroid, by
  peeling the densest unions of classes), and each member's count is allowed within
  ``[floor x* - 1, ceil x* + 1]``, a few unit arcs per class; balance, racks and moves then weigh in
  one min-cost flow (OR-Tools' ``SimpleMinCostFlow``, exact integer costs).

Certificate: the answer is ``optimal`` only when (a) the flow solved to optimality, (b) its
balance passes the exchange test of M-convex minimisation (Murota: a count vector of the
assignment polymatroid minimises ``sum n^2`` iff no member can hand one partition, directly or along
a chain of members, to a member with two fewer; checked on the classes' residual graph) and (c)
every member's count lies in ``[floor x*, ceil x*]``: every balance optimum then lies within one of
it (the optima form a matroidal M-convex set, Frank and Murota, "Discrete decreasing minimization,
Part I", 2022), inside the network's range, so the lower levels were minimised over all of them.
When a check fails, or the group has too many subscription classes to peel, the general flow of
the objective answers instead (also proven).
"""

from __future__ import annotations

import numpy as np
from ortools.graph.python import min_cost_flow

from models.options import SolveOptions
from problems import GroupProblem, Result, Status
from problems.ownership import resolve_claims

#: Subscription classes up to which the balance is peeled over every union of classes.
MAX_PEELED_CLASSES = 12
#: Members x pools up to which the owned counts are held as one dense matrix.
MAX_DENSE_CELLS = 20_000_000


class NotAggregable(Exception):
    """The group does not fit the aggregated network (the general flow answers it)."""


def solve(problem: GroupProblem, strategy: str) -> Result:
    """The exact answer of ``strategy`` (``sticky``: balance, then moves; ``rack-aware``: balance,
    racks, moves), ``optimal`` with the module's certificate (or from the general flow)."""
    try:
        owner, levels = ClassNetwork(problem, racks=strategy == "rack-aware").solve()
    except NotAggregable as reason:
        return _general(problem, strategy, str(reason))
    info = {"method": "class-flow"}
    # sticky and rack-aware are judged on the objectives of their names
    return Result(problem, strategy, owner, Status.OPTIMAL, levels, info, objective_name=strategy)


def _general(problem: GroupProblem, strategy: str, reason: str) -> Result:
    """The general flow of ``strategy`` (always proven), noting why the classes were not used."""
    from models.rack_aware import flow as rack_aware_flow
    from models.sticky import flow as sticky_flow

    module = rack_aware_flow if strategy == "rack-aware" else sticky_flow
    result: Result = module.solve(problem, SolveOptions())
    result.info["method"] = f"general flow ({reason})"
    return result


# ------------------------------------------------------------------ the group's classes
def _stable_order(keys: np.ndarray, span: int) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` for integer keys in ``[0, span)``, by 16-bit radix passes."""
    keys = np.asarray(keys, dtype=np.int64)
    if span <= 1 << 16:
        return np.argsort(keys.astype(np.uint16), kind="stable")
    if span <= 1 << 32:
        low = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
        high = np.argsort((keys[low] >> 16).astype(np.uint16), kind="stable")
        return low[high]
    return np.argsort(keys, kind="stable")


def _valid_owners(
    problem: GroupProblem, member_class: np.ndarray, matrix: np.ndarray
) -> np.ndarray:
    """KIP-341's valid previous owner of every partition (:func:`problems.previous_owners`), from
    the subscription classes rather than the member x topic matrix."""
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    members, partitions = problem.owned_claims
    if len(partitions):
        keep = matrix[member_class[members], problem.partition_topic[partitions]]
        members, partitions = members[keep], partitions[keep]
        resolve_claims(owner, members, partitions, problem.generations[members])
    return owner


def _unique_small(keys: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)`` for keys in ``[0, span)`` (a counting pass)."""
    if span > 4 * len(keys) + 1024:
        values, inverse = np.unique(keys, return_inverse=True)
        return values, inverse.reshape(-1)
    present = np.zeros(span, dtype=bool)
    present[keys] = True
    values = np.flatnonzero(present)
    index = np.cumsum(present) - 1
    return values, index[keys]


def _row_classes(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Class of each row of an integer ``table`` (equal rows, one class) and one row per class."""
    weights = np.random.default_rng(0x5EED).integers(1, 2**61, size=table.shape[1], dtype=np.int64)
    digest = table.astype(np.int64) @ weights  # wraps modulo 2**64: a hash, then checked
    _, first, inverse = np.unique(digest, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    if not np.array_equal(table, table[first[inverse]]):  # a collision: compare rows themselves
        rows, first, inverse = np.unique(table, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
    return inverse, first


# ------------------------------------------------------------------ the balance level
def _peel(need_of: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The fractional minimiser of ``sum n^2`` per member of each class, as ``(numerator,
    denominator)`` pairs: ``need_of[Y]`` is what the union ``Y`` of classes (a bit mask) must take
    (partitions only its members may have), ``sizes`` the members per class.  The densest union
    (largest ``need / members``, the largest such union) gets its density, then the rest is peeled
    the same way with that union's partitions taken (Fujishige's decomposition of the min-norm
    base)."""
    k = len(sizes)
    masks = np.arange(1 << k, dtype=np.int64)
    bits = (masks[:, None] >> np.arange(k)) & 1
    members = bits @ sizes.astype(np.int64)
    value = np.zeros((k, 2), dtype=np.int64)
    done = 0
    full = (1 << k) - 1
    while done != full:
        free = masks[((masks & done) == 0) & (masks != 0)]
        need = need_of[free | done] - need_of[done]
        size = members[free]
        # The largest density, exactly: compare need_a * size_b against need_b * size_a.
        best = int(np.argmax(need / size))
        top, bottom = int(need[best]), int(size[best])
        exact = need * bottom == top * size
        # Also the float ties the argmax may have missed (exact integers settle them).
        larger = need * bottom > top * size
        if larger.any():
            best = int(np.flatnonzero(larger)[np.argmax(need[larger] / size[larger])])
            top, bottom = int(need[best]), int(size[best])
            exact = need * bottom == top * size
        union = int(np.bitwise_or.reduce(free[exact]))
        for c in range(k):
            if union >> c & 1:
                value[c] = (top, bottom)
        done |= union
    return value


# ------------------------------------------------------------------ the network
class ClassNetwork:
    """The aggregated network of one group (see the module docstring) and its answer."""

    def __init__(self, problem: GroupProblem, racks: bool):
        self.problem, self.racked = problem, racks
        members, parts = problem.num_members, problem.num_partitions
        if members == 0:
            raise NotAggregable("no members")
        member_sub, matrix = problem.subscription_classes
        subs = matrix.shape[0]
        if subs > MAX_PEELED_CLASSES:
            raise NotAggregable(f"{subs} subscription classes")
        self.member_sub, self.matrix, self.subs = member_sub, matrix, subs
        # Topic -> subscriber mask (over subscription classes); 0: nobody subscribes.
        topic_mask = (matrix.astype(np.int64) << np.arange(subs, dtype=np.int64)[:, None]).sum(
            axis=0
        )
        part_mask = topic_mask[problem.partition_topic]
        assignable = part_mask > 0
        # Member racks that can be misaligned (rack-aware with replica racks and member racks).
        member_rack = np.full(members, -1, dtype=np.int64)
        part_racks = np.zeros(parts, dtype=np.int64)  # bit mask of member racks among replicas
        rack_count = 0
        if racks and problem.has_racks and problem.member_rack is not None:
            given = problem.member_rack.astype(np.int64)
            known = np.unique(given[given >= 0])
            rack_count = len(known)
            if rack_count > 16:
                raise NotAggregable(f"{rack_count} member racks")
            if rack_count:
                # Member racks renumbered 0 .. rack_count - 1; replica racks no member has dropped.
                table = np.full(max(len(problem.rack_names), int(given.max()) + 1), -1, np.int64)
                table[known] = np.arange(rack_count)
                member_rack = np.where(given >= 0, table[np.maximum(given, 0)], -1)
                replica_racks = problem.replica_racks
                assert replica_racks is not None  # has_racks
                rack = table[replica_racks.astype(np.int64)]
                useful = rack >= 0
                present = np.zeros(parts * rack_count, dtype=bool)
                present[problem.replica_rack_partition[useful] * rack_count + rack[useful]] = True
                part_racks = present.reshape(parts, rack_count) @ (
                    np.int64(1) << np.arange(rack_count, dtype=np.int64)
                )
        self.member_rack, self.rack_count = member_rack, rack_count
        # Pools: (subscriber mask, rack mask) of the assignable partitions.
        topic_masks, mask_index = _unique_small(part_mask[assignable], 1 << subs)
        rack_span = 1 << rack_count
        pool_values, pool_of = _unique_small(
            mask_index * rack_span + part_racks[assignable], len(topic_masks) * rack_span
        )
        self.pool_mask = topic_masks[pool_values // rack_span]
        self.pool_racks = pool_values % rack_span
        pools = len(pool_values)
        self.pools = pools
        self.parts = np.flatnonzero(assignable)
        self.pool_of = pool_of  # by position in self.parts
        # Valid previous owners and owned counts per (member, pool).
        previous = _valid_owners(problem, member_sub, matrix)[self.parts]
        owned = previous >= 0
        self.previous = previous
        if members * max(pools, 1) > MAX_DENSE_CELLS:
            raise NotAggregable(f"{members} members x {pools} pools")
        held = np.bincount(
            previous[owned].astype(np.int64) * pools + pool_of[owned], minlength=members * pools
        ).reshape(members, pools)
        self.held = held
        # Member classes: subscription class, rack, owned count per pool.
        table = np.concatenate((member_sub[:, None], member_rack[:, None], held), axis=1)
        self.member_class, first = _row_classes(table)
        self.class_sub = member_sub[first]
        self.class_rack = member_rack[first]
        self.class_held = held[first]
        self.class_size = np.bincount(self.member_class, minlength=len(first)).astype(np.int64)
        self.pool_size = np.bincount(pool_of, minlength=pools).astype(np.int64)
        self.pool_owned = np.bincount(pool_of[owned], minlength=pools).astype(np.int64)

    # -------------------------------------------------------------- balance bounds
    def _balance_range(self) -> np.ndarray:
        """``x*`` per subscription class as (numerator, denominator) (:func:`_peel`)."""
        subs = self.subs
        sizes = np.bincount(self.member_sub, minlength=subs)
        mask_size = np.bincount(self.pool_mask, weights=self.pool_size, minlength=1 << subs)
        need_of = mask_size.astype(np.int64)
        for c in range(subs):  # sum over subsets (zeta transform): need(Y) = sum over masks in Y
            bit = 1 << c
            idx = np.flatnonzero(np.arange(1 << subs) & bit)
            need_of[idx] += need_of[idx ^ bit]
        return _peel(need_of, sizes)

    # -------------------------------------------------------------- solve
    def solve(self) -> tuple[np.ndarray, tuple[int, ...]]:
        problem = self.problem
        owner = np.full(problem.num_partitions, -1, dtype=np.int32)
        if self.pools == 0:
            return owner, self._levels(np.zeros(problem.num_members, np.int64), 0, 0)
        x = self._balance_range()
        floor_x = x[:, 0] // x[:, 1]
        ceil_x = -(-x[:, 0] // x[:, 1])
        lo = np.maximum(floor_x[self.class_sub] - 1, 0)
        hi = ceil_x[self.class_sub] + 1
        flows = self._flow(lo, hi)
        kept, free, taken = flows
        self._certify(kept + free > 0, taken, floor_x, ceil_x)
        counts = self._expand(owner, kept, free, taken)
        moves = int(self.pool_owned.sum() - kept.sum())
        mismatches = int(((kept + free) * self._mismatch(self.class_rack)).sum())
        return owner, self._levels(counts, mismatches, moves)

    def _levels(self, counts: np.ndarray, mismatches: int, moves: int) -> tuple[int, ...]:
        balance = int(counts @ counts)
        return (balance, mismatches, moves) if self.racked else (balance, moves)

    def _mismatch(self, rack: np.ndarray) -> np.ndarray:
        """``[i, pool]``: a partition of the pool on a member on ``rack[i]`` is a rack mismatch."""
        racked = rack >= 0
        aligned = (self.pool_racks[None, :] >> np.maximum(rack, 0)[:, None]) & 1
        mismatched: np.ndarray = (racked[:, None] & (aligned == 0)).astype(np.int64)
        return mismatched

    def _flow(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Solve the network: ``(kept, free, taken)``, ``[class, pool]`` partitions kept from the
        class's own, taken from the rest, and each class's total.

        Nodes: each pool's owned and unowned partitions, one hub per (subscription, rack) --
        the classes behind a hub may take the same pools at the same rack cost -- the classes, and
        the sink.  Arcs: owned -> unowned (a move, cost 1), owned -> class (kept, up to what the
        class's members own), unowned -> hub (a rack mismatch costs ``w2``), hub -> class, and
        class -> sink unit arcs (the ``q``-th partition per member costs ``w1 (2 q + 1)``)."""
        classes, pools = len(self.class_size), self.pools
        size = self.class_size
        total = int(self.pool_size.sum())
        owned_total = int(self.pool_owned.sum())
        w2 = owned_total + 1
        w1 = w2 * (total + 1)
        hub_key = self.class_sub * (self.rack_count + 1) + self.class_rack + 1
        hub_values, hub_of = np.unique(hub_key, return_inverse=True)
        hub_of = hub_of.reshape(-1)
        hubs = len(hub_values)
        hub_sub = hub_values // (self.rack_count + 1)
        hub_rack = hub_values % (self.rack_count + 1) - 1
        hub_eligible = ((self.pool_mask[None, :] >> hub_sub[:, None]) & 1).astype(bool)
        hub_mismatch = self._mismatch(hub_rack)
        class_mismatch = self._mismatch(self.class_rack)
        owned_node = np.arange(pools)
        free_node = pools + np.arange(pools)
        hub_node = 2 * pools + np.arange(hubs)
        class_node = 2 * pools + hubs + np.arange(classes)
        sink = 2 * pools + hubs + classes
        keep_c, keep_p = np.nonzero(self.class_held > 0)
        take_h, take_p = np.nonzero(hub_eligible)
        units = hi - lo
        unit_class = np.repeat(np.arange(classes), units)
        unit_level = (
            np.arange(int(units.sum()))
            - np.repeat(np.cumsum(units) - units, units)
            + np.repeat(lo, units)
        )
        base = int(2 * lo.min(initial=0))
        parts = (
            (owned_node, free_node, self.pool_owned, np.ones(pools, np.int64)),
            (
                owned_node[keep_p],
                class_node[keep_c],
                size[keep_c] * self.class_held[keep_c, keep_p],
                w2 * class_mismatch[keep_c, keep_p],
            ),
            (
                free_node[take_p],
                hub_node[take_h],
                np.full(len(take_h), total),
                w2 * hub_mismatch[take_h, take_p],
            ),
            (hub_node[hub_of], class_node, np.full(classes, total), np.zeros(classes, np.int64)),
            (
                class_node[unit_class],
                np.full(len(unit_class), sink),
                size[unit_class],
                w1 * (2 * unit_level + 1 - base),
            ),
        )
        tails, heads, capacity, cost = (np.concatenate(column) for column in zip(*parts))
        largest = int(cost.max(initial=0))
        if largest * (sink + 2) >= 2**62 or largest * (total + 1) >= 2**62:
            raise NotAggregable("weighted costs beyond the exact 64-bit range")
        supplies = np.zeros(sink + 1, dtype=np.int64)
        supplies[owned_node] = self.pool_owned
        supplies[free_node] = self.pool_size - self.pool_owned
        supplies[class_node] = -size * lo
        supplies[sink] = -(total - int((size * lo).sum()))
        if supplies[sink] > 0:
            raise NotAggregable("the balance range holds more than every partition")
        network = min_cost_flow.SimpleMinCostFlow()
        network.add_arcs_with_capacity_and_unit_cost(
            tails.astype(np.int32),
            heads.astype(np.int32),
            np.minimum(capacity, total).astype(np.int64),
            cost.astype(np.int64),
        )
        network.set_nodes_supplies(np.arange(sink + 1, dtype=np.int32), supplies)
        status = network.solve()
        if status != network.OPTIMAL:
            raise NotAggregable(f"the class network ended with status {status}")
        flow = network.flows(np.arange(network.num_arcs(), dtype=np.int32))
        cut = np.cumsum([len(part[0]) for part in parts])
        kept = np.zeros((classes, pools), dtype=np.int64)
        kept[keep_c, keep_p] = flow[cut[0] : cut[1]]
        # Each hub's pooled partitions, pools in order, dealt to its classes in order.
        into_hub = flow[cut[1] : cut[2]]  # arcs by hub, then pool (np.nonzero's order)
        out_of_hub = flow[cut[2] : cut[3]]
        by_hub = _stable_order(hub_of, hubs)
        a = np.cumsum(into_hub)
        b = np.cumsum(out_of_hub[by_hub])
        cuts = np.union1d(a, b)
        cuts = cuts[cuts > 0]
        starts = np.concatenate(([0], cuts[:-1]))[: len(cuts)]
        row_pool = take_p[np.searchsorted(a, starts, side="right")]
        row_class = by_hub[np.searchsorted(b, starts, side="right")]
        free = (
            np.bincount(
                row_class * pools + row_pool, weights=cuts - starts, minlength=classes * pools
            )
            .astype(np.int64)
            .reshape(classes, pools)
        )
        taken = kept.sum(axis=1) + free.sum(axis=1)
        return kept, free, taken

    def _certify(
        self, holds: np.ndarray, taken: np.ndarray, floor_x: np.ndarray, ceil_x: np.ndarray
    ) -> None:
        """Raise :class:`NotAggregable` unless the balance passes the exchange test and lies in
        ``[floor x*, ceil x*]`` (the module docstring's certificate)."""
        size = self.class_size
        low = taken // size
        high = -(-taken // size)
        sub = self.class_sub
        subs = self.subs
        if np.any(low < floor_x[sub]) or np.any(high > ceil_x[sub]):
            raise NotAggregable("the balance left the fractional optimum's unit box")
        sub_high = np.full(subs, -1, dtype=np.int64)
        np.maximum.at(sub_high, sub, np.where(taken > 0, high, -1))
        sub_low = np.full(subs, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(sub_low, sub, low)
        # Residual reachability between subscription classes: a class holding a partition of a
        # pool reaches every class eligible for that pool.
        sub_holds = np.zeros((subs, self.pools), dtype=bool)
        np.logical_or.at(sub_holds, sub, holds)
        eligible = ((self.pool_mask[None, :] >> np.arange(subs)[:, None]) & 1).astype(bool)
        reach = (sub_holds.astype(np.int64) @ eligible.T.astype(np.int64)) > 0
        for via in range(subs):  # transitive closure (Floyd-Warshall over a handful of classes)
            reach |= reach[:, [via]] & reach[[via], :]
        np.fill_diagonal(reach, True)
        worst = sub_high[:, None] - sub_low[None, :]
        if np.any(reach & (worst > 1)):
            raise NotAggregable("the balance failed the exchange test")

    def _expand(
        self, owner: np.ndarray, kept: np.ndarray, free: np.ndarray, taken: np.ndarray
    ) -> np.ndarray:
        """Write the answer into ``owner`` (see the module docstring); returns the member counts."""
        problem = self.problem
        members, pools = problem.num_members, self.pools
        cls = self.member_class
        size = self.class_size
        order = _stable_order(cls, len(size))
        class_start = np.concatenate(([0], np.cumsum(size)))
        rank = np.empty(members, dtype=np.int64)
        rank[order] = np.arange(members) - np.repeat(class_start[:-1], size)
        s = size[cls]
        # Kept partitions dealt round the class: unit j of the class's kept sequence (pools in
        # order) goes to the member of rank j mod s.
        start = np.cumsum(kept, axis=1) - kept  # [class, pool] first unit of each pool's block

        def dealt(upto: np.ndarray) -> np.ndarray:  # units j < upto with j = rank (mod s)
            units: np.ndarray = np.maximum(0, (upto - rank[:, None] + s[:, None] - 1) // s[:, None])
            return units

        keep_m = dealt(start[cls] + kept[cls]) - dealt(start[cls])  # [member, pool]
        kept_total = keep_m.sum(axis=1)
        q, r = np.divmod(taken[cls], s)
        counts = q + (rank < r)
        need = counts - kept_total
        # Which partitions stay: each member's owned ones in a pool, by partition id, up to its share.
        previous, pool_of = self.previous, self.pool_of
        owned = np.flatnonzero(previous >= 0)
        group = previous[owned].astype(np.int64) * pools + pool_of[owned]
        by_group = _stable_order(group, members * pools)
        sorted_group = group[by_group]
        group_first = np.searchsorted(sorted_group, sorted_group)
        place = np.empty(len(owned), dtype=np.int64)
        place[by_group] = np.arange(len(owned)) - group_first
        stays = place < keep_m.reshape(-1)[group]
        staying = owned[stays]
        owner[self.parts[staying]] = previous[staying]
        # The rest of each pool, by partition id, to the members' remaining needs.
        rest = np.ones(len(self.parts), dtype=bool)
        rest[staying] = False
        rest_pos = np.flatnonzero(rest)
        rest_sorted = rest_pos[_stable_order(pool_of[rest_pos], pools)]
        # Needs (members by class and rank) matched against the class's free flows (by pool).
        need_order = order  # members by class, then rank
        a = np.cumsum(need[need_order])
        flat_free = free.reshape(-1)  # by class, then pool
        b = np.cumsum(flat_free)
        cuts = np.union1d(a, b)
        cuts = cuts[cuts > 0]
        starts = np.concatenate(([0], cuts[:-1]))[: len(cuts)]
        row_member = need_order[np.searchsorted(a, starts, side="right")]
        row_pool = np.searchsorted(b, starts, side="right") % pools
        row_count = cuts - starts
        by_pool = _stable_order(row_pool, pools)
        owner[self.parts[rest_sorted]] = np.repeat(row_member[by_pool], row_count[by_pool])
        result: np.ndarray = counts
        return result
