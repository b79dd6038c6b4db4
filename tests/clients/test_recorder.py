"""Tests of the recording logic without a cluster: observations of a group turned into steps
(clients/recorder.py), and the coordinator's records decoded (clients/coordinator_records.py)."""

from __future__ import annotations

import datetime
import struct

import pytest

from clients.coordinator_records import (
    decode_group_value,
    group_key,
    java_string_hash,
    offsets_partition,
)
from clients.recorder import GroupRecorder, Member, Observation, write_atomically
from problems.trace import load_trace

EPOCH = datetime.datetime(2026, 11, 28, 7, 0, tzinfo=datetime.UTC)
ALL = {"t": [0, 1, 2, 3]}


def seen(when, state, members, generation=None, assignor="range", counts=None):
    """An observation at ``when`` seconds; members as ``(id, assignment)`` pairs."""
    return Observation(
        when=when,
        wall=EPOCH + datetime.timedelta(seconds=when),
        state=state,
        protocol="classic",
        assignor=assignor,
        members=tuple(Member(i, None, ("t",), a) for i, a in members),
        counts=counts or {"t": 4},
        generation=generation,
    )


def test_polls_a_rebalance_seen_while_it_runs():
    recorder = GroupRecorder("g", poll_ms=100)
    assert not recorder.observe(seen(0.0, "Stable", [("a", ALL)]))
    assert not recorder.observe(seen(0.1, "PreparingRebalance", [("a", ALL)]))
    assert not recorder.observe(seen(0.2, "CompletingRebalance", [("a", ALL), ("b", {})]))
    assert recorder.observe(seen(0.3, "Stable", [("a", {"t": [0, 1]}), ("b", {"t": [2, 3]})]))
    (step,) = recorder.steps
    assert step["join"] == [{"id": "b", "topics": ["t"]}]
    observed = step["observed"]
    # Begun halfway between the last settled poll and the first unsettled one; eager range:
    # all 4 partitions without an owner from then to the settled poll.
    assert observed["settle_ms"] == 250 and observed["rounds"] == 1
    assert observed["unowned_partition_ms"] == 1000
    load_trace(recorder.document())


def test_polls_a_rebalance_that_fell_between_two_polls():
    recorder = GroupRecorder("g", poll_ms=100)
    recorder.observe(seen(0.0, "Stable", [("a", {"t": [0, 1]}), ("b", {"t": [2, 3]})]))
    assert recorder.observe(seen(0.1, "Stable", [("b", ALL)]))
    (step,) = recorder.steps
    assert step["leave"] == ["a"] and step["observed"]["settle_ms"] == 50
    assert step["observed"]["unowned_partition_ms"] == 200  # 4 partitions for 50 ms


def test_polls_a_cooperative_rebalance_as_one_step_of_two_rounds():
    recorder = GroupRecorder("g", poll_ms=100)
    coop = "cooperative-sticky"
    recorder.observe(seen(0.0, "Stable", [("a", ALL)], assignor=coop))
    recorder.observe(seen(0.1, "PreparingRebalance", [("a", ALL)], assignor=""))
    # first round: a gave up 2 and 3, nobody holds them yet
    recorder.observe(seen(0.2, "Stable", [("a", {"t": [0, 1]}), ("b", {})], assignor=coop))
    recorder.observe(seen(0.3, "PreparingRebalance", [("a", {"t": [0, 1]}), ("b", {})]))
    assert recorder.observe(
        seen(0.4, "Stable", [("a", {"t": [0, 1]}), ("b", {"t": [2, 3]})], assignor=coop)
    )
    (step,) = recorder.steps
    assert step["observed"]["rounds"] == 2
    # cooperative: only the revoked partitions count, 2 of them from 0.2 to 0.4
    assert step["observed"]["unowned_partition_ms"] == 400


