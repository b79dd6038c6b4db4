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
from itertools import repeat

import numpy as np

from problems.arrays import frozen

_BASE64URL = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


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
    owned_topics, owned_entry_start, owned_start, owned_indices
        Every member's previous assignment as given, stale claims included (so
        that writing the problem back loses nothing), flattened once at load:
        member ``m``'s owned lists are entries ``owned_entry_start[m] ..
        owned_entry_start[m + 1] - 1``; entry ``e`` names topic
        ``owned_topics[e]`` and holds the partition indexes
        ``owned_indices[owned_start[e]:owned_start[e + 1]]``.  :attr:`owned`
        gives them back as one ``{topic: indexes}`` dict per member.
    generations
        Each member's generation (``int64``); -1 where absent, as in KIP-341.
    has_generation
        Whether the member's document carried a generation.
    racks, instance_ids
        Optional rack and ``group.instance.id`` (static membership) per member.
    lags
        Lag of each partition by global id (``int64``), or ``None``.
    rack_names
        Every distinct rack name of the document, first those of
        ``partition_racks`` in document order, then members' racks not seen
        there; rack ``r`` is ``rack_names[r]``.  Racks are integer ids below.
    member_rack
        Each member's rack id (``int32``, length M), ``-1`` for a member
        without a rack (``rack_names[member_rack[m]] == racks[m]``).
    replica_rack_start, replica_racks
        KIP-881's replica racks of every partition, a CSR by global id, or
        both ``None`` when the document has no ``partition_racks``: partition
        ``p``'s racks are ``replica_racks[replica_rack_start[p]:replica_rack_start[p + 1]]``
        (``int64`` offsets of length P + 1, ``int32`` rack ids), one id per
        replica as given (a rack may repeat; a partition may have none: its
        replicas' brokers have no rack).  :attr:`has_racks` tells whether
        they are present; :attr:`partition_rack_lists` gives the names back.
    topic_ids
        Kafka's topic id of each topic (its base64 ``Uuid`` string, in ``topics`` order), or
        ``None``: KIP-848's server assignors iterate topics by id (:attr:`topic_uuids`).
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
    owned_topics: tuple[str, ...]
    owned_entry_start: np.ndarray
    owned_start: np.ndarray
    owned_indices: np.ndarray
    generations: np.ndarray
    has_generation: tuple[bool, ...]
    racks: tuple[str | None, ...]
    instance_ids: tuple[str | None, ...]
    lags: np.ndarray | None = None
    notes: tuple[str, ...] = field(default=())
    rack_names: tuple[str, ...] = field(default=())
    member_rack: np.ndarray | None = None
    replica_rack_start: np.ndarray | None = None
    replica_racks: np.ndarray | None = None
    topic_ids: tuple[str, ...] | None = None

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
        return frozen(start)

    @cached_property
    def partition_topic(self) -> np.ndarray:
        """Topic position of every partition (``int32``, length P)."""
        return frozen(np.repeat(np.arange(self.num_topics, dtype=np.int32), self.partition_counts))

    @cached_property
    def partition_index(self) -> np.ndarray:
        """Index of every partition within its topic (``int64``, length P)."""
        return frozen(
            np.arange(self.num_partitions, dtype=np.int64)
            - np.repeat(self.topic_start[:-1], self.partition_counts)
        )

    @cached_property
    def subscribed_topics(self) -> tuple[np.ndarray, ...]:
        """Each member's subscribed *existing* topics, ascending positions."""
        get, known = self.topic_index.get, {}  # by the subscription's id: members share one tuple
        for sub in self.subscriptions:
            if id(sub) not in known:
                positions = np.fromiter(map(get, sub, repeat(-1)), dtype=np.int32, count=len(sub))
                known[id(sub)] = frozen(np.unique(positions[positions >= 0]))
        return tuple(known[id(sub)] for sub in self.subscriptions)

    @cached_property
    def subscribes(self) -> np.ndarray:
        """Boolean matrix ``[member, topic]``: the member subscribes the topic."""
        matrix = np.zeros((self.num_members, self.num_topics), dtype=bool)
        # The members of each distinct subscription (one array each).
        members: dict[int, list[int]] = {}
        for m, topics in enumerate(self.subscribed_topics):
            members.setdefault(id(topics), []).append(m)
        arrays = {id(topics): topics for topics in self.subscribed_topics}
        for key, rows in members.items():
            row = np.zeros(self.num_topics, dtype=bool)
            row[arrays[key]] = True
            matrix[rows] = row  # whole rows: no (rows x topics) index grid
        return frozen(matrix)

    @cached_property
    def subscription_classes(self) -> tuple[np.ndarray, np.ndarray]:
        """Each member's subscription class (same existing topics; ``int64``, numbered in member
        order) and the ``[class, topic]`` boolean matrix of the classes' subscribed topics.

        Members sharing one subscription tuple (the loader shares equal ones) are classed together
        without looking inside; distinct tuples with the same existing topics are merged."""
        subscriptions = self.subscriptions
        ids = np.fromiter(map(id, subscriptions), dtype=np.int64, count=len(subscriptions))
        _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
        # the shared tuples in member order (np.unique sorts them by address, which varies by run)
        by_member = np.argsort(first, kind="stable")
        renumber = np.empty(len(first), dtype=np.int64)
        renumber[by_member] = np.arange(len(first))
        first, inverse = first[by_member], renumber[inverse.reshape(-1)]
        lists = self.subscribed_topics
        by_content: dict[bytes, int] = {}
        rows: list[np.ndarray] = []
        remap = np.empty(len(first), dtype=np.int64)
        for j, m in enumerate(first.tolist()):
            k = by_content.setdefault(lists[m].tobytes(), len(rows))
            if k == len(rows):
                rows.append(lists[m])
            remap[j] = k
        matrix = np.zeros((len(rows), self.num_topics), dtype=bool)
        for k, positions in enumerate(rows):
            matrix[k, positions] = True
        return frozen(remap[inverse]), frozen(matrix)

    @cached_property
    def topic_subscribers(self) -> tuple[np.ndarray, ...]:
        """Each topic's subscribers, ascending member positions."""
        return tuple(
            frozen(np.flatnonzero(self.subscribes[:, t]).astype(np.int32))
            for t in range(self.num_topics)
        )

    @cached_property
    def assignable(self) -> np.ndarray:
        """Whether each partition's topic has at least one subscriber."""
        return frozen(np.any(self.subscribes, axis=0)[self.partition_topic])

    @cached_property
    def owned(self) -> tuple[dict[str, tuple[int, ...]], ...]:
        """Each member's previous assignment as given: ``{topic: partition indexes}``."""
        indices = self.owned_indices.tolist()
        start = self.owned_start.tolist()
        entries = [tuple(indices[start[e] : start[e + 1]]) for e in range(len(self.owned_topics))]
        bounds = self.owned_entry_start.tolist()
        return tuple(
            dict(
                zip(
                    self.owned_topics[bounds[m] : bounds[m + 1]], entries[bounds[m] : bounds[m + 1]]
                )
            )
            for m in range(self.num_members)
        )

    @cached_property
    def owned_entry_topic(self) -> np.ndarray:
        """Topic position of every owned entry; -1 for a topic that does not exist."""
        get = self.topic_index.get
        topics = self.owned_topics
        return frozen(np.fromiter(map(get, topics, repeat(-1)), dtype=np.int64, count=len(topics)))

    @cached_property
    def owned_claim_topic(self) -> np.ndarray:
        """Topic position of every item of ``owned_indices`` (-1: the topic does not exist)."""
        return frozen(np.repeat(self.owned_entry_topic, np.diff(self.owned_start)))

    @cached_property
    def owned_claims(self) -> tuple[np.ndarray, np.ndarray]:
        """Every claim on an existing partition, as ``(member, partition)`` arrays.

        Claims on deleted topics or out-of-range indices are left out (they are
        in ``notes``); the subscription is *not* checked here, that is
        part of KIP-341's validity, see :func:`problems.previous_owners`.
        Built from the flat arrays in a few vectorised steps (at load time by
        :func:`problems.load_problem`).
        """
        entry_member = np.repeat(
            np.arange(self.num_members, dtype=np.int32), np.diff(self.owned_entry_start)
        )
        member = np.repeat(entry_member, np.diff(self.owned_start))
        topic = self.owned_claim_topic
        indices = self.owned_indices
        counts = np.append(self.partition_counts, 0)  # topic -1 -> count 0: every claim stale
        keep = indices < counts[topic]
        if keep.all():
            return frozen(member), frozen(self.topic_start[topic] + indices)
        return frozen(member[keep]), frozen(self.topic_start[topic[keep]] + indices[keep])

    # ------------------------------------------------------------------ racks
    @property
    def has_racks(self) -> bool:
        """Whether the document gives ``partition_racks`` (KIP-881): baselines are then judged on
        ``rack-aware`` instead of ``sticky`` (docs/design/objectives.md)."""
        return self.replica_rack_start is not None

    @cached_property
    def replica_rack_partition(self) -> np.ndarray:
        """Global id of every item of ``replica_racks`` (``int64``; empty without racks)."""
        if self.replica_rack_start is None:
            return frozen(np.zeros(0, dtype=np.int64))
        return frozen(
            np.repeat(
                np.arange(self.num_partitions, dtype=np.int64), np.diff(self.replica_rack_start)
            )
        )

    @cached_property
    def partition_rack_lists(self) -> tuple[tuple[str, ...], ...] | None:
        """Each partition's replica racks as given (names), by global id; ``None`` without racks."""
        if self.replica_rack_start is None or self.replica_racks is None:
            return None
        names = [self.rack_names[r] for r in self.replica_racks.tolist()]
        start = self.replica_rack_start.tolist()
        return tuple(tuple(names[start[p] : start[p + 1]]) for p in range(self.num_partitions))

    def rack_mismatches(self, owner: np.ndarray) -> np.ndarray:
        """Whether each partition goes to a member whose rack is not among its replica racks.

        Kafka's ``racksMismatch``: a member without a rack and an unassigned
        partition never count; a partition without replica racks counts for
        any member with a rack.  Without ``partition_racks`` nothing counts
        (the replicas' racks are unknown).
        """
        owner = np.asarray(owner)
        mismatch = np.zeros(self.num_partitions, dtype=bool)
        if self.replica_rack_start is None or self.member_rack is None:
            return mismatch
        racks = np.append(self.member_rack, np.int32(-1))  # owner -1 (unassigned) -> no rack
        rack: np.ndarray = racks[owner]
        aligned = np.zeros(self.num_partitions, dtype=bool)
        entry = self.replica_rack_partition
        aligned[entry[self.replica_racks == rack[entry]]] = True
        return (rack >= 0) & ~aligned

    @cached_property
    def topic_uuids(self) -> tuple[np.ndarray, np.ndarray]:
        """Each topic's Kafka ``Uuid`` as ``(most, least)`` significant bits (signed ``int64`` arrays).

        From :attr:`topic_ids` when the document gives them; otherwise topic ``t`` gets
        ``Uuid(0x0000000100000001, t)``, whose ``hashCode`` is ``t`` and whose order
        (``Uuid.compareTo``) is the document's: Kafka's hash sets of such ids iterate them in
        document order whenever their positions are below the table size (and in the table's
        bucket order otherwise, which the server assignors reproduce).
        """
        if self.topic_ids is None:
            return (
                frozen(np.full(self.num_topics, 0x0000000100000001, dtype=np.int64)),
                frozen(np.arange(self.num_topics, dtype=np.int64)),
            )
        # URL-safe base64 of 16 bytes, decoded for every id at once: 22 characters of 6 bits each
        # (the parser checked them); 5 groups of 4 make 15 bytes, the last 2 characters the 16th.
        text = "".join(t.rstrip("=") for t in self.topic_ids).encode("ascii")
        table = np.zeros(256, dtype=np.uint32)
        table[np.frombuffer(_BASE64URL, dtype=np.uint8)] = np.arange(64, dtype=np.uint32)
        sextets = table[np.frombuffer(text, dtype=np.uint8)].reshape(-1, 22)
        groups = sextets[:, :20].reshape(-1, 5, 4)
        words = (
            (groups[..., 0] << 18) | (groups[..., 1] << 12) | (groups[..., 2] << 6) | groups[..., 3]
        )
        head = np.stack([words >> 16, (words >> 8) & 255, words & 255], axis=-1).reshape(-1, 15)
        tail = ((sextets[:, 20] << 2) | (sextets[:, 21] >> 4)) & 255
        raw = np.concatenate([head, tail[:, None]], axis=1).astype(np.uint8)
        halves = raw.view(">i8").astype(np.int64).reshape(-1, 2)
        return frozen(halves[:, 0].copy()), frozen(halves[:, 1].copy())

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
