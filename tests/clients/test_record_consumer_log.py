"""Consumer-protocol records without a cluster: decoding (clients/consumer_records.py) checked
against Kafka 4.4.0's own serialisation, and the settled rebalances :class:`ConsumerGroupLog`
finds in a replayed log (the one a coordinator wrote for a group of two members joining and
leaving, batch by batch)."""

from __future__ import annotations

import datetime
import uuid

import pytest

from clients.consumer_records import (
    CURRENT_MEMBER,
    GROUP_EPOCH,
    MEMBER_METADATA,
    REGEX,
    TARGET_EPOCH,
    TARGET_MEMBER,
    VALUES,
    ConsumerGroupLog,
    UnreadableRecord,
    decode_record,
)
from clients.recorder import GroupRecorder, Member, Observation
from problems.trace import load_trace

A, B = uuid.UUID(int=0xA0), uuid.UUID(int=0xB0)
GENERATED = "org.apache.kafka.coordinator.group.generated."


def _java_uuid(value: uuid.UUID):
    import jpype

    high, low = divmod(value.int, 1 << 64)
    signed = [v - (1 << 64) if v >= 1 << 63 else v for v in (high, low)]
    return jpype.JClass("org.apache.kafka.common.Uuid")(*signed)


def _java_partitions(cls, held: dict[uuid.UUID, list[int]]):
    import jpype

    out = jpype.JClass("java.util.ArrayList")()
    for topic, partitions in held.items():
        entry = cls().setTopicId(_java_uuid(topic))
        entry.setPartitions(
            jpype.JClass("java.util.ArrayList")([jpype.JInt(p) for p in partitions])
        )
        out.add(entry)
    return out


def test_values_and_keys_decode_as_kafka_serialises_them():
    import jpype

    from peers import kafka_java

    kafka_java.start()
    util = jpype.JClass("org.apache.kafka.common.protocol.MessageUtil")

    def key(name: str, group: str, member: str | None = None) -> bytes:
        message = jpype.JClass(GENERATED + name)().setGroupId(group)
        if member is not None:
            message.setMemberId(member)
        return bytes(util.toCoordinatorTypePrefixedBytes(message))

    def value(message) -> bytes:
        return bytes(util.toVersionPrefixedBytes(jpype.JShort(0), message))

    names = jpype.JClass("java.util.ArrayList")(["orders", "payments"])
    member = (
        jpype.JClass(GENERATED + "ConsumerGroupMemberMetadataValue")()
        .setInstanceId("i-1")
        .setRackId("r2")
        .setClientId("c1")
        .setClientHost("/10.0.0.1")
        .setSubscribedTopicNames(names)
        .setRebalanceTimeoutMs(300000)
        .setServerAssignor("range")
    )
    record = decode_record(key("ConsumerGroupMemberMetadataKey", "g", "m1"), value(member), 7)
    assert record is not None and (record.kind, record.group, record.member) == (
        MEMBER_METADATA,
        "g",
        "m1",
    )
    got = record.value
    assert (got.instance_id, got.rack_id, got.client_id, got.server_assignor) == (
        "i-1",
        "r2",
        "c1",
        "range",
    )
    assert got.subscribed_topic_names == ["orders", "payments"] and record.timestamp_ms == 7

    cls = jpype.JClass(GENERATED + "ConsumerGroupCurrentMemberAssignmentValue")
    parts = jpype.JClass(GENERATED + "ConsumerGroupCurrentMemberAssignmentValue$TopicPartitions")
    current = (
        cls()
        .setMemberEpoch(5)
        .setPreviousMemberEpoch(4)
        .setState(jpype.JByte(1))
        .setAssignedPartitions(_java_partitions(parts, {A: [0, 2], B: [1]}))
        .setPartitionsPendingRevocation(_java_partitions(parts, {A: [3]}))
    )
    record = decode_record(
        key("ConsumerGroupCurrentMemberAssignmentKey", "g", "m1"), value(current), 0
    )
    assert record is not None and record.kind == CURRENT_MEMBER
    got = record.value
    assert (got.member_epoch, got.previous_member_epoch, got.state) == (5, 4, 1)
    assert [(t.topic_id, t.partitions) for t in got.assigned_partitions] == [(A, [0, 2]), (B, [1])]
    assert [(t.topic_id, t.partitions) for t in got.partitions_pending_revocation] == [(A, [3])]

    target_parts = jpype.JClass(
        GENERATED + "ConsumerGroupTargetAssignmentMemberValue$TopicPartition"
    )
    target = jpype.JClass(GENERATED + "ConsumerGroupTargetAssignmentMemberValue")()
    target.setTopicPartitions(_java_partitions(target_parts, {B: [0, 1, 2]}))
    record = decode_record(
        key("ConsumerGroupTargetAssignmentMemberKey", "g", "m1"), value(target), 0
    )
    assert record is not None and record.kind == TARGET_MEMBER
    assert [(t.topic_id, t.partitions) for t in record.value.topic_partitions] == [(B, [0, 1, 2])]

    epoch = jpype.JClass(GENERATED + "ConsumerGroupMetadataValue")().setEpoch(9)
    epoch.setMetadataHash(-7125390925666920251)  # a tagged field, skipped
    record = decode_record(key("ConsumerGroupMetadataKey", "g"), value(epoch), 0)
    assert record is not None and (record.kind, record.member, record.value.epoch) == (
        GROUP_EPOCH,
        None,
        9,
    )
    assigned = jpype.JClass(GENERATED + "ConsumerGroupTargetAssignmentMetadataValue")()
    assigned.setAssignmentEpoch(9).setAssignmentTimestamp(1795866909435)
    record = decode_record(key("ConsumerGroupTargetAssignmentMetadataKey", "g"), value(assigned), 0)
    assert record is not None and record.kind == TARGET_EPOCH
    assert record.value.assignment_epoch == 9
    pattern = jpype.JClass(GENERATED + "ConsumerGroupRegularExpressionKey")().setGroupId("g")
    pattern.setRegularExpression("orders-.*")
    matched = jpype.JClass(GENERATED + "ConsumerGroupRegularExpressionValue")()
    matched.setTopics(jpype.JClass("java.util.ArrayList")(["orders-eu", "orders-us"]))
    matched.setVersion(12).setTimestamp(1795866909435)
    record = decode_record(bytes(util.toCoordinatorTypePrefixedBytes(pattern)), value(matched), 0)
    assert record is not None and (record.kind, record.member) == (REGEX, "orders-.*")
    assert record.value.topics == ["orders-eu", "orders-us"]
    # A tombstone; a classic group's key and an offset commit's are not read here.
    record = decode_record(key("ConsumerGroupMemberMetadataKey", "g", "m1"), None, 0)
    assert record is not None and record.value is None
    assert (
        decode_record(
            bytes(
                util.toCoordinatorTypePrefixedBytes(
                    jpype.JClass(GENERATED + "GroupMetadataKey")().setGroup("g")
                )
            ),
            None,
            0,
        )
        is None
    )


