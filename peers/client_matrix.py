"""Real Kafka client libraries' consumer groups driven through canonical sequences (the live matrix).

Each client library has a *driver* (``peers/drivers/``, ``peers/java/driver``, ``peers/kgo_driver``,
``peers/sarama/driver``, ``peers/kafkajs/driver.js``): one small program that runs ONE consumer of that library
with a given assignor and group protocol, reads commands on stdin (``subscribe a,b``, ``stop``)
and prints every assignment callback as a JSON line, ``{"t": ms, "event": ..., "partitions":
[[topic, p], ...], "generation": g}``, where ``t`` is the machine's monotonic clock
(``CLOCK_MONOTONIC``) in milliseconds, shared by every process and by this module.  Events:
``ready`` (the consumer is created), ``assigned`` (partitions added), ``revoked`` and ``lost``
(partitions removed), ``closed`` (left the group), ``error`` (a line of text).

:class:`GroupRun` starts one process per member (a hosted client's members, Kafka's Java
client's, share one process per group, but a member to be crashed), runs a :class:`Sequence` step
by step (stop, start, crash = SIGKILL, partitions added, subscription change), and after each
command waits until the group settles: every partition of a subscribed topic held by exactly one
live member that subscribes its topic, every started member assigned, a callback since the
command, and no callback for :data:`QUIET_MS`.  What the members held (from their own callbacks) becomes a
recorded group trace (``problems.trace``: the ``observed`` object of each step, with the rounds
the step took, its settle time and the partition-milliseconds without an owner, integrated
exactly between the callbacks' timestamps) that :func:`judge` scores against the per-step and
horizon optima (``models.trace``).
"""

from __future__ import annotations

