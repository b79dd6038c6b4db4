"""Min-cost flow, written once: a network solved and checked, and the balanced, sticky assignment
of interchangeable items.

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike
from ortools.graph.python import min_cost_flow

from models.common.classes import split_pools
from problems import ProblemError

#: Costs stay exact while every sum OR-Tools forms is below this (its cost scaling multiplies by the
#: nodes).
COST_LIMIT = 2**62


def check_cost_range(
    max_cost: int, nodes: int, units: int, field: str, what: str, worst_total: int | None = None
) -> None:
    """Refuse (:class:`problems.ProblemError` on ``field``) weighted costs beyond the exact 64-bit range.

    ``max_cost`` is the largest arc cost, ``units`` the flow sent (``what``: their name in the
    message); ``worst_total`` a bound on any flow's total cost (default ``units * max_cost``).
    """
    worst_total = max_cost * max(units, 1) if worst_total is None else worst_total
    if max_cost * (nodes + 1) >= COST_LIMIT or worst_total >= COST_LIMIT:
        raise ProblemError(
            field,
            f"the weighted flow costs (largest arc cost {max_cost}, {nodes} nodes, "
            f"{units} {what}) exceed the exact 64-bit range of min-cost flow",
        )


class FlowFailed(RuntimeError):
    """A min-cost flow that ended without an optimal flow (``status``: OR-Tools' status)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _joined(parts: np.ndarray | Sequence[ArrayLike], dtype: type[np.integer]) -> np.ndarray:
    """One array of ``dtype``: ``parts`` itself, or its pieces concatenated."""
    if isinstance(parts, np.ndarray):
        return parts.astype(dtype, copy=False)
    return np.concatenate([np.asarray(part, np.int64) for part in parts]).astype(dtype)


def solve_network(
    tails: np.ndarray | Sequence[ArrayLike],
    heads: np.ndarray | Sequence[ArrayLike],
    caps: np.ndarray | Sequence[ArrayLike],
    costs: np.ndarray | Sequence[ArrayLike],
    supplies: ArrayLike,
    failure: str = "min-cost flow failed",
) -> min_cost_flow.SimpleMinCostFlow:
    """The min-cost flow of the arcs ``tails -> heads`` (capacity and unit cost each; an array,
    or pieces concatenated in order, so arc ``i`` is the ``i``-th of them) with node ``n``'s supply
    ``supplies[n]``, solved; :class:`FlowFailed` (``failure``, then OR-Tools' status) unless optimal.
    Read the answer with ``flows(arcs)``."""
    flow = min_cost_flow.SimpleMinCostFlow()
    flow.add_arcs_with_capacity_and_unit_cost(
        _joined(tails, np.int32),
        _joined(heads, np.int32),
        _joined(caps, np.int64),
        _joined(costs, np.int64),
    )
    supply = np.asarray(supplies, dtype=np.int64)
    flow.set_nodes_supplies(np.arange(len(supply), dtype=np.int32), supply)
    status = flow.solve()
    if status != flow.OPTIMAL:
        raise FlowFailed(status, f"{failure} with status {status}")
    return flow


def solve_convex_assignment(
    class_sizes: ArrayLike,
    eligible_start: ArrayLike,
    eligible_members: ArrayLike,
    keep: ArrayLike,
    num_members: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lexicographically min sum_m n_m^2, then min moves, over assignments of interchangeable items.

    Parameters
    ----------
    class_sizes
        ``int64[C]`` items per class.
    eligible_start, eligible_members
        CSR lists (``int32``/``int64``): class ``c``'s items may go only to
        members ``eligible_members[eligible_start[c]:eligible_start[c + 1]]``.
    keep
        ``int32[C]``: the member that previously owned every item of class ``c``
        (an item of class ``c`` ending elsewhere is one move), or -1 (no owner,
        no move cost).  An owner that is not eligible is treated as -1 (every
        item of the class moves whatever the answer).
    num_members
        Number of members (member ids are ``0 .. num_members - 1``).

    Returns
    -------
    tuple of numpy.ndarray
        ``(cls, member, count)`` (``int64``) with ``count > 0``: how many items
        of each class go to each member.  Deterministic.

    Raises
    ------
    ValueError
        If some class has items but no eligible member.
    """
    sizes = np.asarray(class_sizes, dtype=np.int64)
    start = np.asarray(eligible_start, dtype=np.int64)
    eligible = np.asarray(eligible_members, dtype=np.int64)
    keep = np.asarray(keep, dtype=np.int64)
    num_classes = len(sizes)
    degree = np.diff(start)
    if np.any((sizes > 0) & (degree == 0)):
        c = int(np.flatnonzero((sizes > 0) & (degree == 0))[0])
        raise ValueError(f"class {c} has {sizes[c]} items but no eligible member")
    empty = np.zeros(0, dtype=np.int64)
    if num_classes == 0 or sizes.sum() == 0:
        return empty, empty, empty
    network = _Network(sizes, start, eligible, keep, num_members)
    lo, hi = network.initial_windows()
    while True:  # ends: every round strictly widens a window bounded by [0, reach]
        direct, inflow, outflow, counts = network.solve(lo, hi)
        below, above = counts < lo - 1, counts > hi + 1
        if not (below.any() or above.any()):
            return network.split(direct, inflow, outflow)
        # Widen past the count seen, doubling the distance, so few re-solves follow.
        lo = np.where(below, np.maximum(0, 2 * counts - lo), lo)
        hi = np.where(above, np.minimum(network.reach, 2 * counts - hi), hi)


class _Network:
    """The flow network of :func:`solve_convex_assignment`, rebuilt per window choice."""

    def __init__(
        self,
        sizes: np.ndarray,
        start: np.ndarray,
        eligible: np.ndarray,
        keep: np.ndarray,
        num_members: int,
    ) -> None:
        self.sizes, self.num_members = sizes, num_members
        num_classes = len(sizes)
        degree = np.diff(start)
        owner_of = np.repeat(np.arange(num_classes), degree)
        # Sorted member lists per class, so that equal sets look alike.
        ascending = np.diff(eligible) > 0
        if not np.all(ascending | (owner_of[1:] != owner_of[:-1])):
            eligible = eligible[np.lexsort((eligible, owner_of))]
        # An owner outside its class's eligible set cannot keep anything.
        pairs = owner_of * num_members + eligible  # sorted
        query = np.arange(num_classes) * num_members + keep
        at = np.minimum(np.searchsorted(pairs, query), max(len(pairs) - 1, 0))
        found = (keep >= 0) & (len(pairs) > 0) & (pairs[at] == query) if len(pairs) else keep < -1
        self.keep = np.where(found, keep, -1)
        # One hub per distinct eligible set.
        hub_of: dict[bytes, int] = {}
        hub = np.empty(num_classes, dtype=np.int64)
        hub_members: list[np.ndarray] = []
        for c in range(num_classes):
            members = eligible[start[c] : start[c + 1]]
            key = members.tobytes()
            h = hub_of.get(key)
            if h is None:
                h = hub_of[key] = len(hub_members)
                hub_members.append(members)
            hub[c] = h
        self.hub = hub
        self.hub_size = np.array([len(m) for m in hub_members], dtype=np.int64)
        self.hub_member = np.concatenate(hub_members) if hub_members else np.zeros(0, np.int64)
        self.hub_edge = np.repeat(np.arange(len(hub_members), dtype=np.int64), self.hub_size)
        # What each member could receive at most, over all classes it may take.
        self.reach = np.bincount(
            eligible, weights=np.repeat(sizes, degree).astype(np.float64), minlength=num_members
        ).astype(np.int64)
        self.weight = int(sizes[self.keep >= 0].sum()) + 1
        self.num_hubs = len(hub_members)

    def initial_windows(self) -> tuple[np.ndarray, np.ndarray]:
        # [floor, ceil] of the even share: a window of one value leaves the block arcs
        # linear over [0, lo], so the relaxed optimum may empty members at will and
        # the windows then widen a few members per solve (10,000 items x 550 members
        # did not settle in 64 solves).
        reachable = max(int(np.count_nonzero(self.reach)), 1)
        total = int(self.sizes.sum())
        return np.minimum(self.reach, total // reachable), np.minimum(
            self.reach, -(-total // reachable)
        )

    def solve(
        self, lo: np.ndarray, hi: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        num_classes, num_hubs, num_members = len(self.sizes), self.num_hubs, self.num_members
        first_member = num_classes + num_hubs
        sink = first_member + num_members
        owned = np.flatnonzero(self.keep >= 0)
        tails = [owned, np.arange(num_classes), num_classes + self.hub_edge]
        heads = [
            first_member + self.keep[owned],
            num_classes + self.hub,
            first_member + self.hub_member,
        ]
        caps = [self.sizes[owned], self.sizes, np.full(len(self.hub_edge), self.sizes.sum())]
        costs = [
            np.zeros(len(owned), np.int64),
            (self.keep >= 0).astype(np.int64),
            np.zeros(len(self.hub_edge), np.int64),
        ]
        # Member windows: the ladder below lo, units lo+1..hi, the ladder above hi.
        down_member, down_cap, down_marginal = _ladder_down(lo)
        up_member, up_cap, up_marginal = _ladder_up(hi, self.reach)
        units = hi - lo
        unit_member = np.repeat(np.arange(num_members), units)
        unit_k = (
            (np.arange(units.sum()) - np.repeat(np.cumsum(units) - units, units))
            + np.repeat(lo, units)
            + 1
        )
        arc_member = np.concatenate((down_member, unit_member, up_member))
        tails.append(first_member + arc_member)
        heads.append(np.full(len(arc_member), sink))
        caps += [down_cap, np.ones(len(unit_member), np.int64), up_cap]
        costs.append(self.weight * np.concatenate((down_marginal, 2 * unit_k - 1, up_marginal)))
        supplies = np.zeros(sink + 1, dtype=np.int64)
        supplies[:num_classes] = self.sizes
        supplies[sink] = -self.sizes.sum()
        flow = solve_network(tails, heads, caps, costs, supplies)
        flows = flow.flows(np.arange(flow.num_arcs(), dtype=np.int32))
        n_direct, n_in, n_out = len(owned), num_classes, len(self.hub_edge)
        direct = np.zeros(num_classes, dtype=np.int64)
        direct[owned] = flows[:n_direct]
        inflow = flows[n_direct : n_direct + n_in]
        outflow = flows[n_direct + n_in : n_direct + n_in + n_out]
        counts = np.bincount(self.hub_member, weights=outflow, minlength=num_members).astype(
            np.int64
        )
        counts += np.bincount(
            self.keep[owned], weights=direct[owned], minlength=num_members
        ).astype(np.int64)
        return direct, inflow, outflow, counts

    def split(
        self, direct: np.ndarray, inflow: np.ndarray, outflow: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per-class counts per member: direct arcs plus a deterministic split of each hub."""
        owned = np.flatnonzero(direct > 0)
        cls, member, count = split_pools(self.hub, inflow, self.hub_member, outflow)
        cls = np.concatenate((owned, cls))
        member = np.concatenate((self.keep[owned], member))
        count = np.concatenate((direct[owned], count))
        return cls.astype(np.int64), member.astype(np.int64), count.astype(np.int64)


def _ladder_down(lo: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Segments ``[b // 2, b]`` for ``b = lo, lo // 2, ..., 1``: (member, capacity, marginal ``2b - 1``)."""
    members, tops = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    member, top = np.flatnonzero(lo > 0), lo[lo > 0].astype(np.int64)
    while len(member):
        members.append(member)
        tops.append(top)
        keep = top > 1
        member, top = member[keep], top[keep] // 2
    top = np.concatenate(tops)
    return np.concatenate(members), top - top // 2, 2 * top - 1


def _ladder_up(hi: np.ndarray, reach: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Segments ``[a, a + 2^i]`` from ``a = hi`` up to ``reach``: (member, capacity, marginal ``2a + 1``)."""
    members, caps, bottoms = (
        [np.zeros(0, np.int64)],
        [np.zeros(0, np.int64)],
        [np.zeros(0, np.int64)],
    )
    member = np.flatnonzero(reach > hi)
    bottom, length = hi[member].astype(np.int64), np.ones(len(member), dtype=np.int64)
    while len(member):
        cap = np.minimum(length, reach[member] - bottom)
        members.append(member)
        caps.append(cap)
        bottoms.append(bottom)
        bottom, length = bottom + cap, 2 * length
        keep = bottom < reach[member]
        member, bottom, length = member[keep], bottom[keep], length[keep]
    return np.concatenate(members), np.concatenate(caps), 2 * np.concatenate(bottoms) + 1
