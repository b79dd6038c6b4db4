"""Experiment files at their edges: what `compare` would refuse, `experiment show` refuses first.

The property writes experiment files of a few blocks whose levels are drawn from the valid ones, the
boundaries of their ranges and the values just beyond (sizes past the problem files' limits, a
replication factor above the brokers, solver options past ``assign``'s flags, seeds past 64 bits, a
crossing or a trace past the limits), reads each as ``experiment show`` and ``compare`` do
(:func:`experiments.experiment_cli.read`), and checks that a refused file is one line naming it,
and that an accepted one is one ``compare`` can run: every scenario's problem and every trace built
and read back, every run's options taken by its runner and within the command line's ranges, and
the plan ``show`` prints computed.  The tests after it hold the probe's cases, through the command
line, to exit 2 and one line before any work starts.
"""

from __future__ import annotations

import json
import math
import time

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from experiments.cli import build_parser, main
from experiments.experiment import (
    JUDGED_ON,
    MAX_NAME,
    Experiment,
    Limits,
)
from experiments.experiment_cli import plan, read
from experiments.options import MAX_SECONDS
from experiments.runs import selected_runs
from experiments.scenarios import GROUP_CHURN, PLACEMENT_CHURN, build_problem
from experiments.streams_scenarios import CHURN as STREAMS_CHURN
from experiments.trace_runs import trace_runs_for
from experiments.trace_scenarios import TRACE_FAMILIES, build_trace, trace_size
from models.options import SolveOptions
from models.registry import check as check_run
from problems import ProblemError, load_problem
from problems.checks import INT64_MAX, MAX_PARTITIONS
from problems.trace import load_trace
from problems.trace import trace_size as problem_trace_size

HEAD = 'name = "edge"\ndescription = "an edge of experiment files"\n'
#: The property's limits: small, so that an accepted file is cheap to build in full.
LIMITS = Limits(scenarios=40, trace_size=400)


def toml(value) -> str:
    """``value`` as a TOML value (inline tables and arrays)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else "inf" if value > 0 else "-inf"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, int | str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {toml(v)}" for k, v in value.items()) + "}"


def blocks_text(blocks: list[dict]) -> str:
    lines = []
    for block in blocks:
        lines.append("[[scenarios]]")
        lines += [f"{key} = {toml(value)}" for key, value in block.items()]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ drawing
def rarely(usual, unusual):
    """``usual`` seven times in eight, else ``unusual`` (so that most files hold one problem at
    most, and a good share of them none)."""
    return st.integers(0, 7).flatmap(lambda i: unusual if i == 7 else usual)


def sometimes(usual, unusual):
    """``usual`` two times in three, else ``unusual``."""
    return st.integers(0, 2).flatmap(lambda i: unusual if i == 2 else usual)


SMALL = st.integers(1, 6)
BEYOND = st.sampled_from([MAX_PARTITIONS + 1, 2**31, 2**63 - 1, 2**63, 2**64])
SEEDS = rarely(st.integers(0, 5), st.sampled_from([-1, 2**63 - 1, 2**63, 2**64]))
OPTION_VALUES = {
    "workers": sometimes(st.sampled_from([1, 2, 64]), st.sampled_from([0, 65, 1000])),
    "seed": sometimes(st.sampled_from([0, 7, 2**31 - 1]), st.sampled_from([2**31, 2**63 - 1])),
    "max_moves": sometimes(st.sampled_from([0, 3, 2**31 - 1]), st.just(2**31)),
    "start_index": sometimes(st.sampled_from([0, 1]), st.just(2**31)),
    "backend": sometimes(st.sampled_from(["highs", "cbc"]), st.just("gurobi")),
    "log": st.just(False),
}
TIME_LIMITS = rarely(
    st.sampled_from([1, 0.5, 2.5, MAX_SECONDS]), st.sampled_from([0, -1, MAX_SECONDS + 1, 1e300])
)


@st.composite
def group_size(draw) -> list[int]:
    """A group's [partitions, members, topics]: small, or a number beyond the limits."""
    partitions = draw(rarely(st.integers(1, 24), BEYOND))
    members = draw(rarely(SMALL, st.sampled_from([10**8 + 1, 10**9])))
    topics = draw(rarely(st.integers(1, max(1, min(4, partitions))), st.just(10**4)))
    return [partitions, members, topics]


