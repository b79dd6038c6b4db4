"""Tests of `rebalance-lab trace`: JSON lines per step and a summary, the report, bad input."""

from __future__ import annotations

import contextlib
import io
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.cli import main
from models.registry import strategies
from problems.trace import load_trace, trace_moves

ROOT = Path(__file__).parents[2]
EXAMPLES = sorted((ROOT / "examples" / "traces").glob("*.json"))


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["trace", *argv])
    return code, out.getvalue(), err.getvalue()


def test_one_line_per_step_then_the_summary():
    """Tests the lines of DESIGN's output on the rolling restart: steps 0..6 and a summary whose
    moves are the steps' moves, recounted from the printed assignments."""
    code, out, err = run(
        "--strategy", "sticky", str(ROOT / "examples/traces/crash-and-rejoin.json")
    )
    assert code == 0 and err == ""
    lines = [json.loads(line) for line in out.splitlines()]
    steps, summary = lines[:-1], lines[-1]["summary"]
    assert [line["step"] for line in steps] == list(range(5))
    assert list(steps[1]) == ["step", "assignment", "status", "objective", "moves"]
    for before, after in zip(steps, steps[1:]):
        assert after["moves"] == trace_moves(before["assignment"], after["assignment"])
    assert summary["moves"] == sum(line["moves"] for line in steps)
    assert summary["steps"] == 4 and summary["status"] == "heuristic"
    assert summary["objective_sums"] == [sum(v) for v in zip(*(s["objective"] for s in steps))]
    assert "c1" not in steps[1]["assignment"] and "c1" in steps[4]["assignment"]


def test_placement_lines_carry_the_reassignment():
    """Tests that a placement trace prints kafka-reassign-partitions JSON per step."""
    path = ROOT / "examples/traces/decommission-one-at-a-time.json"
    code, out, _ = run("--strategy", "sticky-replica", str(path))
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(lines) == 4
    last = lines[2]["reassignment"]
    assert last["version"] == 1 and all(not {5, 6} & set(p["replicas"]) for p in last["partitions"])


def test_cooperative_sticky_lines_have_rounds_and_pending():
    """Tests the rounds and pending fields of cooperative-sticky."""
    code, out, _ = run(
        "--strategy", "cooperative-sticky", str(ROOT / "examples/traces/scale-out.json")
    )
    lines = [json.loads(line) for line in out.splitlines()[:-1]]
    assert code == 0 and [line["rounds"] for line in lines] == [1, 2, 2, 2]
    assert all(set(line["pending"]) == set(line["assignment"]) for line in lines)


def test_report_prints_a_table_on_stderr():
    """Tests --report: a header, one row per step with its events, the total."""
    path = ROOT / "examples/traces/flapping-member.json"
    code, out, err = run("--strategy", "range", "--report", str(path))
    rows = err.splitlines()
    assert code == 0 and rows[0].split() == ["step", "events", "status", "objective", "moves"]
    assert rows[1].startswith("0 ") and "(start)" in rows[1]
    assert "leave c3" in rows[2] and "join c3" in rows[3]
    summary = json.loads(out.splitlines()[-1])["summary"]
    assert rows[-2].startswith("total") and rows[-2].split()[-1] == str(summary["moves"])
    assert rows[-1].startswith("range/heuristic: 7 rebalances")


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_answers_every_strategy(path):
    """Tests every example with every strategy of its family, heuristic and --solver step."""
    family = "placement" if load_trace(path).is_placement else "group"
    for strategy in strategies(family):
        for solver in ("heuristic", "step"):
            code, out, err = run("--strategy", strategy, "--solver", solver, str(path))
            assert code == 0, (strategy, solver, err)
            lines = out.splitlines()
            assert len(lines) == len(load_trace(path)) + 1
            assert "summary" in json.loads(lines[-1])


BAD = [
    (["missing.json"], "error: missing.json: cannot read"),
    (["{oops"], "not JSON"),
    (['{"kind": "group-trace", "problem": {}, "steps": []}'], "problem: neither a consumer group"),
    (
        [
            '{"kind": "placement-trace", "problem": {"brokers": [{"id": 1}], "partitions": []}, '
            '"steps": [{"remove_brokers": [2]}]}'
        ],
        "steps[0].remove_brokers[0]: broker 2 is not in the cluster (step 1)",
    ),
]


