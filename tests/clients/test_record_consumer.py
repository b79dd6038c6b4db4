"""``rebalance-lab record`` on a consumer-protocol group (KIP-848) of the test KRaft cluster.

The members are confluent-kafka consumers with ``group.protocol=consumer`` (librdkafka's
implementation of KIP-848), each in its own thread; each logs what it holds after every
assignment callback, and those logs are the truth the recordings are checked against.  One
recording follows the coordinator's records (the default source), another polls
``ConsumerGroupDescribe`` (``--source admin``); the group is driven through c0 alone, c1 joining,
c2 joining, c0 leaving, everyone leaving, and then deleted:

* the records' recording has exactly one step per rebalance, each with the members and the
  partitions the members' callbacks say they held, the group epoch, and ends by itself on the
  deleted group with one line;
* the polling recording sees the same rebalances with the same members;
* the trace (with the topic ids, which KIP-848's server assignors order topics by) replays
  through ``rebalance-lab trace`` for every strategy.

A recording started on a group that already runs rebuilds its state from the records written
before (the partition of ``__consumer_offsets`` read from its start), and SIGTERM in the middle
of a rebalance leaves a complete trace.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from clients.group_watch import kafka_uuid
from problems.trace import load_trace
from support.kafka_support import create_topic, run_cli

pytestmark = pytest.mark.kafka

ROOT = Path(__file__).resolve().parents[2]
#: Seconds for the group to settle after a change.
SETTLE_TIMEOUT = 30.0


class Member(threading.Thread):
    """One confluent-kafka consumer of the consumer protocol, polling in its own thread."""

    def __init__(self, name: str, bootstrap: str, group: str, topics: list[str]):
        super().__init__(name=name, daemon=True)
        self.config = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "client.id": name,
            "enable.auto.commit": False,
        }
        self.topics = topics
        self.held: set[tuple[str, int]] = set()
        self.member_id: str | None = None
        self.stopping = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        from confluent_kafka import Consumer

        try:
            consumer = Consumer(self.config)

            def assigned(_, partitions):
                self.held |= {(p.topic, p.partition) for p in partitions}

            def revoked(_, partitions):
                self.held -= {(p.topic, p.partition) for p in partitions}

            consumer.subscribe(self.topics, on_assign=assigned, on_revoke=revoked)
            while not self.stopping.is_set():
                consumer.poll(0.05)
                self.member_id = self.member_id or consumer.memberid()
            consumer.close()
        except BaseException as error:  # noqa: BLE001 - reported by the test
            self.error = error

    def assignment(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for topic, partition in sorted(self.held):
            out.setdefault(topic, []).append(partition)
        return out

    def stop(self) -> None:
        self.stopping.set()
        self.join(30)
        assert not self.is_alive(), f"member {self.name} did not close"


class Group:
    """Members of one consumer-protocol group, and what their callbacks said after each change."""

    def __init__(self, bootstrap: str, admin, name: str, topics: dict[str, int]):
        self.bootstrap, self.admin, self.name, self.topics = bootstrap, admin, name, topics
        self.live: dict[str, Member] = {}
        self.started: dict[str, Member] = {}
        self.settled: list[dict[str, dict[str, list[int]]]] = []  # member id -> held

    def start(self, name: str, wait: bool = True) -> Member:
        member = Member(name, self.bootstrap, self.name, sorted(self.topics))
        self.live[name] = self.started[name] = member
        member.start()
        if wait:
            self.settle()
        return member

    def stop(self, name: str) -> None:
        self.live.pop(name).stop()
        self.settle()

    def settle(self) -> None:
        """Wait until the coordinator calls the group Stable with exactly the live members, each
        holding what its callbacks say; note that assignment."""
        from clients.group_describe import DescribeError, describe_consumer_group

        deadline = time.monotonic() + SETTLE_TIMEOUT
        while time.monotonic() < deadline:
            for member in self.live.values():
                assert member.error is None, member.error
            try:
                described = describe_consumer_group(self.admin, self.name)
            except DescribeError as error:  # the first member has not joined yet
                assert error.code == "GroupIdNotFoundError", error
                time.sleep(0.1)
                continue
            coordinator = {
                m.member_id: {
                    tp.topic_name: sorted(tp.partitions)
                    for tp in sorted(m.assignment.topic_partitions, key=lambda tp: tp.topic_name)
                    if tp.partitions
                }
                for m in described.members
            }
            callbacks = {m.member_id: m.assignment() for m in self.live.values()}
            if described.group_state.lower() in ("stable", "empty") and coordinator == callbacks:
                self.settled.append(callbacks)
                return
            time.sleep(0.1)
        raise AssertionError(f"group {self.name} did not settle in {SETTLE_TIMEOUT:g} s")

    def close(self) -> None:
        for name in list(self.live):
            self.live.pop(name).stop()


def record(bootstrap: str, out: Path, *args: str) -> subprocess.Popen:
    """A ``rebalance-lab record`` process (stderr captured)."""
    return subprocess.Popen(
        [sys.executable, "-m", "experiments.cli", "record", "--bootstrap-server", bootstrap]
        + ["--out", str(out), "--poll-interval", "0.1", *args],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


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
        time.sleep(0.05)


def _steps(trace) -> list[dict[str, dict[str, list[int]]]]:
    return [step["assignment"] for step in trace.observed]


def test_record_a_consumer_protocol_group(kafka_cluster, admin, tmp_path, capsys):
    topics = {"rec848-a": 4, "rec848-b": 3}
    for topic, count in topics.items():
        create_topic(admin, topic, count)
    group = Group(kafka_cluster.bootstrap, admin, "rec848", topics)
    out, polled = tmp_path / "trace.json", tmp_path / "polled.json"
    records = record(kafka_cluster.bootstrap, out, "--group", group.name)
    polling = record(kafka_cluster.bootstrap, polled, "--group", group.name, "--source", "admin")
    try:
        group.start("c0")
        _wait_for_file(out)  # the recording saw the group: c0 alone
        _wait_for_file(polled)
        group.start("c1")
        group.start("c2")
        group.stop("c0")
        group.stop("c1")
        group.stop("c2")  # the group is empty
        admin.delete_groups([group.name])
        status, err = finish(records, None)  # both recordings end by themselves
        polled_status, polled_err = finish(polling, None)
    finally:
        group.close()
        for process in (records, polling):
            if process.poll() is None:
                process.kill()
                process.communicate()
    assert status == 3, err
    assert len(err) == 1 and err[0].startswith(
        "record: group 'rec848' no longer exists (deleted); 5 rebalances written to "
    ), err

    trace = load_trace(out)
    doc = json.loads(out.read_text())
    assert doc["recorded"]["protocol"] == "consumer"
    assert doc["recorded"]["source"] == "coordinator records"
    assert doc["recorded"]["assignor"] == "uniform"  # the broker's default server assignor
    described = {t["name"]: t["topic_id"] for t in admin.describe_topics(sorted(topics))}
    assert doc["problem"]["topic_ids"] == {
        t: kafka_uuid(uuid.UUID(str(described[t]))) for t in topics
    }
    first, *after = group.settled
    ((c0, held),) = first.items()
    assert trace.start["members"] == [{"id": c0, "topics": sorted(topics), "owned": held}]
    # One step per rebalance, each with what the members' callbacks held (the last: nobody).
    assert _steps(trace) == after
    ids = {name: m.member_id for name, m in group.started.items()}
    joins = [[j["id"] for j in s.get("join", [])] for s in trace.steps]
    assert joins == [[ids["c1"]], [ids["c2"]], [], [], []]
    leaves = [s.get("leave", []) for s in trace.steps]
    assert leaves == [[], [], [ids["c0"]], [ids["c1"]], [ids["c2"]]]
    assert doc["recorded"]["clients"] == {ids[n]: n for n in ("c0", "c1", "c2")}
    epochs = [o["generation"] for o in trace.observed]
    assert epochs == sorted(set(epochs))  # group epochs, increasing
    assert all(o["settle_ms"] >= 0 and o["unowned_partition_ms"] >= 0 for o in trace.observed)
    # A join moves partitions from a member that revokes them to one that waits for them.
    assert trace.observed[0]["unowned_partition_ms"] > 0

    # ConsumerGroupDescribe's polls saw these rebalances, with the same epochs and assignments,
    # but for the ones that settled and changed again between two polls, and the last if the
    # group was deleted before a poll saw it empty (the records miss none).
    assert polled_status == 3 and len(polled_err) == 1, polled_err  # the deleted group, too
    polled_trace = load_trace(polled)
    assert polled_trace.recorded["source"] == "admin API"
    assert polled_trace.start == trace.start
    seen = [(o["generation"], o["assignment"]) for o in polled_trace.observed]
    recorded = iter((o["generation"], o["assignment"]) for o in trace.observed)
    assert seen and all(step in recorded for step in seen)  # in order

    # Replays: every group strategy's heuristic and the horizon, observed beside them.
    status, lines, err = run_cli(capsys, "trace", "--compare", str(out))
    assert status == 0, err
    rows = {row["row"]: row for row in map(json.loads, lines.splitlines())}
    assert rows["observed"]["valid_steps"] == len(trace)
    for name in ("range", "roundrobin", "sticky", "cooperative-sticky", "uniform", "server-range"):
        assert rows[f"{name}/heuristic"]["valid_steps"] == len(trace), name
    horizon = rows["uniform/horizon"]  # judged on the group's assignor, at its optimum each step
    valid = [r for r in rows.values() if r["valid_steps"] == len(trace)]
    assert horizon["status"] == "optimal" and horizon in valid
    assert all(horizon["objective_sums"][0] <= r["objective_sums"][0] for r in valid)


def test_sigterm_mid_rebalance_of_a_running_group(kafka_cluster, admin, tmp_path):
    create_topic(admin, "rec848-term", 6)
    group = Group(kafka_cluster.bootstrap, admin, "rec848-term", {"rec848-term": 6})
    out = tmp_path / "trace.json"
    try:
        group.start("c0")
        group.start("c1")
        process = record(kafka_cluster.bootstrap, out, "--group", group.name)
        _wait_for_file(out)  # the group as it stood, rebuilt from the records written before
        group.start("c2", wait=False)
        time.sleep(0.3)  # c2 is joining
        status, err = finish(process, signal.SIGTERM)
    finally:
        group.close()
    assert status == 0 and len(err) == 1 and "written to" in err[0], err
    trace = load_trace(out)
    (settled,) = group.settled[-1:]
    assert {m["id"]: m.get("owned", {}) for m in trace.start["members"]} == settled
    assert not list(tmp_path.glob(".trace.json.*"))  # no temporary file left