@st.composite
def placement_size(draw) -> list[int]:
    """A placement's [partitions, brokers, racks, replication], the replication factor at times
    above the brokers."""
    return [
        draw(rarely(st.integers(1, 14), BEYOND)),
        draw(rarely(st.integers(2, 6), st.sampled_from([1, 2**31 - 2, 2**31]))),
        draw(st.integers(1, 3)),
        draw(rarely(st.integers(1, 2), st.integers(3, 5))),
    ]


@st.composite
def blocks(draw) -> dict:
    """One [[scenarios]] block: a single rebalance or a trace, of a group or a placement."""
    judged_on = draw(st.sampled_from(sorted(JUDGED_ON)))
    placement = JUDGED_ON[judged_on] == "placement"
    streams = judged_on == "streams-sticky"
    block: dict = {"judged_on": judged_on}
    traced = not streams and judged_on != "share" and draw(st.booleans())
    if traced:
        family = "placement" if placement else "group"
        names = [t for t, f in TRACE_FAMILIES.items() if f == family]
        block["trace"] = draw(st.sampled_from(names))
        block["steps"] = draw(rarely(st.integers(1, 4), st.sampled_from([10**4, 10**9])))
    else:
        churns = PLACEMENT_CHURN if placement else STREAMS_CHURN if streams else GROUP_CHURN
        block["churn"] = draw(st.sampled_from(churns))
    block["size"] = draw(placement_size() if placement else group_size())
    seeds = draw(st.lists(SEEDS, min_size=1, max_size=3, unique=True))
    if draw(st.integers(0, 9)) == 0:  # a crossing past the limit
        seeds = list(range(LIMITS.scenarios + 1))
    block["seed"] = seeds
    if draw(st.booleans()):
        block["time_limit"] = draw(TIME_LIMITS)
    if draw(st.integers(0, 2)):
        option = draw(st.sampled_from(sorted(OPTION_VALUES)))
        solver = {"backend": "mip", "start_index": "heuristic"}.get(option)
        if solver is None:
            common = option in ("workers", "seed", "log")
            solvers = ["cpsat", "mip", "flow"] + ["heuristic"] * common
            solver = draw(st.sampled_from(solvers))
        block["options"] = {solver: {option: draw(OPTION_VALUES[option])}}
        if option in ("backend", "max_moves", "start_index") and draw(st.integers(0, 3)):
            block["solvers"] = [solver]  # usually the runs that take it, alone
            if option == "start_index":
                block["strategies"] = ["kafka-default"]
    return block


@st.composite
def experiment_files(draw) -> str:
    """A file of 1-3 blocks, at times with a top-level time limit or a name too long."""
    head = HEAD
    if draw(st.integers(0, 19)) == 0:
        head = head.replace('"edge"', '"' + "x" * (MAX_NAME + 1) + '"')
    if draw(st.booleans()):
        head += f"time_limit = {toml(draw(TIME_LIMITS))}\n"
    return head + blocks_text(draw(st.lists(blocks(), min_size=1, max_size=3)))


# ---------------------------------------------------------- what compare does
#: The command line that takes each integer option: `assign` and `reassign`, parsed as typed.
PARSER = build_parser(command_modules=False)
FLAGS = {
    "workers": ["assign", "--strategy", "sticky", "--workers"],
    "seed": ["assign", "--strategy", "sticky", "--seed"],
    "max_moves": ["reassign", "--strategy", "sticky-replica", "--max-moves"],
    "start_index": ["reassign", "--strategy", "sticky-replica", "--start-index"],
}


def command_line_takes(option: str, value) -> bool:
    """Whether the command line's flag for ``option`` accepts ``value``."""
    try:
        PARSER.parse_args([*FLAGS[option], str(value)])
    except SystemExit:
        return False
    return True


