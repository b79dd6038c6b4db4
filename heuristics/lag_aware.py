"""KIP-169's lag-aware assignor (``LagAwareAssignor``), and two variants.

Step by step, with its sources and where it follows Kafka: docs/strategies/lag-aware.md.
"""

from __future__ import annotations

import heapq

import numpy as np

from heuristics.kafka_orders import member_id_rank, topics_in_name_order
from problems import GroupProblem, Result, previous_owners

VARIANTS = (None, "cumulative", "sticky", "differencing")


def assign(problem: GroupProblem, variant: str | None = None) -> Result:
    """Assign partitions as KIP-169's lag-aware assignor does.

    Parameters
    ----------
    problem
        The consumer group; missing ``lags`` count as all zero.
    variant
        ``None`` (KIP-169 and its prototype: per-topic lag totals),
        ``"cumulative"`` (member lag totals carried across topics) or
        ``"sticky"`` (previous owners keep what the balance allows first) or
        ``"differencing"`` (balanced largest differencing, carried totals; not Kafka's).

    Returns
    -------
    Result
        Status ``"heuristic"``, judged on the lag-aware objective.
    """
    if variant not in VARIANTS:
        raise ValueError(
            f"unknown lag-aware variant {variant!r} (choose from cumulative, sticky, differencing)"
        )
    lags = problem.lags if problem.lags is not None else np.zeros(problem.num_partitions, np.int64)
    if (
        int(lags.max(initial=0)) * max(problem.num_partitions, 1) >= 2**63
    ):  # totals could overflow int64
        lags = lags.astype(object)
    totals = np.zeros(problem.num_members, dtype=lags.dtype)
    by_id = member_id_rank(problem)
    previous = previous_owners(problem) if variant == "sticky" else None
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    for t in topics_in_name_order(problem):
        subscribers = problem.topic_subscribers[t]
        start, end = int(problem.topic_start[t]), int(problem.topic_start[t + 1])
        if len(subscribers) == 0 or start == end:
            continue
        topic_lags = lags[start:end]
        order = start + np.lexsort(
            (np.arange(end - start), -topic_lags)
        )  # decreasing lag, then index
        if variant == "differencing":
            _difference(order, subscribers, totals, owner, lags)
            continue
        if variant != "cumulative":
            totals[subscribers] = 0
        counts = np.zeros(len(subscribers), dtype=np.int64)
        if previous is not None:
            order = _keep_owned(order, previous, subscribers, counts, owner, totals, lags)
        _rounds(order, subscribers, counts, totals, by_id[subscribers], owner, lags)
    return Result(problem, "lag-aware", owner, objective_name="lag-aware")


def _rounds(
    order: np.ndarray,
    subscribers: np.ndarray,
    counts: np.ndarray,
    totals: np.ndarray,
    ids: np.ndarray,
    owner: np.ndarray,
    lags: np.ndarray,
) -> None:
    """Hand out ``order`` (partitions, decreasing lag) in KIP-169's rounds.

    Each round serves every subscriber whose ``counts`` is the current lowest,
    by (total lag, member id); ``counts``, ``totals`` and ``owner`` are updated.
    """
    level, done = int(counts.min(initial=0)), 0
    while done < len(order):
        ready = np.flatnonzero(counts == level)
        ready = ready[np.argsort(ids[ready], kind="stable")]
        ready = ready[np.argsort(totals[subscribers[ready]], kind="stable")]
        ready = ready[: len(order) - done]
        taken = order[done : done + len(ready)]
        members = subscribers[ready]
        owner[taken] = members
        totals[members] += lags[taken]
        counts[ready] += 1
        done += len(ready)
        level += 1


