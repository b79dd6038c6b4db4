"""Tests of heuristics.sticky.cooperative_sticky, Kafka's CooperativeStickyAssignor (two rounds).

Its equality with Kafka's Java class is in tests/peers/test_cooperative_equality.py.
"""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings

import heuristics.sticky.cooperative_sticky as cooperative
import heuristics.sticky.sticky as sticky
from experiments.cli import main
from problems import evaluate, load_problem
from support.sticky_strategies import rebalances

JOIN = {
    "topics": {"t0": 4, "t1": 2},
    "members": [
        {
            "id": "a",
            "topics": ["t0", "t1"],
            "owned": {"t0": [0, 1, 2, 3], "t1": [0, 1]},
            "generation": 3,
        },
        {"id": "b", "topics": ["t0", "t1"]},
    ],
}


def test_revoked_partitions_wait_for_the_follow_up_round():
    """Tests one rebalance by hand: b joins, a revokes t0-2, t0-3, t1-1 first; b gets them one round later."""
    problem = load_problem(JOIN)
    result = cooperative.assign(problem)
    assert result.assignment == {"a": {"t0": [0, 1], "t1": [0]}, "b": {}}
    assert result.info == {"pending": {"a": {}, "b": {"t0": [2, 3], "t1": [1]}}, "rounds": 2}
    assert result.valid and result.objective == [9 + 9, 3]
    assert not evaluate(
        problem, result.shown, result.objective_name
    ).valid  # the round alone is incomplete


def test_command_line_prints_the_round_and_pending(tmp_path, capsys):
    """Tests that `assign --strategy cooperative-sticky` prints the round output, pending beside it, and the
    completed assignment's objective."""
    path = tmp_path / "join.json"
    path.write_text(json.dumps(JOIN))
    assert main(["assign", "--strategy", "cooperative-sticky", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["assignment"] == {"a": {"t0": [0, 1], "t1": [0]}, "b": {}}
    assert out["pending"] == {"a": {}, "b": {"t0": [2, 3], "t1": [1]}} and out["objective"] == [
        18,
        3,
    ]


@settings(max_examples=100, deadline=None)
@given(rebalances())
def test_completed_assignment_is_valid_and_round_plus_pending(problem):
    """Tests on random rebalances: the completed answer is valid, the round output is a part of it
    (or of an earlier owner's) and, when nothing changes owner, equals sticky's answer."""
    result = cooperative.assign(problem)
    assert result.valid
    shown = result.shown
    if result.info["rounds"] == 1:
        assert np.array_equal(shown, result.answer)
        assert np.array_equal(result.answer, sticky.assign(problem).answer)
    else:
        assert ((shown < 0) | (shown == sticky.assign(problem).answer)).all()
