"""Tests of problems/trace.py: reading traces, every step's document, the next input, trace moves."""

from __future__ import annotations

import copy
import gc
import json
import weakref
from pathlib import Path

import numpy as np
import pytest

from problems import ProblemError, load_problem, previous_owners
from problems.trace import (
    MAX_TRACE_SIZE,
    Trace,
    fresh_members,
    iter_steps,
    load_trace,
    next_document,
    placement_trace_moves,
    placement_with_replicas,
    step_documents,
    step_problems,
    trace_moves,
    trace_size,
    with_claims,
)

ROOT = Path(__file__).parents[2]
GROUP = {
    "kind": "group-trace",
    "problem": {
        "topics": {"t0": 6},
        "members": [
            {"id": "c0", "topics": ["t0"]},
            {"id": "c1", "topics": ["t0"], "instance_id": "host-1"},
            {"id": "c2", "topics": ["t0"]},
        ],
    },
    "steps": [
        {"restart": ["c0", "c1"]},
        {"join": [{"id": "c3", "topics": ["t0"]}]},
        {"leave": ["c2"]},
        {"topics": {"t0": 8, "t1": 2}, "subscribe": {"c3": ["t0", "t1"]}},
    ],
}
PLACEMENT = {
    "kind": "placement-trace",
    "problem": {
        "brokers": [{"id": 1}, {"id": 2}, {"id": 3}],
        "partitions": [
            {"topic": "t", "partition": 0, "replicas": [1, 2]},
            {"topic": "t", "partition": 1, "replicas": [2, 3]},
        ],
    },
    "steps": [
        {"remove_brokers": [1]},
        {
            "add_brokers": [{"id": 4}],
            "partitions": [{"topic": "u", "partition": 0, "replicas": [], "replication_factor": 2}],
        },
    ],
}


def with_step(base: dict, step: dict) -> dict:
    doc = copy.deepcopy(base)
    doc["steps"].append(step)
    return doc


def test_a_trace_reads_from_a_dict_text_bytes_and_a_file(tmp_path):
    """Tests that every source gives the same trace, its length the number of rebalances."""
    path = tmp_path / "group.json"
    path.write_text(json.dumps(GROUP))
    traces = [
        load_trace(GROUP),
        load_trace(json.dumps(GROUP)),
        load_trace(json.dumps(GROUP).encode()),
        load_trace(path),
        load_trace(str(path)),
    ]
    for trace in traces:
        assert isinstance(trace, Trace)
        assert (trace.kind, len(trace), len(trace.steps)) == ("group-trace", 5, 4)
        assert step_documents(trace) == step_documents(traces[0])
    assert traces[3].name == str(path)


def test_step_documents_follow_the_events_in_order():
    """Tests members, topics and subscriptions after every step (leave, restart, join, topics)."""
    docs = step_documents(load_trace(GROUP))
    ids = [[m["id"] for m in doc["members"]] for doc in docs]
    # The dynamic c0 rejoins at the end; the static c1 keeps its place.
    assert ids == [
        ["c0", "c1", "c2"],
        ["c1", "c2", "c0"],
        ["c1", "c2", "c0", "c3"],
        ["c1", "c0", "c3"],
        ["c1", "c0", "c3"],
    ]
    assert docs[4]["topics"] == {"t0": 8, "t1": 2}
    assert docs[4]["members"][2]["topics"] == ["t0", "t1"]
    assert all("owned" not in m and "generation" not in m for d in docs for m in d["members"])


def test_step_documents_are_copies():
    """Tests that changing a returned document does not change the trace."""
    trace = load_trace(GROUP)
    step_documents(trace)[1]["members"].clear()
    assert len(step_documents(trace)[1]["members"]) == 3


def test_restart_of_a_dynamic_member_drops_its_claims_and_a_static_member_keeps_them():
    """Tests next_document at a restart: dynamic c0 sends nothing, static c1 its claims at generation k."""
    trace = load_trace(GROUP)
    previous = {"c0": {"t0": [0, 1]}, "c1": {"t0": [2, 3]}, "c2": {"t0": [4, 5]}}
    doc = next_document(trace, 1, previous)
    members = {m["id"]: m for m in doc["members"]}
    assert members["c1"]["owned"] == {"t0": [2, 3]} and members["c1"]["generation"] == 1
    assert members["c2"]["owned"] == {"t0": [4, 5]} and members["c2"]["generation"] == 1
    assert "owned" not in members["c0"] and "generation" not in members["c0"]
    # The next step: c0 claims what it was given, c3 joins with nothing.
    doc = next_document(
        trace, 2, {"c1": {"t0": [2, 3]}, "c2": {"t0": [4, 5]}, "c0": {"t0": [0, 1]}}
    )
    members = {m["id"]: m for m in doc["members"]}
    assert members["c0"]["owned"] == {"t0": [0, 1]} and members["c0"]["generation"] == 2
    assert "owned" not in members["c3"]


