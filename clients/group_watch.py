"""Watching live consumer groups through the admin API: the polling source of ``rebalance-lab record``.

Each poll describes every watched group (``DescribeGroups``: state, assignor, members with their
subscriptions and the assignments the coordinator handed out) and the topics its members
subscribe (``Metadata``: partition counts), and gives :class:`clients.recorder.GroupRecorder` one
:class:`clients.recorder.Observation`.  The trace is rewritten atomically after every step and
once more at the end, so the output file is always a complete trace.

A watch ends cleanly, with one line saying why, when a group it saw disappears (deleted), when
the cluster denies a Describe (a missing ACL), or when no broker answers for the connection
timeout (a broker restart that outlasts it).  Details: docs/record.md.
"""

from __future__ import annotations

import base64
import datetime
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

from clients.cluster import TOPIC_AUTHORIZATION_FAILED, _get, _partition_lists
from clients.consumer_records import ConsumerGroupLog, ConsumerRecord, Settled, UnreadableRecord
from clients.coordinator_records import RecordReader, observation
from clients.group_describe import (
    DescribeError,
    consumer_group_observation,
    describe_consumer_group,
    subscribed,
)
from clients.recorder import GroupRecorder, Member, Observation, write_atomically

#: Seconds between two listings of the cluster's groups when watching a pattern.
LIST_EVERY = 2.0


class Ended(Exception):
    """A watch that cannot go on: the message is the one line to print."""


class Unanswered(Exception):
    """A request the cluster could not answer now (the group's coordinator unavailable)."""


class _Unknown(Exception):
    """The group does not exist (yet, or any more)."""


def _not_authorized(resource: str, name: str) -> Ended:
    return Ended(
        f"not authorized: the principal needs Describe on {resource} {name!r} (a missing ACL)"
    )


def describe(admin: Any, group: str, known_topics: set[str]) -> Observation:
    """One observation of ``group`` (its topics: the subscribed ones and ``known_topics``)."""
    from kafka.errors import GroupAuthorizationFailedError

    when, wall = time.monotonic(), datetime.datetime.now(datetime.UTC)
    try:
        info = admin.describe_groups([group])[group]
    except GroupAuthorizationFailedError:
        raise _not_authorized("group", group) from None
    error = info.get("error") or ""
    if "GroupAuthorizationFailed" in error:
        raise _not_authorized("group", group)
    if error and "GroupIdNotFound" not in error:
        raise Unanswered(error)  # the coordinator moving or loading: asked again
    if info.get("group_state") in ("Dead", None) or error:
        raise _Unknown(group)
    if info.get("protocol_type") not in ("consumer", ""):
        raise Ended(
            f"group {group!r} is not a consumer group (protocol type {info['protocol_type']!r})"
        )
    members = []
    for m in info["members"]:
        subscription = m.get("member_metadata") or {}
        members.append(
            Member(
                member_id=m["member_id"],
                instance_id=m.get("group_instance_id") or None,
                topics=tuple(sorted(set(_get(subscription, "topics", [])))),
                assignment=_partition_lists(
                    _get(m.get("member_assignment") or {}, "assigned_partitions", [])
                ),
                rack=_get(subscription, "rack_id") or None,
            )
        )
    topics = sorted({t for m in members for t in m.topics} | known_topics)
    counts = _partition_counts(admin, topics)
    return Observation(
        when=when,
        wall=wall,
        state=info["group_state"],
        protocol="classic",
        assignor=info.get("protocol_data") or "",
        members=tuple(members),
        counts=counts,
    )


def _partition_counts(admin: Any, topics: list[str]) -> dict[str, int]:
    """Partition counts of the ``topics`` that exist."""
    if not topics:
        return {}
    counts = {}
    for topic in admin.describe_topics(topics):
        if topic.get("error_code") == TOPIC_AUTHORIZATION_FAILED:
            raise _not_authorized("topic", topic["name"])
        if not topic.get("error_code"):
            counts[topic["name"]] = len(topic["partitions"])
    return counts