def runnable(experiment: Experiment) -> None:
    """Everything ``compare`` does with an accepted experiment short of solving: build and read
    every scenario's problem and every trace, check every run's options against its runner and the
    command line's ranges, and plan it as ``show`` does.  Raises on anything ``compare`` would
    fail on."""
    for scenario in experiment.scenarios:
        assert 0 <= scenario.seed <= INT64_MAX
        load_problem(build_problem(scenario))
        _check_runs(scenario.judged_on, scenario.settings, selected_runs, experiment.time_limit)
    for trace in experiment.traces:
        assert 0 <= trace.seed <= INT64_MAX
        loaded = load_trace(build_trace(trace), name=trace.scenario_id)
        assert trace_size(trace) == (problem_trace_size(loaded), True)
        assert problem_trace_size(loaded) <= LIMITS.trace_size
        _check_runs(trace.judged_on, trace.settings, trace_runs_for, experiment.time_limit)
    assert len(experiment.scenarios) + len(experiment.traces) <= LIMITS.scenarios
    plan(experiment, [])


def _check_runs(judged_on: str, text: str, runs_of, default_limit: float) -> None:
    settings = json.loads(text) if text else {}
    limit = settings.get("time_limit", default_limit)
    assert 0 < limit <= MAX_SECONDS
    options = settings.get("options", {})
    for solver_options in options.values():
        for name, value in solver_options.items():
            assert name not in FLAGS or command_line_takes(name, value), (name, value)
    for strategy, variant, solver in runs_of(judged_on, settings):
        if solver in ("step", "horizon"):
            continue
        given = {"workers": 1, "seed": 0, **options.get(solver, {})}
        check_run(strategy, solver, SolveOptions.of(variant=variant, time_limit=limit, **given))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=experiment_files())
def test_what_compare_would_refuse_show_refuses(text, tmp_path_factory):
    """Property: an experiment file is refused with one line naming it, or every scenario and trace
    it makes can be built and read, every run's options are taken by its runner and within the
    command line's ranges, and within the limits of its size."""
    path = tmp_path_factory.mktemp("edge") / "edge.toml"
    path.write_text(text)
    try:
        experiment = read(str(path), LIMITS)
    except ProblemError as error:
        message = str(error)
        assert message.startswith(f"{path}: ") and "\n" not in message and len(message) < 600
        event(f"refused: {message.split(': ')[-1][:30]}")
        return
    event("accepted")
    runnable(experiment)


#: Integers around every range's ends, and anywhere.
NEAR_ENDS = st.sampled_from([-1, 0, 1, 2, 63, 64, 65, 2**31 - 1, 2**31, 2**63 - 1, 2**63]) | (
    st.integers(-(2**70), 2**70)
)
#: Each option with a block whose runs take it.
TAKEN_BY = {
    "workers": ("sticky", "cpsat", ""),
    "seed": ("sticky", "mip", ""),
    "max_moves": ("sticky-replica", "cpsat", 'solvers = ["cpsat"]\n'),
    "start_index": (
        "sticky-replica",
        "heuristic",
        'solvers = ["heuristic"]\nstrategies = ["kafka-default"]\n',
    ),
}


@settings(max_examples=300, deadline=None)
@given(option=st.sampled_from(sorted(TAKEN_BY)), value=NEAR_ENDS)
def test_an_option_is_taken_exactly_when_the_command_line_takes_it(option, value, tmp_path_factory):
    """Property: a solver option in a file is accepted exactly when the command line's flag for it
    (`assign --workers`, `--seed`, `reassign --max-moves`, `--start-index`) accepts the value."""
    judged_on, solver, selection = TAKEN_BY[option]
    placement = judged_on == "sticky-replica"
    path = tmp_path_factory.mktemp("option") / "option.toml"
    path.write_text(
        HEAD
        + f"[[scenarios]]\njudged_on = {json.dumps(judged_on)}\n"
        + ("churn = 'broker-removed'\nsize = [6, 4, 2, 2]\n" if placement else "churn = 'fresh'\n")
        + ("" if placement else "size = [12, 3, 2]\n")
        + f"seed = 1\noptions = {{{solver} = {{{option} = {value}}}}}\n"
        + selection
    )
    try:
        read(str(path), LIMITS)
        accepted = True
    except ProblemError as error:
        assert str(error).startswith(f"{path}: scenarios[0].options[0].{solver}.{option}: ")
        accepted = False
    assert accepted == command_line_takes(option, value)


