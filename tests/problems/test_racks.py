"""Tests of KIP-881's ``partition_racks`` field and the ``rack-aware`` objective (docs/formats.md,
docs/design/objectives.md).

Pinned tiny instances: the arrays of :class:`problems.GroupProblem`, one-line errors naming the
field, the three levels of ``rack-aware`` counted by hand, and which strategies are judged on it.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings

from experiments.cli import main
from models.registry import STRATEGIES
from problems import ProblemError, evaluate, load_problem, problem_to_json
from support.problem_strategies import group_documents

DOC = {
    "topics": {"t0": 3, "t1": 1},
    "members": [
        {"id": "a", "topics": ["t0", "t1"], "rack": "r1", "owned": {"t0": [0, 1]}, "generation": 1},
        {"id": "b", "topics": ["t0"], "rack": "r3"},
        {"id": "c", "topics": ["t0", "t1"]},
    ],
    "partition_racks": {"t0": [["r1", "r2"], ["r2", "r2"], []], "t1": [["r2", "r3"]]},
}


def test_arrays():
    """Tests the documented representation: rack names, member rack ids, the CSR of replica racks."""
    problem = load_problem(DOC)
    assert problem.has_racks
    assert problem.rack_names == ("r1", "r2", "r3")
    assert problem.member_rack.tolist() == [0, 2, -1] and problem.member_rack.dtype == np.int32
    assert problem.replica_rack_start.tolist() == [0, 2, 4, 4, 6]
    assert (
        problem.replica_racks.tolist() == [0, 1, 1, 1, 1, 2]
        and problem.replica_racks.dtype == np.int32
    )
    assert problem.partition_rack_lists == (("r1", "r2"), ("r2", "r2"), (), ("r2", "r3"))
    assert not problem.replica_racks.flags.writeable and not problem.member_rack.flags.writeable


def test_without_partition_racks():
    """Tests that member racks alone give rack ids but no replica racks, and nothing counts as a mismatch."""
    doc = {k: v for k, v in DOC.items() if k != "partition_racks"}
    problem = load_problem(doc)
    assert (
        not problem.has_racks
        and problem.replica_rack_start is None
        and problem.replica_racks is None
    )
    assert problem.rack_names == ("r1", "r3") and problem.member_rack.tolist() == [0, 1, -1]
    assert not problem.rack_mismatches(np.array([1, 1, 1, 0])).any()
    assert problem_to_json(problem) == doc


def test_mismatches_counted_by_hand():
    """Tests Kafka's racksMismatch: a racked member off its partition's racks; rackless members never count."""
    problem = load_problem(DOC)
    # t0-0 -> a (r1 in [r1, r2]: aligned), t0-1 -> b (r3 not in [r2, r2]), t0-2 -> b (no replica
    # racks: counts), t1-0 -> c (no rack: never counts).
    assert problem.rack_mismatches(np.array([0, 1, 1, 2])).tolist() == [False, True, True, False]
    assert problem.rack_mismatches(np.array([2, 2, 2, 2])).tolist() == [False] * 4
    assert problem.rack_mismatches(np.array([-1, 0, -1, 0])).tolist() == [False, True, False, True]


def test_rack_aware_objective_levels():
    """Tests the three levels: sum of squared counts, rack mismatches, moves (a owned t0-0, t0-1)."""
    problem = load_problem(DOC)
    verdict = evaluate(problem, np.array([0, 1, 1, 2]), "rack-aware")
    assert verdict.valid and verdict.names == ("sum_sq_counts", "rack_mismatches", "moves")
    assert verdict.objective == (1 + 4 + 1, 2, 1)
    # t0-2 -> b (no replica racks) and t1-0 -> a (r1 not in [r2, r3]) count; t0-1 -> c (no rack)
    # does not.
    assert evaluate(problem, np.array([0, 2, 1, 0]), "rack-aware").objective == (4 + 1 + 1, 2, 1)


@pytest.mark.parametrize("strategy", ["range", "roundrobin"])
def test_baselines_are_judged_on_rack_aware_when_the_document_has_racks(strategy):
    """Tests docs/design/objectives.md: baselines on rack-aware with partition_racks, on sticky without."""
    racked = load_problem(DOC)
    plain = load_problem({k: v for k, v in DOC.items() if k != "partition_racks"})
    record = STRATEGIES[strategy]
    assert record.objective_on(racked) == "rack-aware" and record.objective_on(plain) == "sticky"
    assert evaluate(racked, np.array([0, 1, 1, 2]), record.objective_on(racked)).objective == (
        6,
        2,
        1,
    )
    assert evaluate(plain, np.array([0, 1, 1, 2]), record.objective_on(plain)).objective == (6, 1)
    assert (
        STRATEGIES["sticky"].objective_on(racked) == "sticky"
        and STRATEGIES["rack-aware"].objective_on(racked) == "rack-aware"
    )


def test_round_trip():
    """Tests that partition_racks survives a write and a read (a file too: its keys are counted)."""
    assert problem_to_json(load_problem(DOC)) == DOC
    assert problem_to_json(load_problem(json.dumps(DOC))) == DOC


@settings(max_examples=60, derandomize=True, deadline=None)
@given(group_documents(racks=True))
def test_mismatches_agree_with_a_plain_loop(doc):
    """Tests the vectorised mismatch count against the definition, partition by partition."""
    problem = load_problem(doc)
    rng = np.random.default_rng(len(json.dumps(doc)))
    owner = rng.integers(-1, max(problem.num_members, 1), problem.num_partitions).astype(np.int32)
    if problem.num_members == 0:
        owner[:] = -1
    racks = problem.partition_rack_lists
    expected = [
        racks is not None
        and m >= 0
        and problem.racks[m] is not None
        and problem.racks[m] not in racks[p]
        for p, m in enumerate(owner.tolist())
    ]
    assert problem.rack_mismatches(owner).tolist() == expected


@pytest.mark.parametrize(
    "racks, field, words",
    [
        ([], "partition_racks", "must be an object"),
        ({"t0": [["r1"]] * 3}, "partition_racks.t1", "missing (1 replica rack lists expected)"),
        (
            {"t0": [["r1"]] * 3, "t1": [[]], "t9": []},
            "partition_racks.t9",
            "topic is not in topics",
        ),
        (
            {"t0": [["r1"]] * 2, "t1": [[]]},
            "partition_racks.t0",
            "has 2 replica rack lists but the topic has 3",
        ),
        ({"t0": "r1", "t1": [[]]}, "partition_racks.t0", "must be a list of replica rack lists"),
        (
            {"t0": [["r1"], "r2", []], "t1": [[]]},
            "partition_racks.t0[1]",
            "must be a list of rack names",
        ),
        (
            {"t0": [["r1"], [], []], "t1": [["r2", 3]]},
            "partition_racks.t1[0][1]",
            "must be a string",
        ),
        (
            {"t0": [["r1"], [""], []], "t1": [[]]},
            "partition_racks.t0[1][0]",
            "must be a non-empty string",
        ),
        (
            {"t0": [["r1"], [None], []], "t1": [[]]},
            "partition_racks.t0[1][0]",
            "must be a string, got null",
        ),
    ],
)
def test_bad_partition_racks_name_field_and_problem(racks, field, words):
    """Tests that every malformed partition_racks is one ProblemError naming the field."""
    with pytest.raises(ProblemError) as caught:
        load_problem({**DOC, "partition_racks": racks})
    assert caught.value.field == field and words in caught.value.message
    assert "\n" not in str(caught.value)


def test_bad_partition_racks_on_the_command_line(tmp_path, capsys):
    """Tests exit status 2 and one line naming the file, the field and the problem."""
    path = tmp_path / "racks.json"
    path.write_text(json.dumps({**DOC, "partition_racks": {"t0": [["r1"], [7], []], "t1": [[]]}}))
    assert main(["assign", "--strategy", "range", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: {path}: partition_racks.t0[1][0]: must be a string, got an integer"


def test_assign_prints_the_rack_aware_objective(tmp_path, capsys):
    """Tests that the command line judges range on rack-aware when the document has racks."""
    path = tmp_path / "racks.json"
    path.write_text(json.dumps(DOC))
    assert main(["assign", "--strategy", "range", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["objective"]) == 3
    assert main(["assign", "--strategy", "rack-aware", str(path)]) == 0
    assert len(json.loads(capsys.readouterr().out)["objective"]) == 3
