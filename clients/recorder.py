"""A live consumer group's rebalances as a recorded group trace (``rebalance-lab record``).

:class:`GroupRecorder` turns successive observations of one group (:class:`Observation`: its
state, its members with their subscriptions and the partitions the coordinator assigned them, the
partition counts of its topics) into a group-trace document (docs/formats.md, "Recorded traces"):
the problem is the group as first seen (members' ``owned`` = what they held), and every rebalance
that ended with a settled group is one step, with the events it implies (members that left and
joined, changed subscriptions, topics added or grown) and an ``observed`` object: the assignment
the members held afterwards, the rounds it took and how long the group had partitions without an
owner.

A group is *settled* when the coordinator calls it ``Stable`` and every partition of the topics
its members subscribe is held by exactly one member.  A ``Stable`` group with partitions still
unowned is between two rounds (the cooperative protocol revokes first and assigns in a second
rebalance); it counts as settled only once the same view has lasted :data:`PATIENCE` polls (a
subscription to partitions that no member can be given).

Member ids: a static member (``group.instance.id``, KIP-345) is recorded by its instance id, so a
restart within its session timeout (a new member id, the same assignment, no rebalance) is no
step; a dynamic member by the member id the coordinator gave it, so a restart is a leave and a
join of another id, as Kafka sees it.

Times come from the observations: ``settle_ms`` runs from the midpoint between the last settled
observation and the first that differs to the first settled one after it; ``unowned_partition_ms``
integrates the partitions no member holds over the observations between (each observation's count
held until the next).  While a classic group rebalances under an eager assignor (every member
revokes all it holds when it rejoins) all its partitions count as unowned.  The resolution is the
interval between observations.
"""

from __future__ import annotations

import datetime
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Polls a Stable group with unowned partitions must keep the same view to count as settled.
PATIENCE = 5
#: Assignors of the classic protocol that revoke nothing when a rebalance starts (KIP-429).
COOPERATIVE = frozenset({"cooperative-sticky"})

Assignment = dict[str, dict[str, list[int]]]


@dataclass(frozen=True)
class Member:
    """One member as the coordinator describes it."""

    member_id: str
    instance_id: str | None
    topics: tuple[str, ...]
    assignment: dict[str, list[int]]
    rack: str | None = None
    client_id: str | None = None  # the consumer protocol's member ids are opaque: this names it

    @property
    def trace_id(self) -> str:
        """The id in the trace: the instance id of a static member, else the member id."""
        return self.instance_id or self.member_id


@dataclass(frozen=True)
class Observation:
    """One look at a group: ``when`` in seconds (monotonic), ``wall`` the UTC time."""

    when: float
    wall: datetime.datetime
    state: str
    protocol: str
    assignor: str
    members: tuple[Member, ...]
    counts: dict[str, int]
    generation: int | None = None  # set on a coordinator record
    epoch: int | None = None  # a polled consumer-protocol group's epoch (no record)
    #: A consumer-protocol record's settled rebalance, timed from the records themselves: the
    #: milliseconds from the epoch bump, the partition-milliseconds without an owner meanwhile
    #: and the group epochs it took.
    settle_ms: int | None = None
    unowned_ms: int | None = None
    rounds: int | None = None
    #: Kafka's topic ids by name (base64 ``Uuid``), which KIP-848's server assignors order by.
    topic_ids: dict[str, str] | None = None

    def held(self) -> Assignment:
        """``{trace id: {topic: partitions}}`` of every member."""
        return {
            m.trace_id: {t: list(p) for t, p in m.assignment.items() if p} for m in self.members
        }

    def subscribed(self) -> set[str]:
        return {t for m in self.members for t in m.topics}

    def unowned(self) -> int:
        """Partitions of subscribed topics that no member holds (the ones held twice count
        once: the coordinator never hands a partition to two members)."""
        held = {(t, p) for m in self.members for t, ps in m.assignment.items() for p in ps}
        topics = self.subscribed()
        return sum(1 for t in topics for p in range(self.counts.get(t, 0)) if (t, p) not in held)

    def complete(self) -> bool:
        return self.state == "Stable" and self.unowned() == 0

    def view(
        self,
    ) -> tuple[
        tuple[tuple[str, tuple[str, ...], tuple[tuple[str, tuple[int, ...]], ...]], ...],
        tuple[tuple[str, int], ...],
    ]:
        """What a step compares: members, their subscriptions and holdings, the topics."""
        return (
            tuple(
                sorted(
                    (
                        m.trace_id,
                        m.topics,
                        tuple(sorted((t, tuple(p)) for t, p in m.assignment.items())),
                    )
                    for m in self.members
                )
            ),
            tuple(sorted(self.counts.items())),
        )


def _settled(seen: Observation) -> bool:
    """A Stable group with every subscribed partition held, or an empty one."""
    return seen.complete() or (seen.state == "Empty" and not seen.members)


