"""The streams exact models within their size limit and their time limit.

Every exact model holds a decision per task and member: a group above
:data:`models.streams.data.MAX_EXACT_PAIRS` task-member pairs is refused before any work (one
line, naming the option that raises it); below it, the time limit covers the flow (which used to
ignore it) and the flow that hints the CP-SAT model.
"""

from __future__ import annotations

import contextlib
import io
import json
import time

import pytest

import models
from experiments.cli import main
from models.streams import flow as flow_streams
from models.streams.data import MAX_EXACT_PAIRS
from problems import ProblemError, load_problem

EXACT = ("flow", "cpsat", "mip")


def document(tasks: int, members: int) -> dict:
    """A stateful group (one standby per task) of ``tasks`` tasks on ``members`` members, two
    members per process."""
    return {
        "kind": "streams-group",
        "subtopologies": {"s0": {"partitions": tasks, "stateful": True}},
        "members": [{"id": f"m{i}", "process": f"p{i // 2}"} for i in range(members)],
        "configs": {"num_standby_replicas": 1},
    }


@pytest.mark.parametrize("solver", EXACT)
def test_a_group_above_the_size_limit_is_refused_before_any_work(solver):
    """Tests that 10,000 tasks x 2,000 members (20 million pairs: CP-SAT ran past 120 s and
    5.9 GB with a 5 s limit, the flow likewise) is refused at once, naming the limit and the
    option; ``max_size`` moves the limit either way."""
    assert MAX_EXACT_PAIRS == 2_000_000
    problem = load_problem(document(10_000, 2_000))
    started = time.perf_counter()
    with pytest.raises(ProblemError) as caught:
        models.solve(problem, "streams-sticky", solver, time_limit=5)
    assert time.perf_counter() - started < 2
    assert str(caught.value) == (
        "<problem>: members: 10,000 tasks x 2,000 members = 20,000,000 task-member pairs is "
        "above the exact models' limit of 2,000,000 (--max-size raises it)"
    )
    small = load_problem(document(4, 4))
    with pytest.raises(ProblemError, match="16 task-member pairs is above .* limit of 15"):
        models.solve(small, "streams-sticky", solver, max_size=15)
    assert models.solve(small, "streams-sticky", solver, max_size=16).status == "optimal"


def test_the_command_line_refuses_it_in_one_line(tmp_path):
    """Tests ``assign --max-size`` and the refusal as the command prints it (exit 2)."""
    path = tmp_path / "streams.json"
    path.write_text(json.dumps(document(2_000, 2_000)))
    out, err = io.StringIO(), io.StringIO()
    argv = ["assign", "--strategy", "streams-sticky", "--solver", "flow", str(path)]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    assert (code, out.getvalue()) == (2, "")
    assert err.getvalue() == (
        f"error: {path}: members: 2,000 tasks x 2,000 members = 4,000,000 task-member pairs is "
        "above the exact models' limit of 2,000,000 (--max-size raises it)\n"
    )
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as caught:
        main([*argv[:-1], "--max-size", "nope", str(path)])
    assert caught.value.code == 2 and "--max-size: 'nope' is not an integer" in err.getvalue()


def test_the_flow_keeps_its_time_limit(monkeypatch):
    """Tests that the flow uses the time limit: a network whose estimated solving time would end
    past the deadline is not solved (``unknown``, no answer, named), where it used to run to its
    end whatever the limit; the time limit is no longer an ignored option."""
    problem = load_problem(document(40, 10))
    solved = models.solve(problem, "streams-sticky", "flow", time_limit=5)
    assert solved.status == "optimal" and "ignored_options" not in solved.info
    monkeypatch.setattr(flow_streams, "SECONDS_PER_ARC", 1.0)
    result = models.solve(problem, "streams-sticky", "flow", time_limit=5)
    assert result.status == "unknown" and result.answer is None
    assert "time limit" in result.info["not_solved"]


def test_cpsat_without_the_flows_hint_in_time_still_answers(monkeypatch):
    """Tests that CP-SAT's hint (the flows' answer) is within its time limit: when the flows would
    not be solved in time, CP-SAT searches without a hint instead of waiting for them."""
    monkeypatch.setattr(flow_streams, "SECONDS_PER_ARC", 1.0)
    problem = load_problem(document(6, 4))
    result = models.solve(problem, "streams-sticky", "cpsat", time_limit=10)
    assert result.status == "optimal"
