"""``rebalance-lab record`` against live kafka-python consumers on the test KRaft cluster.

Every consumer logs each assignment it is given with its generation (its assignor's
``on_assignment``): those logs are the truth the recorded trace is checked against.  A recording
(a ``rebalance-lab record`` process, stopped by a signal as a user would stop it) of a group
driven through a known sequence has one step per rebalance the consumers saw (a rebalance of the
cooperative protocol, revoke then assign, is one step of two rounds), each with the generation
and the assignment the consumers logged and the events that changed the members; the trace
replays through ``rebalance-lab trace`` for every strategy and the horizon.  A recording ended by
the cluster (a deleted group, a removed ACL, the group's coordinator stopped) or refused at the
start (a wrong password) prints one line and leaves a complete trace (or none).

kafka-python 3.0.12 sometimes drops a JoinGroup/SyncGroup answer that arrives between two polls
and rejoins (tests/clients/test_rolling_restart.py): a rebalance more.  The checks hold whatever
rebalances happen, since they compare with the consumers' own logs, but for one case: a member that
never read its SyncGroup answer logged nothing of a generation the coordinator completed, so the
logs end the step a generation later than the coordinator's records do; the sequence then runs once
more in a fresh group.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from problems.trace import load_trace
from support.kafka_support import create_topic, run_cli

pytestmark = pytest.mark.kafka

ROOT = Path(__file__).resolve().parents[2]
#: Seconds for a group to settle after a change.
SETTLE_TIMEOUT = 45.0
POLL_MS = 1000


def _logged_assignor(strategy: str):
    """A kafka-python assignor (``range``, ``cooperative-sticky``) that logs every assignment
    it is given as ``(when, generation, {topic: partitions})`` in its ``log``."""
    from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
    from kafka.coordinator.assignors.range import RangePartitionAssignor

    base = {"range": RangePartitionAssignor, "cooperative-sticky": CooperativeStickyAssignor}[
        strategy
    ]
    assignor = base()
    assignor.log = []
    given = assignor.on_assignment

    def on_assignment(assignment, generation):
        held: dict[str, list[int]] = {}
        for tp in assignment.partitions():
            held.setdefault(tp.topic, []).append(tp.partition)
        assignor.log.append(
            (time.monotonic(), generation, {t: sorted(p) for t, p in sorted(held.items())})
        )
        return given(assignment, generation)

    assignor.on_assignment = on_assignment
    return assignor


class Consumer(threading.Thread):
    """One kafka-python consumer polling in its own thread."""

    def __init__(self, name: str, bootstrap: str, group: str, topics: list[str], strategy: str):
        super().__init__(name=name, daemon=True)
        self.assignor = _logged_assignor(strategy)
        self.config = dict(
            bootstrap_servers=bootstrap,
            group_id=group,
            client_id=name,
            partition_assignment_strategy=[self.assignor],
            enable_auto_commit=False,
            session_timeout_ms=6000,
            heartbeat_interval_ms=500,
            fetch_max_wait_ms=50,
            metadata_max_age_ms=5000,
        )
        self.topics = topics
        self.consumer = None
        self.members: dict[int, str] = {}  # the member id of each logged generation
        self.stopping = threading.Event()
        self.error: BaseException | None = None

    def member_id(self) -> str | None:
        return None if self.consumer is None else self.consumer._coordinator._generation.member_id

    def run(self):
        from kafka import KafkaConsumer

        try:
            self.consumer = KafkaConsumer(**self.config)
            self.consumer.subscribe(self.topics)
            while not self.stopping.is_set():
                self.consumer.poll(timeout_ms=POLL_MS)
                for _, generation, _ in self.assignor.log:
                    self.members.setdefault(generation, self.member_id())
            self.consumer.close()
        except BaseException as error:  # noqa: BLE001 - reported by the test
            self.error = error

    def stop(self) -> None:
        self.stopping.set()
        self.join(30)
        assert not self.is_alive(), f"consumer {self.name} did not close"


class Group:
    """Consumers of one group and what they logged."""

    def __init__(self, cluster, admin, name: str, topics: dict[str, int], strategy: str):
        self.cluster, self.admin, self.name = cluster, admin, name
        self.topics, self.strategy = topics, strategy
        self.live: dict[str, Consumer] = {}
        self.everyone: list[Consumer] = []

    def start(self, name: str) -> None:
        consumer = Consumer(
            name, self.cluster.bootstrap, self.name, sorted(self.topics), self.strategy
        )
        self.live[name] = consumer
        self.everyone.append(consumer)
        consumer.start()
        self.settle()

    def stop(self, name: str) -> None:
        self.live.pop(name).stop()
        if self.live:
            self.settle()

    def settle(self) -> None:
        """Wait until the coordinator's Stable group is the live consumers, every partition held."""
        deadline = time.monotonic() + SETTLE_TIMEOUT
        total = sum(self.topics.values())
        while time.monotonic() < deadline:
            for consumer in self.live.values():
                assert consumer.error is None, consumer.error
            info = self.admin.describe_groups([self.name])[self.name]
            if info["group_state"] != "Stable":
                time.sleep(0.3)
                continue
            members = {m["member_id"] for m in info["members"]}
            held = sum(
                len(a["partitions"])
                for m in info["members"]
                for a in m["member_assignment"]["assigned_partitions"]
            )
            ids = {c.member_id() for c in self.live.values()}
            if members == ids and held == total:
                time.sleep(1.5)  # a follow-up round (cooperative) would start now
                again = self.admin.describe_groups([self.name])[self.name]
                if again["group_state"] == "Stable":
                    return
            time.sleep(0.3)
        raise AssertionError(f"group {self.name} did not settle in {SETTLE_TIMEOUT:g} s")

    def generations(self, before: float) -> dict[int, dict[str, dict[str, list[int]]]]:
        """``{generation: {member id: assignment}}`` from every consumer's own log (what it
        logged before ``before``)."""
        out: dict[int, dict[str, dict[str, list[int]]]] = {}
        for consumer in self.everyone:
            for when, generation, held in consumer.assignor.log:
                if when >= before:
                    continue
                member = consumer.members.get(generation)
                if member is not None:
                    out.setdefault(generation, {})[member] = held
        return dict(sorted(out.items()))

    def close(self) -> None:
        for name in list(self.live):
            self.live.pop(name).stop()