@pytest.mark.parametrize("argv, expected", BAD)
def test_bad_input_is_exit_2_and_one_line(argv, expected):
    """Tests that malformed traces give one line on stderr and exit status 2."""
    code, out, err = run("--strategy", "sticky-replica", *argv)
    assert (code, out) == (2, "") and err.count("\n") == 1 and expected in err, err


def test_a_strategy_of_the_other_family_or_a_bad_option_is_exit_2():
    """Tests the strategy/trace mismatch and --lookahead with a per-step solver."""
    path = str(ROOT / "examples/traces/scale-in.json")
    code, _, err = run("--strategy", "kafka-default", path)
    assert code == 2 and "a group-trace needs a group strategy" in err and err.count("\n") == 1
    code, _, err = run("--strategy", "sticky", "--solver", "flow", "--lookahead", "2", path)
    assert code == 2 and "--lookahead is an option of --solver horizon" in err
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as caught:
        main(["trace", "--strategy", "nope", path])
    assert caught.value.code == 2 and err.getvalue().count("\n") == 1


def test_the_real_command():
    """Tests the installed entry point once, as a process."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "experiments.cli",
            "trace",
            "--strategy",
            "uniform",
            "examples/traces/rolling-restart.json",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["summary"]["steps"] == 6


def report_examples() -> list[tuple[list[str], list[str]]]:
    """The ``--report`` commands of docs/traces.md and the tables shown under them."""
    blocks: list[list[str]] = []
    inside = False
    for line in (ROOT / "docs" / "traces.md").read_text().splitlines():
        if line.startswith("```"):
            inside = not inside
            if inside:
                blocks.append([])
        elif inside:
            blocks[-1].append(line)
    return [
        (shlex.split(lines[0])[3:], lines[1:])
        for lines in blocks
        if len(lines) > 1
        and lines[0].startswith("$ .venv/bin/rebalance-lab trace --")
        and "--report" in lines[0]
    ]


@pytest.mark.parametrize("argv, table", report_examples(), ids=lambda v: str(v)[:60])
def test_the_documented_reports_are_real(argv, table):
    """Tests that every report table in docs/traces.md is what the command prints (but the time)."""
    code, _, err = run(*argv)
    assert code == 0
    printed = err.splitlines()
    assert printed[:-1] == table[:-1]
    assert printed[-1].split(":")[0] == table[-1].split(":")[0]


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path):
    """Tests `trace ... | head`: the command stops with SIGPIPE's status and no traceback."""
    members = [{"id": f"c{m:03d}", "topics": ["t0"]} for m in range(200)]
    steps = [{"restart": [f"c{m:03d}"]} for m in range(40)]
    path = tmp_path / "big.json"
    path.write_text(
        json.dumps(
            {
                "kind": "group-trace",
                "problem": {"topics": {"t0": 20000}, "members": members},
                "steps": steps,
            }
        )
    )
    command = [sys.executable, "-m", "experiments.cli", "trace", "--strategy", "range", str(path)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None and process.stderr is not None
        first = process.stdout.readline()
        process.stdout.close()  # the reader goes away after one line
        error = process.stderr.read().decode()
        assert process.wait(timeout=120) == 141
    assert json.loads(first)["step"] == 0
    assert "Traceback" not in error and error == ""


def test_each_step_is_printed_as_soon_as_it_is_solved(monkeypatch):
    """Tests that the command writes step ``k``'s line before step ``k + 1`` is solved (a stopped
    run keeps what it did), and keeps no step's answer once printed."""
    module = sys.modules["models.trace.runner"]
    out = io.StringIO()
    printed: list[int] = []
    real_run = module.run

    def run_step(problem, strategy, solver, options):
        printed.append(out.getvalue().count("\n"))
        return real_run(problem, strategy, solver, options)

    monkeypatch.setattr(module, "run", run_step)
    path = str(ROOT / "examples/traces/crash-and-rejoin.json")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["trace", "--strategy", "sticky", path]) == 0
    assert printed == [0, 1, 2, 3, 4]
    assert out.getvalue().count("\n") == 6


