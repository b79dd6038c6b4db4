"""Orderings that Kafka's client assignors share.

Kept in one place because every assignor that mimics Kafka sorts members and
topics the same way, and a difference in either changes the output.
"""

from __future__ import annotations

import numpy as np

from heuristics.java import java_order_key
from problems import GroupProblem


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


def member_id_rank(problem: GroupProblem) -> np.ndarray:
    """Each member's position when members are sorted by member id in Java order (``int64``, length M)."""
    order = sorted(range(problem.num_members), key=lambda m: java_order_key(problem.members[m]))
    rank = np.empty(problem.num_members, dtype=np.int64)
    rank[order] = np.arange(problem.num_members)
    return rank


def topics_in_name_order(problem: GroupProblem) -> list[int]:
    """Topic positions ordered by name as Java's ``TreeSet<String>`` orders them."""
    return sorted(range(problem.num_topics), key=lambda t: java_order_key(problem.topics[t]))


def uuid_hashes(msb: np.ndarray, lsb: np.ndarray) -> np.ndarray:
    """Kafka's ``Uuid.hashCode`` of ids ``(msb, lsb)`` (signed 64-bit arrays), as unsigned 32-bit ``int64``:
    ``h = msb ^ lsb; (int) (h >> 32) ^ (int) h``."""
    h = np.bitwise_xor(np.asarray(msb, dtype=np.int64), np.asarray(lsb, dtype=np.int64)).view(
        np.uint64
    )
    return ((h >> np.uint64(32)) ^ (h & np.uint64(0xFFFFFFFF))).astype(np.int64)
