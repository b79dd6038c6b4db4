"""What the exact stream-join models share: partition numbers in classes, and back.

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from models.common.ranked_outcome import Ranked
from problems import (
    GroupProblem,
    Result,
    join_partition_count,
    next_epoch,
    number_owners,
    previous_number_owners,
    topic_partitions,
)


@dataclass(frozen=True)
class NumberClasses:
    """The aggregated stream-join problem.

    Attributes
    ----------
    count
        K, the number of partition numbers to assign.
    members
        The eligible members (those subscribing an existing topic), ascending positions.
    previous
        Each eligible member's number of validly owned numbers (aligned with ``members``).
    previous_owner
        :func:`problems.previous_number_owners` (length K).
    """

    count: int
    members: np.ndarray
    previous: np.ndarray
    previous_owner: np.ndarray

    @property
    def window(self) -> tuple[int, int]:
        """``(floor(K / E), ceil(K / E))``: every member's count in a level-1 optimum.

        Exchange argument: if one member had more than ``ceil(K / E)`` numbers,
        another would have fewer than ``floor(K / E)`` (and vice versa), and
        moving a number from the first to the second lowers the sum of squares,
        every number being eligible to every eligible member.  So restricting
        each count to the window loses no level-1 optimum (and no level-2
        optimum among them), and a lower bound proven on the restricted model
        is one on the problem.
        """
        low = self.count // max(len(self.members), 1)
        return low, low + (self.count > low * len(self.members))


def number_classes(problem: GroupProblem) -> NumberClasses:
    """Aggregate ``problem`` into :class:`NumberClasses`."""
    previous_owner = previous_number_owners(problem)
    members = np.flatnonzero(problem.subscribes.any(axis=1))
    owned = np.bincount(previous_owner[previous_owner >= 0], minlength=problem.num_members)
    return NumberClasses(join_partition_count(problem), members, owned[members], previous_owner)


def counts_and_kept(
    problem: GroupProblem, classes: NumberClasses, owner: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``counts`` and ``kept`` (aligned with ``classes.members``) of a valid answer ``owner``."""
    number_owner = number_owners(problem, owner)
    counts = np.bincount(number_owner[number_owner >= 0], minlength=problem.num_members)
    stays = number_owner[(number_owner == classes.previous_owner) & (number_owner >= 0)]
    kept = np.bincount(stays, minlength=problem.num_members)
    return counts[classes.members], kept[classes.members]


def owner_from_counts(
    problem: GroupProblem, classes: NumberClasses, counts: ArrayLike, kept: ArrayLike
) -> np.ndarray:
    """Realise ``counts`` / ``kept`` (aligned with ``classes.members``) as an ``owner`` array.

    Each member keeps its ``kept`` smallest previous numbers; every other
    number, ascending, fills the members' remaining places in member order.
    """
    counts = np.asarray(counts, dtype=np.int64)
    kept = np.asarray(kept, dtype=np.int64)
    number_owner = np.full(classes.count, -1, dtype=np.int32)
    position = np.full(problem.num_members, -1, dtype=np.int64)
    position[classes.members] = np.arange(len(classes.members))
    owned = np.flatnonzero(classes.previous_owner >= 0)
    owned = owned[np.argsort(classes.previous_owner[owned], kind="stable")]  # by owner, then number
    holder = position[classes.previous_owner[owned]]
    rank_in_class = np.arange(len(owned)) - np.searchsorted(holder, holder)
    keeps = rank_in_class < kept[holder]
    number_owner[owned[keeps]] = classes.members[holder[keeps]]
    pool = np.flatnonzero(number_owner < 0)
    number_owner[pool] = np.repeat(classes.members, counts - kept)
    return topic_partitions(problem, number_owner)


def result(
    problem: GroupProblem,
    classes: NumberClasses,
    ranked: Ranked,
    counts: ArrayLike,
    kept: ArrayLike,
) -> Result:
    """The :class:`problems.Result` of a ranked solve (no answer unless it found one)."""
    owner = owner_from_counts(problem, classes, counts, kept) if ranked.has_solution else None
    return ranked.result(
        problem, "stream-join", owner, info={"epoch": next_epoch(problem)}, objective="stream-join"
    )
