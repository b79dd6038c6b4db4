"""Tests of problems.io: reading, writing and rejecting problem documents."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given

from problems import GroupProblem, PlacementProblem, ProblemError, load_problem, problem_to_json
from support.problem_strategies import group_documents

GROUP = {
    "topics": {"t0": 3, "t1": 2},
    "members": [
        {
            "id": "c0",
            "topics": ["t0", "t1"],
            "owned": {"t0": [0, 1]},
            "generation": 4,
            "rack": "r1",
        },
        {"id": "c1", "topics": ["t0"], "instance_id": "static-1"},
    ],
    "lags": {"t0": [100000, 60000, 50000], "t1": [0, 7]},
}
CLUSTER = {
    "brokers": [{"id": 1, "rack": "a"}, {"id": 2, "rack": "a"}, {"id": 3, "rack": "b"}],
    "partitions": [
        {"topic": "t", "partition": 0, "replicas": [1, 2]},
        {"topic": "t", "partition": 1, "replicas": [9, 3]},
    ],
}


def test_group_arrays():
    """Tests that a group document becomes the documented arrays."""
    problem = load_problem(GROUP)
    assert isinstance(problem, GroupProblem)
    assert problem.topics == ("t0", "t1") and problem.members == ("c0", "c1")
    assert problem.num_partitions == 5
    assert problem.topic_start.tolist() == [0, 3, 5]
    assert problem.partition_topic.tolist() == [0, 0, 0, 1, 1]
    assert problem.partition_index.tolist() == [0, 1, 2, 0, 1]
    assert problem.subscribes.tolist() == [[True, True], [True, False]]
    assert problem.generations.tolist() == [4, -1]
    assert problem.has_generation == (True, False)
    assert problem.instance_ids == (None, "static-1") and problem.racks == ("r1", None)
    assert problem.lags.tolist() == [100000, 60000, 50000, 0, 7]
    members, partitions = problem.owned_claims
    assert members.tolist() == [0, 0] and partitions.tolist() == [0, 1]
    assert problem.partition_name(4) == "t1-1" and problem.global_id("t1", 1) == 4


def test_arrays_are_read_only():
    """Tests that the problem data cannot be changed after loading."""
    problem = load_problem(GROUP)
    with pytest.raises(ValueError):
        problem.partition_counts[0] = 7
    with pytest.raises(AttributeError):
        problem.members = ("x",)


def test_placement_arrays():
    """Tests that a placement document becomes the documented arrays, dead brokers kept."""
    problem = load_problem(CLUSTER)
    assert isinstance(problem, PlacementProblem)
    assert problem.broker_ids.tolist() == [1, 2, 3]
    assert problem.rack_names == ("a", "b") and problem.broker_rack.tolist() == [0, 0, 1]
    assert problem.replication_factors.tolist() == [2, 2]
    assert problem.replica_positions.tolist() == [0, 1, -1, 2]
    assert problem.replicas(1).tolist() == [9, 3]


def test_rack_unaware_cluster_has_one_implicit_rack():
    """Tests that a cluster without racks counts as one rack."""
    problem = load_problem({"brokers": [{"id": 5}, {"id": 6, "rack": None}], "partitions": []})
    assert not problem.rack_aware and problem.broker_rack.tolist() == [0, 0]


@pytest.mark.parametrize("doc", [GROUP, CLUSTER])
def test_round_trip(doc, tmp_path):
    """Tests that writing a loaded problem gives back the same document, from a file too."""
    path = tmp_path / "problem.json"
    path.write_text(json.dumps(doc))
    assert problem_to_json(load_problem(path)) == doc
    assert problem_to_json(load_problem(json.dumps(doc))) == doc


@given(group_documents(lags=True, racks=True))
def test_round_trip_random_groups(doc):
    """Tests that every random group document survives a write and a read unchanged."""
    assert problem_to_json(load_problem(doc)) == {
        **doc,
        "members": [{k: v for k, v in m.items() if k != "owned" or v} for m in doc["members"]],
    }


def test_kafka_normal_oddities_are_notes_not_errors():
    """Tests that subscriptions to missing topics and stale owned partitions load, with notes."""
    problem = load_problem(
        {
            "topics": {"t0": 2},
            "members": [
                {"id": "c0", "topics": ["t0", "gone"], "owned": {"t0": [1, 5], "gone": [0]}}
            ],
        }
    )
    assert problem.subscribed_topics[0].tolist() == [0]
    members, partitions = problem.owned_claims
    assert partitions.tolist() == [1]  # t0-5 and gone-0 dropped
    assert len(problem.notes) == 3
    assert any("'gone' does not exist" in note for note in problem.notes)
    assert any("[5] do not exist" in note for note in problem.notes)


BAD = [
    ("not an object", [1, 2], "", "must be a JSON object"),
    ("neither kind", {"foo": 1}, "", "neither a consumer group"),
    ("topics missing", {"members": []}, "topics", "missing"),
    ("topics wrong type", {"topics": [], "members": []}, "topics", "must be an object"),
    ("negative partition count", {"topics": {"t": -1}, "members": []}, "topics.t", "got -1"),
    ("partition count not int", {"topics": {"t": "3"}, "members": []}, "topics.t", "got a string"),
    ("partition count bool", {"topics": {"t": True}, "members": []}, "topics.t", "got a boolean"),
    ("partition count null", {"topics": {"t": None}, "members": []}, "topics.t", "got null"),
    ("members missing", {"topics": {}}, "members", "missing"),
    ("member not object", {"topics": {}, "members": ["c0"]}, "members[0]", "must be an object"),
    ("member id missing", {"topics": {}, "members": [{"topics": []}]}, "members[0].id", "missing"),
    (
        "member id not string",
        {"topics": {}, "members": [{"id": 3, "topics": []}]},
        "members[0].id",
        "a string",
    ),
    (
        "duplicate member",
        {"topics": {}, "members": [{"id": "a", "topics": []}, {"id": "a", "topics": []}]},
        "members[1].id",
        "duplicate member id 'a'",
    ),
    (
        "subscription missing",
        {"topics": {}, "members": [{"id": "a"}]},
        "members[0].topics",
        "missing",
    ),
    (
        "subscription duplicate",
        {"topics": {}, "members": [{"id": "a", "topics": ["t", "t"]}]},
        "members[0].topics",
        "duplicate topic",
    ),
    (
        "owned not list",
        {"topics": {"t": 2}, "members": [{"id": "a", "topics": ["t"], "owned": {"t": 1}}]},
        "members[0].owned.t",
        "must be a list",
    ),
    (
        "owned negative",
        {"topics": {"t": 2}, "members": [{"id": "a", "topics": ["t"], "owned": {"t": [-1]}}]},
        "members[0].owned.t[0]",
        "got -1",
    ),
    (
        "owned duplicate",
        {"topics": {"t": 2}, "members": [{"id": "a", "topics": ["t"], "owned": {"t": [1, 1]}}]},
        "members[0].owned.t[1]",
        "duplicate partition 1",
    ),
    (
        "generation not int",
        {"topics": {}, "members": [{"id": "a", "topics": [], "generation": 1.5}]},
        "members[0].generation",
        "an integer",
    ),
    (
        "unknown member field",
        {"topics": {}, "members": [{"id": "a", "topics": [], "owend": {}}]},
        "members[0].owend",
        "unknown field",
    ),
    (
        "duplicate instance id",
        {
            "topics": {},
            "members": [
                {"id": "a", "topics": [], "instance_id": "i"},
                {"id": "b", "topics": [], "instance_id": "i"},
            ],
        },
        "members[1].instance_id",
        "duplicate instance id",
    ),
    (
        "lags wrong length",
        {"topics": {"t": 2}, "members": [], "lags": {"t": [1]}},
        "lags.t",
        "has 1 lags",
    ),
    (
        "lags negative",
        {"topics": {"t": 2}, "members": [], "lags": {"t": [1, -3]}},
        "lags.t[1]",
        "got -3",
    ),
    (
        "lags not int",
        {"topics": {"t": 1}, "members": [], "lags": {"t": [1.0]}},
        "lags.t[0]",
        "got a number",
    ),
    (
        "lags unknown topic",
        {"topics": {}, "members": [], "lags": {"x": []}},
        "lags.x",
        "not in topics",
    ),
    ("lags missing topic", {"topics": {"t": 1}, "members": [], "lags": {}}, "lags.t", "missing"),
    (
        "duplicate broker",
        {"brokers": [{"id": 1}, {"id": 1}], "partitions": []},
        "brokers[1].id",
        "duplicate broker id 1",
    ),
    (
        "broker id not int",
        {"brokers": [{"id": "1"}], "partitions": []},
        "brokers[0].id",
        "an integer",
    ),
    (
        "mixed racks",
        {"brokers": [{"id": 1, "rack": "a"}, {"id": 2}], "partitions": []},
        "brokers[1].rack",
        "either every broker has a rack or none does",
    ),
    (
        "same broker twice",
        {
            "brokers": [{"id": 1}, {"id": 2}],
            "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 1]}],
        },
        "partitions[0].replicas",
        "broker 1 appears twice",
    ),
    (
        "replication factor too large",
        {
            "brokers": [{"id": 1}],
            "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2]}],
        },
        "partitions[0].replicas",
        "replication factor 2 is larger than the 1 live brokers",
    ),
    (
        "no replicas",
        {"brokers": [{"id": 1}], "partitions": [{"topic": "t", "partition": 0, "replicas": []}]},
        "partitions[0].replicas",
        "at least one replica",
    ),
    (
        "negative partition index",
        {"brokers": [{"id": 1}], "partitions": [{"topic": "t", "partition": -1, "replicas": [1]}]},
        "partitions[0].partition",
        "got -1",
    ),
    (
        "duplicate partition",
        {
            "brokers": [{"id": 1}],
            "partitions": [
                {"topic": "t", "partition": 0, "replicas": [1]},
                {"topic": "t", "partition": 0, "replicas": [1]},
            ],
        },
        "partitions[1]",
        "duplicate partition t-0",
    ),
    (
        "replica field missing",
        {"brokers": [{"id": 1}], "partitions": [{"topic": "t", "partition": 0}]},
        "partitions[0].replicas",
        "missing",
    ),
]


@pytest.mark.parametrize("doc, field, words", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_documents_name_field_and_problem(doc, field, words):
    """Tests that each class of malformed document raises one ProblemError naming field and problem."""
    with pytest.raises(ProblemError) as caught:
        load_problem(doc)
    assert caught.value.field == field
    assert words in caught.value.message
    assert caught.value.source == "<dict>"
    assert "\n" not in str(caught.value)


def test_bad_file_names_the_file(tmp_path):
    """Tests that errors from a file name that file, and JSON errors give line and column."""
    path = tmp_path / "broken.json"
    path.write_text('{"topics": {"t": 1},\n "members": [}')
    with pytest.raises(ProblemError) as caught:
        load_problem(path)
    assert str(caught.value).startswith(f"{path}: not JSON: ")
    assert "line 2" in str(caught.value)
    with pytest.raises(ProblemError, match="cannot read"):
        load_problem(tmp_path / "missing.json")


def test_large_group_loads_to_arrays():
    """Tests that a 100,000-partition group loads into flat integer arrays."""
    doc = {
        "topics": {f"t{i}": 1000 for i in range(100)},
        "members": [
            {
                "id": f"c{m}",
                "topics": [f"t{i}" for i in range(100)],
                "owned": {f"t{m}": list(range(1000))},
                "generation": 1,
            }
            for m in range(50)
        ],
    }
    problem = load_problem(doc)
    assert problem.num_partitions == 100_000
    members, partitions = problem.owned_claims
    assert len(partitions) == 50_000 and partitions.dtype == np.int64
