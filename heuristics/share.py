"""KIP-932's share-group assignor: Kafka 4.4's ``SimpleAssignor`` (``group.share.assignors``' default).

Source: Apache Kafka 4.4.0, ``SimpleAssignor``, ``SimpleHomogeneousAssignmentBuilder`` and
``SimpleHeterogeneousAssignmentBuilder`` (``group-coordinator``).  A share group's partition may
go to several members; the answer is the ``(member, partition)`` pairs of :mod:`problems.share`.
The input is what the coordinator hands the assignor (:mod:`heuristics.server_input`: members in
the ``HashMap`` order of their ids, subscriptions as ``TopicIds`` views, the subscription type
from the topic names), except the current assignment: every member's claims on existing
partitions as given (:func:`problems.share.previous_claims`), several members per partition
allowed.

**Homogeneous** (every member subscribes the same topic names).  With ``M`` members and ``P``
partitions of the subscribed topics, each partition wants ``ceil(M / P)`` members (the *sharing*)
and member ``i`` (in the members' map order) wants ``ceil(x (i + 1)) - ceil(x i)`` partitions,
``x = sharing * P / M``.  Then:

1. each member keeps its current partitions of subscribed topics (others are dropped) and is
   *unfilled* or *overfilled* against its want;
2. an overfilled member drops partitions (in its set's order) down to its want;
3. a partition with more members than the sharing drops members (in its set's order) down to it;
   they become unfilled;
4. the partitions (those held first, in the order of the partition map, which holds every
   target partition) that want members take the unfilled members round robin, skipping one
   that has the partition; a member leaves the round when it has its want, and a partition
   that no unfilled member can take is left short.

**Heterogeneous.**  The same, topic by topic (in the order of the set of all subscribed topic
ids), among the topic's subscribers: the sharing is ``ceil(S / P_t)`` for its ``S`` subscribers
and ``P_t`` partitions, the wants spread over the subscribers in member order; members that do
not subscribe the topic want none of it (step 2 takes all of theirs); partitions of topics no
member subscribes stay with whoever held them (Kafka never looks at those topics).

Every tie is Java's hash-table iteration order (``HashMap``/``HashSet`` of ``Integer``,
``Uuid`` and ``TopicIdPartition`` keys, their capacities, their growth, and where in a bucket
``put`` and ``computeIfAbsent`` insert): :class:`JavaHashSet` reproduces it.
``tests/peers/test_share_equality.py`` checks the answers against Kafka's own class on random
groups.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from heuristics.kafka_orders import java_spread
from heuristics.server_input import homogeneous, member_order, subscription_order, topic_hashes
from problems import GroupProblem, Result
from problems.share import pairs_array, previous_claims


def _table_size_for(capacity: int) -> int:
    """``HashMap.tableSizeFor``: the power of two at least ``capacity`` (at least 1)."""
    return 1 if capacity <= 1 else 1 << (capacity - 1).bit_length()


class JavaHashSet:
    """The iteration order of a ``java.util.HashSet`` (or a ``HashMap``'s keys).

    A table of buckets (a power of two of them, at first ``requested`` rounded up, or 16 for the
    default constructor) iterated bucket by bucket, each bucket a chain; an entry's bucket is its
    spread hash (``h ^ h >>> 16``) modulo the table size.  :meth:`add` (``put``) appends to the
    chain and doubles the table once the size passes 3/4 of it; :meth:`compute_if_absent`
    (``HashMap.computeIfAbsent``) puts the entry at the head of its chain and doubles the table
    before inserting when the size already passed 3/4.  A resize splits each chain in two,
    keeping its order.  A chain reaching 9 (``put``) or 8 (``computeIfAbsent``) entries in a
    table under 64 buckets doubles the table (``treeifyBin``); in a larger table it becomes a
    tree, whose order this does not reproduce (it needs many colliding keys).
    """

    def __init__(self, requested: int | None = None) -> None:
        self.initial = 16 if requested is None else _table_size_for(requested)
        self.table: list[list[Any]] = []
        self.spread: dict[Any, int] = {}

    def __len__(self) -> int:
        return len(self.spread)

    def __contains__(self, key: object) -> bool:
        return key in self.spread

    def _resize(self) -> None:
        if not self.table:
            self.table = [[] for _ in range(self.initial)]
            return
        size = 2 * len(self.table)
        table: list[list[Any]] = [[] for _ in range(size)]
        for chain in self.table:
            for key in chain:
                table[self.spread[key] & (size - 1)].append(key)
        self.table = table

    def _chain(self, key: Any, hash_code: int) -> list[Any]:
        self.spread[key] = java_spread(hash_code)
        return self.table[self.spread[key] & (len(self.table) - 1)]

    def add(self, key: Any, hash_code: int) -> bool:
        """``add`` / ``put``: False when ``key`` is already in."""
        if key in self.spread:
            return False
        if not self.table:
            self._resize()
        chain = self._chain(key, hash_code)
        chain.append(key)
        if len(chain) >= 9 and len(self.table) < 64:
            self._resize()
        if len(self.spread) > len(self.table) * 3 // 4:
            self._resize()
        return True

    def compute_if_absent(self, key: Any, hash_code: int) -> bool:
        """``HashMap.computeIfAbsent``: False when ``key`` is already in."""
        if key in self.spread:
            return False
        if not self.table or len(self.spread) > len(self.table) * 3 // 4:
            self._resize()
        chain = self._chain(key, hash_code)
        chain.insert(0, key)
        if len(chain) >= 8 and len(self.table) < 64:
            self._resize()
        return True

    def remove(self, key: Any) -> bool:
        """``remove``: False when ``key`` is not in (the table never shrinks)."""
        spread = self.spread.pop(key, None)
        if spread is None:
            return False
        self.table[spread & (len(self.table) - 1)].remove(key)
        return True

    def order(self) -> list[Any]:
        """The keys in iteration order."""
        return [key for chain in self.table for key in chain]


def new_hash_map_capacity(size: int) -> int:
    """Kafka's ``AssignorHelpers.newHashMap(size)`` / ``newHashSet(size)`` capacity request:
    ``(int) ((size + 1) / 0.75f + 1.0f)``."""
    return int(np.float32(size + 1) / np.float32(0.75) + np.float32(1.0))


def from_collection(size: int) -> int:
    """``new HashSet<>(collection)``'s capacity request: ``max((int) (size / .75f) + 1, 16)``."""
    return max(int(np.float32(size) / np.float32(0.75)) + 1, 16)


class _Round:
    """A Java iterator over a set that only shrinks while it runs (through :meth:`remove`)."""

    def __init__(self, members: JavaHashSet) -> None:
        self.members = members
        self.restart()

    def restart(self) -> None:
        self.keys = self.members.order()
        self.position = 0

    def has_next(self) -> bool:
        return any(k in self.members for k in self.keys[self.position :])

    def next(self) -> Any:
        while self.keys[self.position] not in self.members:
            self.position += 1
        self.position += 1
        return self.keys[self.position - 1]

    def remove(self) -> None:
        self.members.remove(self.keys[self.position - 1])


def _wants(count: int, sharing: int, takers: int) -> Iterator[int]:
    """Each taker's want: ``ceil(x (j + 1)) - ceil(x j)`` with ``x = sharing * count / takers``."""
    x = (sharing * count) / takers
    for j in range(takers):
        yield math.ceil(x * (j + 1)) - math.ceil(x * j)


class _Assignment:
    """The input in Kafka's orders and the pairs as the builders change them."""

    def __init__(self, problem: GroupProblem) -> None:
        self.problem = problem
        self.order = member_order(problem).tolist()  # index -> member position
        uuid = topic_hashes(problem).tolist()
        self.uuid_hash = uuid
        self.topic_of = problem.partition_topic.tolist()
        self.index_of = problem.partition_index.tolist()
        self.start = problem.topic_start.tolist()
        self.subscription = [subscription_order(problem, m) for m in self.order]
        # each member's current assignment: topic -> partitions, as Assignment.fromRecord keeps
        # it (a HashMap of topic id -> new HashSet<>(list)), topics in the document's order
        members, partitions = previous_claims(problem)
        by_member: list[dict[int, list[int]]] = [{} for _ in range(problem.num_members)]
        for m, g in zip(members.tolist(), partitions.tolist()):
            by_member[m].setdefault(self.topic_of[g], []).append(self.index_of[g])
        self.old: list[list[tuple[int, list[int]]]] = []
        for m in self.order:
            topics = JavaHashSet()
            for t in by_member[m]:
                topics.add(t, uuid[t])
            entries = []
            for t in topics.order():
                listed = by_member[m][t]
                parts = JavaHashSet(from_collection(len(listed)))
                for p in listed:
                    parts.add(p, p)
                entries.append((t, parts.order()))
            self.old.append(entries)
        # the answer: each member's (topic, partition) pairs, from its current assignment
        self.final: list[set[int]] = [
            {self.start[t] + p for t, parts in entries for p in parts} for entries in self.old
        ]

    def tp_hash(self, g: int) -> int:
        """``TopicIdPartition.hashCode`` (a record: ``31 * topicId.hashCode() + partition``)."""
        return int(31 * self.uuid_hash[self.topic_of[g]] + self.index_of[g]) & 0xFFFFFFFF

    def result(self) -> Result:
        members = [self.order[i] for i, pairs in enumerate(self.final) for _ in pairs]
        partitions = [g for pairs in self.final for g in pairs]
        return Result(self.problem, "share", pairs_array(members, partitions))


def _fill(
    state: _Assignment,
    by_partition: JavaHashSet,
    readers: dict[Any, JavaHashSet],
    held: dict[int, JavaHashSet],
    unfilled: JavaHashSet,
    sharing: int,
    wants: list[int],
    global_id: Any,
    key_hash: Any,
) -> None:
    """The last step of both builders: partitions short of the sharing take unfilled members."""
    round_ = _Round(unfilled)
    dealt = False
    for key in by_partition.order():
        members = readers[key]
        short = sharing - len(members)
        while short > 0:
            if not round_.has_next():
                if not dealt:
                    break
                round_.restart()
                dealt = False
            i = round_.next()
            if i not in members:  # Kafka does not add i to the partition's members here
                state.final[i].add(global_id(key))
                held.setdefault(i, JavaHashSet()).add(key, key_hash(key))
                short -= 1
                dealt = True
                if len(held[i]) >= wants[i]:
                    round_.remove()
        if len(unfilled) == 0:
            break


def _homogeneous(state: _Assignment) -> None:
    problem = state.problem
    count = len(state.order)
    topics = state.subscription[0]
    if not topics:
        state.final = [set() for _ in state.order]  # an empty GroupAssignment
        return
    subscribed = set(topics)
    targets = [state.start[t] + p for t in topics for p in range(int(problem.partition_counts[t]))]
    sharing = (count + len(targets) - 1) // len(targets) if targets else 0
    wants = list(_wants(len(targets), sharing, count))
    tp_hash = state.tp_hash
    by_partition = JavaHashSet(new_hash_map_capacity(len(targets)))
    readers: dict[int, JavaHashSet] = {}
    held: dict[int, JavaHashSet] = {}
    unfilled = JavaHashSet(new_hash_map_capacity(count))
    overfilled = JavaHashSet(new_hash_map_capacity(count))
    for i, entries in enumerate(state.old):
        kept = 0
        for t, parts in entries:
            if t not in subscribed:
                state.final[i] -= {state.start[t] + p for p in parts}
                continue
            for p in parts:
                g = state.start[t] + p
                kept += 1
                if g not in readers:
                    readers[g] = JavaHashSet()
                    by_partition.compute_if_absent(g, tp_hash(g))
                readers[g].add(i, i)
                held.setdefault(i, JavaHashSet()).add(g, tp_hash(g))
        if kept < wants[i]:
            unfilled.add(i, i)
        elif kept > wants[i]:
            overfilled.add(i, i)
    for i in overfilled.order():
        mine = held[i]
        if len(mine) > wants[i]:
            for g in mine.order():
                readers[g].remove(i)
                state.final[i].discard(g)
                mine.remove(g)
                if len(mine) == wants[i]:
                    break
    for g in by_partition.order():
        members = readers[g]
        left = len(members)
        if left > sharing:
            for i in members.order():
                state.final[i].discard(g)
                left -= 1
                members.remove(i)
                held[i].remove(g)
                unfilled.add(i, i)
                if left <= sharing:
                    break
    for g in targets:
        if g not in readers:
            readers[g] = JavaHashSet()
            by_partition.compute_if_absent(g, tp_hash(g))
    if len(unfilled):
        _fill(state, by_partition, readers, held, unfilled, sharing, wants, int, tp_hash)


def _heterogeneous(state: _Assignment) -> None:
    problem = state.problem
    count = len(state.order)
    all_topics = JavaHashSet()
    for topics in state.subscription:
        for t in topics:
            all_topics.add(t, state.uuid_hash[t])
    subscribers: dict[int, list[int]] = {}
    for i, topics in enumerate(state.subscription):
        for t in topics:
            subscribers.setdefault(t, []).append(i)
    if len(all_topics) == 0:
        state.final = [set() for _ in state.order]  # an empty GroupAssignment
        return
    old_by_topic = [dict(entries) for entries in state.old]
    for t in all_topics.order():
        _topic(state, t, int(problem.partition_counts[t]), subscribers[t], old_by_topic, count)


def _topic(
    state: _Assignment,
    t: int,
    partitions: int,
    subscribers: list[int],
    old_by_topic: list[dict[int, list[int]]],
    count: int,
) -> None:
    """One topic of the heterogeneous builder (``TopicAssignmentPartialBuilder``)."""
    first = state.start[t]
    sharing = (len(subscribers) + partitions - 1) // partitions if partitions else 0
    wants = [0] * count
    for i, want in zip(subscribers, _wants(partitions, sharing, len(subscribers))):
        wants[i] = want
    by_partition = JavaHashSet(new_hash_map_capacity(partitions))
    readers: dict[int, JavaHashSet] = {}
    by_member = JavaHashSet(new_hash_map_capacity(len(subscribers)))
    held: dict[int, JavaHashSet] = {}
    for i, old in enumerate(old_by_topic):
        for p in old.get(t, ()):
            if p not in readers:
                readers[p] = JavaHashSet()
                by_partition.compute_if_absent(p, p)
            readers[p].add(i, i)
            if i not in held:
                held[i] = JavaHashSet()
                by_member.compute_if_absent(i, i)
            held[i].add(p, p)
    for i in by_member.order():
        mine = held[i]
        for p in mine.order():
            if len(mine) <= wants[i]:
                break
            readers[p].remove(i)
            mine.remove(p)
            state.final[i].discard(first + p)
    for p in by_partition.order():
        members = readers[p]
        left = len(members)
        if left > sharing:
            for i in members.order():
                if first + p in state.final[i]:
                    state.final[i].discard(first + p)
                    left -= 1
                    members.remove(i)
                    held[i].remove(p)
                if left <= sharing:
                    break
    for p in range(partitions):
        if p not in readers:
            readers[p] = JavaHashSet(new_hash_map_capacity(len(subscribers)))
            by_partition.compute_if_absent(p, p)
    unfilled = JavaHashSet(new_hash_map_capacity(count))
    for i in subscribers:
        if len(held.get(i, ())) < wants[i]:
            unfilled.add(i, i)
    _fill(state, by_partition, readers, held, unfilled, sharing, wants, lambda p: first + p, int)


def assign(problem: GroupProblem) -> Result:
    """Kafka 4.4's share-group ``SimpleAssignor`` on ``problem``: ``(member, partition)`` pairs."""
    state = _Assignment(problem)
    if problem.num_members == 0:
        return state.result()
    if homogeneous(problem):
        _homogeneous(state)
    else:
        _heterogeneous(state)
    return state.result()
