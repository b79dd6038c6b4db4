"""Tests of the rebalance-lab command line, run as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "experiments.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def write(tmp_path: Path, name: str, content) -> str:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


def test_assign_prints_assignment_status_objective():
    """Tests that assign prints the docs/cli/index.md document for an example problem."""
    done = run("assign", "--strategy", "range", "examples/group/kip-169-three-lags.json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "assignment": {"c_0": {"t0": [0, 1]}, "c_1": {"t0": [2]}},
        "status": "heuristic",
        "objective": [5, 0],
    }


def test_help_explains_the_formats_with_an_example():
    """Tests that --help shows both problem formats and an example command."""
    done = run("assign", "--help")
    assert done.returncode == 0
    for words in (
        '"topics"',
        '"members"',
        '"brokers"',
        '"replicas"',
        "rebalance-lab assign --strategy range",
    ):
        assert words in done.stdout


GROUP_MEMBER = {"id": "c0", "topics": ["t"]}
BAD_FILES = {
    "not JSON": ("{oops", "not JSON"),
    "not an object": ("[1]", "must be a JSON object"),
    "wrong type": (
        {"topics": {"t": "3"}, "members": []},
        "topics.t: must be an integer >= 0, got a string",
    ),
    "negative partition count": (
        {"topics": {"t": -2}, "members": []},
        "topics.t: must be an integer >= 0, got -2",
    ),
    "missing partition count": (
        {"topics": {"t": None}, "members": []},
        "topics.t: must be an integer >= 0, got null",
    ),
    "missing topics": ({"members": []}, "topics: missing"),
    "duplicate member ids": (
        {"topics": {"t": 1}, "members": [GROUP_MEMBER, GROUP_MEMBER]},
        "members[1].id: duplicate member id 'c0'",
    ),
    "lags of the wrong length": (
        {"topics": {"t": 2}, "members": [GROUP_MEMBER], "lags": {"t": [1]}},
        "lags.t: has 1 lags but the topic has 2 partitions",
    ),
    "negative lag": (
        {"topics": {"t": 2}, "members": [GROUP_MEMBER], "lags": {"t": [1, -1]}},
        "lags.t[1]: must be an integer >= 0, got -1",
    ),
    "duplicate broker ids": (
        {"brokers": [{"id": 1}, {"id": 1}], "partitions": []},
        "brokers[1].id: duplicate broker id 1",
    ),
    "same broker twice": (
        {
            "brokers": [{"id": 1}, {"id": 2}],
            "partitions": [{"topic": "t", "partition": 0, "replicas": [2, 2]}],
        },
        "partitions[0].replicas: broker 2 appears twice",
    ),
    "replication factor above live brokers": (
        {
            "brokers": [{"id": 1}],
            "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2]}],
        },
        "partitions[0].replicas: replication factor 2 is larger than the 1 live brokers",
    ),
}


@pytest.mark.parametrize("content, message", BAD_FILES.values(), ids=BAD_FILES.keys())
def test_bad_input_exits_2_with_one_line(tmp_path, content, message):
    """Tests that each class of bad input exits 2 with one stderr line naming file, field and problem."""
    path = write(tmp_path, "bad.json", content)
    done = run("assign", "--strategy", "range", path)  # files are checked before their kind
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: {path}: ")
    assert message in lines[0]
    assert "Traceback" not in done.stderr


def test_missing_file_exits_2(tmp_path):
    """Tests that a file that does not exist exits 2 with one line."""
    done = run("assign", "--strategy", "range", str(tmp_path / "nope.json"))
    assert (
        done.returncode == 2 and len(done.stderr.splitlines()) == 1 and "cannot read" in done.stderr
    )


def test_placement_file_given_to_assign_exits_2(tmp_path):
    """Tests that a replica placement given to assign is refused with a pointer to reassign."""
    path = write(tmp_path, "cluster.json", {"brokers": [{"id": 1}], "partitions": []})
    done = run("assign", "--strategy", "range", path)
    assert done.returncode == 2 and "use `rebalance-lab reassign`" in done.stderr


def test_kafka_normal_oddities_still_produce_a_result(tmp_path):
    """Tests that a missing subscribed topic and stale owned partitions give notes on stderr and a result."""
    path = write(
        tmp_path,
        "odd.json",
        {
            "topics": {"t": 2},
            "members": [
                {
                    "id": "c0",
                    "topics": ["t", "deleted"],
                    "owned": {"t": [0, 9], "deleted": [0]},
                    "generation": 1,
                }
            ],
        },
    )
    done = run("assign", "--strategy", "roundrobin", path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["assignment"] == {"c0": {"t": [0, 1]}}
    notes = [line for line in done.stderr.splitlines() if line.startswith("note: ")]
    assert len(notes) == 3


def test_option_a_strategy_does_not_take_exits_2():
    """Tests that a variant the chosen strategy does not take is refused, not ignored; a common
    option it cannot use (a time limit on a heuristic) is accepted and named as not used."""
    done = run(
        "assign",
        "--strategy",
        "range",
        "--time-limit",
        "5",
        "examples/group/kip-169-three-lags.json",
    )
    assert done.returncode == 0 and done.stderr.splitlines()[-1].endswith(
        "(not used: --time-limit)"
    )
    assert json.loads(done.stdout)["ignored_options"] == ["time_limit"]
    done = run(
        "assign",
        "--strategy",
        "range",
        "--variant",
        "kafka-9987",
        "examples/group/kip-169-three-lags.json",
    )
    assert (
        done.returncode == 2
        and "--variant kafka-9987 is not a variant of --strategy range" in done.stderr
    )


def test_solver_without_a_model_exits_2():
    """Tests that asking for a solver the strategy has no model for is refused."""
    done = run(
        "assign",
        "--strategy",
        "range",
        "--solver",
        "cpsat",
        "examples/group/kip-169-three-lags.json",
    )
    assert done.returncode == 2 and "not available" in done.stderr


def test_unknown_variant_exits_2_naming_the_variants():
    """Tests that a variant the strategy does not have is a usage error (exit 2), not a traceback."""
    done = run(
        "assign",
        "--strategy",
        "sticky",
        "--variant",
        "kafka-1",
        "examples/group/kafka-12464-c2-joins.json",
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        "--variant kafka-1 is not a variant of --strategy sticky" in done.stderr
        and "kafka-9987" in done.stderr
    )


#: Options out of range: each is exit 2 with one line naming the option, never a traceback or a
#: silent "unknown".
OUT_OF_RANGE = {
    "workers -1": ("assign", "--solver", "cpsat", "--workers", "-1"),
    "workers 100000": ("assign", "--solver", "cpsat", "--workers", "100000"),
    "cp-sat seed 2**31": ("assign", "--solver", "cpsat", "--seed", "2147483648"),
    "mip seed -1": ("assign", "--solver", "mip", "--seed", "-1"),
    "time limit 0": ("assign", "--solver", "cpsat", "--time-limit", "0"),
    "time limit nan": ("assign", "--solver", "cpsat", "--time-limit", "nan"),
    "start index -1": ("reassign", "--start-index", "-1"),
    "max moves -1": ("reassign", "--solver", "cpsat", "--max-moves", "-1"),
}


@pytest.mark.parametrize("args", OUT_OF_RANGE.values(), ids=OUT_OF_RANGE.keys())
def test_out_of_range_options_exit_2_with_one_line(args):
    """Tests that the parser refuses out-of-range numbers: exit 2, one stderr line naming the option."""
    command, *options = args
    if command == "assign":
        problem, strategy = "examples/group/kip-169-three-lags.json", "lag-aware"
    else:
        problem, strategy = "examples/placement/pr-18903-two-move-limit.json", "kafka-default"
    done = run(command, "--strategy", strategy, *options, problem)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"rebalance-lab {command}: error: argument {options[-2]}"
    ), lines


def test_variant_the_solver_lacks_exits_2():
    """Tests `lag-aware --solver mip --variant cumulative` (a heuristic-only variant): exit 2, not a traceback."""
    done = run(
        "assign",
        "--strategy",
        "lag-aware",
        "--solver",
        "mip",
        "--variant",
        "cumulative",
        "examples/group/kip-169-three-lags.json",
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        "--variant cumulative is not a variant of --strategy lag-aware --solver mip" in done.stderr
    )


def test_assign_without_an_answer_exits_3_like_reassign():
    """Tests the one outcome convention: no answer (here the MIP's time runs out) prints the document
    with `assignment: null` and exits 3, naming the status on stderr's last line."""
    done = run(
        "assign",
        "--strategy",
        "sticky",
        "--solver",
        "mip",
        "--time-limit",
        "0.001",
        "examples/group/kafka-12464-c2-joins.json",
    )
    assert done.returncode == 3, done.stderr
    assert json.loads(done.stdout) == {"assignment": None, "status": "unknown", "objective": []}
    assert done.stderr.splitlines()[-1] == "rebalance-lab assign: no answer (unknown)"


#: The harness's options out of range: exit 2 before Spark starts or anything is solved.
HARNESS_OUT_OF_RANGE = {
    "compare time limit -1": ("compare", "--suite", "smoke", "--time-limit", "-1"),
    "compare time limit nan": ("compare", "--suite", "smoke", "--time-limit", "nan"),
    "compare batch size 0": ("compare", "--suite", "smoke", "--batch-size", "0"),
    "compare limit -1": ("compare", "--suite", "smoke", "--limit", "-1"),
    "gate time limit 0": ("gate", "--time-limit", "0"),
    "gate unknown suite": ("gate", "--suite", "bogus"),
}


@pytest.mark.parametrize("args", HARNESS_OUT_OF_RANGE.values(), ids=HARNESS_OUT_OF_RANGE.keys())
def test_harness_options_are_range_checked(args, tmp_path, capsys):
    """Tests that `compare` and `gate` refuse out-of-range options at once: exit 2, one stderr line
    (in-process: the parser exits before anything is run)."""
    from experiments.cli import main

    command, *options = args
    with pytest.raises(SystemExit) as caught:
        main(
            [command, *options, *(["--out", str(tmp_path / "out")] if command == "compare" else [])]
        )
    out, err = capsys.readouterr()
    assert caught.value.code == 2 and out == "", err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"rebalance-lab {command}: error: argument {options[-2]}"
    ), lines
    assert not (tmp_path / "out").exists()
