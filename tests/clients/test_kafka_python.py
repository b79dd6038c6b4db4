"""clients/kafka_python.py: rebalance-lab's assignors inside real kafka-python consumers of the live cluster.

For each strategy a group of three consumers (one thread each) settles; one leaves and, once the
group has settled again, one joins.  After every step:

* each consumer's actual assignment equals what ``models.solve`` computes for the document the
  leader assigned, and on the leave and join steps that document is the one the test predicts
  from what it saw before (subscriptions, the previous actual assignments as ``owned``, their
  generation, the known lags, the consumers' racks ``r1``-``r3`` and the racks of the partitions'
  replicas as the cluster places them, ``partition_racks``): so the moves equal the predicted ones;
  with the racks, range's and sticky's answers are KIP-881's rack-aware ones (for range the racks
  are checked to change the answer);
* ``sticky`` and ``lag-aware`` run over the SASL_SSL listener (PLAIN, SCRAM-SHA-256), the
  consumers and the lag-aware assignor's admin client with the client properties' settings;
* the messages produced before the group started are all consumed exactly once across the
  rebalances (offsets committed before each rebalance and on leaving; checked on every strategy
  but ``lag-aware``, whose consumers never commit so that the lags it reads stay the known ones).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from types import SimpleNamespace

import pytest

from clients.kafka_python import assignor
from clients.security import command_config
from models import solve
from problems import load_problem
from support.kafka_support import commit, create_topic, produce

pytestmark = pytest.mark.kafka

SETTLE_TIMEOUT = 60.0
#: kafka-python 3.0.12 sometimes never reads the leader's SyncGroup response (the coordinator logs
#: "Assignment received from leader" and the followers get theirs; the leader stays in its join, its
#: heartbeats off) until the coordinator removes it on session expiry: with Kafka's default 45 s
#: such a stall takes most of a test's time; the cluster allows sessions down to 1 s.
SESSION_TIMEOUT_MS = 5_000
#: Each consumer's rack (client.rack); partition p of every topic has its one replica on broker
#: p % 3 + 1.
RACKS = {"c0": "r1", "c1": "r2", "c2": "r3", "c3": "r1"}
#: The strategies whose groups run over the SASL_SSL listener, with the SASL mechanism.
SECURE = {"sticky": "PLAIN", "lag-aware": "SCRAM-SHA-256"}


class NotSettled(AssertionError):
    """The group did not reach one stable, full assignment in time (kafka-python can fence a member that
    then never rejoins; seen on a loaded machine and once on a quiet one)."""


class Member(threading.Thread):
    """One kafka-python consumer polling in its own thread; records what it consumes."""

    def __init__(
        self,
        name: str,
        bootstrap: str,
        group: str,
        topics: list[str],
        strategy: str,
        sink: list,
        commits: bool,
        delay: float,
        rack: str,
        settings: dict,
    ):
        super().__init__(name=name, daemon=True)
        options = (
            {"bootstrap_servers": bootstrap, "group_id": group, "settings": settings}
            if strategy == "lag-aware"
            else {}
        )
        self.rack = rack
        self.assignor = assignor(strategy, rack=rack, **options)
        self.documents: list[
            tuple[float, dict]
        ] = []  # (when, document) this member answered as the leader
        answer = self.assignor.assign

        def recording(cluster, members):
            result = answer(cluster, members)
            self.documents.append((time.monotonic(), self.assignor.last_document))
            return result

        self.assignor.assign = recording
        self.config = dict(
            bootstrap_servers=bootstrap,
            group_id=group,
            client_id=name,
            client_rack=rack,
            partition_assignment_strategy=[self.assignor],
            enable_auto_commit=commits,
            auto_commit_interval_ms=600_000,
            auto_offset_reset="earliest",
            session_timeout_ms=SESSION_TIMEOUT_MS,
            heartbeat_interval_ms=500,
            max_poll_records=2,
            fetch_max_wait_ms=50,
            metadata_max_age_ms=5_000,
            **settings,
        )
        self.topics, self.sink, self.delay = topics, sink, delay
        self.assignment: dict[str, list[int]] = {}
        self.member_id: str | None = None
        self.stopping = threading.Event()
        self.rejoin = threading.Event()  # set by Group.settle for a member the group left behind
        self.error: BaseException | None = None

    def run(self):
        from kafka import KafkaConsumer

        try:
            consumer = KafkaConsumer(**self.config)
            consumer.subscribe(self.topics)
            while not self.stopping.is_set():
                if self.rejoin.is_set():  # kafka-python left out of a Stable group: join it again
                    self.rejoin.clear()
                    consumer.unsubscribe()
                    consumer.subscribe(self.topics)
                for tp, records in consumer.poll(timeout_ms=50).items():
                    for record in records:
                        self.sink.append((tp.topic, tp.partition, record.offset))
                        time.sleep(self.delay)
                owned: dict[str, list[int]] = {}
                for tp in consumer.assignment():
                    owned.setdefault(tp.topic, []).append(tp.partition)
                self.assignment = {t: sorted(p) for t, p in sorted(owned.items())}
                self.member_id = consumer._coordinator._generation.member_id
            consumer.close()  # commits the consumed offsets (when committing) and leaves the group
        except BaseException as error:  # noqa: BLE001 - reported by the test
            self.error = error
        finally:
            self.assignor.close()


class Group:
    def __init__(
        self, kafka_cluster, admin, name: str, topics: list[str], strategy: str, commits: bool
    ):
        self.cluster, self.admin, self.name, self.topics, self.strategy = (
            kafka_cluster,
            admin,
            name,
            topics,
            strategy,
        )
        self.commits = commits
        # Over the SASL_SSL listener (the super user "admin") for these strategies: the consumers
        # and the lag-aware assignor's admin client take the client properties' settings.
        self.settings = (
            command_config(kafka_cluster.client_properties("admin", SECURE[strategy]))
            if strategy in SECURE
            else {}
        )
        self.sink: list = []
        self.members: list[Member] = []

    def add(self, name: str) -> Member:
        member = Member(
            name,
            self.cluster.secure_bootstrap if self.settings else self.cluster.bootstrap,
            self.name,
            self.topics,
            self.strategy,
            self.sink,
            self.commits,
            delay=0.01,
            rack=RACKS[name],
            settings=self.settings,
        )
        self.members.append(member)
        member.start()
        return member

    def remove(self, member: Member) -> None:
        member.stopping.set()
        member.join(30)
        self.members.remove(member)

    def settle(self, total: int) -> None:
        """Wait until the coordinator's Stable group and every consumer agree on a full assignment."""
        deadline = time.monotonic() + SETTLE_TIMEOUT
        seen = None
        left_out: dict[
            str, float
        ] = {}  # member name -> since when a Stable group has been without it
        while time.monotonic() < deadline:
            for member in self.members:
                assert member.error is None, member.error
            info = self.admin.describe_groups([self.name])[self.name]
            described = (
                {
                    m["member_id"]: sorted(
                        (a["topic"], sorted(a["partitions"]))
                        for a in m["member_assignment"]["assigned_partitions"]
                        if a["partitions"]
                    )
                    for m in info["members"]
                }
                if info["group_state"] == "Stable"
                else None
            )
            actual = {m.member_id: sorted(m.assignment.items()) for m in self.members}
            # kafka-python 3.0.12 can leave a fenced consumer out of the group for good (it keeps
            # polling but never rejoins; the leader whose SyncGroup response was never read, once
            # its session expired, see SESSION_TIMEOUT_MS): after 2 s outside a Stable group it
            # re-subscribes, as an application would, and joins as a new member.
            for member in self.members:
                if described is not None and member.member_id not in described:
                    since = left_out.setdefault(member.name, time.monotonic())
                    if time.monotonic() - since > 2.0:
                        member.rejoin.set()
                        left_out.pop(member.name)
                else:
                    left_out.pop(member.name, None)
            generations = {m.assignor.generation for m in self.members}
            if (
                described == actual
                and len(generations) == 1
                and sum(len(p) for a in actual.values() for _, p in a) == total
            ):
                if seen == (actual, generations):
                    return
                seen = (actual, generations)
            time.sleep(0.5)
        raise NotSettled(
            f"group {self.name} did not settle in {SETTLE_TIMEOUT:g} s: coordinator {described}, "
            f"consumers {actual}, generations {generations}"
        )

    def documents(self) -> list[dict]:
        """The documents the leaders answered since :meth:`forget`, in time order (the leader changes when
        kafka-python fences it and the coordinator elects another member)."""
        answered = sorted(
            (entry for m in self.members for entry in m.documents), key=lambda e: e[0]
        )
        assert answered, "no member assigned"
        return [document for _, document in answered]

    def forget(self) -> None:
        for member in self.members:
            member.documents = []

    def racks(self) -> dict[str, str]:
        return {m.member_id: m.rack for m in self.members}

    def actual(self) -> dict[str, dict[str, list[int]]]:
        return {m.member_id: m.assignment for m in self.members}

    def stop(self) -> None:
        for member in list(self.members):
            self.remove(member)


