"""Kafka along traces: ``models.trace(..., solver="heuristic")`` against Kafka's own assignors, step by step.

Each random trace (:func:`random_trace`: members join, leave, restart as dynamic or static
members, topics are created, grow and are deleted, members change their subscriptions, some to
topics not created yet; members and partitions on racks in some traces, KIP-848 topic ids in
others) runs through Kafka 4.4.0's Java assignors in one call (:mod:`peers.kafka_trace`,
``TracePeers.java``), every step fed Kafka's OWN previous answer the way Kafka carries it: each
member a consumer with its own assignor instance (``StickyAssignor``'s user data: its last
assignment and generation), an eager member revoking everything before it joins and a
cooperative one the topics it no longer subscribes (``ConsumerCoordinator.onJoinPrepare``),
a cooperative step taking follow-up rounds until no member revokes anything; for KIP-848's
``UniformAssignor`` and server ``RangeAssignor`` the coordinator's target assignment carried from
step to step.  Ours runs the same trace through ``models.trace``, fed its own answers.  Every
step's assignment must be Kafka's (and for ``cooperative-sticky`` its first round and its number
of rounds): were one step to differ, so would every later input.

franz-go (a Go client, not Kafka's Java) has its own sticky algorithm, so its answers are not
ours; fed its own plans through the same traces (``peers/franz_go/trace.go``), every step is
checked valid and, on the same input, as balanced and as sticky as ours (Kafka's) or better.
"""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

import models
from peers import kafka_trace
from problems import evaluate, load_problem, owner_from_assignment
from problems.trace import load_trace, next_document

#: Seeded random traces per strategy (8 steps each after step 0, 9 rebalances).
TRACES = 60
STEPS = 8
TOPICS = ["t0", "t1", "t2", "t3", "t4"]
RACKS = ["r0", "r1", "r2"]
EVENTS = ("leave", "restart", "join", "topics", "subscribe")


def random_trace(seed: int, racks: bool = False, topic_ids: bool = False) -> dict:
    """A group trace of :data:`STEPS` steps drawn from ``seed`` (numpy's PCG64).

    1-5 members (a third static) on 1-3 topics of 1-8 partitions; equal subscriptions in half the
    traces; each step one or two events of :data:`EVENTS`: 1-2 members leave, restart or join,
    a topic is created or grows (or, one time in six, is deleted), a member subscribes anew
    (sometimes to a topic not created yet).  ``racks``: members on :data:`RACKS` (or none) and
    each partition's replicas on a random subset; ``topic_ids``: random KIP-848 topic ids.
    """
    rng = np.random.default_rng(seed)
    topics = {name: int(rng.integers(1, 9)) for name in TOPICS[: int(rng.integers(1, 4))]}
    start_topics = dict(topics)
    equal = bool(rng.random() < 0.5)
    made = [0]

    def subscription() -> list[str]:
        pool = list(topics) + [t for t in TOPICS if t not in topics and rng.random() < 0.15]
        if equal or not pool:
            return sorted(topics) or ["t0"]
        return sorted(rng.choice(pool, int(rng.integers(1, len(pool) + 1)), replace=False).tolist())

    def member() -> dict:
        made[0] += 1
        doc = {"id": f"c{made[0]}-" + "".join(rng.choice(list("abXY09"), 3)), "topics": []}
        doc["topics"] = subscription()
        if rng.random() < 0.33:
            doc["instance_id"] = f"instance-{made[0]}"
        if racks and rng.random() < 0.8:
            doc["rack"] = str(rng.choice(RACKS))
        return doc

    def replica_racks(count: int) -> list[list[str]]:
        return [[r for r in RACKS if rng.random() < 0.5] for _ in range(count)]

    def topic_id() -> str:
        return base64.urlsafe_b64encode(rng.bytes(16)).decode().rstrip("=")

    members = [member() for _ in range(int(rng.integers(1, 6)))]
    problem: dict = {"topics": start_topics, "members": members}
    if racks:
        problem["partition_racks"] = {t: replica_racks(n) for t, n in topics.items()}
    if topic_ids:
        problem["topic_ids"] = {t: topic_id() for t in topics}
    present = {m["id"]: m for m in members}
    steps = []
    for _ in range(STEPS):
        chosen = rng.choice(len(EVENTS), int(rng.integers(1, 3)), replace=False)
        step: dict = {}
        for kind in sorted(EVENTS[i] for i in chosen):
            staying = [m for m in present if m not in step.get("leave", [])]
            staying = [m for m in staying if m not in step.get("restart", [])]
            if kind in ("leave", "restart") and len(staying) > 1:
                size = int(rng.integers(1, min(2, len(staying) - 1) + 1))  # one member stays
                step[kind] = [str(x) for x in rng.choice(staying, size, replace=False)]
                if kind == "restart":
                    staying = [m for m in staying if m not in step[kind]]
            elif kind == "join":
                step["join"] = [member() for _ in range(int(rng.integers(1, 3)))]
            elif kind == "topics":
                name = str(rng.choice(TOPICS))
                if name in topics and len(topics) > 1 and rng.random() < 1 / 6:
                    step["topics"] = {name: 0}
                    del topics[name]
                    continue
                count = topics.get(name, 0) + int(rng.integers(1, 4))
                step["topics"] = {name: count}
                if racks:
                    old = step.get("partition_racks", {})
                    step["partition_racks"] = {**old, name: replica_racks(count)}
                if topic_ids and name not in topics:
                    step["topic_ids"] = {name: topic_id()}
                topics[name] = count
            elif kind == "subscribe" and staying:
                step["subscribe"] = {str(rng.choice(staying)): subscription()}
        for gone in step.get("leave", []):
            del present[gone]
        for joined in step.get("join", []):
            present[joined["id"]] = joined
        if step:
            steps.append(step)
    return {"kind": "group-trace", "problem": problem, "steps": steps}