def utc(wall: datetime.datetime) -> str:
    """``2026-11-28T07:00:00.123Z``."""
    return wall.astimezone(datetime.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class GroupRecorder:
    """The trace of one group, built observation by observation (:meth:`observe`)."""

    group: str
    source: str = "admin API"
    poll_ms: int | None = None
    problem: dict[str, Any] | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)
    protocol: str = "classic"
    assignor: str = ""
    first: datetime.datetime | None = None
    last: datetime.datetime | None = None
    _settled: Observation | None = None  # the group after the last step
    _previous: Observation | None = None  # the last observation
    _settled_when: float = 0.0  # the last observation of the settled group
    _since: float | None = None  # when the rebalance in progress began
    _unowned_ms: float = 0.0
    _rounds: int = 0
    _unstable: bool = False  # the last observation was not settled
    _same: int = 0  # observations in a row with the same incomplete Stable view
    generation: int | None = None  # the last generation a coordinator record showed
    records: bool = False  # the steps come from the coordinator's records
    _record_rounds: int = 0  # generations recorded since the last step
    _started_wall: datetime.datetime | None = None  # when the group was first seen settled
    clients: dict[str, str] = field(default_factory=dict)  # member id -> client id

    # ------------------------------------------------------------- observing
    def observe(self, seen: Observation) -> bool:
        """Take one observation; ``True`` when it ended a rebalance (a new step).

        An observation with a ``generation`` is one of the coordinator's records: once one has
        come, the records alone make the steps (one per completed generation, none missed), and
        the polls only date the start of each rebalance and the partitions left without an
        owner meanwhile."""
        self.first = min(self.first or seen.wall, seen.wall)
        self.last = max(self.last or seen.wall, seen.wall)
        if seen.assignor:
            self.assignor = seen.assignor
        self.protocol = seen.protocol
        if seen.generation is not None:
            return self._record(seen)
        previous, self._previous = self._previous, seen
        if self.problem is None:
            if _settled(seen):
                self._start(seen)
            return False
        assert self._settled is not None
        if previous is None:  # the problem came from a coordinator record
            previous = seen
        if self._since is not None:
            self._unowned_ms += self._unowned_count(previous) * (seen.when - previous.when) * 1000
        settled = _settled(seen)
        if not settled and seen.state == "Stable":
            self._same = self._same + 1 if previous.view() == seen.view() else 1
            settled = self._same >= PATIENCE
        if not settled:
            if self._since is None:
                self._since = (self._settled_when + seen.when) / 2
                self._unowned_ms = self._unowned_count(seen) * (seen.when - self._since) * 1000
            if seen.state != "Stable" and (not self._unstable or previous.state == "Stable"):
                self._rounds += 1  # the group entered a rebalance
            self._unstable = True
            return False
        self._unstable = False
        self._same = 0
        if seen.view() == self._settled.view():
            self._settled_when = seen.when
            if not self.records or self._rounds == 0:
                self._since, self._unowned_ms, self._rounds = None, 0.0, 0
            return False
        if self.records:
            return False  # the coordinator's record makes the step
        self._step(seen)
        return True

    def _record(self, seen: Observation) -> bool:
        """A coordinator record: a generation the group completed."""
        assert seen.generation is not None
        self.follow_records()
        if self.generation is not None and seen.generation <= self.generation:
            return False  # read twice
        if self.problem is None or self._settled is None:
            if _settled(seen):
                self._start(seen)
                self.generation = seen.generation
            return False
        if (
            self.generation is None
            and self._started_wall is not None
            and seen.wall <= self._started_wall
        ):
            return False  # a generation from before the group was first seen (by a poll)
        if not seen.members and not self._settled.members:
            self.generation = seen.generation
            return False  # an empty group written again (created, or loaded): no rebalance
        self.generation = seen.generation
        self._record_rounds += 1
        if not _settled(seen):  # a round of a rebalance that goes on (cooperative: revoke first)
            if self._since is None:
                self._since = (self._settled_when + seen.when) / 2
            return False
        self._rounds = self._record_rounds
        self._step(seen)
        self._record_rounds = 0
        return True

    def _unowned_count(self, seen: Observation) -> int:
        """Partitions without an owner at ``seen`` (a rebalancing group's description carries no
        subscriptions: the topics are the settled group's and the ones seen)."""
        topics = seen.subscribed() | (self._settled.subscribed() if self._settled else set())
        if (
            seen.state in ("PreparingRebalance", "CompletingRebalance")
            and self.protocol == "classic"
            and self.assignor not in COOPERATIVE
        ):
            return sum(seen.counts.get(t, 0) for t in topics)
        held = {(t, p) for m in seen.members for t, ps in m.assignment.items() for p in ps}
        return sum((t, p) not in held for t in topics for p in range(seen.counts.get(t, 0)))

    def follow_records(self, follow: bool = True) -> None:
        """Make the steps from the coordinator's records (``follow=False``: from the polls again,
        when the records can no longer be read)."""
        if follow and not self.records:
            self.source = "coordinator records"
        elif not follow and self.records:
            self.source = "coordinator records, then admin API"
        self.records = follow

    def topics(self) -> set[str]:
        """Every topic of the trace so far (the ones no member subscribes any more included)."""
        return set(self._settled.counts) if self._settled is not None else set()

    def _between(self, before: Observation, after: Observation) -> int:
        """Partitions without an owner during a rebalance seen only by its result: every
        subscribed one under an eager classic assignor, else the ones whose holder changed."""
        if self.protocol == "classic" and self.assignor not in COOPERATIVE:
            return sum(after.counts.get(t, 0) for t in after.subscribed())
        old = {
            (t, p): m.trace_id for m in before.members for t, ps in m.assignment.items() for p in ps
        }
        return sum(
            old.get((t, p)) != m.trace_id
            for m in after.members
            for t, ps in after.held().get(m.trace_id, {}).items()
            for p in ps
        )

    def _start(self, seen: Observation) -> None:
        members = []
        for m in seen.members:
            member: dict[str, Any] = {"id": m.trace_id, "topics": list(m.topics)}
            held = {t: list(p) for t, p in m.assignment.items() if p}
            if held:
                member["owned"] = held
            if m.rack:
                member["rack"] = m.rack
            if m.instance_id:
                member["instance_id"] = m.instance_id
            members.append(member)
        self.problem = {"topics": dict(sorted(seen.counts.items())), "members": members}
        if seen.topic_ids is not None and set(seen.counts) <= set(seen.topic_ids):
            self.problem["topic_ids"] = {t: seen.topic_ids[t] for t in sorted(seen.counts)}
        self._started_wall = seen.wall
        self._name(seen)
        self._settled, self._settled_when = seen, seen.when

    def _name(self, seen: Observation) -> None:
        """Remember the client id of every member that has one (consumer protocol)."""
        self.clients.update({m.trace_id: m.client_id for m in seen.members if m.client_id})

    def _step(self, seen: Observation) -> None:
        before = self._settled
        assert before is not None
        old = {m.trace_id: m for m in before.members}
        new = {m.trace_id: m for m in seen.members}
        step: dict[str, Any] = {}
        leave = [i for i in old if i not in new]
        if leave:
            step["leave"] = leave
        joins = []
        for i, m in new.items():
            if i in old:
                continue
            member: dict[str, Any] = {"id": i, "topics": list(m.topics)}
            if m.rack:
                member["rack"] = m.rack
            if m.instance_id:
                member["instance_id"] = m.instance_id
            joins.append(member)
        if joins:
            step["join"] = joins
        counts = dict(before.counts)
        grown = {t: n for t, n in seen.counts.items() if counts.get(t) != n and n > 0}
        gone = {t: 0 for t in counts if t not in seen.counts}
        if grown or gone:
            step["topics"] = {**grown, **gone}
        added = [t for t in seen.counts if t not in counts and seen.counts[t] > 0]
        if self.problem and "topic_ids" in self.problem and added:
            ids = seen.topic_ids or {}
            step["topic_ids"] = {t: ids[t] for t in added if t in ids}
        subscribe = {
            i: list(m.topics) for i, m in new.items() if i in old and old[i].topics != m.topics
        }
        if subscribe:
            step["subscribe"] = subscribe
        started = self._since if self._since is not None else (self._settled_when + seen.when) / 2
        if self._since is None:  # the whole rebalance fell between two observations
            self._unowned_ms = self._between(before, seen) * (seen.when - started) * 1000
        generation = seen.generation if seen.generation is not None else seen.epoch
        step["observed"] = {
            **({} if generation is None else {"generation": generation}),
            "assignment": seen.held(),
            "rounds": max(1, self._rounds if seen.rounds is None else seen.rounds),
            "settle_ms": max(
                0,
                round((seen.when - started) * 1000) if seen.settle_ms is None else seen.settle_ms,
            ),
            "unowned_partition_ms": max(
                0, round(self._unowned_ms) if seen.unowned_ms is None else seen.unowned_ms
            ),
        }
        self._name(seen)
        self.steps.append(step)
        self._settled, self._settled_when = seen, seen.when
        self._since, self._unowned_ms, self._rounds = None, 0.0, 0
        self._unstable, self._same = False, 0

    # ---------------------------------------------------------------- output
    def document(self) -> dict[str, Any] | None:
        """The trace so far (``None`` before the group was first seen settled)."""
        if self.problem is None:
            return None
        recorded: dict[str, Any] = {
            "group": self.group,
            "protocol": self.protocol,
            "assignor": self.assignor,
            "source": self.source,
            "from": utc(self.first or datetime.datetime.now(datetime.UTC)),
            "to": utc(self.last or datetime.datetime.now(datetime.UTC)),
        }
        if self.poll_ms is not None:
            recorded["poll_ms"] = self.poll_ms
        if self.clients:
            recorded["clients"] = dict(sorted(self.clients.items()))
        return {
            "kind": "group-trace",
            "recorded": recorded,
            "problem": self.problem,
            "steps": self.steps,
        }


def write_atomically(path: str | os.PathLike[str], document: Mapping[str, Any]) -> None:
    """Write ``document`` as JSON to ``path`` through a temporary file in the same folder and a
    rename: a reader sees the old file or the new one, never half of one."""
    import orjson

    target = Path(path)
    data = orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
