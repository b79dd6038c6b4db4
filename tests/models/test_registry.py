"""Tests of models.registry: the table is the catalogue, and every combination it implies is answered or refused.

The exhaustive tests run the real command line in-process over every
(strategy, solver, variant) and every (strategy, solver, option): what the
table lists is answered (exit 0, a valid answer), everything else is a
one-line usage error with exit status 2, never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import models
from experiments.cli import main
from models.registry import SOLVERS, STRATEGIES, UsageError, runner_function
from problems import GROUP_STRATEGIES, PLACEMENT_STRATEGIES, STRATEGY_OBJECTIVE, load_problem

EXAMPLE = {
    "group": "examples/group/kip-169-three-lags.json",
    "placement": "examples/placement/pr-18903-two-move-limit.json",
}
COMMAND = {"group": "assign", "placement": "reassign"}
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


def test_the_table_agrees_with_the_evaluators_catalogue():
    """Tests that every strategy the evaluator judges is in the table, with the same objective and family."""
    assert set(STRATEGIES) == set(STRATEGY_OBJECTIVE)
    for name, entry in STRATEGIES.items():
        assert entry.objective == STRATEGY_OBJECTIVE[name], name
        assert name in (GROUP_STRATEGIES if entry.family == "group" else PLACEMENT_STRATEGIES), name
        assert all(
            STRATEGIES[b].family == entry.family and not STRATEGIES[b].exact
            for b in entry.baselines
        )


def test_every_named_function_exists():
    """Tests that every runner (and frontier) named in the table is an importable function."""
    for entry in STRATEGIES.values():
        for runner in (entry.heuristic, *entry.exact.values()):
            assert callable(runner_function(runner.function)), runner.function
            if runner.frontier:
                assert callable(runner_function(runner.frontier)), runner.frontier


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
            if family == "group"
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
    """Tests each (solver, option flag) of a strategy: an option the runner does not take is refused."""
    entry = STRATEGIES[strategy]
    for solver in entry.solvers:
        for option, flag in FLAGS.items():
            if option in ("start_index", "max_moves") and entry.family == "group":
                continue  # reassign's flags: argparse refuses them on assign
            accepted = entry.runner(solver).takes(option)
            _check(
                *_run(capsys, entry.family, strategy, "--solver", solver, *flag),
                accepted,
                entry.family,
            )


def test_kip_169_cumulative_is_a_usage_error_on_the_mip():
    """Tests that lag-aware --solver mip --variant cumulative exits 2 naming the variants."""
    status = main(
        [
            "assign",
            "--strategy",
            "lag-aware",
            "--solver",
            "mip",
            "--variant",
            "cumulative",
            "examples/group/kip-169-three-lags.json",
        ]
    )
    assert status == 2


def test_solve_refuses_what_a_backend_cannot_honour():
    """Tests models.solve directly: a time limit on flow and a log on the stream-join CP-SAT model are refused."""
    problem = load_problem("examples/group/kip-315-d-leaves.json")
    with pytest.raises(
        UsageError, match="--time-limit is not an option of --strategy stream-join --solver flow"
    ):
        models.solve(problem, "stream-join", "flow", time_limit=1.0)
    with pytest.raises(UsageError, match="--log"):
        models.solve(problem, "stream-join", "cpsat", log=True)
    with pytest.raises(UsageError, match="not a strategy"):
        models.solve(problem, "no-such-strategy")
    # The defaults are honoured by every runner: the flow answers with them given explicitly.
    assert models.solve(problem, "stream-join", "flow", workers=1, seed=0).status == "optimal"


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
    """Tests that no heuristics/<strategy>.py or models/<backend>/<strategy>.py sits outside the table.

    The command line and the harness see only what the table lists: a module added without its
    line would be silently unreachable.
    """
    root = Path(__file__).parents[2]
    named = {
        r.function.partition(":")[0]
        for e in STRATEGIES.values()
        for r in (e.heuristic, *e.exact.values())
    }
    stems = {name.replace("-", "_") for name in STRATEGIES}
    modules = {f"heuristics.{p.stem}" for p in (root / "heuristics").glob("*.py")}
    modules |= {f"models.{p.parent.name}.{p.stem}" for p in (root / "models").glob("*/*.py")}
    # A module named after a strategy is that strategy's runner; shared code is named by its role.
    assert {m for m in modules if m.rpartition(".")[2] in stems} == named
    assert {m.rpartition(".")[2] for m in named} <= stems
    assert set(SOLVERS) == {
        "heuristic",
        *(p.name for p in (root / "models").iterdir() if (p / "__init__.py").exists()),
    }
