"""Immutable, array-backed data of a consumer-group assignment problem.

A partition is identified by one integer, its *global id*: the partitions of
topic ``t`` (the ``t``-th topic of ``topics``, in input order) are
``topic_start[t] .. topic_start[t + 1] - 1``, in partition-index order.  Members
are identified by their position in ``members``.  Everything a heuristic or a
model reads in a hot loop is a numpy array built once at load time, so that a
group of a million partitions and thousands of members costs a few arrays, not
millions of small Python objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class GroupProblem:
    """A consumer group: topics, members, their previous assignment and lags.

    Build it with :func:`problems.load_problem`; the arrays are read-only.

    Attributes
    ----------
    topics
        Topic names in input order; topic ``t`` is ``topics[t]``.
    partition_counts
        Partition count of each topic (``int64``, length T).
    topic_start
        Global id of each topic's partition 0, plus the total (length T + 1).
    members
        Member ids in input order; member ``m`` is ``members[m]``.
    subscriptions
        Each member's subscription as given, including topics missing from
        ``topics`` (deleted or not yet created: they contribute no partitions).
    owned
        Each member's previous assignment as given (topic -> partition indices),
        stale claims included, so that writing the problem back loses nothing.
    generations
        Each member's generation (``int64``); -1 where absent, as in KIP-341.
    has_generation
        Whether the member's document carried a generation.
    racks, instance_ids
        Optional rack and ``group.instance.id`` (static membership) per member.
    lags
        Lag of each partition by global id (``int64``), or ``None``.
    notes
        Human-readable notes on what Kafka treats as normal but a user may
        want to know: subscriptions to topics that do not exist (they
        contribute no partitions) and owned partitions that do not exist
        (deleted topic, index out of range: stale claims, dropped).
    """

    topics: tuple[str, ...]
    partition_counts: np.ndarray
    members: tuple[str, ...]
    subscriptions: tuple[tuple[str, ...], ...]
    owned: tuple[dict[str, tuple[int, ...]], ...]
    generations: np.ndarray
    has_generation: tuple[bool, ...]
    racks: tuple[str | None, ...]
    instance_ids: tuple[str | None, ...]
    lags: np.ndarray | None = None
    notes: tuple[str, ...] = field(default=())

    kind = "group"

    # ----------------------------------------------------------------- sizes
    @property
    def num_topics(self) -> int:
        return len(self.topics)

    @property
    def num_members(self) -> int:
        return len(self.members)

    @property
    def num_partitions(self) -> int:
        return int(self.topic_start[-1])

    # --------------------------------------------------------- derived arrays
    @cached_property
    def topic_index(self) -> dict[str, int]:
        """Topic name -> topic position."""
        return {name: t for t, name in enumerate(self.topics)}

    @cached_property
    def member_index(self) -> dict[str, int]:
        """Member id -> member position."""
        return {name: m for m, name in enumerate(self.members)}

    @cached_property
    def topic_start(self) -> np.ndarray:
        start = np.zeros(self.num_topics + 1, dtype=np.int64)
        np.cumsum(self.partition_counts, out=start[1:])
        return _frozen(start)

    @cached_property
    def partition_topic(self) -> np.ndarray:
        """Topic position of every partition (``int32``, length P)."""
        return _frozen(
            np.repeat(np.arange(self.num_topics, dtype=np.int32), self.partition_counts)
        )

    @cached_property
    def partition_index(self) -> np.ndarray:
        """Index of every partition within its topic (``int64``, length P)."""
        return _frozen(
            np.arange(self.num_partitions, dtype=np.int64)
            - np.repeat(self.topic_start[:-1], self.partition_counts)
        )

    @cached_property
    def subscribed_topics(self) -> tuple[np.ndarray, ...]:
        """Each member's subscribed *existing* topics, ascending positions."""
        index = self.topic_index
        return tuple(
            _frozen(np.array(sorted({index[t] for t in sub if t in index}), dtype=np.int32))
            for sub in self.subscriptions
        )

    @cached_property
    def subscribes(self) -> np.ndarray:
        """Boolean matrix ``[member, topic]``: the member subscribes the topic."""
        matrix = np.zeros((self.num_members, self.num_topics), dtype=bool)
        for m, topics in enumerate(self.subscribed_topics):
            matrix[m, topics] = True
        return _frozen(matrix)

    @cached_property
    def topic_subscribers(self) -> tuple[np.ndarray, ...]:
        """Each topic's subscribers, ascending member positions."""
        return tuple(
            _frozen(np.flatnonzero(self.subscribes[:, t]).astype(np.int32))
            for t in range(self.num_topics)
        )

    @cached_property
    def assignable(self) -> np.ndarray:
        """Whether each partition's topic has at least one subscriber."""
        return _frozen(self.subscribes.any(axis=0)[self.partition_topic])

    @cached_property
    def owned_claims(self) -> tuple[np.ndarray, np.ndarray]:
        """Every claim on an existing partition, as ``(member, partition)`` arrays.

        Claims on deleted topics or out-of-range indices are left out (they are
        in ``notes``); the subscription is *not* checked here, that is
        part of KIP-341's validity, see :func:`problems.previous_owners`.
        """
        members: list[np.ndarray] = []
        partitions: list[np.ndarray] = []
        index = self.topic_index
        for m, owned in enumerate(self.owned):
            for topic, indices in owned.items():
                t = index.get(topic)
                if t is None or not indices:
                    continue
                ids = np.asarray(indices, dtype=np.int64)
                ids = ids[ids < self.partition_counts[t]] + self.topic_start[t]
                partitions.append(ids)
                members.append(np.full(len(ids), m, dtype=np.int32))
        if not partitions:
            return _frozen(np.zeros(0, np.int32)), _frozen(np.zeros(0, np.int64))
        return _frozen(np.concatenate(members)), _frozen(np.concatenate(partitions))

    # --------------------------------------------------------------- helpers
    def partition_name(self, g: int) -> str:
        """Kafka's ``topic-index`` name of partition ``g``."""
        t = int(self.partition_topic[g])
        return f"{self.topics[t]}-{int(g - self.topic_start[t])}"

    def global_id(self, topic: str, index: int) -> int:
        """Global id of ``(topic, index)``; ``KeyError`` / ``IndexError`` if absent."""
        t = self.topic_index[topic]
        if not 0 <= index < self.partition_counts[t]:
            raise IndexError(f"{topic}-{index} does not exist")
        return int(self.topic_start[t] + index)