def _trace(seed: int, strategy: str):
    kinds = {"sticky": (seed % 3 == 0, False), "cooperative-sticky": (seed % 2 == 0, False)}
    racks, ids = kinds.get(strategy, (False, strategy == "uniform" and seed % 2 == 0))
    return load_trace(random_trace(seed, racks=racks, topic_ids=ids), f"trace {seed}")


def _where(trace, k: int) -> str:
    return f"{trace.name}, step {k}: {json.dumps(trace.start)} {json.dumps(trace.steps)}"


def _steps_equal(trace, strategy: str, kafka: list[dict]) -> int:
    """Asserts every step's answer is Kafka's; returns the number of steps compared."""
    ours = models.trace(trace, strategy, solver="heuristic")
    assert len(ours.steps) == len(kafka) == len(trace)
    for k, (step, theirs) in enumerate(zip(ours.steps, kafka)):
        assert step.assignment == theirs["assignment"], _where(trace, k)
        if strategy == "cooperative-sticky":
            first = step.result.assignment  # the round's output: moving partitions left out
            assert (first, step.rounds) == (theirs["first"], theirs["rounds"]), _where(trace, k)
        assert not theirs.get("rejected"), _where(trace, k)  # no consumer refused its answer
    return len(kafka)


def _client_traces_equal(strategy: str) -> None:
    steps = 0
    for seed in range(TRACES):
        trace = _trace(seed, strategy)
        steps += _steps_equal(trace, strategy, kafka_trace.client_trace(trace, strategy))
    assert steps > TRACES * STEPS * 0.9  # hardly any step drew no event


def test_sticky_along_traces_equals_kafka(kafka_java):
    """Tests that along :data:`TRACES` random traces every step's answer equals Kafka's
    StickyAssignor's, each fed its own previous answers."""
    _client_traces_equal("sticky")


def test_cooperative_sticky_along_traces_equals_kafka(kafka_java):
    """Tests that along :data:`TRACES` random traces every step equals Kafka's
    CooperativeStickyAssignor's run by its consumers: the first round's output, the number of
    rounds and the assignment the step ends with, each fed its own previous answers."""
    _client_traces_equal("cooperative-sticky")


def _server_traces_equal(strategy: str, assignor: str) -> None:
    steps = 0
    for seed in range(TRACES):
        trace = _trace(seed, "uniform")
        steps += _steps_equal(trace, strategy, kafka_trace.server_trace(trace, assignor))
    assert steps > TRACES * STEPS * 0.9


def test_uniform_along_traces_equals_kafka(kafka_java):
    """Tests that along :data:`TRACES` random traces every step's target assignment equals
    Kafka's KIP-848 UniformAssignor's, the target carried from step to step as the coordinator
    carries it."""
    _server_traces_equal("uniform", "uniform")


def test_server_range_along_traces_equals_kafka(kafka_java):
    """Tests the same for KIP-848's server RangeAssignor (``server-range``)."""
    _server_traces_equal("server-range", "range")


