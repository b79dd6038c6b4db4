"""A real rolling restart: kafka-python consumers with rebalance-lab's assignors, against ``rebalance-lab trace``.

A group of three kafka-python consumers (one thread each, clients/kafka_python.py's assignor) forms
on the live KRaft cluster one member at a time, then is restarted member by member.  Each rebalance
the group's leader answered is one step of the equivalent group-trace, written from what the
brokers saw (members joining and leaving, by their member ids; the topics the leader's metadata
held; the racks of the partitions' replicas); ``rebalance-lab trace`` (``models.trace``, run in
this process) runs that trace on its own, fed its own answers, and:

* every step's input is what the consumers really sent: the leader's group document equals the
  trace's step input (:func:`problems.trace.next_document` of the predicted previous answer), up
  to the generation numbers (Kafka's generation ids against the trace's step numbers: every member
  with claims sends the same one, a new member none);
* every step's answer is the predicted one, and once the group settles after each change the
  assignment the coordinator hands out (``DescribeGroups``) equals it;
* the moves counted from the consumers' own logs (each consumer logs every assignment it is given,
  with its generation, ``on_assignment``) equal the trace's moves, step by step and in total (the
  summary line).

Dynamic members (no ``group.instance.id``): a restart is a member leaving (``LeaveGroup`` on close)
and a new member id joining, two rebalances, and the partitions the old one held move.  Static
members (``group.instance.id``, KIP-345): a restart within the session timeout is no rebalance at
all, the coordinator hands the member its assignment back; the trace's ``restart`` of a static
member predicts exactly that (same assignment, no move).

Both protocols: ``sticky`` is eager (every member gives up its partitions when a rebalance starts);
``cooperative-sticky`` runs kafka-python's KIP-429 cooperative protocol (members keep their
partitions, a member that lost some rejoins), so a step of the trace is one rebalance or more: the
leader's documents of a step's follow-up rounds are checked against the rounds ``models.trace``
runs inside the step (the members owning the round before, the number of rounds).

kafka-python 3.0.12 drops a JoinGroup/SyncGroup answer that arrives between two of a consumer's
polls (the next poll sees the finished exchange and starts a new JoinGroup): the member, most often
the leader, whose exchange takes longest, rejoins with the claims of its previous generation, which
no Kafka consumer sends.  The consumers poll with a long wait (:data:`POLL_MS`), which makes that
rare; a run where it still happens is not the trace the test checks (:class:`Stalled`): the
scenario runs once more in a fresh group, and every check applies to the run that counts.
"""

from __future__ import annotations

import json
import threading
import time

import pytest

from clients.kafka_python import assignor
from problems.trace import load_trace, next_document, trace_moves
from support.kafka_support import create_topic, run_cli

pytestmark = pytest.mark.kafka

#: Seconds for the group to settle after a change.
SETTLE_TIMEOUT = 45.0
#: A short session (the cluster allows 1 s): a member that stopped answering is removed quickly;
#: a static member restarted well within it keeps its assignment.
SESSION_TIMEOUT_MS = 6_000
TOPICS = {"roll-a": 5, "roll-b": 4}
#: Each poll's wait.  kafka-python 3.0.12 drops a JoinGroup/SyncGroup exchange that completes
#: between two polls (the next poll sees the finished task and starts a new JoinGroup, the answer
#: unread: the member rejoins with its previous claims); a long wait makes that rare.
POLL_MS = 1000


class Stalled(AssertionError):
    """A member rejoined without the answer it was given (kafka-python dropped it), or the group
    did not settle in time."""


