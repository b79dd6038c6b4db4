"""The steps of a trace as arrays over the whole trace, shared by the horizon models.

A horizon model decides every step's answer at once, so it needs one numbering of what persists
from step to step: members by id and partitions by ``(topic, index)`` (consumer groups), brokers
by id and partitions by ``(topic, partition)`` (placements).  :class:`GroupSteps` and
:class:`PlacementSteps` hold each step's parsed problem and the map from its positions to those
trace-wide ids; an answer is then one array per step, and a trace move (DESIGN "Traces") is a
comparison of trace-wide ids between two consecutive steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from problems import GroupProblem, PlacementProblem


@dataclass(frozen=True)
class GroupSteps:
    """Consumer-group steps with trace-wide ids.

    Attributes
    ----------
    problems
        Each step's problem (no claims: the decisions are the model's).
    member_ids
        Every member id of the trace, in order of first appearance.
    member_of
        Per step, the trace-wide id of each member position.
    part_of
        Per step, the trace-wide id of each partition (by global id).
    num_parts
        Trace-wide partitions ``(topic, index)`` over all steps.
    """

    problems: tuple[GroupProblem, ...]
    member_ids: tuple[str, ...]
    member_of: tuple[np.ndarray, ...]
    part_of: tuple[np.ndarray, ...]
    num_parts: int

    def __len__(self) -> int:
        return len(self.problems)

    @property
    def num_members(self) -> int:
        return len(self.member_ids)

    def window(self, first: int, last: int) -> GroupSteps:
        """Steps ``first .. last`` (inclusive), the same trace-wide ids."""
        cut = slice(first, last + 1)
        return GroupSteps(
            self.problems[cut],
            self.member_ids,
            self.member_of[cut],
            self.part_of[cut],
            self.num_parts,
        )

    def assignable(self, k: int) -> np.ndarray:
        """Trace-wide partitions assignable at step ``k`` (a subscribed topic), as a mask."""
        mask = np.zeros(self.num_parts, dtype=bool)
        mask[self.part_of[k][self.problems[k].assignable]] = True
        return mask

    def local_members(self, k: int) -> np.ndarray:
        """Trace-wide member id -> member position at step ``k`` (-1: absent), one slot more
        for -1 (no owner)."""
        local = np.full(self.num_members + 1, -1, dtype=np.int64)
        local[self.member_of[k]] = np.arange(len(self.member_of[k]))
        return local

    def to_wide(self, k: int, owner: np.ndarray) -> np.ndarray:
        """Step ``k``'s ``owner`` array as trace-wide member ids by trace-wide partition (-1: none)."""
        wide = np.full(self.num_parts, -1, dtype=np.int64)
        owner = np.asarray(owner, dtype=np.int64)
        held = owner >= 0
        wide[self.part_of[k][held]] = self.member_of[k][owner[held]]
        return wide

    def to_local(self, k: int, wide: np.ndarray) -> np.ndarray:
        """A trace-wide owner array as step ``k``'s ``owner`` array (member positions, -1)."""
        owner: np.ndarray = self.local_members(k)[np.asarray(wide, dtype=np.int64)[self.part_of[k]]]
        return owner.astype(np.int32)


def group_steps(problems: Sequence[GroupProblem]) -> GroupSteps:
    """The trace-wide numbering of consumer-group steps."""
    member_index: dict[str, int] = {}
    topic_offset: dict[str, int] = {}
    topic_width: dict[str, int] = {}
    for problem in problems:
        for member in problem.members:
            member_index.setdefault(member, len(member_index))
        for name, count in zip(problem.topics, problem.partition_counts.tolist()):
            topic_width[name] = max(topic_width.get(name, 0), int(count))
    total = 0
    for name, width in topic_width.items():
        topic_offset[name] = total
        total += width
    member_of, part_of = [], []
    for problem in problems:
        member_of.append(np.array([member_index[m] for m in problem.members], dtype=np.int64))
        offsets = np.array([topic_offset[t] for t in problem.topics], dtype=np.int64)
        part_of.append(offsets[problem.partition_topic] + problem.partition_index)
    return GroupSteps(tuple(problems), tuple(member_index), tuple(member_of), tuple(part_of), total)


def wide_moves(previous: np.ndarray, current: np.ndarray) -> int:
    """Trace moves between two trace-wide owner arrays: partitions owned at both steps whose owner
    changed (a partition unowned at either step does not move), as ``problems.trace.trace_moves``
    counts them."""
    both = (previous >= 0) & (current >= 0)
    return int(np.count_nonzero(previous[both] != current[both]))


@dataclass(frozen=True)
class PlacementSteps:
    """Placement steps with trace-wide ids.

    Attributes
    ----------
    problems
        Each step's placement (starting replicas; replicas to be placed on unused ids).
    broker_ids
        Every broker id of the trace, in order of first appearance.
    broker_of
        Per step, the trace-wide id of each broker position.
    part_of
        Per step, the trace-wide id of each partition (by position).
    num_parts
        Trace-wide partitions ``(topic, partition)``.
    width
        The largest replication factor of the trace.
    """

    problems: tuple[PlacementProblem, ...]
    broker_ids: tuple[int, ...]
    broker_of: tuple[np.ndarray, ...]
    part_of: tuple[np.ndarray, ...]
    num_parts: int
    width: int

    def __len__(self) -> int:
        return len(self.problems)

    @property
    def num_brokers(self) -> int:
        return len(self.broker_ids)

    def window(self, first: int, last: int) -> PlacementSteps:
        cut = slice(first, last + 1)
        return PlacementSteps(
            self.problems[cut],
            self.broker_ids,
            self.broker_of[cut],
            self.part_of[cut],
            self.num_parts,
            self.width,
        )


def placement_steps(problems: Sequence[PlacementProblem]) -> PlacementSteps:
    """The trace-wide numbering of placement steps."""
    broker_index: dict[int, int] = {}
    part_index: dict[tuple[str, int], int] = {}
    for problem in problems:
        for b in problem.broker_ids.tolist():
            broker_index.setdefault(int(b), len(broker_index))
        for key in zip(problem.topics, problem.partitions.tolist()):
            part_index.setdefault(key, len(part_index))
    broker_of, part_of = [], []
    for problem in problems:
        broker_of.append(
            np.array([broker_index[int(b)] for b in problem.broker_ids.tolist()], dtype=np.int64)
        )
        part_of.append(
            np.array(
                [part_index[key] for key in zip(problem.topics, problem.partitions.tolist())],
                dtype=np.int64,
            )
        )
    width = max((int(p.replication_factors.max(initial=0)) for p in problems), default=0)
    return PlacementSteps(
        tuple(problems),
        tuple(broker_index),
        tuple(broker_of),
        tuple(part_of),
        len(part_index),
        width,
    )