def test_cooperative_member_dropping_a_topic_gives_it_up_before_joining(kafka_java):
    """Tests the cooperative protocol's early revocation: a member that stops subscribing a topic
    gives up its partitions before it joins (``ConsumerCoordinator.onJoinPrepare``), so the other
    subscriber gets them in the step's first round and the step takes one round, as in Kafka."""
    trace = load_trace(
        {
            "kind": "group-trace",
            "problem": {
                "topics": {"t0": 1, "t1": 2},
                "members": [
                    {"id": "a", "topics": ["t0", "t1"]},
                    {"id": "b", "topics": ["t0", "t1"]},
                ],
            },
            "steps": [{"subscribe": {"a": ["t1"]}}],
        }
    )
    kafka = kafka_trace.client_trace(trace, "cooperative-sticky")
    assert kafka[0]["assignment"] == {"a": {"t0": [0], "t1": [1]}, "b": {"t1": [0]}}
    assert kafka[1] == {
        "first": {"a": {"t1": [1]}, "b": {"t0": [0], "t1": [0]}},
        "assignment": {"a": {"t1": [1]}, "b": {"t0": [0], "t1": [0]}},
        "rounds": 1,
        "rejected": [],
    }
    _steps_equal(trace, "cooperative-sticky", kafka)


def test_cooperative_deleted_topic_takes_a_follow_up_round(kafka_java):
    """Tests the cooperative protocol's rejoin after a deletion: a topic deleted while its owner
    still subscribes it stays in the owner's claims (``onJoinPrepare`` revokes only topics no longer
    subscribed), so after the round the owner finds those partitions revoked
    (``onJoinComplete``: owned - assigned) and rejoins: the step takes two rebalances, as in Kafka."""
    trace = load_trace(
        {
            "kind": "group-trace",
            "problem": {
                "topics": {"t0": 2, "t1": 2},
                "members": [{"id": "a", "topics": ["t0", "t1"]}],
            },
            "steps": [{"topics": {"t1": 0}}],
        }
    )
    kafka = kafka_trace.client_trace(trace, "cooperative-sticky")
    assert [step["rounds"] for step in kafka] == [1, 2]
    assert kafka[1]["assignment"] == {"a": {"t0": [0, 1]}}
    _steps_equal(trace, "cooperative-sticky", kafka)


def test_static_and_dynamic_restarts_as_kafka_carries_them(kafka_java):
    """Tests what a restart keeps, on Kafka's side: a static member (``group.instance.id``) gets its
    partitions back; a dynamic one is a new member, and Kafka's sticky assignor moves what it had
    only as balance needs (here: nothing, two members, partitions split evenly again)."""
    start = {
        "topics": {"t": 4},
        "members": [
            {"id": "s", "topics": ["t"], "instance_id": "static"},
            {"id": "d", "topics": ["t"]},
        ],
    }
    trace = {"kind": "group-trace", "problem": start, "steps": [{"restart": ["s", "d"]}]}
    for strategy in ("sticky", "cooperative-sticky"):
        kafka = kafka_trace.client_trace(trace, strategy)
        assert kafka[1]["assignment"]["s"] == kafka[0]["assignment"]["s"]
        assert sum(len(p) for p in kafka[1]["assignment"]["d"].values()) == 2
        _steps_equal(load_trace(trace), strategy, kafka)
    kafka = kafka_trace.server_trace(trace, "uniform")
    assert kafka[1]["assignment"]["s"] == kafka[0]["assignment"]["s"]
    _steps_equal(load_trace(trace), "uniform", kafka)


@pytest.mark.parametrize("cooperative", [False, True], ids=["eager", "cooperative"])
def test_franz_go_along_traces_is_valid_and_never_worse_than_kafka(cooperative):
    """Tests franz-go's balancer fed its own plans through the random traces: every step valid, and
    on the same input (the step's members owning franz-go's previous plan, as kgo sends it) its
    sticky objective (sum of squared counts, then moves) equals ours, which is Kafka's, whenever
    the members' subscriptions are equal, and is never worse otherwise."""
    compared = better = 0
    for seed in range(TRACES):
        trace = _trace(seed, "franz-go")  # no racks: the franz-go peer does not send them
        previous = None
        for k, step in enumerate(kafka_trace.franz_go_trace(trace, cooperative)):
            doc = next_document(trace, k, previous)
            if cooperative:  # kgo, too, gives up what it no longer consumes before it joins
                for member in doc["members"]:
                    claims = member.get("owned", {})
                    member["owned"] = {t: p for t, p in claims.items() if t in member["topics"]}
            problem = load_problem(doc)
            theirs = evaluate(problem, owner_from_assignment(problem, step["assignment"]), "sticky")
            assert theirs.valid, (_where(trace, k), theirs.violations)
            ours = tuple(
                evaluate(problem, models.solve(problem, "sticky").answer, "sticky").objective
            )
            if len({frozenset(m["topics"]) for m in doc["members"]}) <= 1:
                assert tuple(theirs.objective) == ours, _where(trace, k)
            else:
                assert tuple(theirs.objective) <= ours, _where(trace, k)
            better += tuple(theirs.objective) < ours
            compared += 1
            previous = step["assignment"]
    assert compared > TRACES * STEPS * 0.9
    assert better > 0  # franz-go's general path beats Kafka's on some steps (docs/traces-kafka.md)