class Consumer(threading.Thread):
    """One kafka-python consumer polling in its own thread; logs every assignment it is given."""

    def __init__(self, name: str, bootstrap: str, group: str, strategy: str, static: bool):
        super().__init__(name=name, daemon=True)
        self.assignor = assignor(strategy)
        self.documents: list[tuple[float, dict, dict]] = []  # (when, document, answer) as leader
        #: The consumer's own log: (when, generation, member id, assignment) per assignment given.
        self.log: list[tuple[float, int, str, dict]] = []
        answer, given = self.assignor.assign, self.assignor.on_assignment

        def assign(cluster, members):
            result = answer(cluster, members)
            answered = {}
            for member, assignment in result.items():
                owned: dict[str, list[int]] = {}
                for tp in assignment.partitions():
                    owned.setdefault(tp.topic, []).append(tp.partition)
                answered[member] = {t: sorted(p) for t, p in sorted(owned.items())}
            self.documents.append((time.monotonic(), self.assignor.last_document, answered))
            return result

        def on_assignment(assignment, generation):
            given(assignment, generation)
            self.log.append(
                (time.monotonic(), generation, self.member_id(), dict(self.assignor.owned))
            )

        self.assignor.assign, self.assignor.on_assignment = assign, on_assignment
        self.config = dict(
            bootstrap_servers=bootstrap,
            group_id=group,
            client_id=name,
            group_instance_id=name if static else None,
            partition_assignment_strategy=[self.assignor],
            enable_auto_commit=False,
            session_timeout_ms=SESSION_TIMEOUT_MS,
            heartbeat_interval_ms=500,
            fetch_max_wait_ms=50,
            metadata_max_age_ms=5_000,
        )
        self.consumer = None
        self.began = time.monotonic()
        self.stopping = threading.Event()
        self.error: BaseException | None = None

    def member_id(self) -> str | None:
        return None if self.consumer is None else self.consumer._coordinator._generation.member_id

    def assignment(self) -> dict[str, list[int]]:
        owned: dict[str, list[int]] = {}
        for tp in self.consumer.assignment() if self.consumer is not None else ():
            owned.setdefault(tp.topic, []).append(tp.partition)
        return {t: sorted(p) for t, p in sorted(owned.items())}

    def run(self):
        from kafka import KafkaConsumer

        try:
            self.consumer = KafkaConsumer(**self.config)
            self.consumer.subscribe(sorted(TOPICS))
            while not self.stopping.is_set():
                self.consumer.poll(timeout_ms=POLL_MS)
            self.consumer.close()  # a dynamic member leaves the group; a static one does not
        except BaseException as error:  # noqa: BLE001 - reported by the test
            self.error = error


class Group:
    """The consumers of one group, and what they and the coordinator saw."""

    def __init__(self, cluster, admin, name: str, strategy: str, static: bool):
        self.cluster, self.admin, self.name = cluster, admin, name
        self.strategy, self.static = strategy, static
        self.consumers: dict[str, Consumer] = {}  # by consumer name
        self.retired: list[Consumer] = []  # closed consumers (their logs and documents stay)
        self.names: dict[str, str] = {}  # member id -> consumer name, as seen when settled
        self.done = float("inf")  # when the scenario ended (closing the consumers rebalances)

    def start(self, name: str) -> Consumer:
        consumer = Consumer(name, self.cluster.bootstrap, self.name, self.strategy, self.static)
        self.consumers[name] = consumer
        consumer.start()
        return consumer

    def stop(self, name: str) -> Consumer:
        consumer = self.consumers.pop(name)
        consumer.stopping.set()
        consumer.join(30)
        assert not consumer.is_alive(), f"consumer {name} did not close"
        self.retired.append(consumer)
        return consumer

    def everyone(self) -> list[Consumer]:
        return [*self.retired, *self.consumers.values()]

    def described(self) -> dict[str, dict[str, list[int]]] | None:
        """The assignment the coordinator hands out, by member id, when the group is Stable."""
        info = self.admin.describe_groups([self.name])[self.name]
        if info["group_state"] != "Stable":
            return None
        return {
            m["member_id"]: {
                a["topic"]: sorted(a["partitions"])
                for a in m["member_assignment"]["assigned_partitions"]
                if a["partitions"]
            }
            for m in info["members"]
        }

    def settle(self) -> dict[str, dict[str, list[int]]]:
        """Wait until the coordinator's Stable group is the live consumers, each owning what the
        coordinator says, every partition assigned, twice in a row; return that assignment."""
        deadline, seen = time.monotonic() + SETTLE_TIMEOUT, None
        total = sum(TOPICS.values())
        while time.monotonic() < deadline:
            for consumer in self.consumers.values():
                assert consumer.error is None, consumer.error
            described = self.described()
            actual = {c.member_id(): c.assignment() for c in self.consumers.values()}
            if (
                described == actual
                and sum(len(p) for a in actual.values() for p in a.values()) == total
            ):
                if seen == actual:
                    self.names.update({c.member_id(): c.name for c in self.consumers.values()})
                    return actual
                seen = actual
            time.sleep(0.5)
        raise Stalled(f"group {self.name} did not settle in {SETTLE_TIMEOUT:g} s")

    def documents(self, before: float = float("inf")) -> list[tuple[dict, dict]]:
        """Every (document, answer) a leader of the group answered before ``before``, in time
        order."""
        answered = sorted((d for c in self.everyone() for d in c.documents), key=lambda d: d[0])
        return [(document, answer) for when, document, answer in answered if when < before]

    def logged(self, before: float = float("inf")) -> list[dict[str, dict[str, list[int]]]]:
        """The assignment of every generation, from the consumers' own logs (entries logged
        before ``before``), in generation order."""
        by_generation: dict[int, dict] = {}
        for consumer in self.everyone():
            for when, generation, member, owned in consumer.log:
                if when < before:
                    by_generation.setdefault(generation, {})[member] = owned
        return [by_generation[g] for g in sorted(by_generation)]

    def close(self) -> None:
        self.done = min(self.done, time.monotonic())
        for name in list(self.consumers):
            self.stop(name)


