"""Tests of models.registry: the table is the catalogue, and every combination it implies is answered or refused.

The exhaustive tests run the real command line in-process over every
(strategy, solver, variant) and every (strategy, solver, option): every common
option is accepted by every runner (used, or named in ``info["ignored_options"]``),
a variant or particular option the table lists is answered (exit 0, a valid
answer), everything else is a one-line usage error with exit status 2, never a
traceback.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import models
from experiments.cli import main
from models.options import COMMON
from models.registry import SOLVERS, STRATEGIES, RunnerEntry, UsageError
from problems import OBJECTIVES, READINGS, evaluate, load_problem

EXAMPLE = {
    "group": "examples/group/kip-169-three-lags.json",
    "placement": "examples/placement/pr-18903-two-move-limit.json",
    "streams": "examples/streams/stateful-standbys.json",
}
COMMAND = {"group": "assign", "placement": "reassign", "streams": "assign"}
VARIANTS = sorted(
    {
        v
        for e in STRATEGIES.values()
        for r in (e.heuristic, *e.exact.values())
        for v in (*r.variants, *r.aliases)
        if v is not None
    }
) + ["no-such-variant"]
#: Each option flag with a value a runner either honours or refuses.
FLAGS = {
    "time_limit": ["--time-limit", "5"],
    "workers": ["--workers", "2"],
    "seed": ["--seed", "3"],
    "start_index": ["--start-index", "1"],
    "max_moves": ["--max-moves", "4"],
}


def test_every_record_names_an_objective_family_and_baselines_of_its_family():
    """Tests every record: its name is its key, its objective is one the evaluator knows (and the
    report reads), its family is one of three, and its baselines are heuristics of its family."""
    for name, entry in STRATEGIES.items():
        assert entry.name == name
        assert entry.objective in OBJECTIVES and entry.objective in READINGS, name
        assert entry.family in ("group", "streams", "placement"), name
        assert all(
            STRATEGIES[b].family == entry.family
            and (entry.family == "streams" or not STRATEGIES[b].exact)
            for b in entry.baselines
        )
        assert not entry.rack_judged or entry.objective == "sticky", name


def _module(runner: RunnerEntry) -> str:
    """The module a runner of the table reaches: an exact backend's, or a heuristic's."""
    loaded = runner.load()
    return loaded.__name__ if isinstance(loaded, ModuleType) else loaded.module.__name__


def test_every_runner_loads_with_the_one_signature():
    """Tests that every runner (and frontier) of the table loads to a module with ``solve`` (``frontier``)."""
    for entry in STRATEGIES.values():
        for runner in (entry.heuristic, *entry.exact.values()):
            assert callable(runner.load().solve), _module(runner)
            if runner.frontier:
                assert callable(runner.frontier().frontier), _module(runner)
            assert set(runner.uses) <= set(COMMON)


def _run(capsys, family: str, strategy: str, *flags: str) -> tuple[int, str, str]:
    try:
        status = main([COMMAND[family], "--strategy", strategy, *flags, EXAMPLE[family]])
    except SystemExit as exit:  # argparse's own usage errors
        status = exit.code
    out = capsys.readouterr()
    return status, out.out, out.err


def _check(status: int, out: str, err: str, accepted: bool, family: str) -> None:
    assert "Traceback" not in err
    if accepted:
        assert status == 0, err
        document = json.loads(out)
        assert (
            document["status"] in ("optimal", "heuristic")
            if family != "placement"
            else "partitions" in document
        )
    else:
        assert status == 2, (status, err)
        errors = [line for line in err.splitlines() if "error:" in line]
        assert len(errors) == 1 and out == "", err


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_every_strategy_solver_variant_is_answered_or_a_usage_error(capsys, strategy):
    """Tests each (solver, variant) of a strategy: listed ones answer, the others exit 2 with one line."""
    entry = STRATEGIES[strategy]
    for solver in SOLVERS:
        for variant in [None, *VARIANTS]:
            runner = entry.runner(solver) if solver in entry.solvers else None
            accepted = runner is not None and (
                variant in runner.variants or variant in runner.aliases
            )
            flags = ["--solver", solver, *([] if variant is None else ["--variant", variant])]
            _check(*_run(capsys, entry.family, strategy, *flags), accepted, entry.family)


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_every_option_is_honoured_or_a_usage_error(capsys, strategy):
    """Tests each (solver, option flag) of a strategy: a common option is accepted everywhere (named
    when unused), a particular option the runner does not take is refused."""
    entry = STRATEGIES[strategy]
    for solver in entry.solvers:
        runner = entry.runner(solver)
        for option, flag in FLAGS.items():
            if option in ("start_index", "max_moves") and entry.family != "placement":
                continue  # reassign's flags: argparse refuses them on assign
            status, out, err = _run(capsys, entry.family, strategy, "--solver", solver, *flag)
            _check(status, out, err, runner.accepts(option), entry.family)
            if option in COMMON and option not in runner.uses:
                summary = err.splitlines()[-1]
                assert summary.endswith(f"(not used: {flag[0]})"), summary
                if entry.family != "placement":
                    assert json.loads(out)["ignored_options"] == [option]


def test_solve_names_the_common_options_a_runner_does_not_use():
    """Tests models.solve directly: a time limit on the flow and workers on the MIP are accepted and
    named in info["ignored_options"]; a particular option a runner does not take is refused."""
    problem = load_problem("examples/group/kip-315-d-leaves.json")
    flow = models.solve(problem, "stream-join", "flow", time_limit=1.0)
    assert flow.status == "optimal" and flow.info["ignored_options"] == ["time_limit"]
    mip = models.solve(problem, "stream-join", "mip", time_limit=5, workers=2, seed=1)
    assert mip.status == "optimal" and mip.info["ignored_options"] == ["workers"]
    assert "ignored_options" not in models.solve(problem, "stream-join", "cpsat", workers=2).info
    # An option given is a request even at its default value; one not given asks for nothing.
    assert models.solve(problem, "stream-join", "heuristic", time_limit=10).info[
        "ignored_options"
    ] == ["time_limit"]
    assert "ignored_options" not in models.solve(problem, "stream-join", "flow").info
    with pytest.raises(
        UsageError, match="--backend is not an option of --strategy stream-join --solver cpsat"
    ):
        models.solve(problem, "stream-join", "cpsat", backend="cbc")
    with pytest.raises(UsageError, match="not a strategy"):
        models.solve(problem, "no-such-strategy")


def test_a_hint_is_used_where_a_model_can_and_named_where_not():
    """Tests ``hint``: the CP-SAT model starts from a valid previous answer (the flow's optimum, so
    even a tiny limit returns it); an invalid hint, or one given to the flow, is named ignored."""
    problem = load_problem("examples/group/kafka-12464-c2-joins.json")
    optimum = models.solve(problem, "sticky", "flow")
    hinted = models.solve(problem, "sticky", "cpsat", time_limit=5, hint=optimum)
    assert "ignored_options" not in hinted.info
    assert hinted.status == "optimal" and hinted.objective == optimum.objective
    assert models.solve(problem, "sticky", "flow", hint=optimum).info["ignored_options"] == ["hint"]
    broken = models.solve(problem, "sticky", "flow")
    broken.answer = broken.answer.copy()
    broken.answer[:] = -1  # nothing assigned: not a valid answer
    unused = models.solve(problem, "sticky", "cpsat", time_limit=5, hint=broken)
    assert unused.status == "optimal" and unused.info["ignored_options"] == ["hint"]


def test_frontier_through_the_registry_matches_solving_each_k():
    """Tests models.frontier against models.solve with max_moves=k on PR 18903's two-move case."""
    problem = load_problem("examples/placement/pr-18903-two-move-limit.json")
    points = models.frontier(problem, "sticky-replica", "cpsat", 2, time_limit=20)
    assert [p.objective for p in points] == [
        models.solve(problem, "sticky-replica", "cpsat", time_limit=20, max_moves=k).objective
        for k in range(3)
    ]
    with pytest.raises(UsageError, match="no moves/quality frontier"):
        models.frontier(problem, "kafka-default", "heuristic", 2)