def _check_step(
    group: Group, expected_owned: dict | None, generation: int | None, lags: dict | None
):
    """The actual assignment is the strategy's answer to the leader's documents, and the first
    document is the predicted one (when ``expected_owned`` is given).  A later rebalance in the same
    step (kafka-python's leader rejoins when its metadata changes) must then start from the answer
    to the one before."""
    documents = group.documents()
    actual = group.actual()
    first = documents[0]

    def placement(document):  # KIP-881: the racks of each partition's replicas (broker p % 3 + 1)
        return {
            t: [[group.cluster.racks[p % 3 + 1]] for p in range(n)]
            for t, n in document["topics"].items()
        }

    if expected_owned is not None:
        predicted = {
            "topics": first["topics"],
            "members": [
                {
                    "id": m["id"],
                    "topics": sorted(group.topics),
                    **({"owned": expected_owned[m["id"]]} if expected_owned.get(m["id"]) else {}),
                    **({"generation": generation} if m["id"] in expected_owned else {}),
                    "rack": group.racks()[m["id"]],
                }
                for m in first["members"]
            ],
            **({"lags": lags} if lags is not None else {}),
            "partition_racks": placement(first),
        }
        assert first == predicted
    previous, owned = None, {}
    for document in documents:
        assert all(m["topics"] == sorted(group.topics) for m in document["members"])
        assert document.get("lags") == (
            None if lags is None else {t: lags[t] for t in document["topics"]}
        )
        assert document["partition_racks"] == placement(document)
        if previous is not None and expected_owned is not None:
            # Each member owns what the answer before gave it, or, when a new rebalance started
            # before that answer reached it (SyncGroup failed), what it owned before; newcomers own
            # nothing.
            for member in document["members"]:
                assert member.get("owned", {}) in (
                    previous.get(member["id"], {}),
                    owned.get(member["id"], {}),
                )
        owned = {m["id"]: m.get("owned", {}) for m in document["members"]}
        previous = solve(load_problem(document), group.strategy).assignment
    assert previous == actual