def _plain(document: dict) -> dict:
    """A group document with Kafka's generation ids replaced by one mark, members sorted by id.

    Every member with claims sends the generation of the group's last rebalance; one that sends
    an earlier one missed that rebalance's answer (kafka-python's stalled leader): :class:`Stalled`.
    """
    generations = {m["generation"] for m in document["members"] if "generation" in m}
    if len(generations) > 1:
        raise Stalled(f"members send different generations {sorted(generations)}")
    members = [
        {**m, **({"generation": "g"} if "generation" in m else {})} for m in document["members"]
    ]
    return {**document, "members": sorted(members, key=lambda m: m["id"])}


def equivalent_trace(documents: list[dict]) -> dict:
    """The group-trace of rebalances: the first document without claims as the starting problem,
    then per document the members that left and joined (by member id) and the topics whose
    partition counts changed."""
    plain = [
        {
            **{k: v for k, v in d.items() if k != "members"},
            "members": [
                {k: v for k, v in m.items() if k not in ("owned", "generation")}
                for m in d["members"]
            ],
        }
        for d in documents
    ]
    steps = []
    for k in range(1, len(plain)):
        before, after = plain[k - 1], plain[k]
        ids_before = [m["id"] for m in before["members"]]
        ids_after = [m["id"] for m in after["members"]]
        step: dict = {}
        if gone := [i for i in ids_before if i not in ids_after]:
            step["leave"] = gone
        if joined := [m for m in after["members"] if m["id"] not in ids_before]:
            step["join"] = joined
        if changed := {t: n for t, n in after["topics"].items() if before["topics"].get(t) != n}:
            step["topics"] = changed
            step["partition_racks"] = {t: after["partition_racks"][t] for t in changed}
        steps.append(step)
    return {"kind": "group-trace", "problem": plain[0], "steps": steps}


def _membership(document: dict) -> tuple:
    return sorted(m["id"] for m in document["members"]), document["topics"]


def _steps(answered: list[tuple[dict, dict]], cooperative: bool) -> list[list[tuple[dict, dict]]]:
    """The leaders' rebalances as trace steps, each a list of rounds: under the cooperative
    protocol a rebalance with the same members and topics as the one before, which took
    partitions from a member, is that step's follow-up round (the member rejoined)."""
    steps: list[list[tuple[dict, dict]]] = []
    for document, answer in answered:
        if steps and cooperative:
            before, given = steps[-1][-1]
            revoked = any(
                p not in given.get(m["id"], {}).get(t, [])
                for m in before["members"]
                for t, parts in m.get("owned", {}).items()
                for p in parts
            )
            if revoked and _membership(before) == _membership(document):
                steps[-1].append((document, answer))
                continue
        steps.append([(document, answer)])
    return steps