# ------------------------------------------------------ the probe's files
BLOCK = "[[scenarios]]\njudged_on = 'sticky'\nchurn = 'fresh'\nsize = [12, 3, 2]\nseed = 1\n"


@pytest.mark.parametrize(
    ("body", "field", "problem"),
    [
        (
            BLOCK.replace("[12, 3, 2]", "[9223372036854775807, 3, 1]"),
            "scenarios[0].size[0]",
            "9,223,372,036,854,775,807 partitions, more than the limit of 100,000,000",
        ),
        (
            "[[scenarios]]\njudged_on = 'sticky-replica'\nchurn = 'broker-removed'\n"
            "size = [6, 2, 1, 3]\nseed = 0\n",
            "scenarios[0].size[0]",
            "replication factor 3 is above the 2 brokers",
        ),
        (
            BLOCK + "options = {cpsat = {workers = 1000}}\n",
            "scenarios[0].options[0].cpsat.workers",
            "must be an integer 1 to 64, got an integer 1000",
        ),
        (
            BLOCK + "options = {cpsat = {seed = 9223372036854775807}}\n",
            "scenarios[0].options[0].cpsat.seed",
            "must be an integer 0 to 2147483647",
        ),
        (
            BLOCK.replace("seed = 1", "seed = 18446744073709551616"),
            "scenarios[0].seed[0]",
            "must be at most 2**63-1 (an int64)",
        ),
        (
            BLOCK + "options = {mip = {backend = 'gurobi'}}\n",
            "scenarios[0].options[0].mip.backend",
            "must be one of highs, cbc",
        ),
        (
            BLOCK + "options = {cpsat = {max_moves = 3}}\n",
            "scenarios[0].options[0].cpsat.max_moves",
            "not an option of sticky on cpsat",
        ),
        (
            BLOCK + "time_limit = 1e300\n",
            "scenarios[0].time_limit[0]",
            "must be a number of seconds in (0, 3.1536e+07]",
        ),
        (
            "[[scenarios]]\njudged_on = 'sticky'\ntrace = 'rolling-restart'\nsteps = 1000000000\n"
            "size = [12, 3, 2]\nseed = 0\n",
            "scenarios[0]",
            "trace/sticky/rolling-restart/equal-zero/p12-m3-t2-T1000000000/s0: 12,000,000,012 "
            "partitions summed over the 1,000,000,001 rebalances is above the limit of "
            "100,000,000 (--max-size raises it)",
        ),
        (
            "[[scenarios]]\njudged_on = 'sticky'\nchurn = 'fresh'\ntopics = [1, 2]\n"
            f"partitions = {list(range(10, 1010))}\nmembers = {list(range(1, 1001))}\nseed = 1\n",
            "scenarios[0]",
            "crosses 2,000,000 combinations, more than the limit of 1,000,000 scenarios "
            "(--max-scenarios raises it)",
        ),
        ("a = " + "[" * 3000 + "]" * 3000 + "\n", "", "nested too deeply"),
    ],
    ids=[
        "size-2**63-1",
        "replication-above-brokers",
        "workers-1000",
        "option-seed-2**63-1",
        "seed-beyond-int64",
        "unknown-backend",
        "option-no-run-takes",
        "time-limit-1e300",
        "steps-1e9",
        "crossing-2e6",
        "deep-toml",
    ],
)
def test_show_and_compare_refuse_before_any_work(tmp_path, capsys, body, field, problem):
    """Tests the probe's files through `experiment show` and `compare --experiment`: exit 2 and one
    line naming the file, the field and the problem, within seconds, nothing written."""
    path = tmp_path / "probe.toml"
    path.write_text(HEAD + body)
    for command in (
        ["experiment", "show", str(path)],
        ["compare", "--experiment", str(path), "--out", str(tmp_path / "out"), "--no-progress"],
    ):
        started = time.perf_counter()
        assert main(command) == 2
        assert time.perf_counter() - started < 10
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err
        assert err.startswith(f"error: {path}: {field}{': ' if field else ''}"), err
        assert problem in err, err
    assert not (tmp_path / "out").exists()


