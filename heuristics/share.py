"""KIP-932's share-group assignor: Kafka 4.4's ``SimpleAssignor`` (``group.share.assignors``' default).

A share group's partition may go to several members; the answer is the ``(member, partition)``
pairs of :mod:`problems.share`.  The homogeneous and heterogeneous builders of Kafka 4.4.0
(``SimpleHomogeneousAssignmentBuilder``, ``SimpleHeterogeneousAssignmentBuilder``) step by step,
every tie in Java's hash-table iteration order (:class:`JavaHashSet`), on the input the group
coordinator hands the assignor (:mod:`heuristics.server_input`) with every member's current claims
as given.  The algorithm, its sources and its quirks: docs/strategies/share.md.

:func:`assign` runs the same steps on arrays: every hash table's order computed at once (a table
that never resizes iterates its keys by bucket; many small tables at once by
:func:`heuristics.java.grouped_hash_order`), the members' drops as ranks in those orders,
and the last step's round robin dealt as streams known in advance up to the first member that
already holds its partition or meets it twice (:class:`_Dealer`).  The step-by-step builders stay
as written (``_assign(problem, vectorized=False)``): they take the homogeneous groups whose
partition map has fewer than 64 buckets, and the tests hold the vectorized paths to them.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from heuristics.java import JavaHashSet, from_collection_request, grouped_hash_order, table_size_for
from heuristics.server_input import (
    claims_in_map_order,
    homogeneous,
    member_order,
    subscription_order,
    topic_hashes,
)
from problems import GroupProblem, Result
from problems.share import IntArray, pairs_array, previous_claims


def new_hash_map_capacity(size: int) -> int:
    """Kafka's ``AssignorHelpers.newHashMap(size)`` / ``newHashSet(size)`` capacity request:
    ``(int) ((size + 1) / 0.75f + 1.0f)``."""
    return int(np.float32(size + 1) / np.float32(0.75) + np.float32(1.0))


class _Round:
    """A Java iterator over a set that only shrinks while it runs (through :meth:`remove`)."""

    def __init__(self, members: JavaHashSet) -> None:
        self.members = members
        self.restart()

    def restart(self) -> None:
        self.keys = self.members.order()
        self.position = 0
        self.last: Any = None

    def has_next(self) -> bool:
        # only remove() takes keys out while the round runs: skipping them ahead is safe
        keys, members = self.keys, self.members
        while self.position < len(keys) and keys[self.position] not in members:
            self.position += 1
        return self.position < len(keys)

    def next(self) -> Any:
        self.has_next()
        self.last = self.keys[self.position]
        self.position += 1
        return self.last

    def remove(self) -> None:
        self.members.remove(self.last)


def _wants(count: int, sharing: int, takers: int) -> list[int]:
    """Each taker's want: ``ceil(x (j + 1)) - ceil(x j)`` with ``x = sharing * count / takers``
    (Java's double arithmetic, as numpy's ``float64``)."""
    x = (sharing * count) / takers
    wants: list[int] = (
        np.diff(np.ceil(x * np.arange(takers + 1, dtype=np.float64))).astype(np.int64).tolist()
    )
    return wants


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
        #: whether any member holds a partition
        self.claimed = len(previous_claims(problem)[0]) > 0
        #: the answer when a vectorized path made it (else ``final``)
        self.fresh: IntArray | None = None

    @cached_property
    def old(self) -> list[list[tuple[int, list[int]]]]:
        """Each member's current assignment, by index: ``(topic, partitions)`` entries as
        ``Assignment.fromRecord`` keeps it (a ``HashMap`` of topic id -> ``new HashSet<>(list)``,
        topics put in the document's order), in the iteration orders of those tables."""
        if not self.claimed:  # nobody holds anything
            return [[]] * len(self.order)  # read only
        members, partitions = previous_claims(self.problem)
        by_member: list[dict[int, list[int]]] = [{} for _ in range(self.problem.num_members)]
        for m, g in zip(members.tolist(), partitions.tolist()):
            by_member[m].setdefault(self.topic_of[g], []).append(self.index_of[g])
        old: list[list[tuple[int, list[int]]]] = []
        for m in self.order:
            if not by_member[m]:
                old.append([])
                continue
            topics = JavaHashSet()
            for t in by_member[m]:
                topics.add(t, self.uuid_hash[t])
            entries = []
            for t in topics.order():
                listed = by_member[m][t]
                parts = JavaHashSet(from_collection_request(len(listed)))
                for p in listed:
                    parts.add(p, p)
                entries.append((t, parts.order()))
            old.append(entries)
        return old

    @cached_property
    def final(self) -> list[set[int]]:
        """The answer as the step-by-step builders change it: each member's partitions, at first
        its current assignment (empty when nobody holds anything: :meth:`start_final`)."""
        if not self.claimed:
            return []
        return [{self.start[t] + p for t, parts in entries for p in parts} for entries in self.old]

    @cached_property
    def subscription(self) -> list[list[int]]:
        """Each member's subscribed topics in its ``TopicIds`` order, by index."""
        # members sharing a subscription list (often one stored object) share its order
        by_object: dict[int, list[int]] = {}
        orders: dict[tuple[str, ...], list[int]] = {}
        out = []
        subscriptions = self.problem.subscriptions
        for m in self.order:
            order = by_object.get(id(subscriptions[m]))
            if order is None:
                names = tuple(subscriptions[m])
                if names not in orders:
                    orders[names] = subscription_order(self.problem, m)
                order = by_object[id(subscriptions[m])] = orders[names]
            out.append(order)
        return out

    def start_final(self) -> None:
        """``final`` as the current assignment (empty sets when nobody holds anything)."""
        if len(self.final) != len(self.order):
            self.final = [set() for _ in self.order]

    def tp_hash(self, g: int) -> int:
        """``TopicIdPartition.hashCode`` (a record: ``31 * topicId.hashCode() + partition``)."""
        return int(31 * self.uuid_hash[self.topic_of[g]] + self.index_of[g]) & 0xFFFFFFFF

    def result(self) -> Result:
        if self.fresh is not None:
            return Result(self.problem, "share", self.fresh, objective_name="share")
        members = [self.order[i] for i, pairs in enumerate(self.final) for _ in pairs]
        partitions = [g for pairs in self.final for g in pairs]
        return Result(
            self.problem, "share", pairs_array(members, partitions), objective_name="share"
        )


def _fill(
    state: _Assignment,
    by_partition: JavaHashSet,
    readers: dict[Any, JavaHashSet],
    held: dict[int, JavaHashSet],
    unfilled: JavaHashSet,
    sharing: int,
    wants: list[int],
    global_id: Any,
) -> None:
    """The last step of both builders: partitions short of the sharing take unfilled members."""
    round_ = _Round(unfilled)
    dealt = False
    got: dict[int, set[Any]] = {}  # what each dealt member holds (only its size matters now)
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
                mine = got.get(i)
                if mine is None:
                    mine = got[i] = set(held[i].spread) if i in held else set()
                mine.add(key)
                short -= 1
                dealt = True
                if len(mine) >= wants[i]:
                    round_.remove()
        if len(unfilled) == 0:
            break


def _hash_order(hashes: np.ndarray, capacity: int, at_head: bool) -> np.ndarray | None:
    """The iteration order of a :class:`JavaHashSet` of ``capacity`` filled with distinct keys of
    ``hashes`` in array order (``compute_if_absent`` when ``at_head``, else ``add``), as positions;
    ``None`` where the set would resize or treeify (then only :class:`JavaHashSet` knows)."""
    size = table_size_for(capacity)
    if size < 64 or len(hashes) > size * 3 // 4:
        return None
    h = hashes.astype(np.int64) & 0xFFFFFFFF
    bucket = (h ^ (h >> 16)) & (size - 1)
    position = np.arange(len(hashes), dtype=np.int64)
    return np.lexsort((-position if at_head else position, bucket))


def _fresh_homogeneous(
    state: _Assignment, targets: np.ndarray, sharing: int, wants: np.ndarray
) -> bool:
    """The homogeneous builder when nobody holds anything, vectorized: the partitions in their
    map's order take the members' round robin ``sharing`` at a time.  False (nothing changed)
    where the orders need :class:`JavaHashSet` or a partition would meet one member twice."""
    count = len(state.order)
    uuid = np.asarray(state.uuid_hash, dtype=np.int64)
    topic_of = state.problem.partition_topic[targets].astype(np.int64)
    index_of = state.problem.partition_index[targets].astype(np.int64)
    tp_hashes = (31 * uuid[topic_of] + index_of) & 0xFFFFFFFF
    partition_order = _hash_order(tp_hashes, new_hash_map_capacity(len(targets)), at_head=True)
    member_order = _hash_order(
        np.arange(count, dtype=np.int64), new_hash_map_capacity(count), at_head=False
    )
    if partition_order is None or member_order is None:
        return False
    # the round robin: round r deals the members (in the set's order) that want more than r
    in_order = wants[member_order]
    rounds = int(in_order.max()) if count else 0
    stream = np.concatenate([member_order[in_order > r] for r in range(rounds)])
    stream = stream[: sharing * len(targets)]
    taken = len(stream)
    window = np.arange(taken, dtype=np.int64) // sharing  # the partition each deal goes to
    if sharing > 1 and taken:
        dealt = np.sort(window * count + stream)
        if np.any(dealt[1:] == dealt[:-1]):  # one member twice on a partition: the slow path
            return False
    partitions = targets[partition_order][window]
    width = state.problem.num_partitions
    keys = np.sort(np.asarray(state.order, dtype=np.int64)[stream] * width + partitions)
    state.fresh = np.stack([keys // width, keys % width], axis=1)  # distinct: sorted pairs
    return True


def _rank_in_groups(group: np.ndarray) -> np.ndarray:
    """Each element's position within its run of equal ``group`` values (runs contiguous)."""
    n = len(group)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    first = np.concatenate(([True], group[1:] != group[:-1]))
    starts = np.flatnonzero(first)
    return np.arange(n, dtype=np.int64) - np.repeat(starts, np.diff(np.append(starts, n)))


class _Dealer:
    """The last step of the builders (:func:`_fill`) on arrays: the partitions short of the sharing
    (``keys`` in their map's order, ``need`` members each) take the unfilled members round robin.

    The round is ``ring`` (the unfilled members in their set's order), each with ``room`` partitions
    to go.  Where no dealt member holds the partition already (``held``: codes ``member * width +
    partition``) and none meets a partition twice, the deals are a stream known in advance: the
    rest of the current pass, then pass after pass of the members with room left, against the
    keys each repeated by its need; :meth:`run` deals such streams a window at a time and takes the
    element where the stream breaks (and a few after it) one by one, as :func:`_fill` does.
    """

    def __init__(
        self,
        ring: np.ndarray,
        room: np.ndarray,
        keys: np.ndarray,
        need: np.ndarray,
        held: np.ndarray,
        width: int,
    ) -> None:
        self.ring = ring
        self.room = room.astype(np.int64)
        self.alive = self.room > 0
        self.left = int(np.count_nonzero(self.alive))
        self.keys = keys
        self.need = need.astype(np.int64)
        self.held = held  # sorted
        self.width = width
        self.kp = 0  # the key being dealt
        self.pos = 0  # the round's next place in ring
        self.dealt = False  # whether the round's current pass dealt anything
        self.stopped = False
        self.mine: set[int] = set()  # members dealt the current key so far
        self.members: list[np.ndarray] = []
        self.partitions: list[np.ndarray] = []

    def done(self) -> bool:
        return self.stopped or self.kp >= len(self.keys) or self.left == 0

    def holds(self, codes: np.ndarray) -> np.ndarray:
        if len(self.held) == 0:
            return np.zeros(len(codes), dtype=bool)
        at = np.minimum(np.searchsorted(self.held, codes), len(self.held) - 1)
        held: np.ndarray = self.held[at] == codes
        return held

    def step(self) -> None:
        """One element of the round, as :func:`_fill` takes it."""
        alive, n = self.alive, len(self.ring)
        pos = self.pos
        while pos < n and not alive[pos]:
            pos += 1
        if pos == n:
            if not self.dealt:  # a whole pass dealt nothing: the round is over
                self.stopped = True
                return
            pos, self.dealt = 0, False
            while pos < n and not alive[pos]:
                pos += 1
        self.pos = pos + 1
        i, key = int(self.ring[pos]), int(self.keys[self.kp])
        if self.holds(np.array([i * self.width + key]))[0]:
            return
        if i not in self.mine:  # a member dealt a partition twice holds it once
            self.mine.add(i)
            self.members.append(np.array([i]))
            self.partitions.append(np.array([key]))
            self.room[pos] -= 1
            if self.room[pos] == 0:
                alive[pos] = False
                self.left -= 1
        self.need[self.kp] -= 1
        self.dealt = True
        if self.need[self.kp] == 0:
            self.kp += 1
            self.mine = set()

    def window(self, size: int) -> int:
        """Deal the stream up to its first break (at most ``size`` elements); how many dealt."""
        alive = self.alive
        rest = np.flatnonzero(alive[self.pos :]) + self.pos
        if len(rest) == 0:
            if not self.dealt:
                self.stopped = True
                return 0
            self.pos, self.dealt = 0, False
            rest = np.flatnonzero(alive)
        after = np.where(alive, self.room, 0)
        after[rest] -= 1
        places = rest
        more = size - len(rest)
        if more > 0 and after.max() > 0:
            # pass j deals the members with at least j left after this pass: enough passes for
            # ``more`` elements, each member capped at that many
            at_least = np.cumsum(np.bincount(after)[::-1])[::-1][1:]
            passes = min(int(np.searchsorted(np.cumsum(at_least), more)) + 1, len(at_least))
            capped = np.minimum(after, passes)
            repeated = np.repeat(np.arange(len(after), dtype=np.int64), capped)
            round_of = _rank_in_groups(repeated)
            later = repeated[np.argsort(round_of * len(after) + repeated, kind="stable")]
            places = np.concatenate((rest, later))
        need = self.need[self.kp :]
        covered = int(np.searchsorted(np.cumsum(need), size)) + 1
        key_seq = np.repeat(self.keys[self.kp :][:covered], need[:covered])
        length = min(size, len(places), len(key_seq))
        places, key_seq = places[:length], key_seq[:length]
        members = self.ring[places]
        codes = members * self.width + key_seq
        broken = self.holds(codes)
        if self.mine:
            current = key_seq == self.keys[self.kp]
            broken |= current & np.isin(members, np.fromiter(self.mine, dtype=np.int64))
        order = np.argsort(codes, kind="stable")
        twice = order[1:][codes[order][1:] == codes[order][:-1]]
        broken[twice] = True
        hits = np.flatnonzero(broken)
        taken = int(hits[0]) if len(hits) else length
        if taken == 0:
            return 0
        places, key_seq, members = places[:taken], key_seq[:taken], members[:taken]
        self.members.append(members)
        self.partitions.append(key_seq)
        np.subtract.at(self.room, places, 1)
        gone = alive & (self.room == 0)
        self.left -= int(np.count_nonzero(gone))
        alive &= ~gone
        self.pos = int(places[-1]) + 1
        self.dealt = True
        # the keys met: those done, and how far into the one the window ends in
        ends = np.cumsum(need[:covered])
        full = int(np.searchsorted(ends, taken, side="right"))
        partial = taken - (int(ends[full - 1]) if full else 0)
        if full:
            self.need[self.kp : self.kp + full] = 0
            self.kp += full
            self.mine = set()
        if partial:
            self.need[self.kp] -= partial
            self.mine.update(members[taken - partial :].tolist())
        return taken

    def run(self, size: int = 1024, steps: int = 64) -> tuple[np.ndarray, np.ndarray]:
        """Deal until the round ends; the dealt ``(member, partition)`` arrays.  Windows of at
        least ``size`` elements (four times the last unbroken run), ``steps`` one by one after
        each break."""
        window = size
        while not self.done():
            taken = self.window(window)
            if self.done():
                break
            window = max(size, 4 * taken)
            for _ in range(steps):  # the break, and a few after it, one by one
                self.step()
                if self.done():
                    break
        if not self.members:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(self.members), np.concatenate(self.partitions)


def _claims_homogeneous(
    state: _Assignment, targets: np.ndarray, sharing: int, wants: np.ndarray
) -> bool:
    """The homogeneous builder when members hold partitions, on arrays: the same steps as
    :func:`_homogeneous` (each one's ties in the orders of its hash tables, computed at once).
    False (nothing changed) where the partition map has fewer than 64 buckets."""
    problem = state.problem
    count = len(state.order)
    width = problem.num_partitions
    uuid = np.asarray(state.uuid_hash, dtype=np.int64)
    topic_of = problem.partition_topic.astype(np.int64)
    index_of = problem.partition_index.astype(np.int64)

    def tp_hashes(g: np.ndarray) -> np.ndarray:
        hashes: np.ndarray = (31 * uuid[topic_of[g]] + index_of[g]) & 0xFFFFFFFF
        return hashes

    # 1. the claims as the members' current assignments list them; those of subscribed topics
    members, partitions = previous_claims(problem)
    rank = np.empty(count, dtype=np.int64)
    rank[np.asarray(state.order, dtype=np.int64)] = np.arange(count, dtype=np.int64)
    listed = claims_in_map_order(problem, members, partitions, rank)
    member, g = rank[members[listed]], partitions[listed]
    subscribed = np.zeros(problem.num_topics, dtype=bool)
    subscribed[topic_of[targets]] = True
    keep = subscribed[topic_of[g]]
    member, g = member[keep], g[keep]
    # the partition map: the held partitions as first met, then the others in target order
    first = np.full(width, len(g), dtype=np.int64)
    np.minimum.at(first, g, np.arange(len(g), dtype=np.int64))
    met = g[first[g] == np.arange(len(g))]
    unmet = np.ones(width, dtype=bool)
    unmet[met] = False
    inserted = np.concatenate((met, targets[unmet[targets]]))
    by_partition = _hash_order(
        tp_hashes(inserted), new_hash_map_capacity(len(targets)), at_head=True
    )
    if by_partition is None:
        return False
    kept = np.bincount(member, minlength=count)
    # 2. an overfilled member drops its first partitions (in its set's order) down to its want
    in_held = np.empty(len(g), dtype=np.int64)
    in_held[grouped_hash_order(member, tp_hashes(g))] = _rank_in_groups(member)
    alive = ~((kept > wants)[member] & (in_held < (kept - wants)[member]))
    # 3. a partition read by more than the sharing drops its first readers (in its set's order)
    readers = grouped_hash_order(g, member)
    readers = readers[alive[readers]]
    among = _rank_in_groups(g[readers])
    left = np.bincount(g[readers], minlength=width)
    dropped = readers[among < (left - sharing)[g[readers]]]
    alive[dropped] = False
    member, g = member[alive], g[alive]
    # 4. the partitions short of the sharing take the unfilled members round robin
    holding = np.bincount(member, minlength=count)
    short = sharing - np.bincount(g, minlength=width)
    keys = inserted[by_partition]
    keys = keys[short[keys] > 0]
    unfilled = np.flatnonzero(holding < wants)
    spread = unfilled ^ (unfilled >> 16)  # a table of over `count` buckets: one member a bucket
    ring = unfilled[np.argsort(spread, kind="stable")]
    dealer = _Dealer(
        ring, (wants - holding)[ring], keys, short[keys], np.sort(member * width + g), width
    )
    dealt_members, dealt_partitions = dealer.run()
    # distinct pairs: a member's claims are, and a deal goes to a member not holding the partition
    order = np.asarray(state.order, dtype=np.int64)
    pairs = np.sort(
        order[np.concatenate((member, dealt_members))] * width
        + np.concatenate((g, dealt_partitions))
    )
    state.fresh = np.stack([pairs // width, pairs % width], axis=1)
    return True


def _homogeneous(state: _Assignment, vectorized: bool = True) -> None:
    problem = state.problem
    count = len(state.order)
    topics = subscription_order(problem, state.order[0])  # every member's
    if not topics:
        state.final = [set() for _ in state.order]  # an empty GroupAssignment
        return
    subscribed = set(topics)
    starts = problem.topic_start[topics].astype(np.int64)
    counts = problem.partition_counts[topics].astype(np.int64)
    # the target partitions: each subscribed topic's in index order, topics in subscription order
    target_ids = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
    total = len(target_ids)
    sharing = (count + total - 1) // total if total else 0
    wants = _wants(total, sharing, count)
    if total and vectorized:
        wanted = np.asarray(wants, dtype=np.int64)
        if not state.claimed and _fresh_homogeneous(state, target_ids, sharing, wanted):
            return
        if state.claimed and _claims_homogeneous(state, target_ids, sharing, wanted):
            return
    targets = target_ids.tolist()
    state.start_final()
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
        _fill(state, by_partition, readers, held, unfilled, sharing, wants, int)


def _vectorized_heterogeneous(state: _Assignment) -> None:
    """The heterogeneous builder on arrays.  Its topics do not meet (each one's wants, sharing,
    held partitions and round are its own), so every topic's steps run at once, grouped by topic,
    and only the round robin runs topic by topic (:class:`_Dealer`).  The tables keyed by
    ``Integer`` partitions and member indexes (the partition map, the unfilled set) are sized for
    all their keys: one key a bucket, in the order of their spread hashes."""
    problem = state.problem
    count = len(state.order)
    width = problem.num_partitions
    topics = problem.num_topics
    # the subscriptions: (member index, topic) pairs, by topic, members ascending
    sub_member = np.repeat(
        np.arange(count, dtype=np.int64), [len(order) for order in state.subscription]
    )
    sub_topic = np.asarray(
        [t for order in state.subscription for t in order], dtype=np.int64
    ).reshape(-1)
    if len(sub_topic) == 0:
        state.fresh = np.zeros((0, 2), dtype=np.int64)  # an empty GroupAssignment
        return
    by_topic = np.argsort(sub_topic * count + sub_member, kind="stable")
    sub_member, sub_topic = sub_member[by_topic], sub_topic[by_topic]
    takers = np.bincount(sub_topic, minlength=topics)
    partitions = problem.partition_counts.astype(np.int64)
    sharing = np.where(partitions > 0, (takers + partitions - 1) // np.maximum(partitions, 1), 0)
    # each subscriber's want: ceil(x (j + 1)) - ceil(x j), j its place among the topic's takers
    x = (sharing * partitions)[sub_topic] / takers[sub_topic]
    j = _rank_in_groups(sub_topic).astype(np.float64)
    sub_want = (np.ceil(x * (j + 1)) - np.ceil(x * j)).astype(np.int64)
    sub_codes = sub_member * topics + sub_topic  # sorted: topic-major is not member-major
    code_order = np.argsort(sub_codes, kind="stable")
    sorted_codes = sub_codes[code_order]

    def want_of(member: np.ndarray, topic: np.ndarray) -> np.ndarray:
        codes = member * topics + topic
        at = np.minimum(np.searchsorted(sorted_codes, codes), len(sorted_codes) - 1)
        return np.where(sorted_codes[at] == codes, sub_want[code_order[at]], 0)

    # the claims in the members' order, each member's topic's partitions in its set's order
    members, claimed = previous_claims(problem)
    rank = np.empty(count, dtype=np.int64)
    rank[np.asarray(state.order, dtype=np.int64)] = np.arange(count, dtype=np.int64)
    listed = claims_in_map_order(problem, members, claimed, rank)
    member, g = rank[members[listed]], claimed[listed]
    topic_of = problem.partition_topic.astype(np.int64)
    index_of = problem.partition_index.astype(np.int64)
    walked = takers[topic_of[g]] > 0  # partitions of a topic nobody subscribes stay put
    stay_member, stay_g = member[~walked], g[~walked]
    member, g = member[walked], g[walked]
    # a topic's claims member by member (its builder walks the members in order)
    claim_topic = topic_of[g]
    order = np.argsort(claim_topic * count + member, kind="stable")
    member, g, claim_topic = member[order], g[order], claim_topic[order]
    # 2. a member over its want of a topic drops its first partitions of it (in its set's order)
    group = claim_topic * count + member
    kept_codes, kept = np.unique(group, return_counts=True)
    kept_of = kept[np.searchsorted(kept_codes, group)]
    over = kept_of - want_of(member, claim_topic)
    in_held = np.empty(len(g), dtype=np.int64)
    in_held[grouped_hash_order(group, index_of[g])] = _rank_in_groups(group)
    alive = in_held >= over
    # 3. a partition read by more than its topic's sharing drops its first readers
    readers = grouped_hash_order(g, member)
    readers = readers[alive[readers]]
    among = _rank_in_groups(g[readers])
    left = np.bincount(g[readers], minlength=width)
    limit = sharing[topic_of]
    dropped = readers[among < (left - limit)[g[readers]]]
    alive[dropped] = False
    member, g = member[alive], g[alive]
    # 4. topic by topic, the partitions short of the sharing take the unfilled subscribers
    held = np.sort(member * width + g)
    holding_codes, holding = np.unique(topic_of[g] * count + member, return_counts=True)
    at = np.minimum(
        np.searchsorted(holding_codes, sub_topic * count + sub_member), len(holding) - 1
    )
    sub_holding = (
        np.where(holding_codes[at] == sub_topic * count + sub_member, holding[at], 0)
        if len(holding)
        else np.zeros(len(sub_topic), dtype=np.int64)
    )
    short = limit - np.bincount(g, minlength=width)
    spread_of = index_of ^ (index_of >> 16)
    bounds = np.concatenate(([0], np.cumsum(takers)))
    dealt_members: list[np.ndarray] = []
    dealt_partitions: list[np.ndarray] = []
    start = problem.topic_start.astype(np.int64)
    for t in np.flatnonzero(takers).tolist():
        first, size = int(start[t]), int(partitions[t])
        ids = first + np.arange(size, dtype=np.int64)
        keys = ids[np.argsort(spread_of[ids], kind="stable")]
        keys = keys[short[keys] > 0]
        if len(keys) == 0:
            continue
        chunk = slice(int(bounds[t]), int(bounds[t + 1]))
        room = sub_want[chunk] - sub_holding[chunk]
        unfilled = sub_member[chunk][room > 0]
        room = room[room > 0]
        ring = np.argsort(unfilled ^ (unfilled >> 16), kind="stable")
        dealer = _Dealer(unfilled[ring], room[ring], keys, short[keys], held, width)
        got_members, got_partitions = dealer.run()
        dealt_members.append(got_members)
        dealt_partitions.append(got_partitions)
    ranked = np.asarray(state.order, dtype=np.int64)
    everyone = np.concatenate((stay_member, member, *dealt_members))
    pairs = np.sort(ranked[everyone] * width + np.concatenate((stay_g, g, *dealt_partitions)))
    state.fresh = np.stack([pairs // width, pairs % width], axis=1)


def _heterogeneous(state: _Assignment, vectorized: bool = True) -> None:
    if vectorized:
        _vectorized_heterogeneous(state)
        return
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
    state.start_final()
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
    _fill(state, by_partition, readers, held, unfilled, sharing, wants, lambda p: first + p)


def assign(problem: GroupProblem) -> Result:
    """Kafka 4.4's share-group ``SimpleAssignor`` on ``problem``: ``(member, partition)`` pairs."""
    return _assign(problem)


def _assign(problem: GroupProblem, vectorized: bool = True) -> Result:
    """:func:`assign`; with ``vectorized`` False, step by step throughout (the builders as
    written, the reference the vectorized paths are tested against)."""
    state = _Assignment(problem)
    if problem.num_members == 0:
        return state.result()
    if homogeneous(problem):
        _homogeneous(state, vectorized)
    else:
        _heterogeneous(state, vectorized)
    return state.result()
