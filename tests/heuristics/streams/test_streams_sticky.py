"""heuristics/streams/streams_sticky.py: Kafka 4.4's streams-group StickyTaskAssignor on hand-checked groups
and the examples (each answer also equals Kafka's: tests/peers/test_streams_sticky_equality.py)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from heuristics.java import JavaPriorityQueue
from heuristics.streams import streams_sticky
from heuristics.streams.streams_sticky import task_offset_sums
from problems import evaluate, load_problem
from support.kafka_support import run_cli

ROOT = Path(__file__).resolve().parents[3]

#: Each example's answer and levels (streams-sticky's; Kafka's is the same).
EXAMPLES = {
    "stateless.json": (
        {
            "instance-a-thread-1": {"active": {"0": [1, 4], "1": [1]}, "standby": {}, "warmup": {}},
            "instance-a-thread-2": {"active": {"0": [2, 5], "1": [2]}, "standby": {}, "warmup": {}},
            "instance-b-thread-1": {"active": {"0": [0, 3], "1": [0]}, "standby": {}, "warmup": {}},
        },
        [0, 27, 0, 0, 0, 0],
    ),
    "stateful-standbys.json": (
        {
            "a-1": {"active": {"0": [0], "1": [0]}, "standby": {"0": [1, 2]}, "warmup": {}},
            "b-1": {"active": {"0": [2], "1": [1]}, "standby": {"0": [3]}, "warmup": {}},
            "c-1": {"active": {"0": [1, 3]}, "standby": {"0": [0]}, "warmup": {}},
        },
        [123, 12, 6, 0, 2, 1],
    ),
    "uneven-threads.json": (
        {
            "big-1": {"active": {"0": [3, 6]}, "standby": {"0": [4]}, "warmup": {}},
            "big-2": {"active": {"0": [2, 5]}, "standby": {}, "warmup": {}},
            "big-3": {"active": {"0": [1, 7]}, "standby": {"0": [0]}, "warmup": {}},
            "small-1": {
                "active": {"0": [0, 4]},
                "standby": {"0": [1, 2, 3, 5, 6, 7]},
                "warmup": {},
            },
        },
        [0, 16, 38, 0, 0, 8],
    ),
    "kip-441-scale-out.json": (
        {
            "a": {"active": {"0": [0, 1]}, "standby": {"0": [2]}, "warmup": {}},
            "b": {"active": {"0": [2]}, "standby": {"0": [1, 3]}, "warmup": {}},
            "c": {"active": {"0": [3]}, "standby": {"0": [0]}, "warmup": {}},
        },
        [10, 6, 6, 0, 1, 1],
    ),
    "kip-708-925-tags-racks.json": (
        {
            "app-1": {"active": {"0": [0], "1": [0]}, "standby": {"0": [2, 3]}, "warmup": {}},
            "app-2": {"active": {"0": [1], "1": [1]}, "standby": {"0": [3]}, "warmup": {}},
            "app-3": {"active": {"0": [2], "1": [2]}, "standby": {"0": [0, 4]}, "warmup": {}},
            "app-4": {"active": {"0": [3]}, "standby": {"0": [0, 5]}, "warmup": {}},
            "app-5": {"active": {"0": [4]}, "standby": {"0": [1, 5]}, "warmup": {}},
            "app-6": {"active": {"0": [5]}, "standby": {"0": [1, 2, 4]}, "warmup": {}},
        },
        [25000, 29, 43, 0, 1, 7],
    ),
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_examples_are_assigned(capsys, name):
    """Tests `rebalance-lab assign --strategy streams-sticky` on each example: the answer and the
    levels pinned above, valid, with every member present."""
    path = ROOT / "examples" / "streams" / name
    status, out, err = run_cli(capsys, "assign", "--strategy", "streams-sticky", str(path))
    assert status == 0, err
    document = json.loads(out)
    assignment, objective = EXAMPLES[name]
    assert document == {"assignment": assignment, "status": "heuristic", "objective": objective}
    assert err.startswith("streams-sticky/heuristic: heuristic, objective ")


def test_examples_folder_is_covered():
    """Tests that every example file has its pinned answer above."""
    assert {p.name for p in (ROOT / "examples" / "streams").glob("*.json")} == set(EXAMPLES)


BOTH_LOWER = {
    "kind": "streams-group",
    "subtopologies": {"a": {"partitions": 3, "stateful": True}},
    "members": [
        {"id": "x", "process": "px", "standby": {"a": [1]}, "lags": {"a": [-1, 0, -1]}},
        {"id": "x2", "process": "px", "active": {"a": [0]}},
        {"id": "y", "process": "py", "standby": {"a": [1]}, "lags": {"a": [-1, 5, -1]}},
    ],
}


def test_a_later_candidate_wins_only_when_both_loads_are_lower():
    """Tests Kafka's findPrevMemberWithLeastLoad.  The quota is 1 task per member; x2 keeps a_0.
    a_1's candidates, most caught up first: x (lag 0), y (lag 5), then x2 (its process has state,
    not a standby).  y's process is idle (load 0 < px's 0.5) but y's task count equals x's (0), so
    x, the first, keeps it; a_2 then goes to the least loaded process, py."""
    result = streams_sticky.assign(load_problem(BOTH_LOWER))
    assert result.assignment == {
        "x": {"active": {"a": [1]}, "standby": {}, "warmup": {}},
        "x2": {"active": {"a": [0]}, "standby": {}, "warmup": {}},
        "y": {"active": {"a": [2]}, "standby": {}, "warmup": {}},
    }
    assert result.valid


def test_the_least_lag_ranks_first_among_standbys():
    """Tests the candidates' order: with y's lag 0 and x's 5, y is first and takes a_1."""
    doc = copy.deepcopy(BOTH_LOWER)
    doc["members"][0]["lags"] = {"a": [-1, 5, -1]}
    doc["members"][2]["lags"] = {"a": [-1, 0, -1]}
    result = streams_sticky.assign(load_problem(doc))
    assert result.assignment["y"]["active"] == {"a": [1]}
    assert result.assignment["x"]["active"] == {"a": [2]}