def _recorded_group(owned_second: dict) -> SimpleNamespace:
    """A group as :func:`_check_step` reads it, without a cluster: two range documents answered in
    turn, the second's members owning ``owned_second``; the actual assignment is the answer to it."""
    ids = ["c0-id", "c1-id"]
    racks = {1: "r1", 2: "r2", 3: "r3"}

    def document(owned: dict) -> dict:
        return {
            "topics": {"a": 4},
            "members": [
                {
                    "id": i,
                    "topics": ["a"],
                    **({"owned": owned[i]} if owned.get(i) else {}),
                    "rack": RACKS[i[:2]],
                }
                for i in ids
            ],
            "partition_racks": {"a": [[racks[p % 3 + 1]] for p in range(4)]},
        }

    documents = [document({}), document(owned_second)]
    actual = solve(load_problem(documents[-1]), "range").assignment
    return SimpleNamespace(
        documents=lambda: documents,
        actual=lambda: actual,
        cluster=SimpleNamespace(racks=racks),
        topics=["a"],
        racks=lambda: {i: RACKS[i[:2]] for i in ids},
        strategy="range",
    )


def test_check_step_follows_ownership_across_rebalances():
    """A member of a later document owns what the answer before gave it, or what it owned in the
    document before (its SyncGroup failed); anything else fails the check.  The first document owns
    nothing, so on the second step "owned before" is empty."""
    first = solve(load_problem(_recorded_group({}).documents()[0]), "range").assignment
    _check_step(_recorded_group(first), {}, None, None)  # the answer reached every member
    _check_step(_recorded_group({}), {}, None, None)  # it reached none: they own what they owned
    with pytest.raises(AssertionError):
        _check_step(_recorded_group({"c0-id": {"a": [0, 1, 2, 3]}}), {}, None, None)


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "sticky", "lag-aware", "stream-join"])
def test_assignor_in_a_live_group(kafka_cluster, admin, strategy):
    """Runs the whole scenario in a fresh group; only when kafka-python's group never settles (a client
    defect, :class:`NotSettled`) is it run once more, from scratch, in another fresh group. Every
    check of
    the scenario applies to the run that counts."""
    topics = [f"{strategy}-a", f"{strategy}-b"]
    counts = {topics[0]: 5, topics[1]: 5 if strategy == "stream-join" else 3}
    produced = {t: [12 + p for p in range(n)] for t, n in counts.items()}
    for topic, n in counts.items():
        create_topic(admin, topic, n, replicas={p: [p % 3 + 1] for p in range(n)})
        produce(kafka_cluster.bootstrap, topic, produced[topic])
    try:
        _live_group_scenario(
            kafka_cluster, admin, strategy, topics, counts, produced, f"group-{strategy}"
        )
    except NotSettled:
        _live_group_scenario(
            kafka_cluster, admin, strategy, topics, counts, produced, f"group-{strategy}-again"
        )