import datetime
import json
import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: No callback for this long (ms) after the group is complete: the step has settled (longer than
#: a cooperative protocol's gap between its two rounds and the consumer protocol's heartbeat).
QUIET_MS = 1500
#: The events that change what a member holds.
CALLBACKS = frozenset({"assigned", "revoked", "lost"})
#: Two bursts of assignment callbacks this far apart (ms) are two rounds of a rebalance.
ROUND_GAP_MS = 150
#: A step that has not settled in this long (s) is a stuck rebalance.
STEP_TIMEOUT = 40.0
#: The group's shape: two topics of 12 partitions, six members subscribing both.
TOPICS = {"a": 12, "b": 12}
MEMBERS = 6
#: Consumer session timeout (ms) and heartbeat interval (ms) for every client.
SESSION_MS = 6000
HEARTBEAT_MS = 500
#: How much nicer than the runner the member processes run (``nice -n``): the tests' default; the
#: benchmark, itself run under ``nice``, runs its members at its own priority (0), since a member
#: at nice 19 waits behind every other job of a shared machine and its callbacks come late.
MEMBER_NICE = 10


def now_ms() -> float:
    """The monotonic clock every driver stamps its lines with (ms)."""
    return time.clock_gettime(time.CLOCK_MONOTONIC) * 1000.0


@dataclass(frozen=True)
class Client:
    """One client library's driver: the command line that runs one member."""

    name: str
    version: str
    command: Callable[[dict[str, str]], list[str]]
    #: Assignor name as the driver takes it -> the lab's strategy (``None``: not in the lab).
    assignors: dict[str, str | None]
    #: The broker-side assignors the library can name on the consumer protocol (KIP-848).
    consumer_assignors: tuple[str, ...] = ()
    #: Whether the library has static membership (``group.instance.id``, KIP-345).
    static: bool = True
    #: Whether a running consumer can change its subscription (KafkaJS's ``subscribe`` only adds
    #: topics).
    resubscribe: bool = True
    #: Whether one driver process can host several members (``host=1``: ``start KEY opts``,
    #: ``KEY stop``, ``KEY subscribe a,b`` on stdin, ``"key"`` on every line): the group's members
    #: then share one process, started once (a JVM's start-up costs seconds of CPU).
    hosted: bool = False

    def combinations(self) -> list[tuple[str, str]]:
        """Every (assignor, protocol) the matrix runs for this library."""
        pairs = [(a, "classic") for a in self.assignors]
        return pairs + [(a, "consumer") for a in self.consumer_assignors]


def _python(script: str) -> Callable[[dict[str, str]], list[str]]:
    import sys

    def command(options: dict[str, str]) -> list[str]:
        return [
            sys.executable,
            str(ROOT / "peers" / "drivers" / script),
            *(f"{k}={v}" for k, v in options.items()),
        ]

    return command


def _java(options: dict[str, str]) -> list[str]:
    lib = ROOT / "peers" / "java" / "target" / "lib"
    jars = sorted(p for p in lib.glob("*.jar") if "slf4j-simple" not in p.name)
    classes = ROOT / "peers" / "java" / "driver" / "classes"
    return [
        "java",
        "-Xmx256m" if options.get("host") else "-Xmx96m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-Xshare:auto",
        "-cp",
        os.pathsep.join([str(classes), *map(str, jars)]),
        "rebalancelab.driver.ConsumerMember",
        *(f"{k}={v}" for k, v in options.items()),
    ]


def _binary(path: str) -> Callable[[dict[str, str]], list[str]]:
    def command(options: dict[str, str]) -> list[str]:
        return [str(ROOT / path), *(f"{k}={v}" for k, v in options.items())]

    return command


def _node(options: dict[str, str]) -> list[str]:
    return [
        "node",
        str(ROOT / "peers" / "kafkajs" / "driver.js"),
        *(f"{k}={v}" for k, v in options.items()),
    ]


#: The client libraries of the matrix, each pinned (``make peers`` fetches and builds them).
CLIENTS: dict[str, Client] = {
    "kafka-python": Client(
        "kafka-python",
        "3.0.12",
        _python("kafka_python_member.py"),
        {
            "range": "range",
            "roundrobin": "roundrobin",
            "sticky": "sticky",
            "cooperative-sticky": "cooperative-sticky",
        },
    ),
    "confluent-kafka": Client(
        "confluent-kafka",
        "2.16.1 (librdkafka 2.16.1)",
        _python("confluent_member.py"),
        {"range": "range", "roundrobin": "roundrobin", "cooperative-sticky": "cooperative-sticky"},
        consumer_assignors=("uniform", "range"),
    ),
    "java": Client(
        "java",
        "4.4.0",
        _java,
        {
            "range": "range",
            "roundrobin": "roundrobin",
            "sticky": "sticky",
            "cooperative-sticky": "cooperative-sticky",
        },
        consumer_assignors=("uniform", "range"),
        hosted=True,
    ),
    "franz-go": Client(
        "franz-go",
        "1.22.2",
        _binary("peers/kgo_driver/kgo-driver"),
        {
            "range": "range",
            "roundrobin": "roundrobin",
            "sticky": None,
            "cooperative-sticky": None,
        },
        consumer_assignors=("uniform", "range"),
    ),
    "sarama": Client(
        "sarama",
        "1.61.1",
        _binary("peers/sarama/sarama-driver"),
        {
            "range": "range",
            "roundrobin": "roundrobin",
            "sticky": None,
            "cooperative-sticky": None,
        },
    ),
    "kafkajs": Client(
        "kafkajs", "2.2.4", _node, {"roundrobin": "roundrobin"}, static=False, resubscribe=False
    ),
}
#: The consumer protocol's broker-side assignors -> the lab's strategies.
SERVER_ASSIGNORS = {"uniform": "uniform", "range": "server-range"}


@dataclass
class Event:
    t: float
    member: str
    event: str
    partitions: tuple[tuple[str, int], ...] = ()
    generation: int | None = None
    text: str = ""


@dataclass
class Member:
    """One member's process (an incarnation: a restarted dynamic member is a new id)."""

    name: str
    trace_id: str
    topics: list[str]
    process: subprocess.Popen
    started: float
    held: set[tuple[str, int]] = field(default_factory=set)
    assigned_once: bool = False
    alive: bool = True
    #: Whether the member lives in the group's host process (``Client.hosted``) rather than its own.
    hosted: bool = False


@dataclass(frozen=True)
class Step:
    """One command of a sequence: ``stop``, ``start``, ``crash`` (SIGKILL), ``partitions``
    (topic grows to ``count``), ``subscribe`` (member to ``topics``)."""

    action: str
    member: int = 0
    topic: str = ""
    count: int = 0
    topics: tuple[str, ...] = ()


@dataclass(frozen=True)
class Sequence:
    name: str
    steps: tuple[Step, ...]
    static: bool = False


def _rolling(static: bool, members: int) -> tuple[Step, ...]:
    return tuple(s for i in range(members) for s in (Step("stop", i), Step("start", i)))


def sequences(members: int = MEMBERS) -> dict[str, Sequence]:
    """The canonical sequences on a group of ``members`` members."""
    last = members - 1
    return {
        "rolling-dynamic": Sequence("rolling-dynamic", _rolling(False, members)),
        "rolling-static": Sequence("rolling-static", _rolling(True, members), static=True),
        "scale-out": Sequence("scale-out", (Step("start", members), Step("start", members + 1))),
        "scale-in": Sequence("scale-in", (Step("stop", last), Step("stop", last - 1))),
        "crash": Sequence("crash", (Step("crash", 1), Step("start", 1))),
        "partitions-added": Sequence(
            "partitions-added", (Step("partitions", topic="a", count=16),)
        ),
        "subscription-change": Sequence(
            "subscription-change", (Step("subscribe", 0, topics=("a",)),)
        ),
    }


def _bursts(changes: list[Event]) -> int:
    """Rounds of a step whose driver reports no generation: the bursts of ``assigned`` callbacks
    (two more than :data:`ROUND_GAP_MS` apart are two rounds)."""
    times = sorted(e.t for e in changes if e.event == "assigned")
    return sum(1 for a, b in zip([None, *times], times) if a is None or b - a > ROUND_GAP_MS)


def _event(member: Member, doc: dict[str, Any]) -> Event:
    """A driver's JSON line as the member's event."""
    return Event(
        float(doc.get("t", now_ms())),
        member.trace_id,
        doc.get("event", "?"),
        tuple((str(t), int(p)) for t, p in doc.get("partitions", [])),
        doc.get("generation"),
        str(doc.get("text", "")),
    )


class DriverError(RuntimeError):
    """A driver process ended without being told to (its stderr is in the run's log)."""


class GroupRun:
    """A group of ``members`` consumers of ``client`` on the cluster at ``bootstrap``."""

    def __init__(
        self,
        client: Client,
        assignor: str,
        protocol: str,
        bootstrap: str,
        *,
        members: int = MEMBERS,
        topics: dict[str, int] | None = None,
        static: bool = False,
        log: Path | None = None,
        standalone: frozenset[int] = frozenset(),
        nice: int = MEMBER_NICE,
    ):
        self.client, self.assignor, self.protocol = client, assignor, protocol
        #: Members to be crashed (SIGKILL), each in its own process even on a hosted client until
        #: its crash.
        self.standalone = set(standalone)
        self.host: subprocess.Popen | None = None
        self.nice = nice
        self.by_key: dict[str, Member] = {}
        self.bootstrap = bootstrap
        self.static = static
        tag = uuid.uuid4().hex[:8]
        self.group = f"{client.name}-{assignor}-{protocol}-{tag}"
        self.topic_names = {t: f"{t}-{tag}" for t in (topics or TOPICS)}
        self.counts = {self.topic_names[t]: n for t, n in (topics or TOPICS).items()}
        self.size = members
        self.members: dict[str, Member] = {}  # by name m0, m1...
        self.incarnations: dict[str, int] = {}
        self.events: list[Event] = []
        self.cond = threading.Condition()
        self.log = log
        self.problem: dict[str, Any] | None = None
        self.steps: list[dict[str, Any]] = []
        self.defects: list[str] = []
        self.first_wall = datetime.datetime.now(datetime.UTC)
        self._stopped_at: float | None = None

    # ------------------------------------------------------------- processes
    def _group_options(self) -> dict[str, str]:
        return {
            "bootstrap": self.bootstrap,
            "group": self.group,
            "assignor": self.assignor,
            "protocol": self.protocol,
            "session_ms": str(SESSION_MS),
            "heartbeat_ms": str(HEARTBEAT_MS),
        }

    def _member_options(self, name: str, topics: list[str]) -> dict[str, str]:
        options = {"member": name, "topics": ",".join(topics)}
        if self.static:
            options["instance"] = name
        return options

    def _options(self, name: str, topics: list[str]) -> dict[str, str]:
        return self._group_options() | self._member_options(name, topics)

    def _spawn(self, command: list[str]) -> subprocess.Popen:
        return subprocess.Popen(
            ["nice", "-n", str(self.nice), *command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL if self.log is None else open(self.log, "ab"),  # noqa: SIM115
            text=True,
            bufsize=1,
        )

    def _host(self) -> subprocess.Popen:
        """The group's host process (started on first use), its lines read by one thread."""
        if self.host is None:
            self.host = self._spawn(self.client.command(self._group_options() | {"host": "1"}))
            threading.Thread(target=self._read_host, args=(self.host,), daemon=True).start()
        return self.host

    def _send(self, member: Member, command: str) -> None:
        """A command line to a member's driver (prefixed with its key in a host)."""
        assert member.process.stdin is not None
        try:
            member.process.stdin.write(
                (f"{member.trace_id} " if member.hosted else "") + command + "\n"
            )
            member.process.stdin.flush()
        except OSError:
            pass

    def start(self, index: int, topics: list[str] | None = None) -> Member:
        name = f"m{index}"
        if topics is None:
            before = self.members.get(name)
            topics = before.topics if before else sorted(self.counts)
        n = self.incarnations.get(name, -1) + 1
        self.incarnations[name] = n
        trace_id = name if (self.static or n == 0) else f"{name}.{n}"
        if self.client.hosted and index not in self.standalone:
            host = self._host()
            member = Member(name, trace_id, list(topics), host, now_ms(), hosted=True)
            with self.cond:
                self.members[name] = member
                self.by_key[trace_id] = member
            options = self._member_options(name, topics)
            assert host.stdin is not None
            host.stdin.write(
                f"start {trace_id} " + " ".join(f"{k}={v}" for k, v in options.items()) + "\n"
            )
            host.stdin.flush()
            return member
        process = self._spawn(self.client.command(self._options(name, topics)))
        member = Member(name, trace_id, list(topics), process, now_ms())
        with self.cond:
            self.members[name] = member
        threading.Thread(target=self._read, args=(member,), daemon=True).start()
        return member

    def _read_host(self, host: subprocess.Popen) -> None:
        """The host's lines, each to the member its ``key`` names."""
        assert host.stdout is not None
        for line in host.stdout:
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            with self.cond:
                member = self.by_key.get(str(doc.get("key")))
                if member is None:
                    continue
                self._apply(member, _event(member, doc))
                if doc.get("event") == "exited":
                    member.alive = False
                self.cond.notify_all()
        with self.cond:
            for member in self.by_key.values():
                if member.alive and member.name in self.members:
                    self._apply(member, Event(now_ms(), member.trace_id, "exited"))
                    member.alive = False
            self.cond.notify_all()

    def _read(self, member: Member) -> None:
        assert member.process.stdout is not None
        for line in member.process.stdout:
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            with self.cond:
                self._apply(member, _event(member, doc))
                self.cond.notify_all()
        with self.cond:
            if member.alive:
                self._apply(member, Event(now_ms(), member.trace_id, "exited"))
                member.alive = False
            self.cond.notify_all()

    def _apply(self, member: Member, event: Event) -> None:
        self.events.append(event)
        if self.log is not None:
            with open(self.log, "a") as out:
                out.write(json.dumps(event.__dict__) + "\n")
        if event.event == "assigned":
            member.held |= set(event.partitions)
            member.assigned_once = True
        elif event.event in ("revoked", "lost"):
            member.held -= set(event.partitions)
        elif event.event in ("closed", "exited", "killed"):
            member.held.clear()

    def stop(self, index: int) -> None:
        member = self.members[f"m{index}"]
        self._send(member, "stop")
        if member.hosted:  # its consumer closes; the host lives on
            deadline = time.monotonic() + 30
            with self.cond:
                while member.alive and not any(
                    e.member == member.trace_id and e.event == "closed" for e in self.events
                ):
                    if not self.cond.wait(timeout=max(0.0, deadline - time.monotonic())):
                        self.defects.append(f"{member.trace_id} did not close in 30 s")
                        break
                member.alive = False
                del self.members[member.name]
            return
        try:
            member.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            member.process.kill()
            member.process.wait()
            self.defects.append(f"{member.trace_id} did not close in 30 s")
        with self.cond:
            member.alive = False
            self._apply(member, Event(now_ms(), member.trace_id, "closed"))
            del self.members[member.name]

    def crash(self, index: int) -> None:
        member = self.members[f"m{index}"]
        assert not member.hosted, "a crashed member runs in its own process (standalone)"
        self.standalone.discard(index)
        os.kill(member.process.pid, signal.SIGKILL)
        with self.cond:
            member.alive = False
            self._apply(member, Event(now_ms(), member.trace_id, "killed"))
            del self.members[member.name]
        member.process.wait()

    def subscribe(self, index: int, topics: list[str]) -> None:
        member = self.members[f"m{index}"]
        member.topics = list(topics)
        self._send(member, "subscribe " + ",".join(topics))

    def close(self) -> None:
        processes = [m.process for m in self.members.values()]
        for process in [*processes, *([self.host] if self.host else [])]:
            if process.poll() is None:
                process.kill()
                process.wait()

    # ------------------------------------------------------------- settling
    def _complete(self, since: float, need_event: bool) -> tuple[bool, int]:
        """Whether the group is complete now, and the unowned partitions (caller holds cond)."""
        dead = [m.trace_id for m in self.members.values() if not m.alive]
        if dead:
            raise DriverError(f"the driver of {', '.join(dead)} exited on its own")
        live = list(self.members.values())
        holders: dict[tuple[str, int], int] = {}
        for m in live:
            for tp in m.held:
                holders[tp] = holders.get(tp, 0) + 1
        subscribed = {t for m in live for t in m.topics}
        wanted = {(t, p) for t in subscribed for p in range(self.counts[t])}
        unowned = sum(1 for tp in wanted if tp not in holders)
        ok = (
            unowned == 0
            and all(n == 1 for n in holders.values())
            and all(tp[0] in m.topics for m in live for tp in m.held)
            and all(m.assigned_once for m in live)
            and (not need_event or any(e.t >= since and e.event in CALLBACKS for e in self.events))
        )
        return ok, unowned

    def settle(self, since: float, need_event: bool = True) -> dict[str, Any]:
        """Wait until the group settles after a command at ``since`` (ms); its ``observed``."""
        deadline = time.monotonic() + STEP_TIMEOUT
        with self.cond:
            while True:
                ok, _ = self._complete(since, need_event)
                last = max((e.t for e in self.events), default=since)
                if ok and now_ms() - last >= QUIET_MS:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    self.defects.append(
                        f"step {len(self.steps) + 1}: no settled assignment in {STEP_TIMEOUT:g} s"
                    )
                    break
                self.cond.wait(timeout=min(left, 0.1))
            return self._observed(since)

    def _observed(self, since: float) -> dict[str, Any]:
        """The step's observed object from the events after ``since`` (caller holds cond)."""
        window = [e for e in self.events if e.t >= since]
        changes = [e for e in window if e.event in CALLBACKS]
        end = max((e.t for e in changes), default=since)
        generations = {
            e.generation
            for e in changes
            if e.event == "assigned" and e.generation is not None and e.generation >= 0
        }
        assignment: dict[str, dict[str, list[int]]] = {}
        seen: set[tuple[str, int]] = set()
        for m in self.members.values():
            held: dict[str, list[int]] = {}
            for t, p in sorted(m.held):
                if (t, p) in seen:  # held twice: the defect is noted, the trace keeps one
                    self.defects.append(f"step {len(self.steps) + 1}: {t}-{p} held twice")
                    continue
                seen.add((t, p))
                held.setdefault(self._short(t), []).append(p)
            assignment[m.trace_id] = held
        return {
            **({"generation": max(generations)} if generations else {}),
            "assignment": assignment,
            "rounds": max(1, len(generations) or _bursts(changes)),
            "settle_ms": max(0, round(end - since)),
            "unowned_partition_ms": round(self._unowned_ms(since, end)),
        }

    def _unowned_ms(self, since: float, end: float) -> float:
        """Partition-ms without a live owner between ``since`` and ``end``, replayed from the
        events (each holder's set as its callbacks left it)."""
        held: dict[str, set[tuple[str, int]]] = {}
        subs: dict[str, set[str]] = {}
        ordered = sorted(self.events, key=lambda e: e.t)
        for e in ordered:
            if e.t < since:
                self._replay(held, e)
        for m in self.members.values():
            subs[m.trace_id] = set(m.topics)
        wanted = {(t, p) for ts in subs.values() for t in ts for p in range(self.counts[t])}
        total, t0 = 0.0, since
        for e in [e for e in ordered if since <= e.t <= end]:
            owned = set().union(*held.values()) if held else set()
            total += len(wanted - owned) * max(0.0, e.t - t0)
            t0 = max(t0, e.t)
            self._replay(held, e)
        return total

    @staticmethod
    def _replay(held: dict[str, set[tuple[str, int]]], e: Event) -> None:
        mine = held.setdefault(e.member, set())
        if e.event == "assigned":
            mine |= set(e.partitions)
        elif e.event in ("revoked", "lost"):
            mine -= set(e.partitions)
        elif e.event in ("closed", "exited", "killed"):
            mine.clear()

    def _short(self, topic: str) -> str:
        return next(s for s, full in self.topic_names.items() if full == topic)

    # ------------------------------------------------------------- sequences
    def begin(self) -> None:
        """Start the members and record the settled group as the trace's problem."""
        since = now_ms()
        for i in range(self.size):
            self.start(i)
        seen = self.settle(since)
        members = []
        for m in self.members.values():
            doc: dict[str, Any] = {"id": m.trace_id, "topics": [self._short(t) for t in m.topics]}
            if seen["assignment"].get(m.trace_id):
                doc["owned"] = seen["assignment"][m.trace_id]
            members.append(doc)
        self.problem = {
            "topics": {self._short(t): n for t, n in self.counts.items()},
            "members": members,
        }

    def run_step(self, step: Step, admin: Any) -> None:
        """One command of a sequence and the step it makes."""
        events: dict[str, Any] = {}
        since = now_ms()
        if step.action == "stop":
            member = self.members[f"m{step.member}"]
            self.stop(step.member)
            if not self.static:
                events["leave"] = [member.trace_id]
        elif step.action == "crash":
            member = self.members[f"m{step.member}"]
            self.crash(step.member)
            events["leave"] = [member.trace_id]
        elif step.action == "start":
            member = self.start(step.member)
            if not self.static or member.name not in self._in_trace():
                events["join"] = [
                    {"id": member.trace_id, "topics": [self._short(t) for t in member.topics]}
                ]
        elif step.action == "partitions":
            from kafka.admin import NewPartitions

            full = self.topic_names[step.topic]
            admin.create_partitions({full: NewPartitions(step.count)})
            self.counts[full] = step.count
            events["topics"] = {step.topic: step.count}
        elif step.action == "subscribe":
            full = [self.topic_names[t] for t in step.topics]
            member = self.members[f"m{step.member}"]
            self.subscribe(step.member, full)
            events["subscribe"] = {member.trace_id: list(step.topics)}
        else:
            raise ValueError(step.action)
        if self.static and step.action == "stop":
            self._stopped_at = since  # the restart that follows is the step, timed from here
            return
        if self._stopped_at is not None:
            since, self._stopped_at = self._stopped_at, None
        # A subscription change that leaves the member nothing to give up may need no callback.
        observed = self.settle(since, need_event=step.action != "subscribe")
        self.steps.append({**events, "observed": observed})

    def _in_trace(self) -> set[str]:
        ids = {m["id"] for m in (self.problem or {}).get("members", [])}
        for s in self.steps:
            ids |= {j["id"] for j in s.get("join", [])}
            ids -= set(s.get("leave", []))
        return ids

    def document(self) -> dict[str, Any]:
        """The run as a recorded group trace (docs/formats.md)."""
        assert self.problem is not None
        return {
            "kind": "group-trace",
            "recorded": {
                "group": self.group,
                "protocol": self.protocol,
                "assignor": self.assignor,
                "source": f"{self.client.name} {self.client.version} callbacks",
                "from": self.first_wall.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "to": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            },
            "problem": self.problem,
            "steps": self.steps,
        }


def create_topics(admin: Any, run: GroupRun) -> None:
    from kafka.admin import NewTopic

    admin.create_topics([NewTopic(name, n, 1) for name, n in run.counts.items()], timeout_ms=30000)


@dataclass
class Outcome:
    """One run of the matrix: the trace, the defects, the judged figures."""

    client: str
    assignor: str
    protocol: str
    sequence: str
    document: dict[str, Any]
    defects: list[str]
    row: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    #: What ``rebalance-lab record`` wrote while the run went on (``record=True``), or ``None``.
    recorded: dict[str, Any] | None = None
    record_error: str = ""


def run_sequence(
    client: Client,
    assignor: str,
    protocol: str,
    sequence: Sequence,
    bootstrap: str,
    admin: Any,
    *,
    members: int = MEMBERS,
    log: Path | None = None,
    record: bool = False,
    nice: int = MEMBER_NICE,
) -> Outcome:
    """Drive a fresh group through ``sequence``; its trace and defects (not judged).  With
    ``record`` (and a ``log`` path) ``rebalance-lab record`` watches the group meanwhile (its trace
    beside the log, ``.recorded.json``)."""
    started = time.monotonic()
    run = GroupRun(
        client,
        assignor,
        protocol,
        bootstrap,
        members=members,
        static=sequence.static,
        log=log,
        standalone=frozenset(s.member for s in sequence.steps if s.action == "crash"),
        nice=nice,
    )
    create_topics(admin, run)
    recorder = None
    try:
        run.begin()
        if record and log is not None:
            recorder = _start_record(run, log.with_suffix(".recorded.json"))
        for step in sequence.steps:
            run.run_step(step, admin)
        if recorder is not None:
            time.sleep(1.0)  # the recorder's last poll sees the settled group
    finally:
        run.close()
        recorded, record_error = _stop_record(recorder)
        try:
            admin.delete_topics(list(run.counts), timeout_ms=30000)
        except Exception:  # noqa: BLE001 - cleaning up only
            pass
    return Outcome(
        client.name,
        assignor,
        protocol,
        sequence.name,
        run.document(),
        run.defects,
        seconds=time.monotonic() - started,
        recorded=recorded,
        record_error=record_error,
    )


def _start_record(run: GroupRun, out: Path) -> tuple[subprocess.Popen, Path]:
    """``rebalance-lab record`` on the run's group (its traces are the cross-check)."""
    import sys

    command = [sys.executable, "-m", "experiments.cli", "record"]
    command += ["--bootstrap-server", run.bootstrap, "--group", run.group]
    command += ["--poll-interval", "0.1", "--out", str(out)]
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not out.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)  # the recorder has seen the settled group: its trace's start
    return process, out


def _stop_record(
    recorder: tuple[subprocess.Popen, Path] | None,
) -> tuple[dict[str, Any] | None, str]:
    """Stop the recorder (SIGTERM) and read its trace: (document, its stderr)."""
    if recorder is None:
        return None, ""
    process, out = recorder
    if process.poll() is None:
        process.terminate()
    try:
        _, errors = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        _, errors = process.communicate()
    document = json.loads(out.read_text()) if out.exists() else None
    return document, (errors or "").strip()


def strategy_of(client: Client, assignor: str, protocol: str) -> str | None:
    """The lab's strategy that a client's assignor implements (``None``: none)."""
    if protocol == "consumer":
        return SERVER_ASSIGNORS.get(assignor)
    return client.assignors.get(assignor)


def judge(outcome: Outcome, judged_on: str = "sticky", time_limit: float = 20.0) -> dict[str, Any]:
    """The run's row: valid steps, balance gap to the per-step optimum, moves beside the per-step
    and horizon optima, rounds, partition-seconds without an owner (judged on ``judged_on``)."""
    from models.trace import trace
    from models.trace.observed import imbalance, observed_run
    from problems.trace import load_trace

    loaded = load_trace(outcome.document)
    seen = observed_run(loaded, judged_on)
    step = trace(loaded, judged_on, "step", time_limit=time_limit)
    horizon = trace(loaded, judged_on, "horizon", time_limit=time_limit)
    valid = sum(
        1
        for s in seen.steps[1:]
        if s.result is not None and s.result.evaluation is not None and s.result.evaluation.valid
    )
    gap = 0
    for mine, best in zip(seen.steps[1:], step.steps[1:]):
        a, b = imbalance(mine), imbalance(best)
        if a is not None and b is not None:
            gap += a - b
    observed = outcome.document["steps"]
    return {
        "client": outcome.client,
        "assignor": outcome.assignor,
        "protocol": outcome.protocol,
        "sequence": outcome.sequence,
        "steps": len(observed),
        "valid_steps": valid - doubled_steps(outcome.defects),
        "balance_gap": gap,
        "moves": seen.moves,
        "step_optimum_moves": step.moves,
        "horizon_moves": horizon.moves,
        "horizon_status": horizon.status,
        "moves_above_horizon": seen.moves - horizon.moves,
        "idle_steps": idle_steps(outcome.document),
        "rounds": sum(s["observed"]["rounds"] for s in observed),
        "unowned_partition_s": round(
            sum(s["observed"]["unowned_partition_ms"] for s in observed) / 1000, 1
        ),
        "defects": list(outcome.defects),
        "seconds": round(outcome.seconds, 1),
        **(
            {}
            if outcome.recorded is None
            else {
                "recorded_steps": len(outcome.recorded["steps"]),
                "record_agrees": member_sets(outcome.recorded) == member_sets(outcome.document),
            }
        ),
    }


def doubled_steps(defects: list[str]) -> int:
    """Steps in which a partition was held twice (the trace keeps one holder, so the evaluator
    passes them: they are invalid all the same), from the run's defects."""
    return len({d.split(":", 1)[0] for d in defects if d.endswith("held twice")})


def member_sets(document: dict[str, Any]) -> list[list[str]]:
    """Per step of a group trace, the names of the members that held its assignment (a client's
    member id starts with its ``client.id``, the member's name: ``m3-5f0c...`` is ``m3``; a
    rejoined dynamic member ``m0.1`` is ``m0``; a consumer-protocol member id is named by the
    recording's ``clients``)."""
    names = document.get("recorded", {}).get("clients", {})
    return [
        sorted(
            names.get(m, m).split("-", 1)[0].split(".", 1)[0]
            for m in step["observed"]["assignment"]
        )
        for step in document["steps"]
    ]


def idle_steps(document: dict[str, Any]) -> int:
    """Steps after which a member of the group held nothing although the group has at least as
    many partitions of each member's topics as members: every assignor of the matrix gives each
    such member a partition, so the member was out of the group's last generation (stuck in a
    join, or expelled)."""
    counts = dict(document["problem"]["topics"])
    idle = 0
    for step in document["steps"]:
        counts.update(step.get("topics", {}))
        held = step["observed"]["assignment"]
        if len(held) <= min(counts.values()) and any(not h for h in held.values()):
            idle += 1
    return idle