def _follow_up(document: dict, given: dict) -> dict:
    """The next round's document: every member owning what the round gave it."""
    members = []
    for member in document["members"]:
        plain = {k: v for k, v in member.items() if k not in ("owned", "generation")}
        owned = given.get(member["id"], {})
        members.append({**plain, **({"owned": owned} if owned else {}), "generation": 0})
    return {**document, "members": members}


def _first_round(step: dict) -> dict:
    """A ``rebalance-lab trace`` step's first round: its assignment without what is ``pending``."""
    first = {}
    for member, topics in step["assignment"].items():
        later = step["pending"].get(member, {})
        kept = {t: [p for p in ps if p not in later.get(t, [])] for t, ps in topics.items()}
        first[member] = {t: ps for t, ps in kept.items() if ps}
    return first


class Prediction:
    """``rebalance-lab trace --strategy STRATEGY TRACE.json``, run in this process."""

    def __init__(self, capsys, folder):
        self.capsys, self.folder = capsys, folder

    def __call__(self, trace: dict, strategy: str, name: str) -> tuple[list[dict], dict]:
        """The step lines and the summary the command prints for ``trace``."""
        path = self.folder / f"{name}.json"
        path.write_text(json.dumps(trace))
        status, out, err = run_cli(self.capsys, "trace", "--strategy", strategy, str(path))
        assert status == 0, err
        lines = [json.loads(line) for line in out.splitlines()]
        return lines[:-1], lines[-1]["summary"]


def _check(
    group: Group, predict: Prediction, settled: list[dict], restarted: list[Consumer] = ()
) -> dict:
    """The checks of the module docstring on everything the group did; returns the trace run.

    ``restarted``: the new consumers of static members restarted, in order, after the last
    rebalance (each a ``restart`` step of the trace; its name is its instance id)."""
    answered = group.documents(before=group.done)
    for (before, given), (after, _) in zip(answered, answered[1:]):
        for member in after["members"]:
            was = any(m["id"] == member["id"] for m in before["members"])
            if was and member.get("owned", {}) != given.get(member["id"], {}):
                raise Stalled(f"member {member['id']} rejoined without its last answer")
    cooperative = group.strategy == "cooperative-sticky"
    steps = _steps(answered, cooperative)
    doc = equivalent_trace([rounds[0][0] for rounds in steps])
    ids = {m.get("instance_id"): m["id"] for rounds in steps for m in rounds[0][0]["members"]}
    doc["steps"] += [{"restart": [ids[consumer.name]]} for consumer in restarted]
    trace = load_trace(doc, f"group {group.name}")
    predicted, summary = predict(doc, group.strategy, group.name)
    assert len(predicted) == len(steps) + len(restarted)
    previous = None
    for k, (rounds, step) in enumerate(zip(steps, predicted)):
        document, answer = rounds[0]
        assert _plain(document) == _plain(next_document(trace, k, previous)), f"step {k}"
        for (before, given), (after, _) in zip(rounds, rounds[1:]):
            assert _plain(after) == _plain(_follow_up(before, given)), f"step {k}"
        if cooperative:
            assert answer == _first_round(step), f"step {k}"
            assert len(rounds) == step["rounds"], f"step {k}"
        else:
            assert len(rounds) == 1, f"step {k}"
        assert rounds[-1][1] == step["assignment"], f"step {k}"
        previous = step["assignment"]
    # After every change the group settled on the answer to its last rebalance; a static
    # member's restart changed nothing (by instance id: its member id is new).
    answers = [a for _, a in answered]
    rebalanced = len(settled) - len(restarted)
    assert all(assignment in answers for assignment in settled[:rebalanced])
    instance = {m: i for i, m in ids.items()}
    for k, state in enumerate(settled[rebalanced:], len(steps)):
        expected = predicted[k]["assignment"]
        assert {group.names[m]: a for m, a in state.items()} == {
            instance[m]: a for m, a in expected.items()
        }
    # The consumers' own logs: one assignment per rebalance, the leader's answer; the moves are
    # the trace's between the assignments the steps end with.
    began = min((c.began for c in restarted), default=group.done)
    logged = group.logged(before=began)
    assert logged == answers
    ends = [logged[sum(len(r) for r in steps[: k + 1]) - 1] for k in range(len(steps))]
    if restarted:  # static members: one identity (the instance id), whatever the member id
        ends = [{instance.get(m, m): a for m, a in end.items()} for end in ends]
        generation = max(g for c in group.everyone() for when, g, _, _ in c.log if when < began)
        for consumer in restarted:
            when, again, _, owned = consumer.log[0]
            assert again == generation  # handed its assignment back, no rebalance
            ends.append({**ends[-1], consumer.name: owned})
    moves = [0] + [trace_moves(a, b) for a, b in zip(ends, ends[1:])]
    assert moves == [step["moves"] for step in predicted]
    assert sum(moves) == summary["moves"]
    return {"trace": trace, "predicted": predicted, "moves": moves, "rebalances": len(answers)}


