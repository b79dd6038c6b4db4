"""The data the exact share models (``share``, KIP-932) share: the pairs they may choose.

A share answer is a set of ``(member, partition)`` pairs (:mod:`problems.share`); the hard
constraints allow a pair only when the member subscribes the partition's topic, so the models'
variables are those *allowed* pairs, one 0/1 decision each (a b-matching of members and
partitions).  Every assignable partition (its topic has a subscriber) needs at least one pair,
every member subscribing a topic with partitions at least one; choosing every allowed pair
satisfies both, so the problem is always feasible.  The levels (:data:`problems.share.SHARE_LEVELS`)
are convex in the counts: ``sum_m c_m^2``, then ``sum_p r_p^2``, then the previous pairs dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from problems import GroupProblem
from problems.share import IntArray, previous_pairs

BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class SharePairs:
    """The allowed pairs of a share problem and what the constraints and levels need of them.

    Attributes
    ----------
    member, partition
        The allowed pairs (``int64``, sorted by member then partition).
    previous
        Whether each allowed pair is in the previous assignment.
    forced_moves
        Previous pairs that are not allowed (their member left the topic): dropped by every answer.
    wants
        Members that must get at least one partition.
    needed
        Partitions that must get at least one member (the assignable ones).
    """

    member: IntArray
    partition: IntArray
    previous: BoolArray
    forced_moves: int
    wants: BoolArray
    needed: BoolArray

    @property
    def count(self) -> int:
        """The number of allowed pairs."""
        return len(self.member)


def share_pairs(problem: GroupProblem) -> SharePairs:
    """The allowed pairs of ``problem`` (see the module's text)."""
    subscribes = problem.subscribes
    topic = problem.partition_topic
    members, partitions = np.nonzero(subscribes[:, topic])
    member = members.astype(np.int64)
    partition = partitions.astype(np.int64)
    previous = previous_pairs(problem)
    n = max(problem.num_partitions, 1)
    allowed_keys = member * n + partition
    previous_keys = previous[:, 0] * n + previous[:, 1]
    in_previous = np.isin(allowed_keys, previous_keys)
    forced = int(len(previous_keys) - np.count_nonzero(np.isin(previous_keys, allowed_keys)))
    wants = (subscribes & (problem.partition_counts > 0)[None, :]).any(axis=1)
    return SharePairs(
        member=member,
        partition=partition,
        previous=in_previous,
        forced_moves=forced,
        wants=np.asarray(wants, dtype=np.bool_),
        needed=np.asarray(problem.assignable, dtype=np.bool_),
    )