def test_records_make_the_steps_and_count_rounds_in_generations():
    recorder = GroupRecorder("g", poll_ms=100)
    recorder.follow_records()
    coop = "cooperative-sticky"
    recorder.observe(seen(0.0, "Stable", [("a", ALL)], assignor=coop))
    # a record older than the first poll: history, no step
    assert not recorder.observe(seen(-1.0, "Stable", [("a", ALL)], generation=4, assignor=coop))
    # a poll may see the result first: the record makes the step
    assert not recorder.observe(
        seen(0.5, "Stable", [("a", {"t": [0, 1]}), ("b", {"t": [2, 3]})], assignor=coop)
    )
    assert not recorder.observe(
        seen(0.2, "Stable", [("a", {"t": [0, 1]}), ("b", {})], generation=5, assignor=coop)
    )
    assert recorder.observe(
        seen(0.4, "Stable", [("a", {"t": [0, 1]}), ("b", {"t": [2, 3]})], generation=6)
    )
    # the same generation read twice is one step
    assert not recorder.observe(
        seen(0.4, "Stable", [("a", {"t": [0, 1]}), ("b", {"t": [2, 3]})], generation=6)
    )
    # a rebalance that changed nothing is a step too, when the coordinator wrote it
    assert recorder.observe(
        seen(0.9, "Stable", [("a", {"t": [0, 1]}), ("b", {"t": [2, 3]})], generation=7)
    )
    assert [s["observed"]["generation"] for s in recorder.steps] == [6, 7]
    assert [s["observed"]["rounds"] for s in recorder.steps] == [2, 1]
    assert recorder.steps[1] == {"observed": recorder.steps[1]["observed"]}
    document = recorder.document()
    assert document["recorded"]["source"] == "coordinator records"
    load_trace(document)


def test_an_empty_group_written_again_is_no_step():
    recorder = GroupRecorder("g")
    recorder.observe(seen(0.0, "Empty", []))
    assert not recorder.observe(seen(0.1, "Empty", [], generation=0))
    assert recorder.observe(seen(0.2, "Stable", [("a", ALL)], generation=1))
    assert recorder.observe(seen(0.3, "Empty", [], generation=2))
    assert [list(s) for s in recorder.steps] == [["join", "observed"], ["leave", "observed"]]


def test_a_topic_no_member_subscribes_stays_in_the_trace():
    recorder = GroupRecorder("g")
    recorder.observe(seen(0.0, "Stable", [("a", ALL)]))
    assert recorder.topics() == {"t"}
    recorder.observe(seen(0.1, "Stable", [("a", ALL)], counts={"t": 4, "u": 2}))
    assert recorder.steps[-1]["topics"] == {"u": 2}
    recorder.observe(seen(0.2, "Stable", [("a", {"t": [0, 1, 2]})], counts={"t": 3}))
    assert recorder.steps[-1]["topics"] == {"t": 3, "u": 0}


def test_the_trace_file_is_replaced_whole(tmp_path):
    path = tmp_path / "trace.json"
    write_atomically(path, {"a": 1})
    write_atomically(path, {"a": 2})
    assert path.read_text() == '{\n  "a": 2\n}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["trace.json"]


# -------------------------------------------------------------- coordinator records
@pytest.mark.parametrize(
    "text, value",
    [
        ("", 0),
        ("abc", 96354),
        ("polygenelubricants", -(2**31)),
        ("é", 233),
        ("😀", 0xD83D * 31 + 0xDE00),
    ],
)
def test_java_string_hash(text, value):
    """Over UTF-16 code units: an emoji is two (a surrogate pair)."""
    assert java_string_hash(text) == value


def test_the_partition_of_a_group_is_kafkas():
    # Utils.abs(Integer.MIN_VALUE) is 0 in Kafka, not an overflow
    assert offsets_partition("polygenelubricants", 50) == 0
    assert offsets_partition("abc", 50) == 96354 % 50
    assert offsets_partition("x" * 7, 50) == abs(java_string_hash("x" * 7)) % 50


def _string(text, flexible):
    data = text.encode()
    return (_uvarint(len(data) + 1) if flexible else struct.pack(">h", len(data))) + data


def _bytes(data, flexible):
    return (_uvarint(len(data) + 1) if flexible else struct.pack(">i", len(data))) + data