def _keep_owned(
    order: np.ndarray,
    previous: np.ndarray,
    subscribers: np.ndarray,
    counts: np.ndarray,
    owner: np.ndarray,
    totals: np.ndarray,
    lags: np.ndarray,
) -> np.ndarray:
    """Sticky variant: previous owners keep partitions within floor/ceiling; returns the rest of ``order``."""
    floor, extra = divmod(len(order), len(subscribers))
    slot = np.full(int(subscribers.max()) + 1, -1, dtype=np.int64)
    slot[subscribers] = np.arange(len(subscribers))
    rest = []
    for g in order.tolist():
        m = int(previous[g])
        s = slot[m] if 0 <= m < len(slot) else -1
        if s >= 0 and (counts[s] < floor or (counts[s] == floor and extra > 0)):
            extra -= counts[s] == floor
            counts[s] += 1
            owner[g] = m
            totals[m] += lags[g]
        else:
            rest.append(g)
    return np.asarray(rest, dtype=np.int64)


def _difference(
    order: np.ndarray,
    subscribers: np.ndarray,
    totals: np.ndarray,
    owner: np.ndarray,
    lags: np.ndarray,
) -> None:
    """Differencing variant: one topic's partitions (``order``: decreasing lag) by BLDM, ``totals`` carried.

    A tuple is ``k`` sums and ``k`` node ids; joining two makes ``k`` new nodes whose children are
    the joined entries, so the work is linear: the rows are read back once, top down, at the end.
    """
    k = len(subscribers)
    rounds = -(-len(order) // k)
    padded = np.full(rounds * k, -1, dtype=np.int64)
    padded[: len(order)] = order
    values = np.where(padded >= 0, lags[np.maximum(padded, 0)], 0)
    # Leaves: nodes 0..k-1 are the subscribers (the carried totals), then the rounds' entries.
    carried = np.asarray(totals[subscribers])
    heap = [(-_spread(carried), 0, carried, np.arange(k))]
    for r in range(rounds):
        sums = values[r * k : (r + 1) * k].astype(carried.dtype)
        heap.append((-_spread(sums), r + 1, sums, k + r * k + np.arange(k)))
    heapq.heapify(heap)
    joins, next_node = [], k + rounds * k
    while len(heap) > 1:
        _, _, a_sums, a_nodes = heapq.heappop(heap)
        _, _, b_sums, b_nodes = heapq.heappop(heap)
        a = (
            np.argsort(-a_sums, kind="stable")
            if a_sums.dtype != object
            else _object_order(a_sums, True)
        )
        b = (
            np.argsort(b_sums, kind="stable")
            if b_sums.dtype != object
            else _object_order(b_sums, False)
        )
        nodes = next_node + np.arange(k)
        joins.append((nodes, a_nodes[a], b_nodes[b]))
        next_node += k
        joined = a_sums[a] + b_sums[b]
        heapq.heappush(heap, (-_spread(joined), len(joins) + rounds, joined, nodes))
    row = np.empty(next_node, dtype=np.int64)
    row[heap[0][3]] = np.arange(k)
    for nodes, left, right in reversed(joins):
        row[left] = row[nodes]
        row[right] = row[nodes]
    member_of_row = np.empty(k, dtype=np.int64)
    member_of_row[row[:k]] = subscribers
    real = padded >= 0
    taken = padded[real]
    members = member_of_row[row[k : k + rounds * k][real]]
    owner[taken] = members
    np.add.at(totals, members, lags[taken]) if totals.dtype != object else _add_object(
        totals, members, lags[taken]
    )


def _add_object(totals: np.ndarray, members: np.ndarray, values: np.ndarray) -> None:
    for m, v in zip(members.tolist(), values.tolist()):
        totals[m] += v


def _spread(sums: np.ndarray) -> int:
    return int(sums.max() - sums.min()) if len(sums) else 0


def _object_order(sums: np.ndarray, descending: bool) -> np.ndarray:
    """Stable argsort of Python-integer sums (lags beyond int64)."""
    return np.array(
        sorted(range(len(sums)), key=lambda i: -sums[i] if descending else sums[i]), dtype=np.int64
    )
