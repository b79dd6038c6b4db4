"""Tests that a strategy is one record: the toy strategy of tests/support/toy_*.py (a heuristic, one
exact backend and its record, judged on the sticky objective), registered through
:func:`models.registry.register`, runs in ``assign``, ``trace``, ``compare --suite smoke`` (local
Spark), ``report`` and ``gate`` with no other change anywhere (docs/design/adding-a-strategy.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings

import models
from experiments.cli import main
from models.registry import STRATEGIES, register, unregister
from problems import evaluate, load_problem, owner_from_assignment
from support import exhaustive
from support.problem_strategies import groups
from support.toy_strategy import NAME, toy_record

ROOT = Path(__file__).parents[2]
GROUP = ROOT / "examples" / "group" / "kafka-12464-c2-joins.json"
TRACE = ROOT / "examples" / "traces" / "rolling-restart.json"
TRACE_STEPS = json.loads(TRACE.read_text())["steps"]
DISPLAY = "least loaded (a toy)"
#: Registers the toy, then runs the command line (a registered strategy lives in its process).
CLI = (
    "import sys; from models.registry import register; from support.toy_strategy import toy_record; "
    "register(toy_record()); from experiments.cli import main; sys.exit(main(sys.argv[1:]))"
)


@pytest.fixture
def toy():
    """The toy registered for one test, removed after it."""
    register(toy_record())
    yield STRATEGIES[NAME]
    unregister(NAME)
    assert NAME not in STRATEGIES


# --8<-- [start:exact]
@settings(max_examples=40)
@given(problem=groups(max_members=3, max_partitions=3))
def test_its_backend_is_exact_and_its_heuristic_valid(problem):
    """Tests the toy's two runners through models.solve: the CP-SAT backend's proven optimum is the
    best of every partition-to-member map, and the heuristic's answer is valid and no better."""
    register(toy_record())
    try:
        exact = models.solve(problem, NAME, "cpsat")
        greedy = models.solve(problem, NAME)
    finally:
        unregister(NAME)
    assert exact.status == "optimal" and exact.valid
    assert tuple(exact.objective) == exhaustive.optimum(problem, "sticky")
    assert greedy.valid and exact.objective <= greedy.objective


# --8<-- [end:exact]


def test_assign_runs_its_heuristic_and_its_exact_backend(toy, capsys):
    """Tests `assign` with the toy's heuristic (a valid answer, judged on sticky) and its CP-SAT
    backend (proven optimal, the optimum the sticky flow proves)."""
    problem = load_problem(GROUP)
    assert main(["assign", "--strategy", NAME, str(GROUP)]) == 0
    out, err = capsys.readouterr()
    answer = json.loads(out)
    owner = owner_from_assignment(problem, answer["assignment"])
    assert answer["status"] == "heuristic" and err.startswith(f"{NAME}/heuristic: heuristic")
    assert answer["objective"] == list(evaluate(problem, owner, "sticky").objective)
    assert main(["assign", "--strategy", NAME, "--solver", "cpsat", str(GROUP)]) == 0
    out, err = capsys.readouterr()
    exact = json.loads(out)
    assert exact["status"] == "optimal" and err.startswith(f"{NAME}/cpsat: optimal")
    assert exact["objective"] == models.solve(problem, "sticky", "flow").objective
    assert exact["objective"] <= answer["objective"]


def test_trace_runs_it_through_every_rebalance(toy, capsys):
    """Tests `trace` with the toy's heuristic and its exact backend: one line per step, every step's
    answer valid, the exact one proven at every step and never worse than the heuristic's."""
    runs = {}
    for solver in ("heuristic", "cpsat"):
        assert main(["trace", "--strategy", NAME, "--solver", solver, str(TRACE)]) == 0
        out = capsys.readouterr().out
        *steps, summary = [json.loads(line) for line in out.splitlines()]
        assert [s["step"] for s in steps] == list(range(len(TRACE_STEPS) + 1))
        assert summary["summary"]["steps"] == len(TRACE_STEPS)
        assert summary["summary"]["status"] == ("heuristic" if solver == "heuristic" else "optimal")
        runs[solver] = steps
    assert {s["status"] for s in runs["heuristic"]} == {"heuristic"}
    assert {s["status"] for s in runs["cpsat"]} == {"optimal"}
    for mine, best in zip(runs["heuristic"], runs["cpsat"]):
        assert best["objective"] <= mine["objective"]


def test_compare_report_and_gate_judge_it_like_the_products_own(toy, tmp_path, capsys):
    """Tests `compare --suite smoke` on local Spark (the toy on the executors; its first two
    scenarios, the sticky ones), `report` on its rows and `gate --suite smoke` (its baseline
    written, then met): the toy is compared on the sticky scenarios, valid, and named by its record
    in the headline, the report and the gate's baseline."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT)]),
        "REBALANCE_LAB_SPARK_MASTER": "local[2]",
    }
    out = tmp_path / "out"
    command = [sys.executable, "-c", CLI, "compare", "--suite", "smoke", "--out", str(out)]
    done = subprocess.run(
        [*command, "--no-progress", "--run-id", "toy", "--limit", "2"],  # the 2 sticky scenarios
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert DISPLAY in done.stdout
    folder = out / "results" / "suite=smoke" / "run_id=toy"
    rows = pd.concat(pd.read_parquet(path) for path in sorted(folder.glob("*.parquet")))
    mine = rows[rows["strategy"] == NAME]
    sticky = rows[rows["judged_on"] == "sticky"]
    assert set(mine["scenario_id"]) == set(sticky["scenario_id"]) and len(mine) == 2
    assert mine["valid"].astype(bool).all()
    assert set(rows[rows["judged_on"] != "sticky"]["strategy"]) & {NAME} == set()

    report = ["report", str(folder), "--out", str(tmp_path / "report"), "--format", "markdown"]
    assert main(report) == 0
    capsys.readouterr()
    markdown = "\n".join(p.read_text() for p in (tmp_path / "report").rglob("*.md"))
    assert DISPLAY in markdown

    baseline = tmp_path / "gate.json"
    gate = ["gate", "--suite", "smoke", "--baseline", str(baseline), "--no-progress"]
    assert main([*gate, "--update", "--processes", "2"]) == 0
    recorded = json.loads(baseline.read_text())
    assert any(key.endswith(f"/{NAME}") for key in recorded["heuristics"]), recorded.keys()
    assert main([*gate, "--processes", "1"]) == 0
    assert "not in the baseline" not in capsys.readouterr().err


def test_no_product_file_names_it():
    """Tests that the toy needed no product edit: its record names its own two modules (in the test
    tree), and no module of the five packages mentions it."""
    record = toy_record()
    loaded = {record.heuristic.load().module.__name__, record.exact["cpsat"].load().__name__}
    assert loaded == {"support.toy_heuristic", "support.toy_cpsat"}
    packages = ("problems", "heuristics", "models", "clients", "experiments")
    names = (NAME, "toy_strategy", "toy_heuristic", "toy_cpsat")
    naming = [
        path
        for package in packages
        for path in (ROOT / package).rglob("*")
        if path.suffix in (".py", ".toml") and any(n in path.read_text() for n in names)
    ]
    assert naming == []
