"""Tests of the plugin protocol (docs/plugins.md): requests as one line, answers judged strictly,
a Python plugin through the host and a JavaScript one through exec:, every failure a row and the
program started again, and --plugin on assign, reassign and trace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from experiments import plugin_runner
from experiments.cli import main
from experiments.plugin_process import PluginFailure, PluginProcess
from experiments.plugin_protocol import Garbage, read_answer, request
from experiments.plugin_runner import describe, run
from problems import evaluate, load_problem

ROOT = Path(__file__).parents[2]
JS = f"exec:node {ROOT / 'examples' / 'plugins' / 'least_loaded.js'}"
PROGRAM = f"exec:{sys.executable} {ROOT / 'tests' / 'data' / 'plugins' / 'misbehaving_program.py'}"
GROUP = {
    "topics": {"t0": 3, "t1": 2},
    "members": [
        {"id": "c0", "topics": ["t0", "t1"], "owned": {"t0": [0, 1]}, "generation": 2},
        {"id": "c1", "topics": ["t0"]},
    ],
}
PLACEMENT = {
    "brokers": [{"id": 1}, {"id": 2}, {"id": 3}],
    "partitions": [
        {"topic": "t", "partition": 0, "replicas": [1, 2]},
        {"topic": "t", "partition": 1, "replicas": [2, 9]},
    ],
}


def group(members: int, partitions: int = 12, topics: int = 2) -> dict:
    """A fresh group of ``members`` (equal subscriptions): the misbehaving program's cases."""
    names = [f"t{t}" for t in range(topics)]
    counts = {name: partitions // topics for name in names}
    return {"topics": counts, "members": [{"id": f"c{m}", "topics": names} for m in range(members)]}


@pytest.fixture
def python_plugins(monkeypatch):
    """examples/plugins and tests/data/plugins importable (the host gets this sys.path)."""
    monkeypatch.syspath_prepend(str(ROOT / "examples" / "plugins"))
    monkeypatch.syspath_prepend(str(ROOT / "tests" / "data" / "plugins"))
    yield
    plugin_runner.stop_all()


# ------------------------------------------------------------------- requests
def test_a_request_is_one_line_holding_the_document_as_read():
    """Tests that a file's bytes, line breaks and all, travel as one line that parses back to it."""
    text = json.dumps(GROUP, indent=2).encode()
    line = request(text, "sticky", 2)
    assert b"\n" not in line
    assert orjson.loads(line) == {"problem": GROUP, "judged_on": "sticky", "time_limit": 2.0}
    assert orjson.loads(request(GROUP, "sticky", None))["time_limit"] is None
    assert orjson.loads(request(b"\xef\xbb\xbf" + text, "share", float("inf")))["problem"] == GROUP


# -------------------------------------------------------------------- answers
def test_every_answer_shape_is_judged_by_the_evaluator():
    """Tests assign's JSON, the owner array, reassign's JSON and the replicas array against evaluate."""
    problem = load_problem(GROUP)
    owner = [0, 1, 0, 0, 0]
    expected = evaluate(problem, np.array(owner), "sticky").objective
    by_json = read_answer(
        problem,
        "sticky",
        b'{"assignment": {"c0": {"t0": [0, 2], "t1": [0, 1]}, "c1": {"t0": [1]}}}',
    )
    by_owner = read_answer(problem, "sticky", orjson.dumps({"owner": owner}))
    for answer in (by_json, by_owner):
        assert answer.valid and answer.status == "heuristic" and answer.error is None
        assert answer.result is not None and tuple(answer.result.objective) == expected
    placement = load_problem(PLACEMENT)
    entries = [
        {"topic": "t", "partition": 1, "replicas": [2, 3]},
        {"topic": "t", "partition": 0, "replicas": [1, 2]},
    ]
    by_json = read_answer(placement, "sticky-replica", orjson.dumps({"partitions": entries}))
    by_array = read_answer(placement, "sticky-replica", b'{"replicas": [1, 2, 2, 3]}')
    expected = evaluate(placement, np.array([1, 2, 2, 3]), "replica").objective
    for answer in (by_json, by_array):
        assert answer.valid and tuple(answer.result.objective) == expected


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (b'{"owner": [0.0, 1, 0, 0, 0]}', "owner: must be a list of integers, holds 0.0"),
        (b'{"owner": [true, 1, 0, 0, 0]}', "owner: must be a list of integers, holds true"),
        (b'{"owner": ["0", 1, 0, 0, 0]}', 'holds "0"'),
        (b'{"owner": [1e400, 1, 0, 0, 0]}', None),
        (b'{"owner": [0, 1, 0]}', "answer has 3 owners"),
        (b'{"owner": [0, 1, 0, 0, 2]}', "positions that are not members"),
        (b'{"owner": [0, 1, 0, 0, 18446744073709551615]}', "beyond 64 bits"),
        (b'{"owner": [0, 1, 0, 0, 99999999999999999999]}', "holds 1e+20"),
        (b'{"assignment": {"c0": {"t0": [0.0]}}}', "partition 0.0 does not exist"),
        (b'{"assignment": {"c0": {"t0": [true]}}}', "partition True does not exist"),
        (b'{"assignment": {"c9": {}}}', "c9: not a member of the group"),
        (b'{"assignment": "all of them"}', "an assignment must be an object"),
        (b'{"assignment": {"c1": {"t1": [0]}}}', None),
        (b'{"status": "great"}', "status must be one of"),
        (b"{}", "the answer has no assignment"),
    ],
)
def test_what_is_not_an_integer_answer_is_invalid_never_converted(line, error):
    """Tests that floats, booleans, strings, wrong sizes and strangers make an invalid answer."""
    problem = load_problem(GROUP)
    try:
        answer = read_answer(problem, "sticky", line)
    except Garbage:  # 1e400 is not JSON orjson reads: a protocol failure, not an answer
        assert error is None and b"1e400" in line
        return
    assert not answer.valid and answer.error.startswith("invalid: ")
    if error is not None:
        assert error in answer.error


