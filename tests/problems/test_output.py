"""Tests of problems.output: the assign output written from the arrays is the bytes json.dumps wrote."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import heuristics.range as range_assignor
import heuristics.roundrobin as roundrobin
import heuristics.sticky.sticky as sticky
from problems import Result, load_problem, output
from problems.output import assignment_bytes, result_bytes
from support.problem_strategies import group_documents

EXAMPLES = sorted((Path(__file__).parents[2] / "examples" / "group").glob("*.json"))


def reference_bytes(result: Result) -> bytes:
    """The reference: json.dumps of the dicts and lists of ``Result.to_json``."""
    return json.dumps(result.to_json()).encode()


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
@pytest.mark.parametrize("assignor", [range_assignor, roundrobin, sticky])
def test_examples_give_the_same_bytes(path, assignor):
    """Tests that every example's output is byte for byte what json.dumps gave."""
    result = assignor.assign(load_problem(path))
    assert result_bytes(result) == reference_bytes(result)


@given(
    group_documents(lags=True), st.sampled_from([range_assignor, roundrobin, sticky]), st.randoms()
)
def test_random_groups_and_answers_give_the_same_bytes(doc, assignor, random):
    """Tests random groups: the heuristic's answer and a random partial answer, byte for byte."""
    problem = load_problem(doc)
    result = assignor.assign(problem)
    assert result_bytes(result) == reference_bytes(result)
    owner = np.array(
        [random.randrange(-1, problem.num_members) for _ in range(problem.num_partitions)],
        dtype=np.int32,
    )
    assert (
        assignment_bytes(problem, owner)
        == json.dumps(Result(problem, "sticky", owner).assignment).encode()
    )


def test_names_needing_escapes_and_extra_fields():
    """Tests non-ASCII, quotes and backslashes in names, a bound, violations and info, as json.dumps writes them."""
    problem = load_problem(
        {
            "topics": {'t"0': 2, "ü\\1": 1, "empty": 0},
            "members": [
                {"id": "é", "topics": ['t"0', "ü\\1"]},
                {"id": "日本", "topics": ["ü\\1"]},
                {"id": "idle", "topics": []},
            ],
        }
    )
    result = Result(
        problem,
        "stream-join",
        np.array([0, 1, 0], dtype=np.int32),
        status="feasible",
        bound=(1, 2),
        info={"algorithm": "x"},
        objective_name="stream-join",
    )
    assert result_bytes(result) == reference_bytes(result)
    assert b"violations" in result_bytes(result) and b"\\u00e9" in result_bytes(result)


def test_no_members_no_answer():
    """Tests the empty group and a result without an answer."""
    empty = load_problem({"topics": {"t": 2}, "members": []})
    assert assignment_bytes(empty, np.full(2, -1)) == b"{}"
    unanswered = Result(empty, "sticky", None, status="unknown")
    assert result_bytes(unanswered) == reference_bytes(unanswered)


@pytest.mark.parametrize("chunk", [64, 1 << 25])
def test_sparse_large_indexes_and_rows_in_chunks(monkeypatch, chunk):
    """Tests indexes far above the number of claims (digits computed per claim, not from a table of 0 .. top)
    and rows built a few at a time: the same bytes."""
    monkeypatch.setattr(output, "_CHUNK_BYTES", chunk)
    problem = load_problem(
        {
            "topics": {"big": 200_000, "t": 3},
            "members": [
                {"id": "a", "topics": ["big", "t"]},
                {"id": "b", "topics": ["big"]},
                {"id": "c", "topics": ["t"]},
            ],
        }
    )
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    owner[[0, 9, 10, 99_999, 100_000, 199_999]] = [0, 1, 0, 1, 1, 0]
    owner[200_000:] = [2, 0, 2]
    assert (
        assignment_bytes(problem, owner)
        == json.dumps(Result(problem, "sticky", owner).assignment).encode()
    )