def record(bootstrap: str, out: Path, *args: str) -> subprocess.Popen:
    """A ``rebalance-lab record`` process (stderr captured), started and given a moment."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "experiments.cli", "record", "--bootstrap-server", bootstrap]
        + ["--out", str(out), "--poll-interval", "0.1", *args],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(4)  # connected and following the coordinator's records
    return process


def finish(process: subprocess.Popen, sig: int | None = signal.SIGINT) -> tuple[int, list[str]]:
    """Stop the recording with ``sig`` (or wait for it to end by itself): status, stderr lines."""
    if sig is not None:
        process.send_signal(sig)
    _, err = process.communicate(timeout=60)
    return process.returncode, err.splitlines()


def _wait_for_file(path: Path, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} was never written"
        time.sleep(0.2)


# ---------------------------------------------------------------- a known sequence
def _recorded_sequence(kafka_cluster, admin, folder: Path, strategy: str, name: str):
    """c0 alone, c1 joins, c2 joins, c0 leaves, recorded meanwhile: the group, its recording
    (file, exit status, stderr) and the consumers' logged generations."""
    topics = {f"{name}-a": 4, f"{name}-b": 3}
    for topic, count in topics.items():
        create_topic(admin, topic, count)
    group = Group(kafka_cluster, admin, name, topics, strategy)
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / "trace.json"
    group.start("c0")
    process = record(kafka_cluster.bootstrap, out, "--group", group.name)
    try:
        _wait_for_file(out)  # the recording saw the group: c0 alone
        group.start("c1")
        group.start("c2")
        group.stop("c0")
        time.sleep(1)
    finally:
        stopped = time.monotonic()
        status, err = finish(process)
        group.close()
    return group, out, status, err, group.generations(before=stopped)


def _an_answer_was_lost(out: Path, logged: dict) -> bool:
    """Whether a member the coordinator assigned in a recorded generation never logged that
    generation: kafka-python 3.0.12 dropped its SyncGroup answer and rejoined (the coordinator's
    generation is complete where the consumers' logs are not)."""
    document = json.loads(out.read_text())
    return any(
        set(step["observed"]["assignment"]) - set(logged.get(step["observed"]["generation"], {}))
        for step in document["steps"]
        if step.get("observed")
    )