def test_a_value_of_a_newer_version_is_refused_by_name():
    value = b"\x00\x01" + _value(GROUP_EPOCH, epoch=3)[2:]
    with pytest.raises(UnreadableRecord, match="ConsumerGroupMetadataValue version 1 of group 'g'"):
        decode_record(_key(GROUP_EPOCH, "g"), value, 0)


# ------------------------------------------------------------------ a replayed log
def _key(kind: int, group: str, member: str | None = None) -> bytes:
    def text(s: str) -> bytes:
        return len(s).to_bytes(2, "big") + s.encode()

    return kind.to_bytes(2, "big") + text(group) + (text(member) if member is not None else b"")


def _value(kind: int, **fields) -> bytes:
    cls = VALUES[kind]
    if kind in (TARGET_MEMBER, CURRENT_MEMBER):
        entry = cls.TopicPartition if kind == TARGET_MEMBER else cls.TopicPartitions
        for name in ("topic_partitions", "assigned_partitions", "partitions_pending_revocation"):
            if name in fields:
                fields[name] = [entry(topic_id=t, partitions=p) for t, p in fields[name].items()]
    return cls(version=0, **fields).encode()


class Log:
    """Records written to a ``ConsumerGroupLog`` as a coordinator writes them, batch by batch."""

    def __init__(self, group: str = "g"):
        self.log = ConsumerGroupLog(group)
        self.group = group
        self.settled: list = []

    def batch(self, ms: int, *records: tuple) -> None:
        for kind, member, fields in records:
            value = None if fields is None else _value(kind, **fields)
            record = decode_record(_key(kind, self.group, member), value, ms)
            assert record is not None
            done = self.log.apply(record)
            if done is not None:
                self.settled.append(done)

    def end(self) -> None:
        done = self.log.checkpoint()
        if done is not None:
            self.settled.append(done)


def joined(member: str, client: str):
    return (
        MEMBER_METADATA,
        member,
        dict(client_id=client, client_host="/h", subscribed_topic_names=["a", "b"]),
    )


