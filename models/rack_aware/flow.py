"""Exact rack-aware assignment by min-cost flow: balance, then rack alignment, then moves (docs/design/objectives.md).

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

import numpy as np

from models.common.classes import Classes, expand, split_pools
from models.common.min_cost_flow import check_cost_range, solve_convex_assignment, solve_network
from models.options import SolveOptions
from models.rack_aware.classes import RackClasses, rack_classes
from problems import GroupProblem, Result, Status


def solve(problem: GroupProblem, options: SolveOptions) -> Result:
    """Solve the rack-aware objective exactly (no option is used: polynomial, always proven).

    Returns
    -------
    Result
        Status ``optimal``, ``bound`` equal to the three levels.
    """
    data = rack_classes(problem)
    classes = data.classes
    if classes.sizes.sum() == 0:
        return Result(
            problem,
            "rack-aware",
            np.full(problem.num_partitions, -1, np.int32),
            Status.OPTIMAL,
            (0, 0, 0),
            objective_name="rack-aware",
        )
    counts = _balanced_counts(problem, classes)
    reach = np.bincount(
        classes.edge_member, minlength=problem.num_members
    )  # 0: no pool takes the member
    lo = np.maximum(counts - 1, 0)
    hi = np.where(reach > 0, counts + 1, counts)
    cls, member, count, levels = _Network(problem, data, lo, hi).solve()
    return Result(
        problem,
        "rack-aware",
        expand(problem, classes, cls, member, count),
        Status.OPTIMAL,
        levels,
        objective_name="rack-aware",
    )


def _balanced_counts(problem: GroupProblem, classes: Classes) -> np.ndarray:
    """Member counts of one level-1 optimum: the pools' partitions (owners and racks ignored) dealt by
    :func:`models.common.min_cost_flow.solve_convex_assignment` (exact for ``sum n^2``; pools, not classes,
    so
    the network stays small when every member owned something)."""
    pools = int(classes.set_of_class.max()) + 1
    sizes = np.bincount(classes.set_of_class, weights=classes.sizes, minlength=pools).astype(
        np.int64
    )
    start = np.searchsorted(classes.edge_set, np.arange(pools + 1))
    _, member, count = solve_convex_assignment(
        sizes, start, classes.edge_member, np.full(pools, -1), problem.num_members
    )
    return np.bincount(member, weights=count, minlength=problem.num_members).astype(np.int64)


class _Network:
    """The network of step 2 (see the module docstring), built from arrays."""

    def __init__(self, problem: GroupProblem, data: RackClasses, lo: np.ndarray, hi: np.ndarray):
        self.problem, self.data, self.lo, self.hi = problem, data, lo, hi
        classes = data.classes
        self.pools = int(classes.set_of_class.max()) + 1
        # Subscriber set of each pool (pools of one set share its rack nodes).
        pool_start = np.searchsorted(classes.edge_set, np.arange(self.pools + 1))
        index: dict[bytes, int] = {}
        self.pool_sub = np.array(
            [
                index.setdefault(classes.edge_member[a:b].tobytes(), len(index))
                for a, b in zip(pool_start[:-1], pool_start[1:])
            ],
            dtype=np.int64,
        )
        first_pool = np.unique(self.pool_sub, return_index=True)[1]
        # Rack nodes: (subscriber set, member rack), and each one's members.
        sub_edge = np.concatenate([np.arange(pool_start[p], pool_start[p + 1]) for p in first_pool])
        sub_of_edge = self.pool_sub[classes.edge_set[sub_edge]]
        rack_of_edge = data.member_rack[classes.edge_member[sub_edge]]
        node_key, node_of_edge = np.unique(
            np.stack((sub_of_edge, rack_of_edge)), axis=1, return_inverse=True
        )
        self.node_sub, self.node_rack = node_key
        node_of_edge = node_of_edge.reshape(-1)
        order = np.argsort(node_of_edge, kind="stable")
        self.node_edge_node, self.node_edge_member = (
            node_of_edge[order],
            classes.edge_member[sub_edge][order],
        )
        # Pool -> rack node arcs: every rack node of the pool's subscriber set, pool by pool.
        nodes_of_sub = np.searchsorted(self.node_sub, np.arange(len(first_pool) + 1))
        per_pool = np.diff(nodes_of_sub)[self.pool_sub]
        self.hub_pool = np.repeat(np.arange(self.pools), per_pool)
        self.hub_node = (
            np.arange(per_pool.sum())
            - np.repeat(np.cumsum(per_pool) - per_pool, per_pool)
            + np.repeat(nodes_of_sub[self.pool_sub], per_pool)
        )
        self.hub_mismatch = data.mismatch(self.hub_pool, self.node_rack[self.hub_node])

    def solve(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int, int]]:
        problem, data, classes, lo, hi = (
            self.problem,
            self.data,
            self.data.classes,
            self.lo,
            self.hi,
        )
        num_classes, members, total = (
            len(classes.sizes),
            problem.num_members,
            int(classes.sizes.sum()),
        )
        owned = np.flatnonzero(classes.keep >= 0)
        w2 = int(classes.sizes[owned].sum()) + 1
        w1 = w2 * (total + 1)
        first_pool = num_classes
        first_node = first_pool + self.pools
        first_member = first_node + len(self.node_sub)
        sink = first_member + members
        units = hi - lo
        unit_member = np.repeat(np.arange(members), units)
        unit_k = (
            np.arange(units.sum())
            - np.repeat(np.cumsum(units) - units, units)
            + np.repeat(lo, units)
            + 1
        )
        keep_mismatch = data.keep_mismatch[owned]
        tails = [
            owned,
            np.arange(num_classes),
            first_pool + self.hub_pool,
            first_node + self.node_edge_node,
            first_member + unit_member,
        ]
        heads = [
            first_member + classes.keep[owned],
            first_pool + classes.set_of_class,
            first_node + self.hub_node,
            first_member + self.node_edge_member,
            np.full(len(unit_member), sink),
        ]
        caps = [
            classes.sizes[owned],
            classes.sizes,
            np.full(len(self.hub_pool), total),
            np.full(len(self.node_edge_node), total),
            np.ones(len(unit_member), np.int64),
        ]
        costs = [
            w2 * keep_mismatch,
            (classes.keep >= 0).astype(np.int64),
            w2 * self.hub_mismatch,
            np.zeros(len(self.node_edge_node), np.int64),
            w1 * 2 * (unit_k - unit_k.min(initial=0)),
        ]
        cost = np.concatenate(costs).astype(np.int64)
        capacity = np.minimum(
            np.concatenate(caps), total
        )  # no arc carries more than every partition
        worst = int(np.dot(capacity.astype(object), cost.astype(object)))  # exact (Python integers)
        check_cost_range(int(cost.max(initial=0)), sink + 1, total, "members", "partitions", worst)
        supplies = np.zeros(sink + 1, dtype=np.int64)
        supplies[:num_classes] = classes.sizes
        supplies[first_member:sink] = -lo
        supplies[sink] = -(total - lo.sum())
        flow = solve_network(tails, heads, caps, cost, supplies)
        flows = flow.flows(np.arange(flow.num_arcs(), dtype=np.int32))
        cuts = np.cumsum([len(t) for t in tails])[:-1]
        direct, into_pool, pool_out, node_out, _ = np.split(flows, cuts)
        # Classes -> pools -> rack nodes, then (class, rack node) rows -> members.
        row_class, row_node, row_count = split_pools(
            classes.set_of_class, into_pool, self.hub_node, pool_out
        )
        row, member, count = split_pools(row_node, row_count, self.node_edge_member, node_out)
        kept = direct > 0
        cls = np.concatenate((owned[kept], row_class[row]))
        member = np.concatenate((classes.keep[owned][kept], member))
        count = np.concatenate((direct[kept], count))
        n = np.bincount(member, weights=count, minlength=members).astype(np.int64)
        mismatches = int(keep_mismatch @ direct + self.hub_mismatch @ pool_out)
        moves = int(into_pool[owned].sum())
        return cls, member, count, (int(n @ n), mismatches, moves)
