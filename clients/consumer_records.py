"""The group coordinator's records of consumer-protocol groups (KIP-848), read from ``__consumer_offsets``.

A group of the consumer protocol is not written as one snapshot per generation (as a classic
group's ``GroupMetadataValue``) but as a log of deltas, each record keyed by its type (the key's
version field) and the group (and member) it concerns, with Kafka 4.4.0's value version 0:

* type 3 ``ConsumerGroupMetadata``: the group epoch (bumped when members, subscriptions or
  topics change); its tombstone deletes the group;
* type 5 ``ConsumerGroupMemberMetadata``: a member's subscription, rack, instance and client id;
* type 6 ``ConsumerGroupTargetAssignmentMetadata``: the epoch the target assignment was computed
  for; type 7 ``ConsumerGroupTargetAssignmentMember``: one member's target partitions;
* type 8 ``ConsumerGroupCurrentMemberAssignment``: what a member holds now, with its member
  epoch, its reconciliation state and the partitions it still has to revoke;
* type 16 ``ConsumerGroupRegularExpression``: the topics a subscribed regular expression matches
  (a member subscribing by pattern has no topic names of its own);

partitions keyed by topic id; a leaving member's records get tombstones.  :class:`ConsumerGroupLog`
replays them (the partition read from its start, as the coordinator loads it) into the group's
current state and reports each *settled rebalance*: a group epoch whose target assignment every
member has reconciled to (member epoch = assignment epoch = group epoch, member state stable,
nothing pending revocation).  The coordinator writes the records of one heartbeat as one batch
with one timestamp, so the state is judged once per timestamp, never half-way through a batch.
Details: docs/record.md.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from kafka.protocol.api_data import ApiData

from clients.schemas import kafka_message

#: Record types (the key's version) of a consumer-protocol group.
GROUP_EPOCH, MEMBER_METADATA, TARGET_EPOCH, TARGET_MEMBER, CURRENT_MEMBER = 3, 5, 6, 7, 8
REGEX = 16
#: ``MemberState.STABLE``: the member holds its target assignment.
MEMBER_STABLE = 0

TopicPartitions = dict[uuid.UUID, tuple[int, ...]]


ConsumerGroupMetadataValue = kafka_message(ApiData, "ConsumerGroupMetadataValue")

ConsumerGroupMemberMetadataValue = kafka_message(ApiData, "ConsumerGroupMemberMetadataValue")

ConsumerGroupTargetAssignmentMetadataValue = kafka_message(
    ApiData, "ConsumerGroupTargetAssignmentMetadataValue"
)

ConsumerGroupTargetAssignmentMemberValue = kafka_message(
    ApiData, "ConsumerGroupTargetAssignmentMemberValue"
)

ConsumerGroupCurrentMemberAssignmentValue = kafka_message(
    ApiData, "ConsumerGroupCurrentMemberAssignmentValue"
)

ConsumerGroupRegularExpressionValue = kafka_message(ApiData, "ConsumerGroupRegularExpressionValue")

VALUES: dict[int, Any] = {
    GROUP_EPOCH: ConsumerGroupMetadataValue,
    MEMBER_METADATA: ConsumerGroupMemberMetadataValue,
    TARGET_EPOCH: ConsumerGroupTargetAssignmentMetadataValue,
    TARGET_MEMBER: ConsumerGroupTargetAssignmentMemberValue,
    CURRENT_MEMBER: ConsumerGroupCurrentMemberAssignmentValue,
    REGEX: ConsumerGroupRegularExpressionValue,
}
#: The types whose key names a member (or, type 16, a regular expression) after the group.
MEMBER_KEYED = frozenset({MEMBER_METADATA, TARGET_MEMBER, CURRENT_MEMBER, REGEX})


class UnreadableRecord(Exception):
    """A record value of a version this module does not know (a newer Kafka)."""


@dataclass(frozen=True)
class ConsumerRecord:
    """One record of a consumer-protocol group: ``value`` decoded, ``None`` for a tombstone;
    ``member`` the member id of a member's record, the regular expression of a type 16 one."""

    kind: int
    group: str
    member: str | None
    value: Any
    timestamp_ms: int