@given(st.lists(st.one_of(st.floats(), st.booleans(), st.text(max_size=2)), min_size=1))
def test_no_owner_list_holding_a_non_integer_is_valid(values):
    """Tests (hypothesis) that an owner list with any non-integer is invalid, whatever its size."""
    problem = load_problem(GROUP)
    answer = read_answer(problem, "sticky", orjson.dumps({"owner": [0, *values]}))
    assert not answer.valid and answer.result is None


@given(st.data())
def test_an_assignment_read_back_is_the_owner_array_it_was_written_from(data):
    """Tests (hypothesis) assign's JSON of any owner array over random groups, read back through
    the protocol: the same owners, the same objective as the evaluator's on the array."""
    from problems import assignment_json

    members = data.draw(st.integers(1, 5))
    counts = data.draw(st.lists(st.integers(0, 6), min_size=1, max_size=3))
    doc = {
        "topics": {f"t{t}": c for t, c in enumerate(counts)},
        "members": [
            {"id": f"m{m}", "topics": [f"t{t}" for t in range(len(counts))]} for m in range(members)
        ],
    }
    problem = load_problem(doc)
    owner = np.array(
        data.draw(
            st.lists(st.integers(-1, members - 1), min_size=sum(counts), max_size=sum(counts))
        ),
        dtype=np.int64,
    )
    line = orjson.dumps({"assignment": assignment_json(problem, owner)})
    answer = read_answer(problem, "sticky", line)
    assert answer.result is not None and answer.result.answer.tolist() == owner.tolist()
    assert tuple(answer.result.objective) == evaluate(problem, owner, "sticky").objective


@pytest.mark.parametrize("line", [b"", b"hello", b"[0, 1]", b"42", b'"text"', b"null", b"{"])
def test_a_line_that_is_not_an_object_is_garbage(line):
    """Tests that anything but a JSON object is a protocol failure."""
    with pytest.raises(Garbage):
        read_answer(load_problem(GROUP), "sticky", line)


def test_an_error_answer_is_an_error_row_and_no_answer_is_said():
    """Tests the error field, and infeasible/unknown without an assignment."""
    problem = load_problem(GROUP)
    failed = read_answer(problem, "sticky", b'{"error": "no licence"}')
    assert failed.status == "error" and failed.error == "no licence" and not failed.valid
    for status in ("infeasible", "unknown"):
        answer = read_answer(problem, "sticky", orjson.dumps({"status": status}))
        assert answer.status == status and answer.error == "no answer"


