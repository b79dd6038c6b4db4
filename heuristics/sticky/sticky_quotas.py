"""What the constrained sticky algorithms share: partition orders, owned lists, quotas and phase 1.

Used by Kafka's constrained path (:mod:`heuristics.sticky.sticky_kafka`) and by the
seeds' variants (:mod:`heuristics.sticky.sticky`); they differ in the member order of
phase 1 and in how phase 2 hands out what is left.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from heuristics.kafka_orders import member_id_rank, topics_in_name_order
from problems import GroupProblem


def partitions(problem: GroupProblem, index_first: bool) -> np.ndarray:
    """Global ids of member 0's subscribed partitions, by (index, topic name) or (topic name, index)."""
    topics = np.array(
        [t for t in topics_in_name_order(problem) if problem.subscribes[0, t]], dtype=np.int64
    )
    counts = problem.partition_counts[topics] if len(topics) else np.zeros(0, dtype=np.int64)
    starts = problem.topic_start[topics] if len(topics) else counts
    if index_first:
        return round_robin(counts, starts)
    if len(topics) == problem.num_topics and np.array_equal(topics, np.arange(len(topics))):
        return np.arange(
            problem.num_partitions, dtype=np.int64
        )  # every topic, in name order already
    # Each topic's block, in name order: its start plus 0 .. count - 1, in one pass.
    ordered: np.ndarray = np.arange(int(counts.sum()), dtype=np.int64) + np.repeat(
        starts - (np.cumsum(counts) - counts), counts
    )
    return ordered


def round_robin(lengths: np.ndarray, first: np.ndarray, step: int = 1) -> np.ndarray:
    """Runs of ``lengths`` (item ``k`` of run ``r`` is ``first[r] + step * k``) dealt round by round:
    item ``k`` of every run longer than ``k``, runs in order, then item ``k + 1``.

    The runs laid end to end, reordered by ``np.lexsort((run, item))``, without a general sort:
    between two consecutive distinct lengths the same runs take part in every round, so each such
    band of rounds is one block (``first`` of those runs tiled, plus the round; one block when every
    run has the same length); with many distinct lengths, a stable sort of the item numbers (small
    integers: numpy's radix sort).  ``step=0`` deals the runs' ``first`` values themselves.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    first = np.asarray(first)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=first.dtype)
    levels = np.unique(lengths)
    if len(levels) > 64:
        item = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        longest = int(levels[-1])
        small = np.uint16 if longest < 2**16 else np.uint32 if longest < 2**32 else np.int64
        order = np.argsort(item.astype(small), kind="stable")
        dealt = np.repeat(first, lengths)[order]
        return dealt + step * item[order] if step else dealt
    blocks, low = [], 0
    for high in levels[levels > 0].tolist():  # rounds low .. high - 1: the runs of length >= high
        active = first[lengths >= high]
        if step:
            blocks.append(
                (active[None, :] + step * np.arange(low, high, dtype=active.dtype)[:, None]).ravel()
            )
        else:
            blocks.append(np.tile(active, high - low))
        low = high
    return np.concatenate(blocks)


def owned_in_order(
    previous: np.ndarray, parts: np.ndarray, num_members: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
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


def claims(
    problem: GroupProblem, previous: np.ndarray, index_first: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The partitions in the variant's order (:func:`partitions`), the members' owned lists in
    that order (:func:`owned_in_order`: grouped, owner of each, rank in its list, counts) and
    the members by id."""
    parts = partitions(problem, index_first=index_first)
    grouped, owner_of, rank, owned = owned_in_order(previous, parts, problem.num_members)
    return parts, grouped, owner_of, rank, owned, np.argsort(member_id_rank(problem))


def keep_owned(
    owner: np.ndarray, grouped: np.ndarray, owner_of: np.ndarray, rank: np.ndarray, keep: np.ndarray
) -> np.ndarray:
    """Each member's first ``keep[m]`` owned partitions (:func:`owned_in_order`'s lists) given back
    to it in ``owner`` (in place); the mask of the kept ones in ``grouped``."""
    kept: np.ndarray = rank < keep[owner_of]
    owner[grouped[kept]] = owner_of[kept]
    return kept


def one_each(
    owner: np.ndarray, left: np.ndarray, queue: Sequence[int] | np.ndarray, broken: str
) -> None:
    """The last partitions ``left``, one each to the members of ``queue`` in order (members at
    ``C_f`` taking their one more up to ``C_c``), in ``owner`` (in place); ``broken`` names the
    invariant when more are left than ``queue`` has members."""
    if len(left) > len(queue):
        raise AssertionError(broken)  # pragma: no cover
    owner[left] = np.asarray(queue[: len(left)], dtype=owner.dtype)


def quotas(total: int, members: int) -> tuple[int, int, int]:
    """``(C_f, C_c, C_r)``: floor and ceiling of ``total / members``, and the remainder."""
    floor, extra = divmod(total, members)
    return floor, floor + (extra > 0), extra


def phase_one(
    owned: np.ndarray, order: np.ndarray, c_f: int, c_c: int, c_r: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