def current(member: str, epoch: int, state: int, held: dict, revoking: dict | None = None):
    fields = dict(
        member_epoch=epoch,
        previous_member_epoch=epoch - 1,
        state=state,
        assigned_partitions=held,
        partitions_pending_revocation=revoking or {},
    )
    return (CURRENT_MEMBER, member, fields)


def epoch(n: int):
    return (GROUP_EPOCH, None, dict(epoch=n))


def target(member: str, held: dict):
    return (TARGET_MEMBER, member, dict(topic_partitions=held))


def assigned(n: int):
    return (TARGET_EPOCH, None, dict(assignment_epoch=n))


def gone(kind: int, member: str):
    return (kind, member, None)


ALL = {A: [0, 1, 2, 3], B: [0, 1, 2]}


def _two_members() -> Log:
    """m0 alone (settled at epoch 2), then m1 joins: m0 revokes a[1-3] before m1 gets them."""
    log = Log()
    log.batch(1000, joined("m0", "c0"), epoch(1), target("m0", {}), assigned(1))
    log.batch(1000, current("m0", 1, 0, {}))
    log.batch(1500, epoch(2), target("m0", ALL), assigned(2), current("m0", 2, 0, ALL))
    log.batch(5000, joined("m1", "c1"), epoch(3))  # the epoch bump: the rebalance starts
    log.batch(
        6000,
        target("m0", {A: [0], B: [0, 1, 2]}),
        target("m1", {A: [1, 2, 3]}),
        assigned(3),
        current("m1", 3, 2, {}),  # waiting for a[1-3]
    )
    log.batch(6900, current("m0", 2, 1, {A: [0], B: [0, 1, 2]}, {A: [1, 2, 3]}))
    log.batch(6905, current("m0", 3, 0, {A: [0], B: [0, 1, 2]}))  # revoked: a[1-3] unowned
    log.batch(7000, current("m1", 3, 0, {A: [1, 2, 3]}))
    log.end()
    return log


def test_each_reconciled_epoch_is_one_settled_rebalance():
    log = _two_members()
    empty, first, join = log.settled
    assert empty.epoch == 1 and empty.members[0].assigned == {}  # before the topics were known
    assert first.epoch == 2 and [m.member_id for m in first.members] == ["m0"]
    assert first.members[0].assigned == {A: (0, 1, 2, 3), B: (0, 1, 2)}
    assert join.epoch == 3 and join.rounds == 1
    assert {m.member_id: m.assigned for m in join.members} == {
        "m0": {A: (0,), B: (0, 1, 2)},
        "m1": {A: (1, 2, 3)},
    }
    assert [m.client_id for m in join.members] == ["c0", "c1"]
    assert join.settle_ms == 2000  # from the epoch bump (5000) to m1 holding its target (7000)
    every = {(A, p) for p in range(4)} | {(B, p) for p in range(3)}
    assert join.unowned_ms(every) == 3 * 95  # a[1-3] between m0's revocation and m1's record


def test_a_leave_written_in_one_batch_is_judged_whole():
    log = _two_members()
    # m0 leaves: its tombstones and the epoch bump in one batch.  Half-way through it the group
    # (m1 alone, reconciled at the old epoch) would look settled: no step is made there.
    log.batch(
        9000,
        gone(CURRENT_MEMBER, "m0"),
        gone(TARGET_MEMBER, "m0"),
        gone(MEMBER_METADATA, "m0"),
        epoch(4),
    )
    log.batch(10000, target("m1", ALL), assigned(4), current("m1", 4, 0, ALL))
    # Both epochs bumped before the assignment of the first was computed: one step, two rounds.
    log.batch(12000, gone(CURRENT_MEMBER, "m1"), gone(TARGET_MEMBER, "m1"))
    log.batch(12000, gone(MEMBER_METADATA, "m1"), epoch(5))
    log.batch(12001, epoch(6), assigned(6))
    log.end()
    _, _, _, leave, empty = log.settled
    assert leave.epoch == 4 and [m.member_id for m in leave.members] == ["m1"]
    assert leave.settle_ms == 1000
    every = {(A, p) for p in range(4)} | {(B, p) for p in range(3)}
    assert leave.unowned_ms(every) == 4 * 1000  # m0's partitions, until m1's record
    assert empty.epoch == 6 and empty.members == () and empty.rounds == 2
    assert not log.log.deleted
    log.batch(13000, (GROUP_EPOCH, None, None))
    assert log.log.deleted


