"""Tests of recorded traces: the ``recorded`` header and each step's ``observed`` object
(problems/recorded.py through problems/trace.py), and their replay (models/trace/observed.py, the
``observed`` lines of ``rebalance-lab trace``)."""

from __future__ import annotations

import copy
import json

import pytest

from models.trace.observed import imbalance, observed_run
from problems import ProblemError
from problems.trace import load_trace
from support.kafka_support import run_cli

RECORDED = {
    "kind": "group-trace",
    "recorded": {
        "group": "shop",
        "protocol": "classic",
        "assignor": "range",
        "source": "coordinator records",
        "from": "2026-11-28T07:00:00.000Z",
        "to": "2026-11-28T07:20:00.000Z",
        "poll_ms": 100,
    },
    "problem": {
        "topics": {"t": 4},
        "members": [{"id": "a", "topics": ["t"], "owned": {"t": [0, 1, 2, 3]}}],
    },
    "steps": [
        {
            "join": [{"id": "b", "topics": ["t"]}],
            "observed": {
                "generation": 2,
                "assignment": {"a": {"t": [0, 1]}, "b": {"t": [2, 3]}},
                "rounds": 1,
                "settle_ms": 120,
                "unowned_partition_ms": 480,
            },
        },
        {
            "leave": ["a"],
            "observed": {
                "generation": 3,
                "assignment": {"b": {"t": [0, 1, 2, 3]}},
                "rounds": 1,
                "settle_ms": 90,
                "unowned_partition_ms": 200,
            },
        },
    ],
}


def test_the_observed_objects_are_kept_apart_from_the_events():
    trace = load_trace(copy.deepcopy(RECORDED))
    assert trace.recorded["group"] == "shop"
    assert trace.steps == ({"join": [{"id": "b", "topics": ["t"]}]}, {"leave": ["a"]})
    assert [o["generation"] for o in trace.observed] == [2, 3]


def test_a_trace_that_is_not_recorded_has_no_observed():
    doc = copy.deepcopy(RECORDED)
    del doc["recorded"]
    with pytest.raises(ProblemError, match=r"steps\[0\]\.observed: unknown event .*recorded"):
        load_trace(doc)
    for step in doc["steps"]:
        del step["observed"]
    trace = load_trace(doc)
    assert trace.recorded is None and trace.observed == ()


def _with(path: str, value):
    doc = copy.deepcopy(RECORDED)
    node = doc
    keys = path.split(".")
    for key in keys[:-1]:
        node = node[int(key)] if key.isdigit() else node[key]
    if value is KeyError:
        del node[keys[-1]]
    else:
        node[keys[-1]] = value
    return doc


@pytest.mark.parametrize(
    "path, value, expected",
    [
        ("recorded", [], "recorded: must be an object"),
        ("recorded.group", KeyError, "recorded.group: missing"),
        ("recorded.group", 3, "recorded.group: must be a string"),
        ("recorded.poll_ms", -1, "recorded.poll_ms: must be an integer >= 0"),
        ("recorded.colour", "red", "recorded.colour: unknown field"),
        ("recorded.clients", ["c0"], "recorded.clients: must be an object"),
        ("recorded.clients", {"m-1": 7}, "recorded.clients.m-1: must be a string"),
        ("steps.0.observed", 1, "steps[0].observed: must be an object"),
        ("steps.0.observed.assignment", KeyError, "steps[0].observed.assignment: missing"),
        ("steps.0.observed.generation", -2, "steps[0].observed.generation: must be an integer"),
        ("steps.0.observed.rounds", 0, "steps[0].observed.rounds: must be an integer >= 1"),
        ("steps.0.observed.settle_ms", 1.5, "steps[0].observed.settle_ms: must be an integer"),
        (
            "steps.1.observed.unowned_partition_ms",
            "1",
            "steps[1].observed.unowned_partition_ms: must be an integer",
        ),
        ("steps.0.observed.epoch", 1, "steps[0].observed.epoch: unknown field"),
        (
            "steps.1.observed.assignment",
            {"a": {"t": [0]}},
            "steps[1].observed.assignment.a: member is not in the group at this step",
        ),
        (
            "steps.0.observed.assignment",
            {"a": {"u": [0]}},
            "steps[0].observed.assignment.a.u: topic is not in the group at this step",
        ),
        (
            "steps.0.observed.assignment",
            {"a": {"t": [4]}},
            "steps[0].observed.assignment.a.t[0]: must be at most 3",
        ),
        (
            "steps.0.observed.assignment",
            {"a": {"t": [0]}, "b": {"t": [0]}},
            "steps[0].observed.assignment.b.t[0]: partition 0 is also held by 'a'",
        ),
        (
            "steps.0.observed.assignment",
            {"a": {"t": [1, 1]}},
            "steps[0].observed.assignment.a.t[1]: partition 1 is also held by 'a'",
        ),
    ],
)
def test_a_bad_recorded_field_is_one_line_naming_it(tmp_path, capsys, path, value, expected):
    file = tmp_path / "recorded.json"
    file.write_text(json.dumps(_with(path, value)))
    status, out, err = run_cli(capsys, "trace", "--strategy", "sticky", str(file))
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and f"recorded.json: {expected}" in err, err