def test_step_zero_is_the_starting_problem_as_given():
    """Tests that step 0's input keeps the start's own claims."""
    doc = copy.deepcopy(GROUP)
    doc["problem"]["members"][0]["owned"] = {"t0": [0]}
    doc["problem"]["members"][0]["generation"] = 7
    trace = load_trace(doc)
    assert next_document(trace, 0, None) == doc["problem"]
    assert "owned" not in step_documents(trace)[0]["members"][0]
    with pytest.raises(ValueError, match="not a step"):
        next_document(trace, 5, None)


def test_topic_deletion_growth_and_lags():
    """Tests that 0 deletes a topic (and its lags), growth pads lags with 0, a claim on a deleted
    topic is stale."""
    doc = {
        "kind": "group-trace",
        "problem": {
            "topics": {"a": 2, "b": 2},
            "members": [{"id": "c0", "topics": ["a", "b"]}],
            "lags": {"a": [5, 6], "b": [7, 8]},
        },
        "steps": [{"topics": {"a": 3}}, {"topics": {"b": 0}}, {"lags": {"a": [1, 2, 3]}}],
    }
    trace = load_trace(doc)
    docs = step_documents(trace)
    assert docs[1]["lags"] == {"a": [5, 6, 0], "b": [7, 8]}
    assert docs[2]["topics"] == {"a": 3} and docs[2]["lags"] == {"a": [5, 6, 0]}
    assert docs[3]["lags"] == {"a": [1, 2, 3]}
    problem = load_problem(next_document(trace, 2, {"c0": {"a": [0, 1, 2], "b": [0, 1]}}))
    assert previous_owners(problem).tolist() == [0, 0, 0]
    assert any("b" in note for note in problem.notes)


@pytest.mark.parametrize(
    "step, expected",
    [
        ({"leave": ["c9"]}, "steps[4].leave[0]: member 'c9' is not in the group (step 5)"),
        ({"restart": ["c2"]}, "steps[4].restart[0]: member 'c2' is not in the group (step 5)"),
        ({"leave": ["c0", "c0"]}, "steps[4].leave[1]: member 'c0' is listed twice"),
        ({"restart": ["c0"], "leave": ["c0"]}, "steps[4].restart[0]: member 'c0' also leaves"),
        ({"join": [{"id": "c3", "topics": ["t0"]}]}, "steps[4].join[0].id: member 'c3' is already"),
        ({"join": [{"id": "c5"}]}, "steps[4].join[0].topics: missing"),
        ({"join": [{"id": "c5", "topics": [], "owned": {}}]}, "steps[4].join[0].owned: a joining"),
        ({"join": [{"id": "c5", "topics": [], "x": 1}]}, "steps[4].join[0].x: unknown field"),
        ({"subscribe": {"c2": ["t0"]}}, "steps[4].subscribe.c2: member 'c2' is not in the group"),
        ({"topics": {"t0": 3}}, "steps[4].topics.t0: 3 partitions < the topic's 8"),
        ({"topics": {"zz": 0}}, "steps[4].topics.zz: topic does not exist (0 deletes a topic)"),
        ({"topics": {"t0": -1}}, "steps[4].topics.t0: must be an integer >= 0, got -1"),
        ({"lags": {"zz": [1]}}, "steps[4].lags.zz: topic is not in the group"),
        ({"lags": {"t0": [1]}}, "steps[4]: the problem after this step (step 5): lags.t0: has 1"),
        ({"racks": {"c9": "r1"}}, "steps[4].racks.c9: member 'c9' is not in the group"),
        ({"remove_brokers": [1]}, "steps[4].remove_brokers: unknown event of a group-trace"),
        ({"leave": "c0"}, "steps[4].leave: must be a list of member ids, got a string"),
        (
            {"join": [{"id": "c5", "topics": ["t0"], "instance_id": "host-1"}]},
            "steps[4]: the problem after this step (step 5): members[3].instance_id: duplicate",
        ),
    ],
)
def test_a_bad_group_step_is_one_line_naming_the_file_step_and_field(step, expected):
    """Tests the message of each malformed group event."""
    with pytest.raises(ProblemError) as caught:
        load_trace(with_step(GROUP, step), "trace.json")
    message = str(caught.value)
    assert message.startswith("trace.json: ") and "\n" not in message
    assert expected in message, message


