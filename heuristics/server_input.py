"""What KIP-848's group coordinator hands a server assignor, and the orders Kafka's code sees it in.

Step by step, with its sources and where it follows Kafka: docs/strategies/kip848.md.
"""

from __future__ import annotations

import numpy as np

from heuristics.java import grouped_hash_order, hash_map_order, java_string_hashes
from heuristics.kafka_orders import uuid_hashes
from problems import GroupProblem
from problems.ownership import resolve_claims


def member_order(problem: GroupProblem) -> np.ndarray:
    """Member positions in the iteration order of the coordinator's ``HashMap`` of member specs."""
    return hash_map_order(list(problem.members)).astype(np.int64)


def homogeneous(problem: GroupProblem) -> bool:
    """``ModernGroup.subscriptionType``: every member subscribes the same topic names."""
    first, seen = None, set()
    for subscription in problem.subscriptions:
        if id(subscription) in seen:
            continue
        seen.add(id(subscription))
        names = frozenset(subscription)
        if first is None:
            first = names
        elif names != first:
            return False
    return True


def topic_hashes(problem: GroupProblem) -> np.ndarray:
    """``Uuid.hashCode`` of every topic's id (unsigned 32-bit values in ``int64``)."""
    return uuid_hashes(*problem.topic_uuids)


def subscription_order(problem: GroupProblem, member: int) -> list[int]:
    """The member's existing subscribed topics (positions) in the order its ``TopicIds`` iterates them:
    the ``HashSet`` of its topic names (built from the document's list), missing names skipped."""
    names = problem.subscriptions[member]
    order = grouped_hash_order(
        np.zeros(len(names), dtype=np.int64), java_string_hashes(names), from_collection=True
    )
    index = problem.topic_index
    return [index[names[i]] for i in order.tolist() if names[i] in index]


def current_claims(problem: GroupProblem) -> tuple[np.ndarray, np.ndarray]:
    """Every member's current assignment as ``(member, partition)`` arrays in the document's order
    (claims on missing partitions dropped; a partition claimed twice kept by its KIP-341 winner only)."""
    members, partitions = problem.owned_claims
    if len(partitions) == 0:
        return members.astype(np.int64), partitions.astype(np.int64)
    if np.bincount(partitions).max() <= 1:  # nobody else claims any of them
        return members.astype(np.int64), partitions.astype(np.int64)
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    resolve_claims(owner, members, partitions, problem.generations[members])
    keep = owner[partitions] == members
    return members[keep].astype(np.int64), partitions[keep].astype(np.int64)


def claims_in_map_order(
    problem: GroupProblem, members: np.ndarray, partitions: np.ndarray, member_rank: np.ndarray
) -> np.ndarray:
    """The permutation of the claims that lists them member by member (``member_rank`` ascending), each
    member's topics in its assignment ``HashMap``'s order (``Uuid.hashCode``), each topic's
    partitions in its ``HashSet``'s order (``Integer.hashCode`` is the partition number), as
    ``Assignment.fromRecord`` replays a target assignment record (topics put in the document's
    order, each topic's partitions ``new HashSet<>(list)`` of the document's list)."""
    n = len(members)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    topic = problem.partition_topic[partitions].astype(np.int64)
    # The claims come member by member, each member's topics in runs (one run per ``owned`` entry):
    # one table of topics per member, one table of partitions per entry.
    key = members * problem.num_topics + topic
    claim_entry = np.concatenate(([0], np.cumsum(key[1:] != key[:-1])))
    first = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
    entry_member, entry_topic = members[first], topic[first]
    entry_order = grouped_hash_order(entry_member, topic_hashes(problem)[entry_topic])
    entry_rank = np.empty(len(first), dtype=np.int64)
    # entries by (the member's rank, the entry's place in its member's table)
    entry_rank[entry_order] = np.arange(len(first))
    entry_rank = np.argsort(np.argsort(member_rank[entry_member] * len(first) + entry_rank))
    partition_order = grouped_hash_order(
        claim_entry, problem.partition_index[partitions], from_collection=True
    )
    partition_rank = np.empty(n, dtype=np.int64)
    partition_rank[partition_order] = np.arange(n)
    return np.argsort(entry_rank[claim_entry] * n + partition_rank)


def topic_signatures(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The topics' signatures, the distinct columns of a boolean ``[class, topic]`` matrix
    (:attr:`problems.GroupProblem.subscription_classes`: the classes subscribing each topic): each
    topic's signature, and the first topic of each signature."""
    classes = matrix.shape[0]
    if classes <= 62:  # each column as the bits of one integer
        codes = np.zeros(matrix.shape[1], dtype=np.int64)
        for row, subscribed in enumerate(matrix):
            codes |= subscribed.astype(np.int64) << row
        _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    else:
        _, first, inverse = np.unique(matrix.T, axis=0, return_index=True, return_inverse=True)
    return inverse.reshape(-1), first