def test_a_trace_above_the_size_limit_is_one_line_naming_the_option(tmp_path):
    """Tests the size limit on the command line: a 20 KB trace of 10 million partitions x 1,000
    steps is refused at once (it passed 8 GB), naming the limit and ``--max-size``; a raised
    limit lets a trace through."""
    members = [{"id": f"c{i}", "topics": ["t0"]} for i in range(4)]
    doc = {
        "kind": "group-trace",
        "problem": {"topics": {"t0": 10_000_000}, "members": members},
        "steps": [{"restart": [f"c{k % 4}"]} for k in range(1000)],
    }
    path = tmp_path / "big.json"
    path.write_text(json.dumps(doc))
    code, out, err = run("--strategy", "sticky", str(path))
    assert (code, out) == (2, "")
    assert err == (
        f"error: {path}: steps: 10,010,000,000 partitions summed over the 1,001 rebalances is "
        "above the limit of 100,000,000 (--max-size raises it)\n"
    )
    small = str(ROOT / "examples/traces/crash-and-rejoin.json")
    code, _, err = run("--strategy", "sticky", "--max-size", "10", small)
    assert code == 2 and "above the limit of 10 (--max-size raises it)" in err
    assert run("--strategy", "sticky", "--max-size", "1000", small)[0] == 0


def test_experiment_show_and_trace_refuse_the_same_trace_at_the_same_limit(tmp_path):
    """Tests one size for both commands on a stream join's topic-growth trace (every topic grows
    by half every other step, so its size is not its start times its steps: 305 partitions summed
    over 7 rebalances, where 12 x 6 = 72): `experiment show --max-size` counts it from the sizes,
    `trace --max-size` from the file; both take it at 305 and refuse it at 304 in the same words,
    naming the limit and ``--max-size`` (exit 2)."""
    from experiments.experiment_cli import read
    from experiments.trace_scenarios import build_trace
    from problems.trace import trace_size

    experiment = tmp_path / "growth.toml"
    experiment.write_text(
        'name = "growth"\ndescription = "a growing join"\n[[scenarios]]\n'
        'judged_on = "stream-join"\ntrace = "topic-growth"\nsteps = 6\nsize = [12, 3, 2]\n'
        "seed = 0\n"
    )
    (scenario,) = read(str(experiment)).traces
    trace = tmp_path / "growth.json"
    trace.write_text(json.dumps(build_trace(scenario)))
    assert trace_size(load_trace(trace)) == 305 == 12 + 18 + 27 + 36 + 52 + 65 + 95

    def show(*argv: str) -> tuple[int, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["experiment", "show", *argv, str(experiment)])
        return code, err.getvalue()

    refusal = (
        "305 partitions summed over the 7 rebalances is above the limit of 304 "
        "(--max-size raises it)\n"
    )
    code, err = show("--max-size", "304")
    assert (
        code == 2 and err == f"error: {experiment}: scenarios[0]: {scenario.scenario_id}: {refusal}"
    )
    code, out, err = run("--strategy", "stream-join", "--max-size", "304", str(trace))
    assert (code, out, err) == (2, "", f"error: {trace}: steps: {refusal}")
    assert show("--max-size", "305") == (0, "")
    assert run("--strategy", "stream-join", "--max-size", "305", str(trace))[0] == 0


@pytest.mark.parametrize("value", ["\u0662", "\uff12", "1_0", "2 "])
def test_numbers_are_ascii_digits(value):
    """Tests that ``--lookahead`` (and every integer option) takes ASCII digits only: Python's
    ``int`` also reads Arabic-Indic and full-width digits."""
    path = str(ROOT / "examples/traces/crash-and-rejoin.json")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as caught:
        main(["trace", "--strategy", "sticky", "--lookahead", value, path])
    assert caught.value.code == 2 and "is not an integer" in err.getvalue()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as caught:
        main(["trace", "--strategy", "sticky", "--solver", "cpsat", "--time-limit", "\u0662", path])
    assert caught.value.code == 2 and "is not a number" in err.getvalue()


def test_a_lookahead_with_the_heuristic_solver_is_refused():
    """Tests that ``--solver heuristic --lookahead 2`` is a usage error, not the lookahead policy."""
    path = str(ROOT / "examples/traces/crash-and-rejoin.json")
    code, out, err = run("--strategy", "sticky", "--solver", "heuristic", "--lookahead", "2", path)
    assert (code, out) == (2, "") and "--lookahead is an option of --solver horizon" in err
    assert err.count("\n") == 1


def test_a_horizon_refusal_names_the_file():
    """Tests that the horizon's refusals name the trace's file, not ``<problem>``."""
    path = str(ROOT / "examples/traces/crash-and-rejoin.json")
    code, out, err = run("--strategy", "share", "--solver", "horizon", path)
    assert (code, out) == (2, "") and err.startswith(f"error: {path}: strategy: share")
    assert "<problem>" not in err and err.count("\n") == 1