@pytest.mark.parametrize("strategy", ["range", "cooperative-sticky"])
def test_record_writes_every_rebalance_the_consumers_saw(
    kafka_cluster, admin, tmp_path, capsys, strategy
):
    name = f"rec-{strategy}"
    group, out, status, err, logged = _recorded_sequence(
        kafka_cluster, admin, tmp_path / "first", strategy, name
    )
    if status == 0 and out.exists() and _an_answer_was_lost(out, logged):
        # kafka-python lost an answer (a client defect, not the recording's): once more, afresh
        name = f"rec-{strategy}-again"
        group, out, status, err, logged = _recorded_sequence(
            kafka_cluster, admin, tmp_path / "again", strategy, name
        )
    topics = group.topics
    assert status == 0, "\n".join(err)
    assert len(err) == 1 and err[0].startswith(f"record: group {group.name!r}: "), err

    trace = load_trace(out)
    doc = json.loads(out.read_text())
    assert doc["recorded"]["source"] == "coordinator records"
    assert doc["recorded"]["assignor"] == strategy
    # Step 0 is the group as first seen: c0 alone, holding everything.  Every later generation
    # the consumers logged is a round of a recorded step, the step ending with the first
    # complete assignment.
    first = max(
        g
        for g, held in logged.items()
        if len(held) == 1 and g < min(g for g, held in logged.items() if len(held) > 1)
    )
    (member,) = logged[first]
    assert [m["id"] for m in trace.start["members"]] == [member]
    assert trace.start["members"][0]["owned"] == logged[first][member]
    total = sum(topics.values())
    expected = []
    rounds = 0
    for generation, held in logged.items():
        if generation <= first:
            continue
        rounds += 1
        if sum(len(p) for a in held.values() for p in a.values()) == total:
            expected.append((generation, held, rounds))
            rounds = 0
    recorded = [
        (o["generation"], {m: a for m, a in o["assignment"].items()}, o["rounds"])
        for o in trace.observed
    ]
    plain = [(g, {m: a for m, a in held.items()}, r) for g, held, r in expected]
    assert recorded == plain
    # The events: c1 joins, c2 joins, c0 leaves (as many steps more as kafka-python rejoined).
    joined = [j["id"] for s in trace.steps for j in s.get("join", [])]
    left = [i for s in trace.steps for i in s.get("leave", [])]
    ids = {c.name: set(c.members.values()) for c in group.everyone}
    assert set(joined) == ids["c1"] | ids["c2"]
    assert left == [member]
    assert all(o["settle_ms"] >= 0 and o["unowned_partition_ms"] >= 0 for o in trace.observed)
    if strategy == "cooperative-sticky":
        assert any(o["rounds"] == 2 for o in trace.observed)  # revoke, then assign

    # Replays: every group strategy's heuristic and the horizon, observed beside them.
    status, lines, err = run_cli(capsys, "trace", "--compare", "--report", str(out))
    assert status == 0, err
    rows = {row["row"]: row for row in map(json.loads, lines.splitlines())}
    assert rows["observed"]["valid_steps"] == len(trace) and rows["observed"]["moves"] >= 0
    assert f"{strategy}/horizon" in rows
    # Every step of the horizon is at the optimum of the judged levels above moves: its first
    # level, summed, is no worse than any valid row's (observed included), all judged alike.
    horizon = rows[f"{strategy}/horizon"]
    assert horizon["status"] == "optimal"
    valid = [r for r in rows.values() if r["valid_steps"] == len(trace)]
    assert rows["observed"] in valid and horizon in valid
    assert all(horizon["objective_sums"][0] <= r["objective_sums"][0] for r in valid)
    for name in ("range", "roundrobin", "sticky", "cooperative-sticky", "uniform"):
        for solver in ("heuristic", "horizon"):
            status, lines, err = run_cli(
                capsys, "trace", "--strategy", name, "--solver", solver, str(out)
            )
            assert status == 0, (name, solver, err)
            summary = json.loads(lines.splitlines()[-1])["summary"]
            assert summary["steps"] == len(trace.steps)
            assert summary["observed"]["moves"] == rows["observed"]["moves"]


# ---------------------------------------------------------------- endings
def test_sigterm_mid_rebalance_leaves_a_valid_trace(kafka_cluster, admin, tmp_path):
    topics = {"rec-term": 6}
    create_topic(admin, "rec-term", 6)
    group = Group(kafka_cluster, admin, "rec-term", topics, "range")
    out = tmp_path / "trace.json"
    process = record(kafka_cluster.bootstrap, out, "--group", group.name)
    try:
        group.start("c0")
        group.start("c1")
        late = Consumer("c2", kafka_cluster.bootstrap, group.name, ["rec-term"], "range")
        group.everyone.append(late)
        late.start()
        time.sleep(0.3)  # c2 is joining
        status, err = finish(process, signal.SIGTERM)
        late.stop()
    finally:
        group.close()
    assert status == 0 and len(err) == 1 and "written to" in err[0], err
    trace = load_trace(out)
    assert trace.recorded["group"] == "rec-term" and len(trace.steps) >= 1
    assert not list(tmp_path.glob(".trace.json.*"))  # no temporary file left