def test_every_heuristic_and_model_module_is_registered():
    """Tests that no heuristic module named after a strategy (``heuristics/<strategy>.py``, or in a
    family folder) and no backend ``models/<family>/<solver>.py`` sits outside the table.

    The command line and the harness see only what the table lists: a module added without its
    line would be silently unreachable.  Each line reaches its module by a plain import, and an
    exact backend lives in its family's folder under its solver's name.
    """
    root = Path(__file__).parents[2]
    named = {_module(r) for e in STRATEGIES.values() for r in (e.heuristic, *e.exact.values())}
    # The streams models answer the objective every streams strategy shares, named after it.
    stems = {name.replace("-", "_") for name in (*STRATEGIES, "streams")}
    backends = set(SOLVERS) - {"heuristic"}
    modules = {
        ".".join(p.relative_to(root).with_suffix("").parts)
        for p in (*(root / "heuristics").glob("*.py"), *(root / "heuristics").glob("*/*.py"))
    }
    modules |= {
        f"models.{p.parent.name}.{p.stem}"
        for p in (root / "models").glob("*/*.py")
        if p.parent.name in stems and p.stem in backends
    }
    # A module named after a strategy is that strategy's runner; shared code is named by its role.
    assert {m for m in modules if m.rpartition(".")[2] in stems | backends} == named
    for entry in STRATEGIES.values():
        for solver, runner in entry.exact.items():
            family, _, stem = _module(runner).removeprefix("models.").partition(".")
            assert family in stems and stem == solver, _module(runner)
    # Backend-named modules elsewhere are the horizon's (a trace solver, models/horizon/).
    stray = {
        f"{p.parent.name}/{p.name}"
        for p in (root / "models").glob("*/*.py")
        if p.stem in backends and p.parent.name not in stems
    }
    assert stray == {"horizon/cpsat.py", "horizon/flow.py"}