def _group_type(admin: Any, group: str) -> str:
    """``group``'s type as ``ListGroups`` names it (``consumer`` for a KIP-848 group, ``share``,
    ``streams``, which ``DescribeGroups`` calls unknown), or ``""``."""
    try:
        listed = admin.list_groups()
    except Exception:  # noqa: BLE001 - an older broker: no group types to tell
        return ""
    kinds = [str(g.get("group_type") or "").lower() for g in listed if g.get("group_id") == group]
    return kinds[0] if kinds else ""


#: Group types ``record`` does not write as a group trace, and why.
UNRECORDED = {
    "share": "a share group (KIP-932), whose partitions have several owners at once",
    "streams": "a streams group (KIP-1071), whose members hold tasks",
}


def describe_consumer(admin: Any, group: str, known_topics: set[str]) -> Observation:
    """One observation of the consumer-protocol ``group`` (``ConsumerGroupDescribe``)."""
    try:
        described = describe_consumer_group(admin, group)
    except DescribeError as error:
        if error.code == "GroupAuthorizationFailedError":
            raise _not_authorized("group", group) from None
        if error.code == "GroupIdNotFoundError":
            raise _Unknown(group) from None
        raise Unanswered(str(error)) from None
    if described.group_state.lower() == "dead":
        raise _Unknown(group)
    counts = _partition_counts(admin, sorted(subscribed(described) | known_topics))
    return consumer_group_observation(described, counts)


def kafka_uuid(value: uuid.UUID) -> str:
    """Kafka's text of a ``Uuid`` (URL-safe base64 of its 16 bytes, no padding)."""
    return base64.urlsafe_b64encode(value.bytes).decode("ascii").rstrip("=")


def topic_ids(admin: Any) -> dict[uuid.UUID, str]:
    """``{topic id: name}`` of every topic the principal may describe (``Metadata``)."""
    metadata = admin._manager.run(admin._get_cluster_metadata, None)
    return {
        uuid.UUID(str(t["topic_id"])): t["name"]
        for t in metadata["topics"]
        if not t.get("error_code")
    }


