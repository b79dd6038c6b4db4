"""The group coordinator's own records, read from ``__consumer_offsets``.

The classic groups' records are decoded here, the consumer-protocol groups' in
:mod:`clients.consumer_records`.

Every generation a classic group completes is written by its coordinator to the group's
partition of ``__consumer_offsets`` (the partition of the group id's Java hash): a record whose
key is ``GroupMetadataKey`` (record type 2: the group id) and whose value is
``GroupMetadataValue`` (versions 0-3 fixed-width, 4 flexible: protocol type, generation, protocol
(the assignor), leader, the time of the state change, and every member with its subscription and
assignment as the consumer sends them).  A deleted group's key gets a tombstone.  Reading these
records misses no rebalance that polling the admin API might fall between, and their timestamps
date each generation to the millisecond.

:class:`RecordReader` follows the partitions of the watched groups (a KafkaConsumer without a
group, assigned the partitions), each read from its start: the classic records written before
are skipped (a snapshot per generation, the group is seen live), the consumer-protocol ones
rebuild the group's state.  It needs Describe and Read on the topic ``__consumer_offsets``.
Details: docs/record.md.
"""

from __future__ import annotations

import datetime
import struct
import time
from dataclasses import dataclass
from typing import Any

from clients.cluster import _get, _partition_lists
from clients.consumer_records import ConsumerRecord, decode_record
from clients.recorder import Member, Observation

OFFSETS_TOPIC = "__consumer_offsets"
#: The record type (the key's version field) of a classic group's metadata.
GROUP_METADATA = 2


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units), as a signed 32-bit integer."""
    value = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        value = (31 * value + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def offsets_partition(group: str, partitions: int) -> int:
    """The partition of ``__consumer_offsets`` that holds ``group`` (Kafka's ``Utils.abs`` of the
    hash, modulo the partition count)."""
    value = java_string_hash(group)
    return (0 if value == -(1 << 31) else abs(value)) % partitions


class _Reader:
    """Kafka's primitive types from a byte string, fixed-width or compact (flexible versions)."""

    def __init__(self, data: bytes, flexible: bool = False):
        self.data, self.at, self.flexible = data, 0, flexible

    def take(self, fmt: str) -> Any:
        size = struct.calcsize(fmt)
        (value,) = struct.unpack_from(fmt, self.data, self.at)
        self.at += size
        return value

    def varint(self) -> int:
        shift = result = 0
        while True:
            byte = self.data[self.at]
            self.at += 1
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result
            shift += 7

    def length(self, fmt: str) -> int:
        return self.varint() - 1 if self.flexible else int(self.take(fmt))

    def string(self) -> str | None:
        size = self.length(">h")
        if size < 0:
            return None
        text = self.data[self.at : self.at + size].decode("utf-8")
        self.at += size
        return text

    def bytes(self) -> bytes:
        size = self.length(">i")
        if size < 0:
            return b""
        value = self.data[self.at : self.at + size]
        self.at += size
        return value

    def count(self) -> int:
        return self.length(">i")

    def tags(self) -> None:
        if self.flexible:
            for _ in range(self.varint()):
                self.varint()
                self.at += self.varint()


@dataclass(frozen=True)
class GroupRecord:
    """One ``GroupMetadataValue``: a classic group after a generation (or empty).

    ``timestamp_ms`` is the record's (when the coordinator wrote it), ``state_ms`` the group's
    ``currentStateTimestamp`` (-1 before version 2)."""

    group: str
    generation: int
    protocol_type: str
    protocol: str
    timestamp_ms: int
    state_ms: int
    members: tuple[Member, ...]


def group_key(key: bytes | None) -> str | None:
    """The group id of a ``GroupMetadataKey`` (``None`` for every other record type)."""
    if not key or len(key) < 2:
        return None
    reader = _Reader(key)
    if reader.take(">h") != GROUP_METADATA:
        return None
    return reader.string()