def _string(data: bytes, at: int) -> tuple[str, int]:
    size = int.from_bytes(data[at : at + 2], "big", signed=True)
    return data[at + 2 : at + 2 + max(size, 0)].decode("utf-8"), at + 2 + max(size, 0)


def decode_record(
    key: bytes | None, value: bytes | None, timestamp_ms: int
) -> ConsumerRecord | None:
    """The record with this key and value, or ``None`` when it is no consumer-group record this
    module reads (offset commits, classic groups, partition metadata, regular expressions)."""
    if not key or len(key) < 4:
        return None
    kind = int.from_bytes(key[:2], "big", signed=True)
    if kind not in VALUES:
        return None
    group, at = _string(key, 2)
    member = _string(key, at)[0] if kind in MEMBER_KEYED else None
    decoded = None
    if value is not None:
        cls = VALUES[kind]
        version = int.from_bytes(value[:2], "big", signed=True)
        if version > cls.max_version:
            raise UnreadableRecord(
                f"{cls.__name__} version {version} of group {group!r} is newer than the "
                f"version {cls.max_version} this recorder reads"
            )
        decoded = cls.decode(value)
    return ConsumerRecord(kind, group, member, decoded, int(timestamp_ms))


def _partitions(entries: Iterable[Any]) -> TopicPartitions:
    return {e.topic_id: tuple(sorted(e.partitions)) for e in entries if e.partitions}


@dataclass
class ConsumerMember:
    """One member as the records describe it."""

    member_id: str
    instance_id: str | None = None
    rack: str | None = None
    client_id: str = ""
    topics: tuple[str, ...] = ()
    regex: str | None = None
    assignor: str | None = None
    epoch: int = -1
    state: int = MEMBER_STABLE
    assigned: TopicPartitions = field(default_factory=dict)
    revoking: TopicPartitions = field(default_factory=dict)
    target: TopicPartitions | None = None
    subscribed: bool = False  # its member metadata record is in force
    current: bool = False  # its current assignment record is in force

    def held(self) -> set[tuple[uuid.UUID, int]]:
        """What the member owns: its assigned partitions and the ones it has yet to revoke."""
        return {
            (t, p) for held in (self.assigned, self.revoking) for t, ps in held.items() for p in ps
        }


@dataclass(frozen=True)
class Settled:
    """A settled rebalance of a consumer-protocol group (or the group as first loaded).

    ``settle_ms`` runs from the batch that bumped the group epoch to the batch that made the
    group settled; ``held`` lists, from that first batch on, each batch's timestamp with what
    the members held after it (the partitions without an owner are integrated over it)."""

    epoch: int
    timestamp_ms: int
    members: tuple[ConsumerMember, ...]
    rounds: int
    settle_ms: int
    held: tuple[tuple[int, frozenset[tuple[uuid.UUID, int]]], ...]

    def unowned_ms(self, partitions: set[tuple[uuid.UUID, int]]) -> int:
        """Partition-milliseconds without an owner among ``partitions`` (the subscribed ones)
        from the epoch bump to the settled group."""
        total = 0
        ends = [t for t, _ in self.held[1:]] + [self.timestamp_ms]
        for (start, held), end in zip(self.held, ends):
            total += len(partitions - held) * max(0, end - start)
        return total


