"""Kafka's ``ConsumerAssignorBenchmark`` groups, built the way the benchmark builds them.

Kafka's JMH benchmark of the KIP-848 server assignors (``jmh-benchmarks``,
``org.apache.kafka.jmh.assignor.ConsumerAssignorBenchmark``) crosses member, topic and partition
counts with a topic-size distribution, a subscription shape, member racks, an assignor and an event.
This module builds the same groups as problem documents:

* topics ``topic-<t>`` with the distribution's partition counts, largest first
  (:func:`partition_counts`: EQUAL, or SKEWED's geometric tiers), topic ids drawn from
  ``java.util.Random(42)`` as the benchmark draws them (:func:`topic_ids`);
* members ``member<i>`` in that order, member ``i`` in bucket ``i mod B`` (``B`` the smallest of 5,
  the member count and the topic count), each bucket a run of consecutive topics
  (:func:`bucket_ranges`: HOMOGENEOUS every topic, DISJOINT its own run, NESTED runs ``0..b``);
* with racks (PROVIDED), member ``i`` on rack ``i mod 3``, one broker per rack and each partition
  ``p``'s two replicas on brokers ``p mod 3`` and ``(p + 1) mod 3``;
* the event: FULL starts from nothing; the other events start from the assignor's own output on the
  group before the event (a tenth of the members, rounded up, fewer for JOIN_MANY and more for
  LEAVE_MANY, the joiners and leavers the highest indices; PARTITIONS_ADDED one partition more on a
  tenth of the topics, rounded up, at regular intervals), as every member's ``owned`` partitions
  with one generation, which the coordinator replays as the members' current assignment.

The assignor's previous output comes from the lab's faithful copies of Kafka's ``UniformAssignor``
and ``RangeAssignor`` (:mod:`heuristics.uniform`, :mod:`heuristics.server_range`), so each group and
its exact reference are per assignor and event, as the benchmark's inputs are.  The construction is
checked against Kafka's own group-coordinator classes in ``tests/peers/test_benchmark_grid.py``.

The harness takes the same groups as problems built from arrays (:func:`benchmark_problem`,
:func:`group_problem`: no document written and parsed, the assignor's previous output passed on as
arrays and kept per process), equal field by field to the loaded documents
(``tests/experiments/test_kafka_grid.py``).
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import numpy as np

from problems.arrays import frozen
from problems.group import GroupProblem

#: Racks of the brokers (one broker each) and of the members having a rack.
RACK_COUNT = 3
#: Member buckets of the heterogeneous subscriptions, at most.
BUCKET_COUNT = 5
#: JOIN_MANY / LEAVE_MANY change one member in this many (rounded up).
MANY_MEMBERS_DIVISOR = 10
#: PARTITIONS_ADDED adds a partition to one topic in this many (rounded up).
ADDED_PARTITIONS_TOPIC_DIVISOR = 10
#: Seed of the ``java.util.Random`` the topic ids are drawn from.
TOPIC_ID_SEED = 42
#: The benchmark's assignors (``AssignorType``), by the lab's heuristic of each.
ASSIGNORS = {"range": "server-range", "uniform": "uniform"}
#: The benchmark's events by the churn level that names each in an experiment file.
EVENTS = {
    "fresh": "FULL",
    "stable": "STABLE",
    "member-joins": "JOIN_ONE",
    "join-many": "JOIN_MANY",
    "member-leaves": "LEAVE_ONE",
    "leave-many": "LEAVE_MANY",
    "partitions-grow": "PARTITIONS_ADDED",
}
#: The benchmark's ``Distribution`` and ``Subscription`` by the lab's ``topology`` / ``pattern``.
DISTRIBUTIONS = {"equal": "EQUAL", "skewed": "SKEWED"}
SUBSCRIPTIONS = {
    "equal": "HOMOGENEOUS",
    "disjoint": "HETEROGENEOUS_DISJOINT",
    "nested": "HETEROGENEOUS_NESTED",
}
#: Generation of the previous assignment the members hold.
GENERATION = 5

_MASK48 = (1 << 48) - 1
_MULTIPLIER = 0x5DEECE66D


def _java_round(value: float) -> int:
    """``Math.round(double)``: the nearest integer, halves up."""
    return math.floor(value + 0.5)


def partition_counts(distribution: str, topics: int, partitions: int) -> np.ndarray:
    """Partitions of each topic, largest first, at least one each (``GroupBuilder.partitionCounts``).

    ``equal``: ``partitions // topics`` each (at least one), the remainder one at a time from the
    first topic.  ``skewed``: geometric tiers, the first two thirds of the topics (rounded), each
    next tier a third of the previous one's share; the first tier's topics (listed last) get one
    partition each, the other tiers split the rest in proportion to ``size << (tier - 1)``, the
    running total rounded down, each tier's topics equally with the remainder to its first ones;
    with too few partitions to double from tier to tier, the other tiers split them equally.
    """
    counts = np.zeros(topics, dtype=np.int64)
    if distribution == "skewed" and topics > 1:
        tiers: list[int] = []
        fraction, remaining = 2.0 / 3.0, topics
        while remaining > 0:
            size = min(remaining, max(1, _java_round(topics * fraction)))
            tiers.append(size)
            remaining -= size
            fraction /= 3.0
        other_topics = topics - tiers[0]
        other_partitions = max(other_topics, partitions - tiers[0])
        counts[other_topics:] = 1
        weight = sum(size << (tier - 1) for tier, size in enumerate(tiers) if tier >= 1)
        if weight > other_partitions:
            each, extra = divmod(other_partitions, other_topics)
            counts[:other_topics] = each
            counts[:extra] = each + 1
            return counts
        given_weight = given = topic = 0
        for tier in range(len(tiers) - 1, 0, -1):
            size = tiers[tier]
            given_weight += size << (tier - 1)
            share = other_partitions * given_weight // weight - given
            given += share
            each, extra = divmod(share, size)
            counts[topic : topic + size] = each
            counts[topic : topic + extra] = each + 1
            topic += size
        return counts
    if distribution not in ("equal", "skewed"):
        raise ValueError(f"unknown distribution {distribution!r}")
    counts[:] = max(1, partitions // topics)
    remainder = partitions - int(counts.sum())
    if remainder > 0:
        counts += remainder // topics
        counts[: remainder % topics] += 1
    return counts


def with_added_partitions(counts: np.ndarray, added: int) -> np.ndarray:
    """``counts`` with one partition more on ``added`` topics at regular intervals
    (topic ``i * T // added`` for ``i < added``)."""
    out = counts.copy()
    topics = len(counts)
    for i in range(added):
        out[i * topics // added] += 1
    return out


def _java_random_longs(seed: int) -> Iterator[int]:
    """``java.util.Random(seed).nextLong()``, again and again."""
    state = (seed ^ _MULTIPLIER) & _MASK48

    def next_int() -> int:
        nonlocal state
        state = (state * _MULTIPLIER + 0xB) & _MASK48
        value = state >> 16
        return value - (1 << 32) if value >= 1 << 31 else value

    while True:
        high, low = next_int(), next_int()
        yield ((high << 32) + low + (1 << 63)) % (1 << 64) - (1 << 63)


def _uuid_text(most: int, least: int) -> str:
    """Kafka's ``Uuid.toString``: URL-safe base64 of the 16 bytes, without padding."""
    raw = (most % (1 << 64)).to_bytes(8, "big") + (least % (1 << 64)).to_bytes(8, "big")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def topic_ids(count: int) -> list[str]:
    """The benchmark's topic ids: ``Uuid(nextLong(), nextLong())`` of ``java.util.Random(42)``,
    drawn again while reserved (the all-zero id, ``Uuid.ONE_UUID``) or while its text has a ``-``.

    The draws of one seed are one sequence, so the ids of ``count`` topics are the first ``count``
    of a longer group's: drawn once per process, up to the largest count asked for."""
    if len(_TOPIC_IDS) < count:
        longs = _java_random_longs(TOPIC_ID_SEED)
        out: list[str] = []
        while len(out) < count:
            most, least = next(longs), next(longs)
            text = _uuid_text(most, least)
            while (most == 0 and least in (0, 1)) or "-" in text:
                most, least = next(longs), next(longs)
                text = _uuid_text(most, least)
            out.append(text)
        _TOPIC_IDS[:] = out
    return _TOPIC_IDS[:count]


_TOPIC_IDS: list[str] = []


def bucket_count(members: int, topics: int) -> int:
    """Buckets of the heterogeneous subscriptions: the smallest of 5, the members and the topics."""
    return min(BUCKET_COUNT, members, topics)


def bucket_ranges(pattern: str, topics: int, buckets: int) -> list[tuple[int, int]]:
    """Each bucket's topics as a range ``[first, last)``: every topic (``equal``), the bucket's own
    run ``[T b / B, T (b + 1) / B)`` (``disjoint``), or runs ``0..b`` (``nested``)."""
    if pattern == "equal":
        return [(0, topics)] * buckets
    if pattern == "disjoint":
        return [(topics * b // buckets, topics * (b + 1) // buckets) for b in range(buckets)]
    if pattern == "nested":
        return [(0, topics * (b + 1) // buckets) for b in range(buckets)]
    raise ValueError(f"unknown subscription {pattern!r}")


def many(count: int, divisor: int) -> int:
    """``count / divisor`` rounded up."""
    return -(-count // divisor)


def previous_member_count(churn: str, members: int) -> int:
    """Members of the group before the event (the joiners and leavers have the highest indices)."""
    changed = many(members, MANY_MEMBERS_DIVISOR)
    return {
        "member-joins": members - 1,
        "join-many": members - changed,
        "member-leaves": members + 1,
        "leave-many": members + changed,
    }.get(churn, members)


def added_topic_count(churn: str, topics: int) -> int:
    """Topics that gained a partition in the event (PARTITIONS_ADDED: a tenth, rounded up)."""
    return many(topics, ADDED_PARTITIONS_TOPIC_DIVISOR) if churn == "partitions-grow" else 0


def group_document(
    members: int,
    topics: int,
    partitions: int,
    *,
    distribution: str = "equal",
    pattern: str = "equal",
    racks: bool = False,
    buckets: int | None = None,
    added: int = 0,
    current: dict[str, dict[str, list[int]]] | None = None,
) -> dict[str, Any]:
    """One benchmark group as a problem document (``GroupBuilder.build``).

    ``buckets`` defaults to :func:`bucket_count` of this group (the benchmark fixes it from the
    group after the event, so the group before it shares the buckets); ``added`` topics have one
    partition more; ``current`` is the previous assignment the members hold (members without an
    entry hold nothing, entries of members not in the group are ignored).
    """
    names = [f"topic-{t}" for t in range(topics)]
    counts = with_added_partitions(partition_counts(distribution, topics, partitions), added)
    buckets = bucket_count(members, topics) if buckets is None else buckets
    subscribed = [names[a:b] for a, b in bucket_ranges(pattern, topics, buckets)]
    current = current or {}
    document_members = []
    for i in range(members):
        member: dict[str, Any] = {"id": f"member{i}", "topics": subscribed[i % buckets]}
        held = current.get(member["id"])
        if held:
            member["owned"] = held
            member["generation"] = GENERATION
        if racks:
            member["rack"] = f"rack{i % RACK_COUNT}"
        document_members.append(member)
    document: dict[str, Any] = {
        "topics": dict(zip(names, counts.tolist())),
        "members": document_members,
        "topic_ids": dict(zip(names, topic_ids(topics))),
    }
    if racks:
        document["partition_racks"] = {
            name: [
                [f"rack{p % RACK_COUNT}", f"rack{(p + 1) % RACK_COUNT}"] for p in range(int(count))
            ]
            for name, count in zip(names, counts.tolist())
        }
    return document


def previous_assignment(document: dict[str, Any], assignor: str) -> dict[str, dict[str, list[int]]]:
    """The assignor's output on ``document``: ``{member: {topic: [partitions]}}`` (the lab's faithful
    copy of Kafka's ``UniformAssignor`` or ``RangeAssignor``)."""
    import heuristics.server_range
    import heuristics.uniform
    from problems import GroupProblem, load_problem

    assignors = {"uniform": heuristics.uniform.assign, "range": heuristics.server_range.assign}
    if assignor not in assignors:
        raise ValueError(f"unknown benchmark assignor {assignor!r} (range or uniform)")
    problem = load_problem(document)
    assert isinstance(problem, GroupProblem)  # a group document
    answer: dict[str, dict[str, list[int]]] | None = assignors[assignor](problem).assignment
    assert answer is not None  # a heuristic always answers
    return answer


def benchmark_document(
    churn: str,
    members: int,
    topics: int,
    partitions: int,
    *,
    distribution: str = "equal",
    pattern: str = "equal",
    racks: bool = False,
    assignor: str = "uniform",
) -> dict[str, Any]:
    """The group the benchmark hands ``assignor`` after event ``churn`` (a key of :data:`EVENTS`).

    Events other than FULL start from the assignor's own output on the group before the event.
    """
    if churn not in EVENTS:
        raise ValueError(f"{churn!r} is not one of the benchmark's events ({', '.join(EVENTS)})")
    buckets = bucket_count(members, topics)
    current = None
    if churn != "fresh":
        before = group_document(
            previous_member_count(churn, members),
            topics,
            partitions,
            buckets=buckets,
            distribution=distribution,
            pattern=pattern,
            racks=racks,
        )
        current = previous_assignment(before, assignor)
    return group_document(
        members,
        topics,
        partitions,
        buckets=buckets,
        added=added_topic_count(churn, topics),
        current=current,
        distribution=distribution,
        pattern=pattern,
        racks=racks,
    )


# ------------------------------------------------------------------ the groups as arrays
#: Previous assignments kept per process (the group before the event, by its sizes, shape and
#: assignor): STABLE and PARTITIONS_ADDED start from the assignor's output on the FULL group.
PREVIOUS_CACHE = 16


def group_problem(
    members: int,
    topics: int,
    partitions: int,
    *,
    distribution: str = "equal",
    pattern: str = "equal",
    racks: bool = False,
    buckets: int | None = None,
    added: int = 0,
    current: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> GroupProblem:
    """:func:`group_document`'s group as the problem :func:`problems.load_problem` makes of it,
    built from arrays (no document, no parsing).

    ``current``: the previous assignment as ``(member, topic, index)`` arrays ordered by member,
    then topic, then index (the order of the assignor's output document); claims of members not in
    the group are ignored.  ``tests/experiments/test_kafka_grid.py`` checks every field against the
    loaded document.
    """
    names = [f"topic-{t}" for t in range(topics)]
    counts = with_added_partitions(partition_counts(distribution, topics, partitions), added)
    buckets = bucket_count(members, topics) if buckets is None else buckets
    shared: dict[tuple[str, ...], tuple[str, ...]] = {}  # equal subscriptions share one tuple
    subscribed = [
        shared.setdefault(key, key)
        for key in (tuple(names[a:b]) for a, b in bucket_ranges(pattern, topics, buckets))
    ]
    rounds = -(-members // buckets) if buckets else 0
    member_index = np.arange(members)

    if current is None:
        current = (np.zeros(0, dtype=np.int64),) * 3
    claim_member, claim_topic, claim_index = (np.asarray(a, dtype=np.int64) for a in current)
    kept = claim_member < members
    claim_member, claim_topic, claim_index = (
        claim_member[kept],
        claim_topic[kept],
        claim_index[kept],
    )
    entry = np.ones(len(claim_member), dtype=bool)  # a (member, topic) list's first index
    entry[1:] = (claim_member[1:] != claim_member[:-1]) | (claim_topic[1:] != claim_topic[:-1])
    starts = np.flatnonzero(entry)
    entry_topic = claim_topic[starts]
    entry_start = np.zeros(members + 1, dtype=np.int64)
    np.cumsum(np.bincount(claim_member[starts], minlength=members), out=entry_start[1:])
    holds = np.diff(entry_start) > 0

    rack_fields: dict[str, Any] = {"member_rack": np.full(members, -1, dtype=np.int32)}
    member_racks: tuple[str | None, ...] = (None,) * members
    if racks:
        rack_names = tuple(f"rack{r}" for r in range(RACK_COUNT))
        # The loader names racks in order of appearance: the replicas' first, then the members'.
        seen = RACK_COUNT if counts.max() >= 2 or members >= RACK_COUNT else 2
        index = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(
            np.cumsum(counts) - counts, counts
        )
        replica = np.stack([index % RACK_COUNT, (index + 1) % RACK_COUNT], axis=1)
        rack_fields = {
            "rack_names": rack_names[:seen],
            "member_rack": (member_index % RACK_COUNT).astype(np.int32),
            "replica_rack_start": frozen(np.arange(0, 2 * len(index) + 1, 2, dtype=np.int64)),
            "replica_racks": frozen(replica.reshape(-1).astype(np.int32)),
        }
        member_racks = tuple((list(rack_names) * -(-members // RACK_COUNT))[:members])
    rack_fields["member_rack"] = frozen(rack_fields["member_rack"])
    problem = GroupProblem(
        topics=tuple(names),
        partition_counts=frozen(counts),
        members=tuple(f"member{i}" for i in range(members)),
        subscriptions=tuple((subscribed * rounds)[:members]),
        owned_topics=tuple(np.array(names, dtype=object)[entry_topic].tolist()),
        owned_entry_start=frozen(entry_start),
        owned_start=frozen(np.append(starts, len(claim_member)).astype(np.int64)),
        owned_indices=frozen(claim_index),
        generations=frozen(np.where(holds, GENERATION, -1).astype(np.int64)),
        has_generation=tuple(holds.tolist()),
        racks=member_racks,
        instance_ids=(None,) * members,
        topic_ids=tuple(topic_ids(topics)),
        **rack_fields,
    )
    problem.__dict__["owned_entry_topic"] = frozen(entry_topic)  # a cached property, known here
    return problem


def benchmark_problem(
    churn: str,
    members: int,
    topics: int,
    partitions: int,
    *,
    distribution: str = "equal",
    pattern: str = "equal",
    racks: bool = False,
    assignor: str = "uniform",
) -> GroupProblem:
    """:func:`benchmark_document`'s group as the loaded problem, from arrays: the assignor's output
    on the group before the event passed on as arrays (and kept per process, :data:`PREVIOUS_CACHE`
    groups: STABLE and PARTITIONS_ADDED share theirs with FULL's group)."""
    if churn not in EVENTS:
        raise ValueError(f"{churn!r} is not one of the benchmark's events ({', '.join(EVENTS)})")
    buckets = bucket_count(members, topics)
    current = None
    if churn != "fresh":
        current = _previous_claims(
            previous_member_count(churn, members),
            topics,
            partitions,
            distribution,
            pattern,
            racks,
            buckets,
            assignor,
        )
    return group_problem(
        members,
        topics,
        partitions,
        buckets=buckets,
        added=added_topic_count(churn, topics),
        current=current,
        distribution=distribution,
        pattern=pattern,
        racks=racks,
    )


@lru_cache(maxsize=PREVIOUS_CACHE)
def _previous_claims(
    members: int,
    topics: int,
    partitions: int,
    distribution: str,
    pattern: str,
    racks: bool,
    buckets: int,
    assignor: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The assignor's output on the group before the event as ``(member, topic, index)`` arrays,
    by member, then global id (:func:`group_problem`'s ``current``)."""
    import heuristics.server_range
    import heuristics.uniform

    assignors = {"uniform": heuristics.uniform.assign, "range": heuristics.server_range.assign}
    if assignor not in assignors:
        raise ValueError(f"unknown benchmark assignor {assignor!r} (range or uniform)")
    before = group_problem(
        members,
        topics,
        partitions,
        distribution=distribution,
        pattern=pattern,
        racks=racks,
        buckets=buckets,
    )
    owner = np.asarray(assignors[assignor](before).answer, dtype=np.int64)
    assigned = np.flatnonzero(owner >= 0)
    order = assigned[np.argsort(owner[assigned], kind="stable")]  # by member, then global id
    return (
        frozen(owner[order]),
        frozen(before.partition_topic[order].astype(np.int64)),
        frozen(before.partition_index[order]),
    )