def _uvarint(value):
    out = b""
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def _group_value(version, members):
    """A GroupMetadataValue as the coordinator writes it (versions 3 and 4)."""
    from kafka.protocol.consumer.metadata import (
        ConsumerProtocolAssignment,
        ConsumerProtocolSubscription,
    )

    flexible = version >= 4
    out = struct.pack(">h", version) + _string("consumer", flexible) + struct.pack(">i", 9)
    out += _string("range", flexible) + _string(members[0][0], flexible)
    out += struct.pack(">q", 1_700_000_000_000)
    out += _uvarint(len(members) + 1) if flexible else struct.pack(">i", len(members))
    for member_id, instance, topics, held in members:
        subscription = ConsumerProtocolSubscription(
            version=1, topics=topics, user_data=b"", owned_partitions=[]
        ).encode()
        assignment = ConsumerProtocolAssignment(
            version=0,
            assigned_partitions=[
                ConsumerProtocolAssignment.TopicPartition(topic=t, partitions=p)
                for t, p in held.items()
            ],
            user_data=b"",
        ).encode()
        out += _string(member_id, flexible)
        out += (
            _uvarint(0)
            if flexible and instance is None
            else struct.pack(">h", -1)
            if instance is None
            else _string(instance, flexible)
        )
        out += _string("client", flexible) + _string("/127.0.0.1", flexible)
        out += struct.pack(">ii", 30000, 10000)
        out += _bytes(subscription, flexible) + _bytes(assignment, flexible)
        out += _uvarint(0) if flexible else b""
    return out + (_uvarint(0) if flexible else b"")


@pytest.mark.parametrize("version", [3, 4])
def test_a_group_record_decodes(version):
    value = _group_value(
        version,
        [("m-1", None, ["t", "u"], {"t": [0, 2]}), ("m-2", "host-2", ["t"], {"t": [1]})],
    )
    record = decode_group_value("g", value, 1_700_000_000_123)
    assert (record.generation, record.protocol, record.protocol_type) == (9, "range", "consumer")
    assert (record.timestamp_ms, record.state_ms) == (1_700_000_000_123, 1_700_000_000_000)
    assert record.members == (
        Member("m-1", None, ("t", "u"), {"t": [0, 2]}),
        Member("m-2", "host-2", ("t",), {"t": [1]}),
    )


def test_only_group_metadata_keys_name_a_group():
    assert group_key(struct.pack(">h", 2) + _string("shop", False)) == "shop"
    assert group_key(struct.pack(">h", 1) + _string("shop", False)) is None  # an offset commit
    assert group_key(b"") is None


# ------------------------------------------------------------------ the watch
class FakeAdmin:
    """The admin calls a watch makes, answered from ``groups`` (name -> described group)."""

    def __init__(self, groups):
        self.groups = groups

    def describe_groups(self, names):
        (name,) = names
        if name not in self.groups:
            return {name: {"group_state": "Dead", "error": "GroupIdNotFoundError: none"}}
        return {name: self.groups[name]}

    def describe_topics(self, topics):
        return [{"name": t, "error_code": 0, "partitions": [{}] * 4} for t in topics]

    def list_groups(self):
        return [{"group_id": g, "group_type": "classic"} for g in self.groups]


def _described(members):
    return {
        "group_state": "Stable",
        "protocol_type": "consumer",
        "protocol_data": "range",
        "error": None,
        "members": [
            {
                "member_id": member,
                "group_instance_id": None,
                "member_metadata": {"topics": ["t"]},
                "member_assignment": {"assigned_partitions": [{"topic": "t", "partitions": held}]},
            }
            for member, held in members
        ],
    }


def test_a_pattern_records_each_matching_group_in_its_own_file(tmp_path):
    import re

    from clients.group_watch import Watch

    admin = FakeAdmin(
        {
            "shop-a": _described([("a", [0, 1, 2, 3])]),
            "shop/b": _described([("b", [0, 1, 2, 3])]),
            "other": _described([("c", [0, 1, 2, 3])]),
        }
    )
    said = []
    watch = Watch(admin, tmp_path, pattern=re.compile("shop.*"), say=said.append)
    watch.poll()
    admin.groups["shop-a"] = _described([("a", [0, 1]), ("x", [2, 3])])
    del admin.groups["shop/b"]
    watch.poll()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shop%2Fb.json", "shop-a.json"]
    assert load_trace(tmp_path / "shop-a.json").steps == ({"join": [{"id": "x", "topics": ["t"]}]},)
    assert said == [
        f"record: group 'shop/b' no longer exists (deleted); 0 rebalances written to "
        f"{tmp_path / 'shop%2Fb.json'}"
    ]
    assert not watch.done()  # a pattern watches for new groups until stopped
    assert watch.summary() == [
        f"record: group 'shop-a': 1 rebalance written to {tmp_path / 'shop-a.json'}"
    ]


def test_a_group_that_never_appeared_writes_nothing(tmp_path):
    from clients.group_watch import Watch

    watch = Watch(FakeAdmin({}), tmp_path / "t.json", groups=["later"])
    watch.poll()
    assert not (tmp_path / "t.json").exists() and watch.watching() == ["later"]