@dataclass
class ConsumerGroupLog:
    """One consumer-protocol group's state, rebuilt record by record (:meth:`apply`) and judged
    at every batch boundary (:meth:`checkpoint`)."""

    group: str
    epoch: int = -1
    assignment_epoch: int = -1
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    regexes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # pattern -> its topics
    deleted: bool = False
    settled_epoch: int = -1  # the last group epoch reported settled
    _started_ms: int | None = None  # the batch that bumped the epoch after the last settled one
    _held: list[tuple[int, frozenset[tuple[uuid.UUID, int]]]] = field(default_factory=list)
    _pending: int | None = None  # the timestamp of the batch being applied
    last_ms: int = 0  # the timestamp of the last batch applied

    def apply(self, record: ConsumerRecord) -> Settled | None:
        """Apply one record; a new timestamp first closes the previous batch (whose settled
        rebalance, if any, is returned)."""
        done = None
        if self._pending is not None and record.timestamp_ms != self._pending:
            done = self.checkpoint()
        self._pending = record.timestamp_ms
        value, kind = record.value, record.kind
        if kind == GROUP_EPOCH:
            if value is None:
                self.deleted = True
                self.members.clear()
                return done
            self.deleted = False
            if value.epoch > self.epoch and self._started_ms is None and self.settled_epoch >= 0:
                self._started_ms = record.timestamp_ms
            self.epoch = value.epoch
            return done
        if kind == TARGET_EPOCH:
            if value is not None:
                self.assignment_epoch = value.assignment_epoch
            return done
        assert record.member is not None
        if kind == REGEX:
            if value is None:
                self.regexes.pop(record.member, None)
            else:
                self.regexes[record.member] = tuple(sorted(value.topics or ()))
            return done
        member = self.members.get(record.member) or ConsumerMember(record.member)
        if kind == MEMBER_METADATA:
            member.subscribed = value is not None
            if value is not None:
                member.instance_id = value.instance_id or None
                member.rack = value.rack_id or None
                member.client_id = value.client_id or ""
                member.topics = tuple(sorted(set(value.subscribed_topic_names or ())))
                member.regex = value.subscribed_topic_regex or None
                member.assignor = value.server_assignor or None
        elif kind == TARGET_MEMBER:
            member.target = None if value is None else _partitions(value.topic_partitions)
        elif kind == CURRENT_MEMBER:
            member.current = value is not None
            if value is None:
                member.assigned, member.revoking = {}, {}
            else:
                member.epoch, member.state = value.member_epoch, value.state
                member.assigned = _partitions(value.assigned_partitions)
                member.revoking = _partitions(value.partitions_pending_revocation)
        if member.subscribed or member.current or member.target is not None:
            self.members[record.member] = member
        else:
            self.members.pop(record.member, None)
        return done

    def live(self) -> list[ConsumerMember]:
        """The group's members (the ones whose subscription is in force)."""
        return [m for m in self.members.values() if m.subscribed]

    def held(self) -> frozenset[tuple[uuid.UUID, int]]:
        return frozenset(p for m in self.members.values() if m.current for p in m.held())

    def is_settled(self) -> bool:
        """Every member has reconciled to the target assignment of the current group epoch."""
        if self.deleted or self.epoch < 0 or self.assignment_epoch != self.epoch:
            return False
        for member in self.members.values():
            if not (member.subscribed and member.current):
                return False
            if member.epoch != self.epoch or member.state != MEMBER_STABLE or member.revoking:
                return False
            if member.assigned != (member.target or {}):
                return False
        return True

    def checkpoint(self) -> Settled | None:
        """Close the batch being applied: the settled rebalance it completed, if any."""
        at, self._pending = self._pending, None
        if at is None:
            return None
        self.last_ms = at
        if self._started_ms is not None:
            self._held.append((at, self.held()))
        if not self.is_settled() or self.epoch <= self.settled_epoch:
            return None
        start = at if self._started_ms is None else self._started_ms
        settled = Settled(
            epoch=self.epoch,
            timestamp_ms=at,
            members=self._members(),
            rounds=max(1, self.epoch - self.settled_epoch) if self.settled_epoch >= 0 else 1,
            settle_ms=at - start,
            held=tuple(self._held) or ((at, self.held()),),
        )
        self.settled_epoch = self.epoch
        self._started_ms, self._held = None, []
        return settled

    def _members(self) -> tuple[ConsumerMember, ...]:
        """The live members, a pattern's topics among each one's subscribed topics."""
        return tuple(
            replace(m, topics=tuple(sorted({*m.topics, *self.regexes.get(m.regex or "", ())})))
            for m in sorted(self.live(), key=lambda m: m.member_id)
        )

    def current(self) -> Settled | None:
        """The group as it stands, when settled (the start of a recording)."""
        if self._pending is not None or not self.is_settled():
            return None
        held = ((self.last_ms, self.held()),)
        return Settled(self.epoch, self.last_ms, self._members(), 1, 0, held)

    def assignor(self) -> str:
        """The server assignor the members name (empty: the broker's default)."""
        named = {m.assignor for m in self.live() if m.assignor}
        return named.pop() if len(named) == 1 else ""