def _live_group_scenario(kafka_cluster, admin, strategy, topics, counts, produced, group_name):
    """Three consumers form the group, one leaves, one joins; each step checked (:func:`_check_step`), and
    every message produced before is consumed exactly once (when the strategy's consumers commit)."""
    lags = None
    if strategy == "lag-aware":  # known lags: every partition committed at 0 or at a known offset
        offsets = {(t, p): (3 * p) % (c + 1) for t, n in produced.items() for p, c in enumerate(n)}
        commit(admin, group_name, offsets)
        lags = {t: [c - offsets[t, p] for p, c in enumerate(n)] for t, n in produced.items()}
    total = sum(counts.values())
    group = Group(
        kafka_cluster, admin, group_name, topics, strategy, commits=strategy != "lag-aware"
    )
    try:
        for name in ("c0", "c1", "c2"):
            group.add(name)
        group.settle(total)
        _check_step(group, None, None, lags)
        if strategy == "range":  # the racks changed the answer: KIP-881's rack-aware range acted
            last = group.documents()[-1]
            assert all("rack" in m for m in last["members"])
            without = {k: v for k, v in last.items() if k != "partition_racks"}
            assert solve(load_problem(without), strategy).assignment != group.actual()

        for step in ("leave", "join"):
            before = group.actual()
            generation = group.members[0].assignor.generation
            group.forget()
            if step == "leave":
                group.remove(group.members[-1])
            else:
                group.add("c3")
            group.settle(total)
            _check_step(
                group, {m: before[m] for m in before if m in group.actual()}, generation, lags
            )

        if group.commits:
            deadline = time.monotonic() + 60
            while (
                len(group.sink) < sum(map(sum, produced.values())) and time.monotonic() < deadline
            ):
                time.sleep(0.2)
    finally:
        group.stop()
    if group.commits:  # exactly once: every message produced before, no offset twice
        consumed = Counter(group.sink)
        assert max(consumed.values()) == 1
        assert set(consumed) == {
            (t, p, o) for t, n in produced.items() for p, c in enumerate(n) for o in range(c)
        }
