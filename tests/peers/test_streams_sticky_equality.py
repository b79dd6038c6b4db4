"""heuristics/streams/streams_sticky.py against Kafka's own streams-group ``StickyTaskAssignor`` (KIP-1071),
through JPype (peers/kafka_streams.py).

Random streams groups (Hypothesis draws the shape, a seed the contents): 1 to 4 subtopologies
(stateful or not, 0 to 8 tasks, ids that sort differently as strings and as numbers), 1 to 10
members over 1 to 5 processes, and 40 larger groups of up to 80 members over 40 processes
(uneven: KIP-1071's members are threads, so a process with more members has more capacity),
random member and process ids (Java's hash-map orders), previous active tasks (some tasks with
none), previous standby and warm-up replicas, processes' lags
(no state, caught up, lagging, ties), racks, client tags and thread counts (which Kafka 4.4's
assignor does not read), and 0 to 2 standby replicas.  The answers must be equal, task by task.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heuristics.streams import streams_sticky
from problems import evaluate, load_problem, streams_assignment_json

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples" / "streams").glob("*.json"))
SUBTOPOLOGY_NAMES = ["0", "1", "2", "10", "11", "s0", "s1", "sub-a", "Sub-B", "\u00e9t\u00e9"]
ID_LETTERS = list("abcXYZ019-_")


@st.composite
def streams_documents(draw, processes: int = 5, members: int = 10) -> dict:
    """A random streams group (module docstring) of at most ``processes`` processes and
    ``members`` members."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    sub_count = draw(st.integers(1, 4))
    process_count = draw(st.integers(1, processes))
    member_count = draw(st.integers(process_count, max(members, process_count)))
    standbys = draw(st.integers(0, 2))
    previous = draw(st.sampled_from(["none", "sticky", "random", "scale-out"]))
    names = [str(n) for n in rng.choice(SUBTOPOLOGY_NAMES, size=sub_count, replace=False)]
    subtopologies = {
        name: {"partitions": int(rng.integers(0, 9)), "stateful": bool(rng.random() < 0.6)}
        for name in names
    }

    def random_id(i: int) -> str:
        return "".join(rng.choice(ID_LETTERS, size=int(rng.integers(1, 8)))) + f"#{i}"

    processes = [random_id(p) for p in range(process_count)]
    owner_process = np.concatenate(
        [np.arange(process_count), rng.integers(0, process_count, member_count - process_count)]
    )
    rng.shuffle(owner_process)
    members: list[dict] = []
    tags = {p: {"zone": str(rng.choice(["a", "b", "c"]))} for p in range(process_count)}
    tagged = rng.random(process_count) < 0.5  # client tags belong to the process
    for i in range(member_count):
        p = int(owner_process[i])
        member: dict = {"id": random_id(i), "process": processes[p]}
        if rng.random() < 0.3:
            member["threads"] = int(rng.integers(1, 4))
        if rng.random() < 0.5:
            member["rack"] = str(rng.choice(["r1", "r2", "r3"]))
        if tagged[p]:
            member["client_tags"] = tags[p]
        members.append(member)
    # scale-out: the last processes are new (no previous tasks, no state)
    fresh = set(range(process_count // 2, process_count)) if previous == "scale-out" else set()
    old = [m for m in range(member_count) if int(owner_process[m]) not in fresh] or [0]

    def give(m: int, kind: str, name: str, k: int) -> None:
        members[m].setdefault(kind, {}).setdefault(name, []).append(k)

    for name, sub in subtopologies.items():
        for k in range(sub["partitions"]):
            held: set[int] = set()
            if previous != "none" and rng.random() < 0.8:
                m = int(rng.choice(old)) if previous != "sticky" else k % len(old)
                give(m, "active", name, k)
                held.add(m)
            if not sub["stateful"] or previous == "none":
                continue
            for _ in range(int(rng.integers(0, 3))):
                m = int(rng.choice(old))
                if m not in held:
                    give(m, "standby" if rng.random() < 0.8 else "warmup", name, k)
                    held.add(m)
    lag_values = [-1, -1, 0, 0, 5, 5, 100, 10_000, 123_456]
    for p in range(process_count):
        if p in fresh or rng.random() < 0.2:
            continue
        lags = {
            name: [int(rng.choice(lag_values)) for _ in range(sub["partitions"])]
            for name, sub in subtopologies.items()
            if sub["stateful"] and rng.random() < 0.8
        }
        if lags:
            first = int(np.flatnonzero(owner_process == p)[0])
            members[first]["lags"] = lags
            for m in np.flatnonzero(owner_process == p)[1:].tolist():
                if rng.random() < 0.5:
                    members[m]["lags"] = lags  # members of a process agree
    return {
        "kind": "streams-group",
        "subtopologies": subtopologies,
        "members": members,
        "configs": {"num_standby_replicas": standbys},
    }


@settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(doc=streams_documents())
def test_streams_sticky_equals_kafka_on_random_groups(kafka_java, doc):
    """Tests that streams-sticky gives every member the active and standby tasks Kafka 4.4's
    streams-group StickyTaskAssignor gives it, on 400 random groups."""
    from peers import kafka_streams

    problem = load_problem(doc)
    ours = streams_sticky.assign(problem).answer
    theirs = kafka_streams.sticky_assign(problem)
    assert streams_assignment_json(problem, ours) == streams_assignment_json(problem, theirs)


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(doc=streams_documents(processes=40, members=80))
def test_streams_sticky_equals_kafka_on_larger_groups(kafka_java, doc):
    """Tests 40 groups of up to 80 members over up to 40 processes, where Java's hash tables grow
    (the member map past 12 members; ``processIdToState``, filled by ``computeIfAbsent``, grows a
    step later than ``put`` would)."""
    from peers import kafka_streams

    problem = load_problem(doc)
    ours = streams_sticky.assign(problem).answer
    assert ours == kafka_streams.sticky_assign(problem)


def test_kip_441_scale_out_equals_kafka(kafka_java):
    """Tests a hand-made scale-out (examples/streams/kip-441-scale-out.json's shape): two
    caught-up processes and a new one without state.  Kafka and streams-sticky agree, and the
    broker-side assignor balances at once: the quota (ceil(4 / 3) = 2, then ceil(2 / 2) = 1)
    leaves b one of its two tasks, and the new process c takes s0_3 active with no state for it
    (no warm-up: it restores s0_3 from scratch, level 1 counts the largest known lag, 10)."""
    from peers import kafka_streams

    doc = {
        "kind": "streams-group",
        "subtopologies": {"s0": {"partitions": 4, "stateful": True}},
        "members": [
            {"id": "a", "process": "pa", "active": {"s0": [0, 1]}, "standby": {"s0": [2, 3]},
             "lags": {"s0": [0, 0, 10, 10]}},
            {"id": "b", "process": "pb", "active": {"s0": [2, 3]}, "standby": {"s0": [0, 1]},
             "lags": {"s0": [10, 10, 0, 0]}},
            {"id": "c", "process": "pc"},
        ],
        "configs": {"num_standby_replicas": 1},
    }  # fmt: skip
    problem = load_problem(doc)
    ours = streams_sticky.assign(problem)
    assert ours.answer == kafka_streams.sticky_assign(problem)
    verdict = evaluate(problem, ours.answer, "streams")
    assert verdict.valid, verdict.violations
    assert ours.assignment == {
        "a": {"active": {"s0": [0, 1]}, "standby": {"s0": [2]}, "warmup": {}},
        "b": {"active": {"s0": [2]}, "standby": {"s0": [1, 3]}, "warmup": {}},
        "c": {"active": {"s0": [3]}, "standby": {"s0": [0]}, "warmup": {}},
    }
    assert verdict.objective == (10, 6, 6, 0, 1, 1)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_examples_equal_kafka(kafka_java, path):
    """Tests every example of examples/streams/ against Kafka's class (their answers are pinned in
    tests/heuristics/streams/test_streams_sticky.py)."""
    from peers import kafka_streams

    problem = load_problem(path)
    assert streams_sticky.assign(problem).answer == kafka_streams.sticky_assign(problem)