# ------------------------------------------------------------------ programs
@pytest.mark.parametrize("target", ["least_loaded:assign", JS])
def test_a_python_and_a_javascript_plugin_answer_through_the_protocol(python_plugins, target):
    """Tests the host (Python) and exec: (Node.js) on random groups: described, every answer
    valid, and equal to the Python function called in this process (the JavaScript one on fresh
    groups, where both give each partition in order to the first least-loaded subscriber)."""
    import least_loaded

    described = describe("x", target)
    assert described["judged_on"] == "sticky"
    rng = np.random.default_rng(7)
    for case in range(40):
        members, topics = int(rng.integers(1, 9)), int(rng.integers(1, 4))
        counts = {f"t{t}": int(rng.integers(0, 12)) for t in range(topics)}
        doc = {
            "topics": counts,
            "members": [
                {
                    "id": f"m{m}",
                    "topics": sorted(
                        rng.choice(list(counts), topics - (m % topics), replace=False).tolist()
                    ),
                }
                for m in range(members)
            ],
        }
        fresh = case % 2 == 0 or target == JS
        owned = rng.integers(-1, members, sum(counts.values()))
        start = 0
        for name, count in counts.items():  # previous owners, to keep
            for p, m in enumerate(owned[start : start + count]):
                if m >= 0 and not fresh:
                    doc["members"][m].setdefault("owned", {}).setdefault(name, []).append(p)
            start += count
        problem = load_problem(doc)
        call = run("x", target, problem, doc, "sticky", 5.0)
        assert call.answer.valid, call.answer.error
        assert call.answer.result.answer.tolist() == least_loaded.assign(problem).tolist()
        assert call.runtime_s is not None and 0 <= call.runtime_s < 5


def test_the_python_host_keeps_a_plugins_stdout_out_of_the_protocol(python_plugins, capfd):
    """Tests that print in a plugin goes to stderr (the log), its answer still read."""
    problem = load_problem(group(11))
    call = run("p", "misbehaving_functions:assign", problem, group(11), "sticky", 5.0)
    assert call.answer.valid
    out, err = capfd.readouterr()
    assert "debugging output" not in out and "debugging output" in err


def test_every_failure_is_a_row_and_the_program_is_started_again(tmp_path):
    """Tests exit, hang, garbage, an unknown member, abort, allocation, float owners and extra
    output, each followed by a good answer from a new (or the same) process; stderr in the log."""
    expected = {
        4: ("error", "exit: exited with status 3: giving up"),
        5: ("error", "timeout: did not answer within 1 s; killed"),
        6: ("error", "garbage: the answer is not a JSON object: 'this is not JSON'"),
        7: ("heuristic", "invalid: the plugin's answer: nobody: not a member of the group"),
        8: ("error", "signal: killed by SIGABRT"),
        9: ("error", "exit: exited with status 1: MemoryError"),
        10: ("heuristic", "invalid: the plugin's answer: owner: must be a list of integers"),
        11: ("error", "garbage: the answer is not a JSON object: 'debugging output'"),
    }
    process = plugin_runner.process_for("bad", PROGRAM, tmp_path)
    started = time.monotonic()
    for members, (status, error) in expected.items():
        doc = group(members)
        call = run("bad", PROGRAM, load_problem(doc), doc, "sticky", 1.0, tmp_path)
        assert call.answer.status == status and call.answer.error.startswith(error)
        assert not call.answer.valid
        good = run("bad", PROGRAM, load_problem(group(3)), group(3), "sticky", 1.0, tmp_path)
        assert good.answer.valid, (members, good.answer.error)
    assert time.monotonic() - started < 20
    assert process.starts == 7  # the first, then after 4, 5, 6, 8, 9 and 11 (7 and 10 answered)
    log = process.log.read_text()
    assert log.count(" restarted (after ") == 6 and "giving up" in log
    assert "restarted (after timeout)" in log and "restarted (after garbage)" in log
    plugin_runner.stop_all()