def test_a_log_read_in_the_middle_of_a_rebalance_waits_for_it():
    log = Log()
    log.batch(1000, joined("m0", "c0"), epoch(1), target("m0", ALL), assigned(1))
    log.end()
    assert log.log.current() is None and log.settled == []  # m0 has no assignment yet
    log.batch(1100, current("m0", 1, 0, ALL))
    log.end()
    (first,) = log.settled
    assert first.epoch == 1 and log.log.current() is not None


def test_a_member_subscribing_by_pattern_subscribes_the_topics_it_matches():
    log = Log()
    fields = dict(client_id="c0", client_host="/h", subscribed_topic_names=[])
    fields["subscribed_topic_regex"] = "a|b"
    log.batch(1000, (MEMBER_METADATA, "m0", fields), epoch(1))
    log.batch(
        1200, (REGEX, "a|b", dict(topics=["a", "b"], regex_version=1, timestamp=1200)), epoch(2)
    )
    log.batch(1300, target("m0", ALL), assigned(2), current("m0", 2, 0, ALL))
    log.end()
    (settled,) = log.settled
    assert settled.members[0].topics == ("a", "b") and settled.members[0].regex == "a|b"


def test_consumer_observations_carry_their_own_times_and_topic_ids_into_the_trace():
    recorder = GroupRecorder("g")
    recorder.follow_records()
    wall = datetime.datetime(2026, 11, 28, 7, 0, tzinfo=datetime.UTC)
    ids = {"t": "T1-A4s3VTwiI5CTbEp6POw", "u": "T2-B4s3VTwiI5YHbPp6YUe"}

    def seen(epoch, members, counts, **times):
        return Observation(
            when=float(epoch),
            wall=wall + datetime.timedelta(seconds=epoch),
            state="Stable",
            protocol="consumer",
            assignor="uniform",
            members=tuple(
                Member(i, None, tuple(sorted(counts)), held, client_id=f"client-{i}")
                for i, held in members
            ),
            counts=counts,
            generation=epoch,
            topic_ids={t: ids[t] for t in counts},
            **times,
        )

    assert not recorder.observe(seen(2, [("x", {"t": [0, 1]})], {"t": 2}))
    assert recorder.observe(
        seen(
            3,
            [("x", {"t": [0]}), ("y", {"t": [1]})],
            {"t": 2},
            settle_ms=2000,
            unowned_ms=95,
            rounds=1,
        )
    )
    assert recorder.observe(
        seen(4, [("x", {"t": [0], "u": [0]}), ("y", {"t": [1]})], {"t": 2, "u": 1}, rounds=2)
    )
    joined, grown = recorder.steps
    assert joined["observed"] == {
        "generation": 3,
        "assignment": {"x": {"t": [0]}, "y": {"t": [1]}},
        "rounds": 1,
        "settle_ms": 2000,
        "unowned_partition_ms": 95,
    }
    # A topic the members subscribe later comes with its id, as the problem's topics did.
    assert grown["topics"] == {"u": 1} and grown["topic_ids"] == {"u": ids["u"]}
    assert grown["observed"]["rounds"] == 2
    document = recorder.document()
    assert document is not None
    assert document["problem"]["topic_ids"] == {"t": ids["t"]}
    assert document["recorded"]["protocol"] == "consumer"
    assert document["recorded"]["clients"] == {"x": "client-x", "y": "client-y"}
    trace = load_trace(document)
    assert len(trace.steps) == 2


class _ListedAdmin:
    """An admin whose one group ``DescribeGroups`` does not describe, listed with ``kind``."""

    def __init__(self, kind: str):
        self.kind = kind

    def describe_groups(self, names):
        return {n: {"group_state": "Dead", "error": "GroupIdNotFoundError: none"} for n in names}

    def list_groups(self):
        return [{"group_id": "g", "group_type": self.kind}]


def test_a_share_or_streams_group_ends_the_recording_with_one_line(tmp_path):
    from clients.group_watch import Watch

    for kind, what in (("Share", "a share group (KIP-932)"), ("Streams", "a streams group")):
        said: list[str] = []
        watch = Watch(_ListedAdmin(kind), tmp_path / "t.json", groups=["g"], say=said.append)
        watch.poll()
        assert watch.done() and len(said) == 1
        assert said[0].startswith(f"record: group 'g' is {what}"), said
        assert said[0].endswith("no trace written (the group was never seen settled)")
        assert not (tmp_path / "t.json").exists()