@dataclass
class Watch:
    """The groups being recorded and where their traces go.

    ``groups`` are explicit names; ``pattern`` a regular expression matched against every group
    of the cluster (groups that appear later are added).  ``out`` is the trace file of a single
    explicit group, else a folder that gets one ``<group>.json`` per group.
    """

    admin: Any
    out: Path
    groups: list[str] = field(default_factory=list)
    pattern: re.Pattern[str] | None = None
    interval: float = 0.2
    timeout: float = 10.0
    say: Callable[[str], None] = print
    reader: RecordReader | None = None
    recorders: dict[str, GroupRecorder] = field(default_factory=dict)
    ended: dict[str, str] = field(default_factory=dict)  # group -> why its watch ended
    #: Consumer-protocol groups: their state rebuilt from the coordinator's records.
    logs: dict[str, ConsumerGroupLog] = field(default_factory=dict)
    consumer: set[str] = field(default_factory=set)  # groups known to use the consumer protocol
    names: dict[uuid.UUID, str] = field(default_factory=dict)  # topic id -> name
    _offered: dict[str, int] = field(default_factory=dict)  # group -> epoch offered as its start
    _checked: dict[str, float] = field(default_factory=dict)  # group -> its coordinator answered
    _listed: float = float("-inf")
    _failing_since: float | None = None

    def path(self, group: str) -> Path:
        if self.pattern is None and len(self.groups) == 1:
            return self.out
        return self.out / f"{quote(group, safe='')}.json"

    def recorder(self, group: str) -> GroupRecorder:
        if group not in self.recorders:
            self.recorders[group] = GroupRecorder(group, poll_ms=round(self.interval * 1000))
            if self.reader is not None:
                self.recorders[group].follow_records()
        if self.reader is not None:
            self.reader.follow(group)  # again after a failure: it follows each partition once
        return self.recorders[group]

    def steps(self) -> int:
        return sum(len(r.steps) for r in self.recorders.values())

    def watching(self) -> list[str]:
        names = list(self.groups)
        if self.pattern is not None:
            names += [g for g in self.recorders if g not in names]
        return [g for g in names if g not in self.ended]

    def done(self) -> bool:
        """Every explicit group ended (a pattern watches for new groups until stopped)."""
        return self.pattern is None and not self.watching()

    def write(self, group: str) -> None:
        recorder = self.recorders.get(group)
        document = None if recorder is None else recorder.document()
        if document is not None:
            write_atomically(self.path(group), document)

    def write_all(self) -> None:
        for group in self.recorders:
            self.write(group)

    # ------------------------------------------------------------------ polls
    def poll(self) -> None:
        """Observe every watched group once (raises :class:`Ended` when the whole watch ends)."""
        from kafka.errors import KafkaError

        try:
            self._discover()
            for group in self.watching():
                self.recorder(group)
            self._read_records()
            for group in self.watching():
                self._poll_group(group)
        except (KafkaError, OSError, TimeoutError, Unanswered) as error:
            now = time.monotonic()
            self._failing_since = self._failing_since or now
            if now - self._failing_since >= self.timeout:
                why = str(error).split(":")[0] if isinstance(error, Unanswered) else ""
                raise Ended(
                    f"no answer from the cluster for {now - self._failing_since:.0f} s "
                    f"({why or type(error).__name__})"
                ) from None
            return
        self._failing_since = None

    def _read_records(self, wait: float = 0.0) -> None:
        """Give each watched group the coordinator's records written since the last poll."""
        from kafka.errors import TopicAuthorizationFailedError

        if self.reader is None:
            return
        try:
            records = self.reader.read(wait)
        except UnreadableRecord as error:
            raise Ended(f"the coordinator's records: {error}") from None
        except TopicAuthorizationFailedError:
            self.say(
                "record: no Read on __consumer_offsets any more: polling the admin API only "
                "(a rebalance between two polls may be missed)"
            )
            self.reader.close()
            self.reader = None
            for recorder in self.recorders.values():
                recorder.follow_records(False)
            return
        watched = set(self.watching())
        touched: dict[str, bool] = {}  # consumer-protocol groups read -> whether live records
        for read in records:
            group, record = read.group, read.record
            if isinstance(record, ConsumerRecord):
                self.consumer.add(group)
                log = self.logs.setdefault(group, ConsumerGroupLog(group))
                settled = log.apply(record)
                if settled is not None and group in watched and not read.history:
                    self._settled(group, settled)
                touched[group] = touched.get(group, False) or not read.history
                continue
            if group not in watched:
                continue
            if record is None:
                self._end(group, f"group {group!r} no longer exists (deleted)")
                watched.discard(group)
                continue
            recorder = self.recorders[group]
            known = recorder.topics()
            topics = sorted({t for m in record.members for t in m.topics} | known)
            unstarted = recorder.problem is None
            seen = observation(record, _partition_counts(self.admin, topics))
            if recorder.observe(seen) or (unstarted and recorder.problem is not None):
                self.write(group)
        for group, live in touched.items():
            log = self.logs[group]
            settled = log.checkpoint()
            if group not in watched:
                continue
            if settled is not None and live:
                self._settled(group, settled)
            if log.deleted and live:
                self._end(group, f"group {group!r} no longer exists (deleted)")
        for group in watched & set(self.logs):
            self._start_consumer(group)

    def _start_consumer(self, group: str) -> None:
        """A consumer-protocol group whose history is read: its settled state starts the trace."""
        recorder, log = self.recorders[group], self.logs[group]
        if recorder.problem is not None or self.reader is None or not self.reader.loaded(group):
            return
        current = log.current()
        if current is not None and self._offered.get(group) != current.epoch:
            self._offered[group] = current.epoch  # one offer per epoch: it may not be complete
            self._settled(group, current)

    def _settled(self, group: str, settled: Settled) -> None:
        """A settled rebalance of a consumer-protocol group, as the recorder's observation."""
        recorder, log = self.recorders[group], self.logs[group]
        assigned = {t for m in settled.members for t in m.assigned}
        if assigned - set(self.names):
            self.names.update(topic_ids(self.admin))
        members = tuple(
            Member(
                member_id=m.member_id,
                instance_id=m.instance_id,
                topics=m.topics,
                assignment=dict(
                    sorted(
                        (self.names[t], list(ps)) for t, ps in m.assigned.items() if t in self.names
                    )
                ),
                rack=m.rack,
                client_id=m.client_id or None,
            )
            for m in settled.members
        )
        topics = sorted({t for m in members for t in m.topics} | recorder.topics())
        counts = _partition_counts(self.admin, topics)
        ids = {name: t for t, name in self.names.items()}
        if any(t not in ids for t in counts):
            self.names.update(topic_ids(self.admin))
            ids = {name: t for t, name in self.names.items()}
        partitions = {
            (ids[t], p)
            for t in {t for m in members for t in m.topics}
            if t in ids
            for p in range(counts.get(t, 0))
        }
        wall = datetime.datetime.fromtimestamp(settled.timestamp_ms / 1000, datetime.UTC)
        seen = Observation(
            when=time.monotonic() - (time.time() - settled.timestamp_ms / 1000),
            wall=wall,
            state="Stable" if members else "Empty",
            protocol="consumer",
            assignor=log.assignor() or recorder.assignor or self._assignor(group),
            members=members,
            counts=counts,
            generation=settled.epoch,
            settle_ms=settled.settle_ms,
            unowned_ms=settled.unowned_ms(partitions),
            rounds=settled.rounds,
            topic_ids={t: kafka_uuid(ids[t]) for t in counts if t in ids},
        )
        unstarted = recorder.problem is None
        if recorder.observe(seen) or (unstarted and recorder.problem is not None):
            self.write(group)

    def _assignor(self, group: str) -> str:
        """The group's server assignor as ``ConsumerGroupDescribe`` names it (empty when the
        principal may not describe the group)."""
        from kafka.errors import KafkaError

        try:
            return describe_consumer_group(self.admin, group).assignor_name or ""
        except (DescribeError, KafkaError):
            return ""

    def _discover(self) -> None:
        if self.pattern is None or time.monotonic() - self._listed < LIST_EVERY:
            return
        self._listed = time.monotonic()
        for listed in self.admin.list_groups():
            name = listed.get("group_id", "")
            if self.pattern.fullmatch(name) and name not in self.ended:
                self.recorder(name)

    def _poll_group(self, group: str) -> None:
        recorder = self.recorder(group)
        if group in self.consumer:
            if self.reader is None:
                self._poll_consumer(group)
            else:
                self._check_coordinator(group)  # the coordinator's records are the source
            return
        try:
            seen = describe(self.admin, group, recorder.topics())
        except _Unknown:
            if self.reader is not None and recorder.first is not None:
                self._read_records(wait=1.0)  # the group's last records and its tombstone
                if group in self.ended:
                    return
            if recorder.first is None:
                kind = _group_type(self.admin, group)
                if kind in UNRECORDED:
                    self._end(
                        group,
                        f"group {group!r} is {UNRECORDED[kind]}: a group trace records consumer "
                        "groups only",
                    )
                elif kind == "consumer":
                    self.consumer.add(group)
                    if self.reader is None:
                        self._poll_consumer(group)
                return  # not created yet, or a consumer-protocol group
            self._end(group, f"group {group!r} no longer exists (deleted)")
            return
        except Ended as error:
            self._end(group, str(error))
            raise
        unstarted = recorder.problem is None
        if recorder.observe(seen) or (unstarted and recorder.problem is not None):
            self.write(group)

    def _check_coordinator(self, group: str) -> None:
        """Every :data:`LIST_EVERY` seconds, ask the group's coordinator for the group: a
        coordinator that stopped answering ends the watch as it would the polls (the records
        alone would just stop coming)."""
        now = time.monotonic()
        if now - self._checked.get(group, float("-inf")) < LIST_EVERY:
            return
        try:
            describe_consumer_group(self.admin, group)
        except DescribeError as error:
            if error.code not in ("GroupAuthorizationFailedError", "GroupIdNotFoundError"):
                raise Unanswered(str(error)) from None
        self._checked[group] = now

    def _poll_consumer(self, group: str) -> None:
        """One ``ConsumerGroupDescribe`` poll of a consumer-protocol group (no records)."""
        recorder = self.recorder(group)
        try:
            seen = describe_consumer(self.admin, group, recorder.topics())
        except _Unknown:
            if recorder.first is not None:
                self._end(group, f"group {group!r} no longer exists (deleted)")
            return
        except Ended as error:
            self._end(group, str(error))
            raise
        seen = replace(seen, topic_ids=self._topic_ids(set(seen.counts)))
        unstarted = recorder.problem is None
        if recorder.observe(seen) or (unstarted and recorder.problem is not None):
            self.write(group)

    def _topic_ids(self, topics: set[str]) -> dict[str, str]:
        """Kafka's ids of ``topics`` (by name; looked up again when one is new)."""
        ids = {name: t for t, name in self.names.items()}
        if topics - set(ids):
            self.names.update(topic_ids(self.admin))
            ids = {name: t for t, name in self.names.items()}
        return {t: kafka_uuid(ids[t]) for t in topics if t in ids}

    def _end(self, group: str, why: str) -> None:
        self.ended[group] = why
        self.write(group)
        recorder = self.recorders.get(group)
        steps = 0 if recorder is None else len(recorder.steps)
        self.say(f"record: {why}; {self._written(group, steps)}")

    def _written(self, group: str, steps: int) -> str:
        recorder = self.recorders.get(group)
        if recorder is None or recorder.problem is None:
            return "no trace written (the group was never seen settled)"
        return f"{steps} rebalance{'s' * (steps != 1)} written to {self.path(group)}"

    def written_all(self) -> str:
        """What was written, in one clause (every group)."""
        if self.pattern is None and len(self.groups) == 1:
            group = self.groups[0]
            recorder = self.recorders.get(group)
            return self._written(group, 0 if recorder is None else len(recorder.steps))
        traces = sum(r.problem is not None for r in self.recorders.values())
        return f"{traces} trace{'s' * (traces != 1)} written to {self.out}"

    def summary(self) -> list[str]:
        """One line per group still watched: what was written."""
        return [
            f"record: group {g!r}: {self._written(g, len(self.recorders[g].steps))}"
            for g in self.recorders
            if g not in self.ended
        ]


def run(
    watch: Watch,
    stop: threading.Event,
    duration: float | None = None,
    rebalances: int | None = None,
) -> bool:
    """Poll until ``stop`` is set, ``duration`` seconds passed, ``rebalances`` steps were recorded
    or every group ended; the traces are written throughout and at the end.  ``True`` when the
    watch ended by itself (a group gone, an ACL missing, the cluster lost)."""
    deadline = None if duration is None else time.monotonic() + duration
    ended = False
    try:
        while not stop.is_set():
            try:
                watch.poll()
            except Ended as error:
                if not watch.ended:
                    watch.write_all()
                    watch.say(f"record: {error}; {watch.written_all()}")
                    watch.ended.update({g: str(error) for g in watch.recorders})
                ended = True
                break
            if watch.done():
                ended = True
                break
            if rebalances is not None and watch.steps() >= rebalances:
                break
            if deadline is not None and time.monotonic() >= deadline:
                break
            stop.wait(watch.interval)
    finally:
        watch.write_all()
    return ended