def test_the_limits_are_raised_by_their_options(tmp_path, capsys):
    """Tests `--max-scenarios` and `--max-size`: a file refused by the default limits is
    shown when the options raise them, and refused when they are lowered below it (a trace's
    size: its partitions summed over its rebalances, 12 x 4 here)."""
    path = tmp_path / "trace.toml"
    path.write_text(
        HEAD + "[[scenarios]]\njudged_on = 'sticky'\ntrace = 'rolling-restart'\nsteps = 3\n"
        "size = [12, 3, 2]\nseed = [1, 2, 3]\n"
    )
    assert main(["experiment", "show", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["traces"] == 3
    assert main(["experiment", "show", str(path), "--max-scenarios", "2"]) == 2
    assert "more than the limit of 2 scenarios (--max-scenarios" in capsys.readouterr().err
    assert main(["experiment", "show", str(path), "--max-size", "47"]) == 2
    assert (
        ": 48 partitions summed over the 4 rebalances is above the limit of 47 (--max-size raises "
        "it)\n"
    ) in capsys.readouterr().err
    assert main(["experiment", "show", str(path), "--max-size", "48", "--json"]) == 0
    capsys.readouterr()


def test_every_shipped_suite_is_within_the_default_limits():
    """Tests that the shipped suites (the atlas's 20,832 scenarios, the scale suite's traces)
    load within the default limits."""
    from experiments.experiment import load_suite, suite_names

    for name in suite_names():
        assert load_suite(name).scenarios


def test_a_limit_counts_every_block(tmp_path):
    """Tests that the crossing limit counts the blocks together: two blocks of 30 each pass a
    limit of 60 and are refused by one of 59, naming the second block and the first's count."""
    block = BLOCK.replace("seed = 1", f"seed = {list(range(30))}")
    path = tmp_path / "two.toml"
    path.write_text(HEAD + block + block.replace("'fresh'", "'stable'"))
    assert len(read(str(path), Limits(scenarios=60)).scenarios) == 60
    with pytest.raises(ProblemError) as caught:
        read(str(path), Limits(scenarios=59))
    assert str(caught.value) == (
        f"{path}: scenarios[1]: crosses 30 combinations (30 more in the blocks before), more than "
        "the limit of 59 scenarios (--max-scenarios raises it)"
    )


def test_a_trace_the_trace_reader_refuses_is_rows_not_a_failed_job(monkeypatch):
    """Tests a trace scenario beyond the trace reader's own limit (here lowered to 10 partitions
    summed over its rebalances): every run is one row, status unknown, saying it was refused."""
    import problems.trace
    from experiments.trace_runs import solve_trace_frame, trace_frame
    from experiments.trace_scenarios import TraceScenario

    real = problems.trace.load_trace
    monkeypatch.setattr(
        problems.trace,
        "load_trace",
        lambda source, name=None, max_size=None: real(source, name, max_size=10),
    )
    scenario = TraceScenario("group", "sticky", "rolling-restart", 12, 3, 2, 2, 1)
    rows = solve_trace_frame(trace_frame([scenario]), time_limit=2)
    assert len(rows) == len(trace_runs_for("sticky", {}))
    assert set(rows["status"]) == {"unknown"} and not rows["valid"].any()
    assert rows["error"].str.startswith("refused: ").all()
    assert rows["error"].str.contains("--max-size raises it").all()
