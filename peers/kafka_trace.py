"""Kafka's own assignors through a whole trace, each step fed Kafka's own previous answer (tests only).

One call per trace crosses into the JVM (``TracePeers.java``, through :mod:`peers.kafka_java`'s
JVM): every step's group as the trace's events leave it (:func:`problems.trace.step_documents`:
topics, members in the coordinator's order, subscriptions, instance ids, racks, replica racks)
and the members that start afresh at that step (a join, a dynamic member's restart).  What each
member sends at a rebalance is not computed here: the Java side keeps every member's state as
Kafka keeps it and feeds each step Kafka's own answer to the step before.

* Client assignors (:func:`client_trace`): every member one consumer with its own assignor
  instance from step to step, as ``ConsumerCoordinator`` runs it: an eager member revokes
  everything before it joins, a cooperative one the topics it no longer subscribes; its
  ``Subscription`` carries its assignor's user data (``StickyAssignor``: its last assignment and
  generation), its assigned partitions (cooperative) and its generation; the leader's answer
  reaches each member through ``ConsumerProtocol``; a cooperative step takes follow-up rounds
  (members owning the round's answer, the next generation) until a round revokes nothing.
* KIP-848 server assignors (:func:`server_trace`): the coordinator's ``GroupSpec`` of every step
  holds each member's current target assignment, carried from the step before (a static member
  restarted keeps its own; a new or restarted dynamic member has none).
"""

from __future__ import annotations

import json
from typing import Any

from peers import kafka_java
from problems import load_problem
from problems.trace import Trace, load_trace, next_document, step_documents

STEP_FIELDS = ("topics", "members", "partition_racks")
MEMBER_FIELDS = ("id", "topics", "instance_id", "rack")


def fresh_members(trace: Trace, k: int, document: dict[str, Any]) -> list[str]:
    """The members of step ``k`` that are new consumers: they joined, or restarted as dynamic members.

    Read off :func:`problems.trace.next_document`: given a previous answer naming every member,
    only a new consumer sends no generation.
    """
    if k == 0:
        return [m["id"] for m in document["members"]]
    previous = {m["id"]: {} for m in document["members"]}
    sent = next_document(trace, k, previous)
    return [m["id"] for m in sent["members"] if "generation" not in m]


def trace_input(trace: Trace | dict[str, Any], topic_ids: bool = False) -> str:
    """The JSON ``TracePeers`` reads: each step's group (:data:`STEP_FIELDS`, members'
    :data:`MEMBER_FIELDS`), its new consumers, and with ``topic_ids`` each topic's KIP-848 id as
    ``[most, least]`` significant bits (``GroupProblem.topic_uuids``)."""
    if not isinstance(trace, Trace):
        trace = load_trace(trace)
    if trace.kind != "group-trace":
        raise ValueError(f"{trace.name}: Kafka's assignors run group traces, not {trace.kind}")
    if any("owned" in m or "generation" in m for m in trace.start["members"]):
        # Kafka's members hold what Kafka gave them: a trace starts from a group never assigned.
        raise ValueError(f"{trace.name}: the starting group has claims; Kafka's side has none")
    steps = []
    for k, document in enumerate(step_documents(trace)):
        step: dict[str, Any] = {key: document[key] for key in STEP_FIELDS if key in document}
        step["members"] = [
            {key: member[key] for key in MEMBER_FIELDS if key in member}
            for member in document["members"]
        ]
        step["fresh"] = fresh_members(trace, k, document)
        if topic_ids:
            problem = load_problem(document)
            most, least = problem.topic_uuids
            step["topic_ids"] = {
                name: [int(a), int(b)]
                for name, a, b in zip(problem.topics, most.tolist(), least.tolist())
            }
        steps.append(step)
    return json.dumps({"steps": steps})


def client_trace(trace: Trace | dict[str, Any], assignor: str) -> list[dict[str, Any]]:
    """Kafka's client assignor ``assignor`` (a key of :data:`peers.kafka_java.CLIENT_ASSIGNORS`)
    through ``trace``: per step ``{"assignment", "first", "rounds", "rejected"}`` (the step's final
    answer; its first round's; the rounds it took; members given a topic they do not subscribe,
    whose consumer refuses the answer)."""
    import jpype

    kafka_java.start()
    peers = jpype.JClass("rebalancelab.peers.TracePeers")
    answer = peers.clientTrace(kafka_java.CLIENT_ASSIGNORS[assignor], trace_input(trace))
    steps: list[dict[str, Any]] = json.loads(str(answer))["steps"]
    return steps


def server_trace(trace: Trace | dict[str, Any], assignor: str = "uniform") -> list[dict[str, Any]]:
    """Kafka's KIP-848 server assignor ``assignor`` (``uniform`` or ``range``) through ``trace``:
    per step ``{"assignment"}``, the target assignment the coordinator computes."""
    import jpype

    kafka_java.start()
    peers = jpype.JClass("rebalancelab.peers.TracePeers")
    answer = peers.serverTrace(
        kafka_java.SERVER_ASSIGNORS[assignor], trace_input(trace, topic_ids=True)
    )
    steps: list[dict[str, Any]] = json.loads(str(answer))["steps"]
    return steps


def franz_go_trace(
    trace: Trace | dict[str, Any], cooperative: bool = False
) -> list[dict[str, Any]]:
    """franz-go's sticky balancer (``kgo.StickyBalancer``, or ``CooperativeStickyBalancer``)
    through ``trace``, each step fed its own previous plan as kgo's members carry it
    (``peers/franz_go/trace.go``): per step ``{"assignment", "first", "rounds"}``."""
    import subprocess

    from peers.kgo import PROGRAM

    if not PROGRAM.exists():
        raise RuntimeError(f"{PROGRAM} is missing: run `make peers`")
    command = [str(PROGRAM), "-trace", *(["-cooperative"] if cooperative else []), "-"]
    done = subprocess.run(
        command, input=trace_input(trace), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"franz-go-peer failed ({done.returncode}): {done.stderr.strip()}")
    steps: list[dict[str, Any]] = json.loads(done.stdout)["steps"]
    return steps
