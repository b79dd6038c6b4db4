"""The peers as the benchmarks use them: Kafka's Java sticky and KIP-848 assignors, franz-go's balancer."""

from __future__ import annotations

import numpy as np
import pytest

from peers import kgo
from problems import assignment_json, evaluate, load_problem

PARTLY_OWNED = {
    "topics": {"t0": 6, "t1": 4},
    "members": [
        {"id": "A", "topics": ["t0", "t1"], "owned": {"t0": [0, 1, 2], "t1": [0]}, "generation": 1},
        {"id": "B", "topics": ["t0", "t1"], "owned": {"t0": [3, 4], "t1": [1, 2]}, "generation": 1},
    ],
}


def test_timed_java_sticky_answer_equals_single_call(kafka_java):
    """Tests that repeated timed calls see every member's user data (the buffers are consumed by a read)."""
    problem = load_problem(PARTLY_OWNED)
    owner, seconds = kafka_java.time_assign(problem, "sticky", warmups=2, runs=2)
    assert len(seconds) == 2 and min(seconds) > 0
    assert np.array_equal(owner, kafka_java.assign(problem, "sticky"))
    # Everyone keeps what it owned; the two unowned partitions go one to each.
    assignment = assignment_json(problem, owner)
    assert {0, 1, 2} <= set(assignment["A"]["t0"]) and {3, 4} <= set(assignment["B"]["t0"])
    assert list(evaluate(problem, owner, "sticky").objective) == [50, 0]


@pytest.mark.parametrize("assignor", ["uniform", "range"])
def test_kip848_server_assignors_give_valid_assignments(kafka_java, assignor):
    """Tests that the KIP-848 server assignors run on a group with current assignments and mixed subscriptions."""
    problem = load_problem(
        {
            "topics": {"t0": 6, "t1": 4, "t2": 3},
            "members": [
                {"id": "A", "topics": ["t0", "t1"], "owned": {"t0": [0, 1, 9]}},
                {"id": "B", "topics": ["t0", "t2"], "owned": {"t2": [0]}, "rack": "r1"},
                {"id": "C", "topics": ["t0", "t1", "t2", "gone"], "instance_id": "c"},
            ],
        }
    )
    owner = kafka_java.server_assign(problem, assignor)
    verdict = evaluate(problem, owner, "sticky")
    assert verdict.valid, verdict.violations


def test_franz_go_sticky_balancer_keeps_owned_partitions():
    """Tests the franz-go program on a partly owned group: valid, sticky (no move), timed inside Go."""
    problem = load_problem(PARTLY_OWNED)
    owner, seconds = kgo.balance(problem, PARTLY_OWNED, repeat=3)
    assert len(seconds) == 3
    assert list(evaluate(problem, owner, "sticky").objective) == [50, 0]
    assert kgo.franz_go_version().startswith("v1.")


def test_franz_go_bad_document_is_one_line_exit_2(tmp_path):
    """Tests that the franz-go program refuses a malformed document with exit status 2 and one line."""
    import subprocess

    bad = tmp_path / "bad.json"
    bad.write_text('{"topics": [')
    done = subprocess.run([str(kgo.PROGRAM), str(bad)], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