def test_a_program_that_does_not_read_its_request_times_out(tmp_path):
    """Tests that writing a large request to a program that never reads stdin is held to the limit."""
    script = tmp_path / "deaf.py"
    script.write_text(
        "import sys, time\n"
        'sys.stdin.readline(); print(\'{"judged_on": "sticky"}\', flush=True)\n'
        "time.sleep(60)\n"
    )
    process = PluginProcess("deaf", [sys.executable, str(script)])
    process.start()
    started = time.monotonic()
    with pytest.raises(PluginFailure, match="timeout: did not answer within 0.5 s"):
        process.exchange(b"x" * 8_000_000, 0.5)
    assert time.monotonic() - started < 3 and not process.running


def test_a_plugin_program_dies_with_its_parent(tmp_path):
    """Tests that the child is killed when the process that started it dies without cleaning up."""
    code = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(ROOT)!r})
        from experiments.plugin_process import PluginProcess
        process = PluginProcess("p", ["node", {str(ROOT / "examples" / "plugins" / "least_loaded.js")!r}])
        process.start()
        print(process._process.pid, flush=True)
        os._exit(0)
        """
    )
    parent = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    child = int(parent.stdout.strip())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


# ------------------------------------------------------------ command lines
def test_assign_reassign_and_trace_take_a_plugin(python_plugins, tmp_path, capsys):
    """Tests --plugin on assign (JavaScript), reassign (a Python function) and trace (both)."""
    path = tmp_path / "group.json"
    path.write_text(json.dumps(GROUP, indent=2))
    assert main(["assign", "--plugin", JS, str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    problem = load_problem(GROUP)
    owner = read_answer(problem, "sticky", {"assignment": out["assignment"]}).result.answer
    assert out["objective"] == list(evaluate(problem, owner, "sticky").objective)
    (tmp_path / "placer.py").write_text(
        "def place(problem):\n"
        "    return {'version': 1, 'partitions': [{'topic': 't', 'partition': 0, 'replicas': [1, 2]},"
        " {'topic': 't', 'partition': 1, 'replicas': [2, 3]}]}\n"
        "place.judged_on = 'sticky-replica'\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        placement = tmp_path / "placement.json"
        placement.write_text(json.dumps(PLACEMENT))
        assert main(["reassign", "--plugin", "placer:place", str(placement)]) == 0
        out = json.loads(capsys.readouterr().out)
        assert [p["replicas"] for p in out["partitions"]] == [[1, 2], [2, 3]]
    finally:
        sys.path.remove(str(tmp_path))
    trace = ROOT / "examples" / "traces" / "scale-out.json"
    for target in (JS, "least_loaded:assign"):
        assert main(["trace", "--plugin", target, str(trace)]) == 0
        lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert "summary" in lines[-1] and lines[-1]["summary"]["status"] == "heuristic"
        assert all(line.get("assignment") for line in lines[:-1])


def test_a_failing_plugin_on_assign_is_one_line_and_no_answer(tmp_path, capsys):
    """Tests that a plugin's failure on assign is exit 3 with a line naming it, nothing on stdout."""
    path = tmp_path / "group.json"
    path.write_text(json.dumps(group(4)))
    assert main(["assign", "--plugin", f"bad={PROGRAM}", str(path)]) == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "plugin bad: exit: exited with status 3" in captured.err
    assert main(["assign", "--plugin", "exec:/nonexistent/program", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot run '/nonexistent/program'" in err
    plugin_runner.stop_all()


def test_trace_with_a_failing_step_keeps_the_last_assignment(tmp_path, capsys):
    """Tests a trace whose plugin fails on one step: that step names the failure, exit 3."""
    trace = {
        "kind": "group-trace",
        "problem": group(3),
        "steps": [{"join": [{"id": "c3", "topics": ["t0", "t1"]}]}, {"leave": ["c3"]}],
    }
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace))
    assert main(["trace", "--plugin", PROGRAM, "--time-limit", "2", str(path)]) == 3
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line.get("status") for line in lines[:-1]] == ["heuristic", "unknown", "heuristic"]
    assert lines[1]["error"].startswith("exit: exited with status 3")
    plugin_runner.stop_all()


