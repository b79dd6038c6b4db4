"""A mutation property test of the input contract: valid documents, damaged at random.

Every example is a valid problem (the examples, and a group, a streams group and a
cluster with every optional field) with one mutation: a value swapped for one of another type
or an extreme integer, a key or list item deleted, a key renamed, a key given
twice, a string made invalid (lone surrogate, invalid UTF-8) or a value nested
100,000 deep.  The damaged document goes to the command line in process
(``experiments.cli.main`` on a file) and, where it is expressible as one, to
``load_problem`` as an in-memory dict.  Either way the outcome must be exit 2
with exactly one stderr line (``error: FILE: FIELD: problem``) and no traceback,
or a valid answer (re-scored by ``problems.evaluate``).  A few fixed mutations
also run through the real ``rebalance-lab`` process, which must agree.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import models
from experiments.cli import main
from models.registry import STRATEGIES
from problems import (
    GroupProblem,
    ProblemError,
    StreamsProblem,
    evaluate,
    load_problem,
    owner_from_assignment,
    streams_answer_from_json,
)
from problems.trace import load_trace

ROOT = Path(__file__).parents[2]
GROUP_STRATEGIES = ("range", "roundrobin", "sticky", "lag-aware", "stream-join")
PLACEMENT_STRATEGIES = ("kafka-default", "sticky-replica")
STREAMS_STRATEGIES = ("streams-sticky",)
FULL_GROUP = {
    "topics": {"t0": 3, "t1": 2},
    "members": [
        {
            "id": "c0",
            "topics": ["t0", "t1"],
            "owned": {"t0": [0, 1]},
            "generation": 4,
            "rack": "r1",
        },
        {"id": "c1", "topics": ["t0", "t1"], "owned": {"t1": [1]}, "instance_id": "static-1"},
    ],
    "lags": {"t0": [100000, 60000, 50000], "t1": [0, 7]},
}
FULL_CLUSTER = {
    "brokers": [{"id": 1, "rack": "a"}, {"id": 2, "rack": "a"}, {"id": 3, "rack": "b"}],
    "partitions": [
        {"topic": "t", "partition": 0, "replicas": [1, 2]},
        {"topic": "t", "partition": 1, "replicas": [9, 3]},
    ],
}
FULL_STREAMS = {
    "kind": "streams-group",
    "subtopologies": {
        "s0": {
            "partitions": 3,
            "stateful": True,
            "partition_racks": {"orders": [["r1"], ["r1", "r2"], ["r2"]]},
        },
        "s1": {"partitions": 2, "stateful": False},
    },
    "members": [
        {
            "id": "m0",
            "process": "p0",
            "threads": 2,
            "rack": "r1",
            "client_tags": {"zone": "a"},
            "active": {"s0": [0, 1], "s1": [0]},
            "standby": {"s0": [2]},
            "lags": {"s0": [0, 0, 500]},
        },
        {"id": "m1", "process": "p1", "warmup": {"s0": [0]}, "lags": {"s0": [10, -1, 0]}},
        {"id": "m2", "process": "p1", "active": {"s0": [2]}},
    ],
    "configs": {
        "num_standby_replicas": 1,
        "acceptable_recovery_lag": 10000,
        "max_warmup_replicas": 2,
        "rack_aware_assignment_strategy": "none",
        "rack_aware_assignment_tags": ["zone"],
        "traffic_cost": 10,
        "non_overlap_cost": 1,
    },
}
BASES = [FULL_GROUP, FULL_CLUSTER, FULL_STREAMS] + [
    json.loads(p.read_text())
    for p in sorted((ROOT / "examples").glob("*/*.json"))
    if p.parent.name != "traces"
]
#: Traces (`rebalance-lab trace`): the examples, and one with every group event.
FULL_TRACE = {
    "kind": "group-trace",
    "description": "every event",
    "problem": FULL_GROUP,
    "steps": [
        {"join": [{"id": "c2", "topics": ["t0"], "rack": "r2", "instance_id": "static-2"}]},
        {"leave": ["c0"], "restart": ["c1"], "racks": {"c2": None}},
        {"topics": {"t0": 4, "t2": 1}, "subscribe": {"c2": ["t0", "t2"]}},
        {"lags": {"t2": [9]}, "topics": {"t1": 0}},
    ],
}
TRACE_BASES = [FULL_TRACE] + [
    json.loads(p.read_text()) for p in sorted((ROOT / "examples" / "traces").glob("*.json"))
]
TRACE_STRATEGIES = {
    "group-trace": ("range", "sticky", "cooperative-sticky", "lag-aware", "uniform", "share"),
    "placement-trace": PLACEMENT_STRATEGIES,
}
DEEP = 100_000
DEEP_LIST: list = []
for _ in range(DEEP):
    DEEP_LIST = [DEEP_LIST]
#: Values swapped in: other types, extreme and negative integers, bad strings.
VALUES = [
    None,
    True,
    False,
    0,
    -1,
    1.5,
    "x",
    "",
    [],
    {},
    [1],
    {"a": 1},
    ["t0"],
    2**31 - 1,
    2**31,
    2**62,
    2**63 - 1,
    2**63,
    2**64,
    -(2**63),
    -(2**64),
    10**12,
    "\ud800",
    "t0",
    "c0",
    float("nan"),
    float("inf"),
]
OPERATIONS = ("swap", "delete", "rename", "duplicate", "surrogate", "bad utf-8", "deep")
_MARK = "\u0000mark\u0000"


def paths(doc) -> list[tuple]:
    """Every path below the root: a tuple of keys and indexes."""
    found, stack = [], [((), doc)]
    while stack:
        path, node = stack.pop()
        children = (
            node.items()
            if isinstance(node, dict)
            else enumerate(node)
            if isinstance(node, list)
            else ()
        )
        for key, child in children:
            found.append((*path, key))
            stack.append(((*path, key), child))
    return sorted(found, key=repr)


def at(doc, path):
    for key in path:
        doc = doc[key]
    return doc


def mutate(base: dict, operation: str, pick: int, value_pick: int) -> tuple[bytes, dict | None]:
    """The mutated document as file bytes, and as an in-memory dict when one can hold it."""
    doc = copy.deepcopy(base)
    path = paths(doc)[pick % len(paths(doc))]
    parent, key = at(doc, path[:-1]), path[-1]
    value = VALUES[value_pick % len(VALUES)]
    if operation == "swap":
        parent[key] = value
    elif operation == "delete":
        del parent[key]
    elif operation == "rename" and isinstance(parent, dict):
        parent[VALUES[value_pick % len(VALUES)] if isinstance(value, str) else "renamed"] = (
            parent.pop(key)
        )
    elif operation in ("duplicate", "surrogate", "bad utf-8", "deep"):
        parent[key] = _MARK  # replaced in the text below
    text = json.dumps(doc).encode()
    mark = json.dumps(_MARK).encode()
    original = json.dumps(at(base, path)).encode()
    if operation == "duplicate":  # the key twice: the original value, then a swapped one
        if isinstance(parent, dict):
            text = text.replace(
                mark,
                original + b", " + json.dumps(key).encode() + b": " + json.dumps(value).encode(),
            )
        else:
            text = text.replace(mark, original)
        return text, None
    if operation == "surrogate":
        parent[key] = "\ud800"
        return text.replace(mark, b'"\\ud800"'), doc
    if operation == "bad utf-8":
        return text.replace(mark, b'"\xff\xfe"'), None
    if operation == "deep":
        parent[key] = DEEP_LIST
        return text.replace(mark, b"[" * DEEP + b"]" * DEEP), doc
    return text, doc


def run_in_process(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def check_outcome(code: int, out: str, err: str, path: Path, strategy: str) -> None:
    """Exit 2 with one 'error:' line, or exit 0 with a valid answer; never a traceback."""
    assert "Traceback" not in err
    if code == 2:
        assert out == "" and err.count("\n") == 1 and err.startswith("error: "), err
        return
    assert code == 0, (code, err)
    for line in err.splitlines():
        assert line.startswith(("note: ", f"{strategy}/heuristic: ")), line
    problem = load_problem(path)
    answer = json.loads(out)
    if isinstance(problem, StreamsProblem):
        parsed = streams_answer_from_json(problem, answer["assignment"])
        assert evaluate(problem, parsed, STRATEGIES[strategy].objective_on(problem)).valid
    elif isinstance(problem, GroupProblem):
        owner = owner_from_assignment(problem, answer["assignment"])
        assert evaluate(problem, owner, STRATEGIES[strategy].objective_on(problem)).valid
    else:
        assert [p["partition"] for p in answer["partitions"]] == problem.partitions.tolist()


def check_dict(doc: dict, strategy: str) -> None:
    """``load_problem`` of the in-memory document: one-line ProblemError, or a problem answered validly."""
    try:
        problem = load_problem(doc)
    except ProblemError as error:
        assert "\n" not in str(error)
        return
    if isinstance(problem, StreamsProblem) != (strategy in STREAMS_STRATEGIES):
        return
    kind = "assign" if isinstance(problem, GroupProblem | StreamsProblem) else "reassign"
    if (kind == "assign") != (strategy in GROUP_STRATEGIES + STREAMS_STRATEGIES):
        return
    result = models.solve(problem, strategy)
    assert result.valid, result.evaluation.violations


def argv_of(base: dict, path: Path, strategy_pick: int) -> tuple[list[str], str]:
    group = "topics" in base or "subtopologies" in base
    strategies = (
        STREAMS_STRATEGIES
        if "subtopologies" in base
        else GROUP_STRATEGIES
        if group
        else PLACEMENT_STRATEGIES
    )
    strategy = strategies[strategy_pick % len(strategies)]
    return ["assign" if group else "reassign", "--strategy", strategy, str(path)], strategy


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("mutations") / "problem.json"


@settings(max_examples=2000)
@given(
    base=st.integers(0, len(BASES) - 1),
    operation=st.sampled_from(OPERATIONS),
    pick=st.integers(0, 10**6),
    value_pick=st.integers(0, len(VALUES) - 1),
    strategy_pick=st.integers(0, 4),
)
def test_mutated_documents_give_one_line_or_a_valid_answer(
    scratch, base, operation, pick, value_pick, strategy_pick
):
    """Tests 2,000 mutated documents in process: exit 2 and one stderr line, or a valid answer."""
    text, doc = mutate(BASES[base], operation, pick, value_pick)
    scratch.write_bytes(text)
    argv, strategy = argv_of(BASES[base], scratch, strategy_pick)
    check_outcome(*run_in_process(argv), scratch, strategy)
    if doc is not None:
        check_dict(doc, strategy)


FIXED = [
    (0, "duplicate", 3, 0),
    (0, "deep", 5, 0),
    (0, "swap", 7, VALUES.index(2**64)),
    (1, "surrogate", 2, 0),
    (1, "swap", 4, VALUES.index(-1)),
    (0, "bad utf-8", 1, 0),
]


@pytest.mark.parametrize("base, operation, pick, value_pick", FIXED)
def test_real_command_line_agrees(tmp_path, base, operation, pick, value_pick):
    """Tests a few mutations through the real `rebalance-lab` process: the same exit status and stderr."""
    path = tmp_path / "problem.json"
    path.write_bytes(mutate(BASES[base], operation, pick, value_pick)[0])
    argv, strategy = argv_of(BASES[base], path, 2)
    done = subprocess.run(
        [sys.executable, "-m", "experiments.cli", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    check_outcome(done.returncode, done.stdout, done.stderr, path, strategy)
    code, out, err = run_in_process(argv)
    assert (done.returncode, done.stdout) == (code, out)
    if code == 2:
        assert done.stderr == err


def check_trace_outcome(code: int, out: str, err: str, strategy: str) -> None:
    """Exit 2 with one 'error:' line, or exit 0 with one valid answer per step and a summary."""
    assert "Traceback" not in err
    if code == 2:
        assert out == "" and err.count("\n") == 1 and err.startswith("error: "), err
        return
    assert code == 0, (code, err)
    lines = [json.loads(line) for line in out.splitlines()]
    assert "summary" in lines[-1]
    for line in lines[:-1]:
        assert "violations" not in line, line


def check_trace_dict(doc: dict, strategy: str) -> None:
    """``load_trace`` of the in-memory document: a one-line ProblemError, or answers."""
    try:
        trace = load_trace(doc)
    except ProblemError as error:
        assert "\n" not in str(error)
        return
    if strategy not in TRACE_STRATEGIES[trace.kind]:
        return
    result = models.trace(trace, strategy)
    assert all(step.result.valid for step in result.steps)


@settings(max_examples=300)
@given(
    base=st.integers(0, len(TRACE_BASES) - 1),
    operation=st.sampled_from(OPERATIONS),
    pick=st.integers(0, 10**6),
    value_pick=st.integers(0, len(VALUES) - 1),
    strategy_pick=st.integers(0, 5),
)
def test_mutated_traces_give_one_line_or_answers(
    scratch, base, operation, pick, value_pick, strategy_pick
):
    """Tests 300 mutated traces in process: exit 2 and one stderr line, or a valid answer per step."""
    text, doc = mutate(TRACE_BASES[base], operation, pick, value_pick)
    scratch.write_bytes(text)
    choices = TRACE_STRATEGIES[TRACE_BASES[base]["kind"]]
    strategy = choices[strategy_pick % len(choices)]
    check_trace_outcome(*run_in_process(["trace", "--strategy", strategy, str(scratch)]), strategy)
    if doc is not None:
        check_trace_dict(doc, strategy)