def test_the_observed_row_scores_what_the_members_held():
    trace = load_trace(copy.deepcopy(RECORDED))
    run = observed_run(trace, "sticky")
    assert run.strategy == "observed" and run.info["judged_on"] == "sticky"
    # a's partitions 2 and 3 went to b; then a left, b took 0 and 1 too.
    assert [s.moves for s in run.steps] == [0, 2, 2]
    assert [s.info.get("settle_ms") for s in run.steps] == [None, 120, 90]
    assert [imbalance(s) for s in run.steps] == [0, 0, 0]
    assert all(s.result.evaluation.valid for s in run.steps)


def test_an_observed_assignment_that_loses_a_partition_is_an_invalid_step():
    doc = copy.deepcopy(RECORDED)
    doc["steps"][1]["observed"]["assignment"] = {"b": {"t": [0, 1, 2]}}
    run = observed_run(load_trace(doc), "sticky")
    assert [s.result.evaluation.valid for s in run.steps] == [True, True, False]
    assert run.steps[2].info["violations"]


def test_trace_prints_the_observed_beside_each_step_and_compare_prints_every_row(tmp_path, capsys):
    file = tmp_path / "recorded.json"
    file.write_text(json.dumps(RECORDED))
    status, out, err = run_cli(capsys, "trace", "--strategy", "sticky", str(file))
    assert status == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["observed"]["moves"] for line in lines[:-1]] == [0, 2, 2]
    assert lines[1]["observed"]["unowned_partition_ms"] == 480
    summary = lines[-1]["summary"]["observed"]
    assert summary["moves"] == 4 and summary["settle_ms"] == 210
    assert summary["unowned_partition_ms"] == 680 and summary["valid_steps"] == 3

    status, out, err = run_cli(capsys, "trace", "--compare", "--report", str(file))
    assert status == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    names = [row["row"] for row in rows]
    assert names[0] == "observed" and names[-1] == "range/horizon"  # judged on the assignor
    assert "range/heuristic" in names and "share/heuristic" not in names
    assert all(row["judged_on"] == "range" for row in rows)
    assert "observed" in err and "unowned_partition_ms" in err


def test_compare_needs_a_recorded_trace(tmp_path, capsys):
    doc = copy.deepcopy(RECORDED)
    del doc["recorded"]
    for step in doc["steps"]:
        del step["observed"]
    file = tmp_path / "plain.json"
    file.write_text(json.dumps(doc))
    status, out, err = run_cli(capsys, "trace", "--compare", str(file))
    assert status == 2 and "--compare needs a recorded trace" in err
    status, out, err = run_cli(capsys, "trace", str(file))
    assert status == 2 and "give --strategy or --plugin" in err
