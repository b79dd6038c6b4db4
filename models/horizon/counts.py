"""The time-expanded count flow of the horizon models, written once (docs/design/formulations.md).

Units (members of a group, brokers of a cluster) hold interchangeable items (partitions,
replicas) at every step of a window.  At step ``k`` unit ``i`` must hold between ``low[k][i]`` and
``high[k][i]`` items; between two steps a unit keeps any number of the items it held (free), and
every other item goes through the step's pool to any unit (``cost[k]`` per item: a trace move).
Items new at a step (``births``) enter through its pool for free; items never leave (the callers
check that: a window where items disappear is not a single-commodity flow).  One min-cost flow
over the (unit, step) nodes gives the fewest moves; what each unit keeps and takes is read back
from the arcs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from models.common.min_cost_flow import check_cost_range, solve_network


@dataclass(frozen=True)
class CountPlan:
    """The solved flow, per step: what each present unit keeps, takes from the pool, and holds.

    ``kept[k][i]``, ``taken[k][i]`` and ``held[k][i]`` are for unit ``present[k][i]``;
    ``cost`` is the flow's total cost.
    """

    kept: list[np.ndarray]
    taken: list[np.ndarray]
    held: list[np.ndarray]
    cost: int


def solve_counts(
    present: Sequence[np.ndarray],
    low: Sequence[np.ndarray],
    high: Sequence[np.ndarray],
    births: Sequence[int],
    start: np.ndarray | None,
    cost: Sequence[int],
    num_units: int,
) -> CountPlan:
    """The fewest-cost counts over the window (see the module docstring).

    Parameters
    ----------
    present
        Per step, the trace-wide ids of the units present (``int64``).
    low, high
        Per step, each present unit's bounds on the items it holds.
    births
        Per step, the items that enter through its pool (at step 0: every item not in ``start``).
    start
        Items each unit (by trace-wide id, length ``num_units``) holds before step 0 and that
        exist at step 0, or ``None``: step 0 takes every item from its pool for free.
    cost
        Per step, the cost of an item that changes unit on the way into the step (step 0: from
        ``start``).
    """
    steps = len(present)
    sizes = [len(p) for p in present]
    first_in = np.cumsum([0, *sizes])[:-1]
    total_nodes = int(sum(sizes))
    in_base, out_base = 0, total_nodes
    pool_base = 2 * total_nodes
    start_units = np.flatnonzero(start) if start is not None else np.zeros(0, np.int64)
    start_base = pool_base + steps
    sink = start_base + len(start_units)
    nodes = sink + 1
    held_start = int(start[start_units].sum()) if start is not None else 0
    items = held_start + int(sum(births))
    big = max(items, 1)
    tails: list[np.ndarray] = []
    heads: list[np.ndarray] = []
    caps: list[np.ndarray] = []
    costs: list[np.ndarray] = []
    supplies = np.zeros(nodes, dtype=np.int64)

    def arcs(tail: np.ndarray, head: np.ndarray, cap: np.ndarray | int, unit: int) -> slice:
        at = sum(len(t) for t in tails)
        tails.append(np.asarray(tail, np.int64))
        heads.append(np.asarray(head, np.int64))
        caps.append(np.broadcast_to(np.asarray(cap, np.int64), (len(tail),)))
        costs.append(np.full(len(tail), unit, np.int64))
        return slice(at, at + len(tail))

    stay_arcs: list[slice] = []
    take_arcs: list[slice] = []
    for k in range(steps):
        ins = in_base + first_in[k] + np.arange(sizes[k])
        outs = out_base + first_in[k] + np.arange(sizes[k])
        lo, hi = np.asarray(low[k], np.int64), np.asarray(high[k], np.int64)
        arcs(ins, outs, hi - lo, 0)
        supplies[ins] -= lo
        supplies[outs] += lo
        supplies[pool_base + k] += int(births[k])
        take_arcs.append(arcs(np.full(sizes[k], pool_base + k), ins, big, 0))
        # Where each present unit was one step before (an out node), or -1.
        if k == 0:
            before_node = np.full(num_units, -1, dtype=np.int64)
            before_node[start_units] = start_base + np.arange(len(start_units))
            supplies[start_base : start_base + len(start_units)] = (
                start[start_units] if start is not None else 0
            )
            tails_before = start_base + np.arange(len(start_units))
        else:
            before_node = np.full(num_units, -1, dtype=np.int64)
            before_node[present[k - 1]] = out_base + first_in[k - 1] + np.arange(sizes[k - 1])
            tails_before = out_base + first_in[k - 1] + np.arange(sizes[k - 1])
        source = before_node[present[k]]
        stays = source >= 0
        stay_arcs.append(arcs(source[stays], ins[stays], big, 0))
        arcs(tails_before, np.full(len(tails_before), pool_base + k), big, int(cost[k]))
    last = out_base + first_in[steps - 1] + np.arange(sizes[steps - 1])
    arcs(last, np.full(len(last), sink), big, 0)
    supplies[sink] -= items
    check_cost_range(max((int(c) for c in cost), default=1), nodes, items, "steps", "items")
    flow = solve_network(tails, heads, caps, costs, supplies)
    flows = flow.flows(np.arange(flow.num_arcs(), dtype=np.int32)).astype(np.int64)
    kept, taken, held = [], [], []
    for k in range(steps):
        source_present = np.zeros(sizes[k], dtype=np.int64)
        before = np.full(num_units, -1, dtype=np.int64)
        if k == 0:
            before[start_units] = 0
        else:
            before[present[k - 1]] = 0
        stays = before[present[k]] >= 0
        source_present[stays] = flows[stay_arcs[k]]
        got = flows[take_arcs[k]]
        kept.append(source_present)
        taken.append(got)
        held.append(source_present + got)
    return CountPlan(kept, taken, held, int(flow.optimal_cost()))
