"""The data the exact share models (``share``, KIP-932) share: the pairs they may choose.

The models' variables are the *allowed* ``(member, partition)`` pairs (the member subscribes the
partition's topic), with the previous pairs, the members and partitions that need at least one,
and the previous pairs no answer can keep.  The formulation: docs/strategies/share.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from problems import GroupProblem
from problems.share import IntArray, previous_pairs

#: A model's variable (CP-SAT's or PuLP's).
V = TypeVar("V")

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

    def by_end(self, problem: GroupProblem, x: Sequence[V]) -> tuple[list[list[V]], list[list[V]]]:
        """The models' pair variables ``x`` (one per allowed pair) of each member and of each
        partition (the CP-SAT and the MIP models alike)."""
        by_member: list[list[V]] = [[] for _ in range(problem.num_members)]
        by_partition: list[list[V]] = [[] for _ in range(problem.num_partitions)]
        for variable, m, p in zip(x, self.member.tolist(), self.partition.tolist()):
            by_member[m].append(variable)
            by_partition[p].append(variable)
        return by_member, by_partition


def share_pairs(problem: GroupProblem) -> SharePairs:
    """The allowed pairs of ``problem`` (docs/strategies/share.md, the exact models)."""
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