def test_a_standby_without_lags_ranks_behind_reported_ones():
    """Tests that a standby whose process reports no lag counts offset 0: x (no lags) ranks after
    y (lag 5), so y takes a_1."""
    doc = copy.deepcopy(BOTH_LOWER)
    del doc["members"][0]["lags"]
    result = streams_sticky.assign(load_problem(doc))
    assert result.assignment["y"]["active"] == {"a": [1]}


def test_inputs_kafka_does_not_read_leave_the_answer_alone():
    """Tests that threads, racks, client tags, warm-ups and the KIP-441/925 configs do not change
    the answer (Kafka 4.4's assignor reads none of them)."""
    path = ROOT / "examples" / "streams" / "stateful-standbys.json"
    doc = json.loads(path.read_text())
    base = streams_sticky.assign(load_problem(doc)).assignment
    for i, member in enumerate(doc["members"]):
        member["threads"] = i + 2
        member["rack"] = "elsewhere"
        member["client_tags"] = {"zone": f"z{i}"}
    doc["members"][2]["warmup"] = {"0": [2]}
    doc["configs"].update(
        {"acceptable_recovery_lag": 0, "rack_aware_assignment_strategy": "min_traffic"}
    )
    changed = streams_sticky.assign(load_problem(doc)).assignment
    for member in base:
        assert changed[member]["active"] == base[member]["active"]
        assert changed[member]["standby"] == base[member]["standby"]
        assert changed[member]["warmup"] == {}


def test_a_standby_without_room_is_left_out():
    """Tests a group of one process: no other process can hold a standby, so none is assigned
    (Kafka warns), and the answer is valid."""
    doc = {
        "kind": "streams-group",
        "subtopologies": {"a": {"partitions": 2, "stateful": True}},
        "members": [{"id": "t1", "process": "p"}, {"id": "t2", "process": "p"}],
        "configs": {"num_standby_replicas": 2},
    }
    problem = load_problem(doc)
    result = streams_sticky.assign(problem)
    assert result.answer.active.tolist() in ([0, 1], [1, 0])
    assert len(result.answer.standby) == 0
    assert evaluate(problem, result.answer, "streams").valid


def test_java_priority_queue_breaks_ties_as_javas_heap():
    """Tests the heap on four equal keys: Java's PriorityQueue polls a, d, c, b (the last element
    sifted down from the root stops at the first equal child), not first in, first out."""
    queue: JavaPriorityQueue[tuple[str, int]] = JavaPriorityQueue(lambda a, b: a[1] - b[1])
    for name in "abcd":
        queue.add((name, 0))
    assert [queue.poll()[0] for _ in range(4)] == ["a", "d", "c", "b"]
    assert queue.poll() is None
    for name, key in (("e", 3), ("f", 1), ("g", 2), ("h", 1)):
        queue.add((name, key))
    assert [queue.poll()[0] for _ in range(4)] == ["f", "h", "g", "e"]


def test_offset_sums_order_the_lags():
    """Tests the offsets derived from lags (a: 0 0 40 120, b: 15 - 0 0, c: - 3 - -): end = largest
    lag + 1, offset = end - lag, -1 without state and for stateless tasks."""
    problem = load_problem(ROOT / "examples" / "streams" / "stateful-standbys.json")
    end, offsets = task_offset_sums(problem)
    assert end.tolist() == [16, 4, 41, 121, 1, 1]
    assert offsets.tolist() == [
        [16, 4, 1, 1, -1, -1],
        [1, -1, 41, 121, -1, -1],
        [-1, 1, -1, -1, -1, -1],
    ]