def decode_group_value(group: str, value: bytes, timestamp_ms: int) -> GroupRecord:
    """A ``GroupMetadataValue`` (versions 0-4)."""
    from kafka.protocol.consumer.metadata import (
        ConsumerProtocolAssignment,
        ConsumerProtocolSubscription,
    )

    head = _Reader(value)
    version = head.take(">h")
    reader = _Reader(value, flexible=version >= 4)
    reader.at = head.at
    protocol_type = reader.string() or ""
    generation = reader.take(">i")
    protocol = reader.string() or ""
    reader.string()  # the leader
    state_ms = reader.take(">q") if version >= 2 else -1
    members = []
    for _ in range(reader.count()):
        member_id = reader.string() or ""
        instance_id = reader.string() if version >= 3 else None
        reader.string()  # client id
        reader.string()  # client host
        if version >= 1:
            reader.take(">i")  # rebalance timeout
        reader.take(">i")  # session timeout
        subscription, assignment = reader.bytes(), reader.bytes()
        reader.tags()
        topics: tuple[str, ...] = ()
        rack = None
        if subscription and protocol_type == "consumer":
            decoded = ConsumerProtocolSubscription.decode(subscription)
            topics = tuple(sorted(set(_get(decoded, "topics", []))))
            rack = _get(decoded, "rack_id") or None
        held: dict[str, list[int]] = {}
        if assignment and protocol_type == "consumer":
            held = _partition_lists(
                _get(ConsumerProtocolAssignment.decode(assignment), "assigned_partitions", [])
            )
        members.append(Member(member_id, instance_id or None, topics, held, rack))
    reader.tags()
    return GroupRecord(
        group,
        int(generation),
        protocol_type,
        protocol,
        int(timestamp_ms),
        int(state_ms),
        tuple(members),
    )


def observation(record: GroupRecord, counts: dict[str, int]) -> Observation:
    """``record`` as an observation of a settled generation, dated by its timestamp on this
    process's monotonic clock."""
    wall = datetime.datetime.fromtimestamp(record.timestamp_ms / 1000, datetime.UTC)
    when = time.monotonic() - (time.time() - record.timestamp_ms / 1000)
    return Observation(
        when=when,
        wall=wall,
        state="Stable" if record.members else "Empty",
        protocol="classic",
        assignor=record.protocol,
        members=record.members,
        counts=counts,
        generation=record.generation,
    )


@dataclass(frozen=True)
class Read:
    """One record read: its group, the classic group's snapshot (``None``: the group's
    tombstone) or a consumer-protocol group's record, and whether it was written before the
    group was followed (``history``: the consumer-protocol state it rebuilds, no step)."""

    group: str
    record: GroupRecord | ConsumerRecord | None
    history: bool = False


class RecordReader:
    """Follows the ``__consumer_offsets`` partitions of some groups, each read from its start
    (the history that rebuilds a consumer-protocol group's state) and then live."""

    def __init__(self, servers: str, settings: dict[str, Any], timeout: float):
        from kafka import KafkaConsumer

        self.consumer = KafkaConsumer(
            bootstrap_servers=servers,
            group_id=None,
            enable_auto_commit=False,
            exclude_internal_topics=False,
            request_timeout_ms=int(timeout * 1000) + 5000,
            max_poll_records=100_000,  # a batch of the coordinator's is never split in two reads
            client_id="rebalance-lab-record",
            **settings,
        )
        partitions = self.consumer.partitions_for_topic(OFFSETS_TOPIC)
        if not partitions:
            self.consumer.close()
            raise PermissionError(f"{OFFSETS_TOPIC} is not visible to the principal")
        self.count = len(partitions)
        self.assigned: set[int] = set()
        self.live_from: dict[int, int] = {}  # partition -> its end offset when first followed

    def follow(self, group: str) -> None:
        """Read ``group``'s partition: its history from the start, then what comes."""
        from kafka import TopicPartition

        partition = offsets_partition(group, self.count)
        if partition in self.assigned:
            return
        tp = TopicPartition(OFFSETS_TOPIC, partition)
        self.live_from[partition] = self.consumer.end_offsets([tp])[tp]
        self.assigned.add(partition)
        self.consumer.assign([TopicPartition(OFFSETS_TOPIC, p) for p in sorted(self.assigned)])
        self.consumer.seek_to_beginning(tp)

    def loaded(self, group: str) -> bool:
        """Whether ``group``'s partition has been read up to where it stood when followed."""
        from kafka import TopicPartition

        partition = offsets_partition(group, self.count)
        if partition not in self.assigned:
            return False
        tp = TopicPartition(OFFSETS_TOPIC, partition)
        return bool(self.consumer.position(tp) >= self.live_from[partition])

    def read(self, wait: float = 0.0) -> list[Read]:
        """The group records read since the last read, in order (waiting up to ``wait`` seconds
        for some)."""
        out: list[Read] = []
        if not self.assigned:
            return out
        batches = self.consumer.poll(timeout_ms=int(wait * 1000))
        for tp, records in batches.items():
            live_from = self.live_from.get(tp.partition, 0)
            for record in records:
                history = record.offset < live_from
                consumer = decode_record(record.key, record.value, record.timestamp)
                if consumer is not None:
                    out.append(Read(consumer.group, consumer, history))
                    continue
                group = group_key(record.key)
                if group is None or history:
                    continue
                if record.value is None:
                    out.append(Read(group, None))
                else:
                    value = decode_group_value(group, record.value, record.timestamp)
                    out.append(Read(group, value))
        return out

    def close(self) -> None:
        self.consumer.close()