def test_import_models_and_range_load_neither_ortools_nor_pulp():
    """Tests that ``import models``, a heuristic solve and ``assign --strategy range`` import neither
    OR-Tools nor PuLP (the exact backends are imported when a request first needs them)."""
    code = (
        "import sys, models\n"
        "from experiments.cli import main\n"
        "from problems import load_problem\n"
        f"models.solve(load_problem({EXAMPLE['group']!r}), 'range')\n"
        f"assert main(['assign', '--strategy', 'range', {EXAMPLE['group']!r}]) == 0\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'ortools', 'pulp'}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"


PAIRS = [(s, v) for s, entry in STRATEGIES.items() for v in entry.solvers]


@pytest.mark.parametrize("strategy, solver", PAIRS, ids=[f"{s}-{v}" for s, v in PAIRS])
def test_every_pair_takes_the_common_options(capsys, strategy, solver):
    """Tests every registered (strategy, solver) on its family's example with the same options,
    through models.solve and the command line: it answers, the answer is valid and re-scored, and
    the options it does not use are named in info["ignored_options"] (and on the summary line)."""
    entry = STRATEGIES[strategy]
    runner = entry.runner(solver)
    problem = load_problem(EXAMPLE[entry.family])
    result = models.solve(problem, strategy, solver, time_limit=5)
    assert result.status in ("heuristic", "optimal", "feasible") and result.valid
    assert result.objective == list(
        evaluate(problem, result.answer, STRATEGIES[strategy].objective_on(problem)).objective
    )
    unused = [] if "time_limit" in runner.uses else ["time_limit"]
    assert result.info.get("ignored_options", []) == unused

    previous = models.solve(problem, strategy)
    every = {"time_limit": 5, "workers": 2, "seed": 3, "hint": previous}
    result = models.solve(problem, strategy, solver, **every)
    assert result.status in ("heuristic", "optimal", "feasible") and result.valid
    assert result.info.get("ignored_options", []) == sorted(set(every) - set(runner.uses))

    status, out, err = _run(capsys, entry.family, strategy, "--solver", solver, "--time-limit", "5")
    _check(status, out, err, True, entry.family)
    if entry.family != "placement":
        assert json.loads(out).get("ignored_options", []) == unused
    assert err.splitlines()[-1].endswith("(not used: --time-limit)") == bool(unused)