def test_a_trace_spends_one_time_budget_on_its_plugin_calls(tmp_path, capsys):
    """Tests that ``trace --plugin --time-limit`` is one budget for the whole trace, as a solver's:
    step 1's call (five members: the program hangs) gets the time left and is killed when it runs
    out; the steps after it are not asked (``not_solved``, no assignment), exit 3."""
    trace = {
        "kind": "group-trace",
        "problem": group(3),
        "steps": [
            {"join": [{"id": "c3", "topics": ["t0", "t1"]}, {"id": "c4", "topics": ["t0", "t1"]}]},
            {"restart": ["c0"]},
            {"restart": ["c1"]},
        ],
    }
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace))
    started = time.perf_counter()
    assert main(["trace", "--plugin", PROGRAM, "--time-limit", "1.5", str(path)]) == 3
    elapsed = time.perf_counter() - started
    out, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line.get("status") for line in lines[:-1]] == ["heuristic", *["unknown"] * 3]
    assert lines[1]["error"].startswith("timeout: did not answer within")
    assert "not_solved" not in lines[1]
    for line in lines[2:-1]:
        assert line["assignment"] is None and "not_solved" in line and "error" not in line
    assert "the time limit ran out before step 2" in err
    assert elapsed < 1.5 + 5  # one budget (and one kill), not a budget per step
    plugin_runner.stop_all()


def test_the_memory_limit_holds_for_a_program(tmp_path):
    """Tests that the address-space limit is set in the child (a 3 GiB allocation fails)."""
    script = tmp_path / "hog.py"
    script.write_text(
        "import sys\n"
        'sys.stdin.readline(); print(\'{"judged_on": "sticky"}\', flush=True)\n'
        "sys.stdin.readline(); hoard = bytearray(3 << 30); print('{}', flush=True)\n"
    )
    process = PluginProcess("hog", [sys.executable, str(script)], tmp_path / "hog.log")
    process.start()
    with pytest.raises(PluginFailure, match="exit: exited with status 1: MemoryError"):
        process.exchange(b"{}", 10)
    assert os.path.getsize(tmp_path / "hog.log") > 0


@pytest.mark.parametrize(
    ("function", "strategy", "files"),
    [
        ("streams", "streams-sticky", sorted((ROOT / "examples" / "streams").glob("*.json"))),
        ("share", "share", sorted((ROOT / "examples" / "share").glob("*.json"))),
        ("placement", "sticky-replica", sorted((ROOT / "examples" / "placement").glob("*.json"))),
    ],
)
def test_streams_share_and_placement_answers_are_judged_as_the_built_ins(
    python_plugins, function, strategy, files
):
    """Tests a plugin returning a built-in's Result for every example document of its kind: the
    answer read back through the protocol has the built-in's validity and objective."""
    import models

    target = f"builtin_wrappers:{function}"
    for path in files:
        problem = load_problem(path)
        expected = models.solve(problem, strategy, "heuristic")
        call = run(function, target, problem, path.read_bytes(), strategy, 10.0)
        assert call.answer.error is None, (path.name, call.answer.error)
        assert call.answer.valid == expected.valid
        assert call.answer.result.objective == expected.objective, path.name


def test_a_program_that_cannot_start_is_not_started_for_every_call(tmp_path):
    """Tests that after START_ATTEMPTS failed starts the calls fail at once, naming the reason."""
    target = "exec:sh -c 'echo no licence >&2; exit 4'"
    problem = load_problem(group(3))
    errors = []
    for _ in range(plugin_runner.START_ATTEMPTS + 2):
        started = time.monotonic()
        call = run("broken", target, problem, group(3), "sticky", 1.0, tmp_path)
        errors.append((call.answer.status, call.answer.error.split(" (stderr")[0]))
        assert time.monotonic() - started < 5
    assert errors[0] == ("error", "exit: exited with status 4: no licence")
    assert errors[-1] == (
        "error",
        "start: exit: exited with status 4: no licence; not started again",
    )
    assert (
        plugin_runner.process_for("broken", target, tmp_path).starts == plugin_runner.START_ATTEMPTS
    )
    plugin_runner.stop_all()
