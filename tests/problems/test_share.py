"""Share-group answers (problems/share.py): pairs, their JSON, the evaluator's verdict, the command line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from heuristics import share
from problems import evaluate, load_problem
from problems.share import (
    pairs_array,
    pairs_from_assignment,
    previous_pairs,
    share_assignment_json,
)
from support.kafka_support import run_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples" / "share").glob("*.json"))

DOC = {
    "topics": {"a": 2, "b": 1, "empty": 0},
    "members": [
        {"id": "x", "topics": ["a", "b"], "owned": {"a": [0, 1], "b": [0], "gone": [3]}},
        {"id": "y", "topics": ["a"], "owned": {"a": [1, 5]}},
        {"id": "z", "topics": ["empty"]},
    ],
}


def test_previous_pairs_keep_every_claim_on_existing_partitions():
    """Tests that a partition claimed by two members stays theirs and stale claims are left out."""
    problem = load_problem(DOC)
    assert previous_pairs(problem).tolist() == [[0, 0], [0, 1], [0, 2], [1, 1]]


def test_json_round_trip_and_levels():
    """Tests the JSON of a pairs answer (a partition under two members), its parse, and its levels."""
    problem = load_problem(DOC)
    pairs = pairs_array([0, 1, 0], [1, 1, 2])  # x: a-1, b-0; y: a-1
    doc = share_assignment_json(problem, pairs)
    assert doc == {"x": {"a": [1], "b": [0]}, "y": {"a": [1]}, "z": {}}
    assert np.array_equal(pairs_from_assignment(problem, doc), pairs)
    verdict = evaluate(problem, pairs, "share")
    assert not verdict.valid
    assert verdict.violations == ("a-0 is not assigned",)  # z subscribes only an empty topic
    # counts x 2, y 1, z 0; readers a-0 0, a-1 2, b-0 1; previous x: a-0, a-1, b-0, y: a-1
    assert verdict.objective == (5, 5, 1)
    assert verdict.names == ("sum_sq_counts", "sum_sq_readers", "moves")


@pytest.mark.parametrize(
    "pairs, message",
    [
        ([[2, 0]], "a-0 goes to z, who does not subscribe its topic"),
        ([[0, 0], [0, 1], [0, 2]], "y subscribes a topic with partitions but gets none"),
    ],
)
def test_violations_name_the_pair(pairs, message):
    """Tests the hard constraints: subscribed topics only, every wanting member served."""
    problem = load_problem(DOC)
    assert message in evaluate(problem, pairs_array(*np.array(pairs).T), "share").violations


def test_an_owner_array_is_judged_as_one_member_per_partition():
    """Tests that a consumer-group answer (an owner array, as uniform's) is judged on the share
    objective as the pairs of its owned partitions, and an array of another length is one
    violation, not a crash."""
    problem = load_problem(DOC)
    owner = np.array([0, 1, 0])  # a-0 to x, a-1 to y, b-0 to x; z subscribes an empty topic
    as_owner = evaluate(problem, owner, "share")
    as_pairs = evaluate(problem, pairs_array([0, 1, 0], [0, 1, 2]), "share")
    assert as_owner == as_pairs and as_owner.valid
    assert as_owner.objective == (5, 3, 1)  # x, y hold 2 and 1; one reader each; x drops a-1
    unassigned = evaluate(problem, np.array([0, -1, 0]), "share")
    assert not unassigned.valid and "a-1 is not assigned" in unassigned.violations
    verdict = evaluate(problem, np.zeros(4, dtype=np.int64), "share")
    assert not verdict.valid and "pairs of shape (K, 2)" in verdict.violations[0]


def test_assignment_errors_name_the_field():
    """Tests that a share assignment JSON with a partition twice to one member is refused."""
    from problems import ProblemError

    problem = load_problem(DOC)
    with pytest.raises(ProblemError, match="x.a: partition 1 is given twice"):
        pairs_from_assignment(problem, {"x": {"a": [1, 1]}})


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_assign_share_on_the_examples(capsys, path):
    """Tests ``rebalance-lab assign --strategy share`` on examples/share: exit 0, the JSON's
    assignment is the heuristic's and its objective the evaluator's."""
    status, out, err = run_cli(capsys, "assign", "--strategy", "share", str(path))
    assert status == 0, err
    doc = json.loads(out)
    problem = load_problem(str(path))
    expected = share.assign(problem)
    assert doc["assignment"] == share_assignment_json(problem, expected.answer)
    assert doc["objective"] == list(evaluate(problem, expected.answer, "share").objective)
    assert doc["status"] == "heuristic"


def test_assign_share_bad_input_is_one_line(capsys, tmp_path):
    """Tests that a malformed share document exits 2 with one line naming file and field."""
    bad = tmp_path / "bad.json"
    bad.write_text('{"topics": {"t": 2}, "members": [{"id": "a", "topics": ["t"], "owned": 3}]}')
    status, out, err = run_cli(capsys, "assign", "--strategy", "share", str(bad))
    assert status == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {bad}: members[0].owned")


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_exact_solvers_agree_on_the_examples(capsys, path):
    """Tests ``--solver cpsat|flow|mip`` on examples/share: each proves the same optimum, which is
    no worse than Kafka's heuristic."""
    heuristic = share.assign(load_problem(str(path)))
    objectives = set()
    for solver in ("cpsat", "flow", "mip"):
        status, out, err = run_cli(
            capsys, "assign", "--strategy", "share", "--solver", solver, str(path)
        )
        assert status == 0, err
        doc = json.loads(out)
        assert doc["status"] == "optimal" and doc["bound"] == doc["objective"]
        objectives.add(tuple(doc["objective"]))
    assert len(objectives) == 1
    assert objectives.pop() <= tuple(heuristic.objective)


def test_level_3_counts_claims_on_unsubscribed_topics_as_dropped_by_every_answer():
    """Tests level 3 as docs/strategies/share.md states it: a claim on an existing topic the member
    no longer subscribes is dropped by every valid answer (counted in each), while stale claims
    (a topic that does not exist, a partition past its topic's count) count nowhere."""
    import models

    doc = {
        "topics": {"t0": 2, "t1": 1},
        "members": [
            {"id": "c0", "topics": ["t0"], "owned": {"t0": [0], "t1": [0], "gone": [0]}},
            {"id": "c1", "topics": ["t0", "t1"], "owned": {"t0": [5]}},
        ],
    }
    problem = load_problem(doc)
    # Every valid answer keeping c0's t0-0 drops exactly c0's t1-0: level 3 is 1.
    for assignment in (
        {"c0": {"t0": [0]}, "c1": {"t0": [1], "t1": [0]}},
        {"c0": {"t0": [0, 1]}, "c1": {"t1": [0]}},
    ):
        verdict = evaluate(problem, pairs_from_assignment(problem, assignment), "share")
        assert verdict.valid and verdict.objective[2] == 1, assignment
    # Dropping t0-0 too counts it: 2.
    moved = {"c0": {"t0": [1]}, "c1": {"t0": [0], "t1": [0]}}
    assert evaluate(problem, pairs_from_assignment(problem, moved), "share").objective[2] == 2
    for solver in ("heuristic", "cpsat", "mip", "flow"):
        assert models.solve(problem, "share", solver).objective[2] == 1, solver