def test_a_deleted_group_ends_the_recording(kafka_cluster, admin, tmp_path):
    create_topic(admin, "rec-del", 2)
    group = Group(kafka_cluster, admin, "rec-del", {"rec-del": 2}, "range")
    out = tmp_path / "trace.json"
    process = record(kafka_cluster.bootstrap, out, "--group", group.name)
    group.start("c0")
    group.start("c1")
    group.close()  # both leave: the group is empty
    deadline = time.monotonic() + 30
    while admin.describe_groups(["rec-del"])["rec-del"]["group_state"] != "Empty":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    admin.delete_groups(["rec-del"])
    status, err = finish(process, None)
    assert status == 3, err
    assert len(err) == 1 and err[0].startswith(
        "record: group 'rec-del' no longer exists (deleted); "
    ), err
    assert err[0].endswith(f" written to {out}"), err
    trace = load_trace(out)
    assert trace.observed[-1]["assignment"] == {}  # the last step: everyone left


def test_a_wrong_password_is_one_line_and_no_file(kafka_cluster, tmp_path, capsys):
    good = kafka_cluster.client_properties("reader", "SCRAM-SHA-256").read_text()
    config = tmp_path / "wrong.properties"
    config.write_text(good.replace("reader-secret", "not-the-password"))
    out = tmp_path / "trace.json"
    status, printed, err = run_cli(
        capsys,
        "record",
        "--bootstrap-server",
        kafka_cluster.secure_bootstrap,
        "--command-config",
        str(config),
        "--group",
        "rec-any",
        "--out",
        str(out),
        "--timeout",
        "5",
    )
    assert status == 2 and printed == ""
    assert err.count("\n") == 1 and "refused the credentials" in err, err
    assert "not-the-password" not in err
    assert not out.exists()


def _acl(principal, kind, name, operation="DESCRIBE"):
    from kafka.admin import ACL, ACLOperation, ACLPermissionType, ResourcePattern, ResourceType

    resource = ResourceType.GROUP if kind == "group" else ResourceType.TOPIC
    return ACL(
        principal,
        "*",
        getattr(ACLOperation, operation),
        ACLPermissionType.ALLOW,
        ResourcePattern(resource, name),
    )


def test_a_removed_acl_ends_the_recording_with_a_valid_trace(kafka_cluster, admin, tmp_path):
    create_topic(admin, "rec-acl", 4)
    acls = [
        _acl("User:reader", "group", "rec-acl"),
        _acl("User:reader", "topic", "rec-acl"),
        _acl("User:reader", "topic", "__consumer_offsets"),
        _acl("User:reader", "topic", "__consumer_offsets", "READ"),
    ]
    assert not admin.create_acls(acls)["failed"]
    time.sleep(3)  # the ACLs reach every broker through the metadata log
    group = Group(kafka_cluster, admin, "rec-acl", {"rec-acl": 4}, "range")
    out = tmp_path / "trace.json"
    config = str(kafka_cluster.client_properties("reader", "SCRAM-SHA-256"))
    process = record(
        kafka_cluster.secure_bootstrap, out, "--command-config", config, "--group", "rec-acl"
    )
    try:
        group.start("c0")
        group.start("c1")
        _wait_for_file(out)
        admin.delete_acls([acls[1]])
        status, err = finish(process, None)
    finally:
        group.close()
        admin.delete_acls(acls)
    assert status == 3, err
    assert len(err) == 1, err
    assert err[0].startswith(
        "record: not authorized: the principal needs Describe on topic 'rec-acl' (a missing ACL); "
    ), err
    trace = load_trace(out)
    assert trace.recorded["source"] == "coordinator records"
    assert [j["id"] for s in trace.steps for j in s.get("join", [])]  # c1's join was recorded


def test_a_stopped_coordinator_ends_the_recording_with_a_valid_trace(
    kafka_cluster, admin, tmp_path
):
    create_topic(admin, "rec-down", 3, replicas={0: [1], 1: [2], 2: [3]})
    group = Group(kafka_cluster, admin, "rec-down", {"rec-down": 3}, "range")
    out = tmp_path / "trace.json"
    process = record(kafka_cluster.bootstrap, out, "--group", "rec-down", "--timeout", "3")
    group.start("c0")
    group.start("c1")
    group.close()
    coordinator = admin._manager.run(admin._find_coordinator_ids, ["rec-down"])["rec-down"]
    _wait_for_file(out)
    kafka_cluster.stop_node(coordinator)
    try:
        status, err = finish(process, None)
    finally:
        kafka_cluster.start_node(coordinator)
    assert status == 3, err
    assert len(err) == 1 and err[0].startswith("record: no answer from the cluster for "), err
    trace = load_trace(out)
    assert trace.recorded["group"] == "rec-down" and trace.observed
