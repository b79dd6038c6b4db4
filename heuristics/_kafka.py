"""Orderings that Kafka's client assignors share.

Kept in one place because every assignor that mimics Kafka sorts members and
topics the same way, and a difference in either changes the output.
"""

from __future__ import annotations

import numpy as np

from problems import GroupProblem


def java_order_key(text: str) -> bytes:
    """Sort key that orders strings as Java's ``String.compareTo`` does.

    Java compares UTF-16 code units; Python compares code points.  The two
    disagree only when a character above U+FFFF meets one in U+E000..U+FFFF,
    and comparing the UTF-16-BE bytes reproduces Java exactly.
    """
    return text.encode("utf-16-be")


def member_rank(problem: GroupProblem) -> np.ndarray:
    """Each member's position in Kafka's member order (``int32``, length M).

    Kafka's ``AbstractPartitionAssignor.MemberInfo.compareTo``: members with a
    ``group.instance.id`` (static members) first, ordered by instance id, then
    the dynamic members ordered by member id.
    """
    keys = [
        (0, java_order_key(instance)) if instance is not None else (1, java_order_key(member))
        for member, instance in zip(problem.members, problem.instance_ids)
    ]
    order = sorted(range(problem.num_members), key=keys.__getitem__)
    rank = np.empty(problem.num_members, dtype=np.int32)
    rank[order] = np.arange(problem.num_members, dtype=np.int32)
    return rank


def topics_in_name_order(problem: GroupProblem) -> list[int]:
    """Topic positions ordered by name as Java's ``TreeSet<String>`` orders them."""
    return sorted(range(problem.num_topics), key=lambda t: java_order_key(problem.topics[t]))


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units, 32-bit signed)."""
    h = 0
    units = text.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def java_spread(h: int) -> int:
    """``HashMap.hash``: the key's hash with its high half folded in (unsigned 32-bit result)."""
    h &= 0xFFFFFFFF
    return h ^ (h >> 16)


def hash_map_order(keys: list[str]) -> np.ndarray:
    """Positions of ``keys`` in the iteration order of a Java ``HashMap`` filled in list order.

    A ``HashMap`` iterates its table from bucket 0 up, each bucket in insertion
    order; the table starts at 16 buckets and doubles when the size passes 3/4
    of it, or when a bucket of a table under 64 buckets reaches 9 entries
    (``treeifyBin``).  A bucket of 9+ entries in a larger table becomes a
    red-black tree, whose order this does not reproduce (it needs thousands of
    colliding ids).  Kafka's consumer leader hands the assignor such a map of
    member id -> subscription, and the sticky assignor's tie-breaks follow it.
    """
    spread = [java_spread(java_string_hash(k)) for k in keys]
    capacity, sizes = 16, {}
    for i, h in enumerate(spread):
        bucket = h & (capacity - 1)
        sizes[bucket] = sizes.get(bucket, 0) + 1
        grow = sizes[bucket] >= 9 and capacity < 64
        if grow or i + 1 > capacity * 3 // 4:
            capacity *= 2
            if grow and i + 1 > capacity * 3 // 4:
                capacity *= 2
            sizes = {}
            for g in spread[: i + 1]:
                sizes[g & (capacity - 1)] = sizes.get(g & (capacity - 1), 0) + 1
    buckets = np.array([h & (capacity - 1) for h in spread], dtype=np.int64)
    return np.argsort(buckets, kind="stable")