@pytest.mark.parametrize(
    "doc, expected",
    [
        ([], ": must be a JSON object"),
        ({"problem": {}, "steps": []}, "kind: missing"),
        ({"kind": "x", "problem": {}, "steps": []}, "kind: must be one of group-trace"),
        ({"kind": "group-trace", "steps": []}, "problem: missing"),
        (
            {"kind": "group-trace", "problem": {"topics": {}}, "steps": []},
            "problem.members: missing",
        ),
        (
            {"kind": "group-trace", "problem": PLACEMENT["problem"], "steps": []},
            "problem: must be a consumer group",
        ),
        (
            {"kind": "group-trace", "problem": GROUP["problem"], "steps": {}},
            "steps: must be a list",
        ),
        (
            {"kind": "group-trace", "problem": GROUP["problem"], "steps": [1]},
            "steps[0]: must be an object",
        ),
        ({**GROUP, "extra": 1}, "extra: unknown field in a trace"),
    ],
)
def test_a_bad_trace_document_is_one_line(doc, expected):
    """Tests the trace-level fields."""
    with pytest.raises(ProblemError) as caught:
        load_trace(doc, "trace.json")
    assert expected in str(caught.value) and "\n" not in str(caught.value)


def test_a_key_given_twice_in_a_trace_file_is_named(tmp_path):
    """Tests that a repeated key anywhere in the file is an error with its path."""
    text = json.dumps(GROUP).replace('"leave": ["c2"]', '"leave": ["c2"], "leave": ["c1"]')
    with pytest.raises(ProblemError, match=r"steps\[2\]: key 'leave' given twice"):
        load_trace(text)


def test_placement_events_and_partitions_to_place():
    """Tests remove_brokers, add_brokers and partitions (replicas [] on unused ids, to be placed)."""
    trace = load_trace(PLACEMENT)
    docs = step_documents(trace)
    assert [b["id"] for b in docs[1]["brokers"]] == [2, 3]
    assert docs[1]["partitions"][0]["replicas"] == [1, 2]  # broker 1 gone: placed by the strategy
    assert [b["id"] for b in docs[2]["brokers"]] == [2, 3, 4]
    placeholders = docs[2]["partitions"][2]["replicas"]
    assert len(placeholders) == 2 and not set(placeholders) & {1, 2, 3, 4}
    problems = step_problems(trace)
    assert (problems[2].replica_positions[-2:] < 0).all()
    previous = {
        "version": 1,
        "partitions": [
            {"topic": "t", "partition": 0, "replicas": [3, 2]},
            {"topic": "t", "partition": 1, "replicas": [2, 3]},
        ],
    }
    doc = next_document(trace, 2, previous)
    assert [p["replicas"] for p in doc["partitions"]] == [[3, 2], [2, 3], placeholders]


@pytest.mark.parametrize(
    "step, expected",
    [
        ({"remove_brokers": [7]}, "steps[2].remove_brokers[0]: broker 7 is not in the cluster"),
        ({"add_brokers": [{"id": 2}]}, "steps[2].add_brokers[0].id: broker 2 is already"),
        ({"add_brokers": [{"id": 9, "rack": "a"}]}, "rack: missing while other brokers have racks"),
        (
            {"partitions": [{"topic": "t", "partition": 0, "replicas": [2]}]},
            "partition t-0 already",
        ),
        (
            {"partitions": [{"topic": "v", "partition": 0, "replicas": []}]},
            "steps[2].partitions[0].replication_factor: missing",
        ),
        (
            {
                "partitions": [
                    {"topic": "v", "partition": 0, "replicas": [], "replication_factor": 4}
                ]
            },
            "replication_factor: 4 is larger than the 3 live brokers",
        ),
        ({"remove_brokers": [2, 3, 4]}, "brokers: must list at least one live broker"),
        ({"join": []}, "steps[2].join: unknown event of a placement-trace"),
    ],
)
def test_a_bad_placement_step_is_one_line(step, expected):
    """Tests the message of each malformed placement event."""
    with pytest.raises(ProblemError) as caught:
        load_trace(with_step(PLACEMENT, step), "cluster.json")
    assert str(caught.value).startswith("cluster.json: steps[2]")
    assert expected in str(caught.value), str(caught.value)