def _dynamic_scenario(kafka_cluster, admin, predict, strategy: str, name: str) -> dict:
    """Three dynamic consumers join one at a time, then each is closed and started anew in turn."""
    group = Group(kafka_cluster, admin, name, strategy, static=False)
    settled = []
    try:
        for consumer in ("c0", "c1", "c2"):
            group.start(consumer)
            settled.append(group.settle())
        for consumer in ("c0", "c1", "c2"):
            group.stop(consumer)
            settled.append(group.settle())
            group.start(consumer)
            settled.append(group.settle())
    finally:
        group.close()
    return _check(group, predict, settled)


def _static_scenario(kafka_cluster, admin, predict, strategy: str, name: str) -> dict:
    """Three static consumers join one at a time, then each is closed and started anew in turn
    (well within the session timeout)."""
    group = Group(kafka_cluster, admin, name, strategy, static=True)
    settled, restarted = [], []
    try:
        for consumer in ("s0", "s1", "s2"):
            group.start(consumer)
            settled.append(group.settle())
        for consumer in ("s0", "s1", "s2"):
            group.stop(consumer)
            restarted.append(group.start(consumer))
            settled.append(group.settle())
    finally:
        group.close()
    return _check(group, predict, settled, restarted)


def _with_retry(scenario) -> dict:
    """``scenario(suffix)`` in a fresh group; once more in another when kafka-python stalled."""
    try:
        return scenario("-first")
    except Stalled:
        return scenario("-again")


@pytest.fixture(scope="module")
def topics(admin):
    for topic, count in TOPICS.items():
        create_topic(admin, topic, count, replicas={p: [p % 3 + 1] for p in range(count)})
    return TOPICS


@pytest.fixture
def predict(capsys, tmp_path) -> Prediction:
    return Prediction(capsys, tmp_path)


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_dynamic_rolling_restart_follows_the_trace(kafka_cluster, admin, topics, predict, strategy):
    """Runs the dynamic rolling restart; every rebalance's input, answer, the coordinator's
    assignment and the logged moves are the trace's."""
    run = _with_retry(
        lambda suffix: _dynamic_scenario(
            kafka_cluster, admin, predict, strategy, f"roll-{strategy}{suffix}"
        )
    )
    assert len(run["predicted"]) >= 9  # three joins, then a leave and a join per restart
    # Each restart moves what the member held (3 of the 9 partitions) to the others, then 3 of
    # theirs to the new member: a dynamic rolling restart of three members costs 18 moves.
    assert run["moves"][-6:] == [3] * 6


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_static_rolling_restart_follows_the_trace(kafka_cluster, admin, topics, predict, strategy):
    """Runs the static rolling restart: no rebalance, every member keeps its partitions, as the
    trace's static restarts predict (no move)."""
    run = _with_retry(
        lambda suffix: _static_scenario(
            kafka_cluster, admin, predict, strategy, f"static-{strategy}{suffix}"
        )
    )
    assert run["moves"][-3:] == [0, 0, 0]
