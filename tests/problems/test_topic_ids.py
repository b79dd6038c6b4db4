"""The ``topic_ids`` field of a consumer-group document (docs/formats.md, KIP-848's topic ids)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from problems import ProblemError, load_problem, problem_to_json

IDS = {"t0": "T1-A4s3VTwiI5CTbEp6POw", "t1": "T2-B4s3VTwiI5YHbPp6YUe"}


def doc(ids) -> dict:
    return {
        "topics": {"t0": 2, "t1": 1},
        "members": [{"id": "c0", "topics": ["t0"]}],
        "topic_ids": ids,
    }


def test_topic_ids_decode_as_kafkas_uuid():
    """Tests that an id decodes to Kafka's (most, least) significant bits: URL-safe base64 of 16 big-endian bytes."""
    problem = load_problem(doc(IDS))
    most, least = problem.topic_uuids
    raw = b"".join(__import__("base64").urlsafe_b64decode(IDS[t] + "==") for t in ("t0", "t1"))
    assert most.tolist() == [
        int.from_bytes(raw[0:8], "big", signed=True),
        int.from_bytes(raw[16:24], "big", signed=True),
    ]
    assert least.tolist() == [
        int.from_bytes(raw[8:16], "big", signed=True),
        int.from_bytes(raw[24:32], "big", signed=True),
    ]


def test_without_topic_ids_topics_get_ids_in_document_order():
    """Tests the implicit ids: their hash codes are the topic positions, their order the document's."""
    problem = load_problem({"topics": {"b": 1, "a": 1}, "members": []})
    most, least = problem.topic_uuids
    assert least.tolist() == [0, 1] and len(set(most.tolist())) == 1
    from heuristics.kafka_orders import uuid_hashes

    assert uuid_hashes(most, least).tolist() == [0, 1]


def test_topic_ids_round_trip():
    """Tests that a document's topic ids survive problem_to_json."""
    problem = load_problem(doc(IDS))
    assert problem_to_json(problem)["topic_ids"] == IDS
    assert load_problem(problem_to_json(problem)).topic_ids == problem.topic_ids
    assert "topic_ids" not in problem_to_json(load_problem({"topics": {"t": 1}, "members": []}))


@pytest.mark.parametrize(
    "ids, field, words",
    [
        (["T1-A4s3VTwiI5CTbEp6POw"], "topic_ids", "must be an object"),
        ({"t0": IDS["t0"]}, "topic_ids.t1", "missing"),
        ({**IDS, "t9": IDS["t0"]}, "topic_ids.t9", "not in topics"),
        ({**IDS, "t1": IDS["t0"]}, "topic_ids.t1", "duplicate topic id"),
        ({**IDS, "t1": "not-a-uuid"}, "topic_ids.t1", "is not a Kafka Uuid"),
        ({**IDS, "t1": "T2-B4s3VTwiI5YHbPp6YU!"}, "topic_ids.t1", "is not a Kafka Uuid"),
        ({**IDS, "t1": "AAAAAAAAAAAAAAAAAAAAAA"}, "topic_ids.t1", "zero Uuid"),
        ({**IDS, "t1": 7}, "topic_ids.t1", "must be"),
    ],
)
def test_bad_topic_ids_name_the_field(ids, field, words):
    """Tests that every malformed topic id is one ProblemError naming its field."""
    with pytest.raises(ProblemError) as caught:
        load_problem(doc(ids))
    assert caught.value.field == field and words in caught.value.message


def test_bad_topic_id_on_the_command_line_is_one_line(tmp_path, capsys):
    """Tests exit status 2 and one ``error: FILE: FIELD: problem`` line for a bad id."""
    from experiments.cli import main

    path = tmp_path / "group.json"
    path.write_text(json.dumps(doc({**IDS, "t1": "nope"})))
    assert main(["assign", "--strategy", "uniform", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and err.startswith(f"error: {path}: topic_ids.t1: ")


def test_uniform_and_server_range_on_the_command_line(tmp_path, capsys):
    """Tests ``assign --strategy uniform|server-range`` print an assignment judged on the sticky objective."""
    from experiments.cli import main

    path = tmp_path / "group.json"
    path.write_text(json.dumps(doc(IDS)))
    for strategy in ("uniform", "server-range"):
        assert main(["assign", "--strategy", strategy, str(path)]) == 0
        printed = json.loads(capsys.readouterr().out)
        assert printed["assignment"] == {"c0": {"t0": [0, 1]}} and printed["objective"] == [4, 0]


def test_topic_ids_change_uniforms_topic_order():
    """Tests that the server assignor follows the ids: the homogeneous builder hands out topics in the
    order of their ids' hash codes, so swapping two ids swaps which topic the first member gets."""
    import heuristics.uniform as uniform

    base = {
        "topics": {"a": 2, "b": 2},
        "members": [{"id": "A", "topics": ["a", "b"]}, {"id": "B", "topics": ["a", "b"]}],
    }
    first = uniform.assign(
        load_problem({**base, "topic_ids": {"a": IDS["t0"], "b": IDS["t1"]}})
    ).assignment
    second = uniform.assign(
        load_problem({**base, "topic_ids": {"a": IDS["t1"], "b": IDS["t0"]}})
    ).assignment
    assert first["A"] != second["A"] and sorted(
        np.concatenate([v for v in first["A"].values()]).tolist()
    ) == [0, 1]