def test_trace_moves_count_partitions_taken_by_another_member():
    """Tests DESIGN's trace moves by hand: a leaver's partitions move, a restart given its
    partitions back moves none, new and dropped partitions do not count."""
    before = {"c0": {"t": [0, 1]}, "c1": {"t": [2, 3]}}
    assert trace_moves(before, {"c0": {"t": [0, 1]}, "c1": {"t": [2, 3]}}) == 0
    assert trace_moves(before, {"c1": {"t": [0, 1, 2, 3]}}) == 2  # c0 left
    assert trace_moves(before, {"c0": {"t": [0, 1, 4]}, "c1": {"t": [2]}}) == 0  # 4 new, 3 gone
    assert trace_moves(before, {"c0": {"t": [2]}, "c1": {"t": [0, 1, 3]}}) == 3
    # Share groups: each new reader of an existing partition counts.
    assert trace_moves({"a": {"t": [0]}}, {"a": {"t": [0]}, "b": {"t": [0]}}) == 1


def test_placement_trace_moves_count_replicas_on_new_brokers():
    """Tests placement trace moves: replicas on a broker that did not hold the partition."""
    before = {"partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2]}]}
    same_set = {"partitions": [{"topic": "t", "partition": 0, "replicas": [2, 1]}]}
    one = {"partitions": [{"topic": "t", "partition": 0, "replicas": [3, 2]}]}
    added = {
        "partitions": [
            {"topic": "t", "partition": 0, "replicas": [3, 4]},
            {"topic": "u", "partition": 0, "replicas": [1, 2]},
        ]
    }
    assert placement_trace_moves(before, same_set) == 0
    assert placement_trace_moves(before, one) == 1
    assert placement_trace_moves(before, added) == 2


def test_with_claims_is_what_parsing_next_document_gives():
    """Tests the array route against the document route on every step of the example traces."""
    rng = np.random.default_rng(7)
    for path in sorted((ROOT / "examples" / "traces").glob("*.json")):
        trace = load_trace(path)
        if trace.is_placement:
            continue
        problems = step_problems(trace)
        for k in range(1, len(trace)):
            before = problems[k - 1]
            owner = rng.integers(-1, before.num_members, before.num_partitions).astype(np.int32)
            members = np.asarray(before.members)
            previous: dict = {m: {} for m in before.members}
            for g in np.flatnonzero(owner >= 0).tolist():
                topic = before.topics[int(before.partition_topic[g])]
                member = str(members[owner[g]])
                previous[member].setdefault(topic, []).append(int(before.partition_index[g]))
            parsed = load_problem(next_document(trace, k, previous))
            built = with_claims(problems[k], before, owner, k, fresh_members(trace, k))
            assert built.members == parsed.members
            assert built.has_generation == parsed.has_generation
            assert built.generations.tolist() == parsed.generations.tolist()
            assert previous_owners(built).tolist() == previous_owners(parsed).tolist()
            claims, parsed_claims = built.owned_claims, parsed.owned_claims
            assert sorted(zip(*map(np.ndarray.tolist, claims))) == sorted(
                zip(*map(np.ndarray.tolist, parsed_claims))
            )


def test_placement_with_replicas_is_what_parsing_next_document_gives():
    """Tests the array route of a placement step against the document route."""
    trace = load_trace(PLACEMENT)
    problems = step_problems(trace)
    answer = np.array([3, 2, 2, 3])  # step 1's replicas of t-0 and t-1
    built = placement_with_replicas(problems[2], problems[1], answer)
    previous = {
        "partitions": [
            {"topic": "t", "partition": 0, "replicas": [3, 2]},
            {"topic": "t", "partition": 1, "replicas": [2, 3]},
        ]
    }
    parsed = load_problem(next_document(trace, 2, previous))
    assert built.replica_brokers.tolist() == parsed.replica_brokers.tolist()
    assert built.replica_start.tolist() == parsed.replica_start.tolist()


def test_a_member_that_leaves_and_joins_in_one_step_is_a_new_member():
    """Tests that ``leave`` comes before ``join`` (docs/traces.md): the id that left may join in
    the same step, at the end of the list, and sends no claims (it is a new member)."""
    doc = with_step(GROUP, {"leave": ["c0"], "join": [{"id": "c0", "topics": ["t0"]}]})
    trace = load_trace(doc)
    ids = [m["id"] for m in step_documents(trace)[5]["members"]]
    assert ids == ["c1", "c3", "c0"]
    previous = {"c1": {"t0": [0, 1, 2]}, "c0": {"t0": [3, 4, 5]}, "c3": {"t0": [6, 7]}}
    sent = {m["id"]: m for m in next_document(trace, 5, previous)["members"]}
    assert "owned" not in sent["c0"] and "generation" not in sent["c0"]
    assert sent["c1"]["owned"] == {"t0": [0, 1, 2]} and sent["c1"]["generation"] == 5
    assert fresh_members(trace, 5) == frozenset({"c0"})
    # Joining twice in one step, or joining an id that stays, is still refused.
    for step in (
        {"join": [{"id": "c0", "topics": ["t0"]}]},
        {"leave": ["c0"], "join": [{"id": "c0", "topics": ["t0"]}, {"id": "c0", "topics": []}]},
    ):
        with pytest.raises(ProblemError, match=r"member 'c0' is already in the group"):
            load_trace(with_step(GROUP, step))


def test_the_size_of_a_trace_is_bounded_before_any_step_is_built():
    """Tests the size limit: partitions (a placement's replicas) summed over the rebalances, from
    the events alone, refused
    in one line naming the limit and the option that raises it; ``max_size`` raises it."""
    trace = load_trace(GROUP)
    # 6 partitions at steps 0-3, then 8 + 2 after the topics event.
    assert trace_size(trace) == 6 * 4 + 10
    # A placement counts replicas: 4 at steps 0 and 1, then 6 with u-0's replication factor 2.
    assert trace_size(load_trace(PLACEMENT)) == 4 + 4 + 6
    listed = with_step(
        PLACEMENT, {"partitions": [{"topic": "v", "partition": 0, "replicas": [2, 3, 4]}]}
    )
    assert trace_size(load_trace(listed)) == 4 + 4 + 6 + 9
    with pytest.raises(ProblemError) as caught:
        load_trace(listed, name="placement.json", max_size=22)
    assert str(caught.value) == (
        "placement.json: steps: 23 replicas summed over the 4 rebalances is above the limit of 22 "
        "(--max-size raises it)"
    )
    huge = {
        "kind": "group-trace",
        "problem": {"topics": {"t0": 10_000_000}, "members": [{"id": "c0", "topics": ["t0"]}]},
        "steps": [{"restart": ["c0"]}] * 1000,
    }
    with pytest.raises(ProblemError) as caught:
        load_trace(huge, name="huge.json")
    assert str(caught.value) == (
        "huge.json: steps: 10,010,000,000 partitions summed over the 1,001 rebalances is above "
        "the limit of 100,000,000 (--max-size raises it)"
    )
    assert MAX_TRACE_SIZE == 100_000_000
    with pytest.raises(ProblemError, match="above the limit of 33"):
        load_trace(GROUP, max_size=33)
    assert len(load_trace(GROUP, max_size=34)) == 5


def test_steps_are_built_one_at_a_time():
    """Tests that loading a trace and walking its steps hold one step at a time: a step's problem
    is freed once the walk has passed it (the steps held at once are the horizon's only)."""
    doc = copy.deepcopy(GROUP)
    doc["steps"] = [{"restart": ["c0"]}] * 30
    trace = load_trace(doc)
    assert "_built" not in trace.__dict__
    alive = []
    for k, step in enumerate(iter_steps(trace)):
        alive.append(weakref.ref(step.problem))
        del step
        gc.collect()
        assert sum(ref() is not None for ref in alive) <= 1, k
    # The same steps as the ones the horizon holds.
    walked = [(s.document, s.fresh) for s in iter_steps(trace)]
    assert [d for d, _ in walked] == step_documents(trace)
    assert [f for _, f in walked] == [fresh_members(trace, k) for k in range(len(trace))]
