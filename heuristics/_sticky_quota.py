"""What the constrained sticky algorithms share: partition orders, owned lists, quotas and phase 1.

Used by Kafka's constrained path (:mod:`heuristics._sticky_kafka`) and by the
seeds' variants (:mod:`heuristics.sticky`); they differ in the member order of
phase 1 and in how phase 2 hands out what is left.
"""

from __future__ import annotations

import numpy as np

from heuristics._kafka import topics_in_name_order
from problems import GroupProblem


def partitions(problem: GroupProblem, index_first: bool) -> np.ndarray:
    """Global ids of member 0's subscribed partitions, by (index, topic name) or (topic name, index)."""
    topics = [t for t in topics_in_name_order(problem) if problem.subscribes[0, t]]
    start, counts = problem.topic_start, problem.partition_counts
    blocks = [np.arange(start[t], start[t] + counts[t]) for t in topics]
    by_topic = np.concatenate(blocks) if blocks else np.zeros(0, dtype=np.int64)
    if not index_first:
        return by_topic
    index = problem.partition_index[by_topic]
    small = index.max(initial=0) < 2**16
    return by_topic[np.argsort(index.astype(np.uint16) if small else index, kind="stable")]


def owned_in_order(previous: np.ndarray, parts: np.ndarray, num_members: int):
    """Each member's owned partitions (``previous``) in ``parts`` order, grouped by member.

    Returns ``(grouped, owner_of, rank, counts)``: partitions grouped by owner
    (members ascending, ``parts`` order inside), their owner, their rank inside
    the owner's list, and how many each member owns.
    """
    held = previous[parts]
    claimed = held >= 0
    claims, owners = parts[claimed], held[claimed]
    key = owners.astype(np.int16) if num_members < 2**15 else owners
    order = np.argsort(key, kind="stable")
    grouped, owner_of = claims[order], owners[order]
    counts = np.bincount(owners, minlength=num_members)
    starts = np.cumsum(counts) - counts
    rank = np.arange(len(grouped)) - starts[owner_of]
    return grouped, owner_of, rank, counts


def quotas(total: int, members: int) -> tuple[int, int, int]:
    """``(C_f, C_c, C_r)``: floor and ceiling of ``total / members``, and the remainder."""
    floor, extra = divmod(total, members)
    return floor, floor + (extra > 0), extra


def phase_one(owned: np.ndarray, order: np.ndarray, c_f: int, c_c: int, c_r: int):
    """How many owned partitions each member keeps, visiting members in ``order``.

    Fewer than ``C_f`` owned: all (the member is *under-filled*); ``C_c`` or
    more while fewer than ``C_r`` members kept ``C_c``: ``C_c``; otherwise
    ``C_f``.  Returns ``(keep, under, exactly)``: the kept counts by member, the
    under-filled members in ``order``, and Kafka's exactly-``C_f`` list (the
    members keeping ``C_f`` in ``order``, empty once ``C_r`` members keep ``C_c``).
    """
    count = owned[order]
    under = count < c_f
    big = ~under & (count >= c_c) & (c_r > 0)
    takes_max = big & (np.cumsum(big) <= c_r)
    keep = np.empty(len(owned), dtype=np.int64)
    keep[order] = np.where(under, count, np.where(takes_max, c_c, c_f))
    exactly = order[~under & ~takes_max] if int(takes_max.sum()) < c_r else order[:0]
    return keep, order[under], exactly
