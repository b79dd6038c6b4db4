"""Tests of models/trace/runner.py: a strategy run through a trace, every step re-scored, moves recounted."""

from __future__ import annotations

import json
import random
import sys
import time
import types
from pathlib import Path

import pytest

import models
from models.registry import STRATEGIES, UsageError, strategies
from models.trace import TraceResult
from problems import ProblemError, evaluate, load_problem
from problems.trace import load_trace, next_document, placement_trace_moves, trace_moves

ROOT = Path(__file__).parents[2]
EXAMPLES = sorted((ROOT / "examples" / "traces").glob("*.json"))
SMALL = {
    "kind": "group-trace",
    "problem": {
        "topics": {"t0": 12},
        "members": [{"id": "c0", "topics": ["t0"]}, {"id": "c1", "topics": ["t0"]}],
    },
    "steps": [
        {"join": [{"id": "c2", "topics": ["t0"]}]},
        {"leave": ["c0"]},
        {"restart": ["c1"]},
    ],
}


def recount(trace, result: TraceResult) -> None:
    """Every step's objective re-scored on next_document of the printed previous answer, and its
    moves recounted from the printed assignments; the summary is the steps' sums."""
    previous = None
    for step in result.steps:
        assert step.assignment is not None
        problem = load_problem(next_document(trace, step.step, previous))
        scored = evaluate(
            problem, step.result.answer, STRATEGIES[result.strategy].objective_on(problem)
        )
        assert scored.valid, scored.violations
        assert tuple(scored.objective) == step.objective
        moves = trace_moves if not trace.is_placement else placement_trace_moves
        assert step.moves == (0 if previous is None else moves(previous, step.assignment))
        previous = step.assignment
    assert result.moves == sum(step.moves for step in result.steps)
    if result.objective_sums:
        sums = [sum(levels) for levels in zip(*(step.objective for step in result.steps))]
        assert list(result.objective_sums) == sums
    summary = result.summary()
    assert summary["steps"] == len(trace.steps) and summary["moves"] == result.moves


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_heuristic_through_every_example(path):
    """Tests every strategy of the trace's family with its heuristic: answers re-scored, moves recounted."""
    trace = load_trace(path)
    for strategy in strategies("placement" if trace.is_placement else "group"):
        result = models.trace(trace, strategy)
        assert result.status == "heuristic" and len(result.steps) == len(trace)
        recount(trace, result)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_the_per_step_optimum_through_every_example(path):
    """Tests --solver step: optimal at every step, never worse than the heuristic on level 1."""
    trace = load_trace(path)
    for strategy in strategies("placement" if trace.is_placement else "group"):
        exact = models.trace(trace, strategy, "step", time_limit=30)
        assert exact.status == "optimal", [s.status for s in exact.steps]
        recount(trace, exact)
        heuristic = models.trace(trace, strategy)
        for ours, theirs in zip(exact.steps, heuristic.steps):  # level 1 ignores the claims
            assert ours.objective[0] <= theirs.objective[0], (strategy, ours.step)


def test_the_small_trace_by_hand():
    """Tests sticky's moves on a trace checked by hand: a join takes 4, a leave moves the leaver's
    6, a restarted dynamic member is given its partitions back."""
    result = models.trace(SMALL, "sticky")
    assert [step.moves for step in result.steps] == [0, 4, 4, 0]
    assert result.steps[1].objective == (48, 4)
    assert result.summary() == {
        "steps": 3,
        "moves": 8,
        "objective_sums": [72 + 48 + 72 + 72, 4 + 0 + 0 + 0],
        "status": "heuristic",
    }
    # The step solver is the flow's optimum; sticky is optimal here at every step.
    assert [s.objective for s in models.trace(SMALL, "sticky", "step").steps] == [
        s.objective for s in result.steps
    ]


def test_cooperative_sticky_reports_its_rounds_and_pending_partitions():
    """Tests that a join takes two rounds (revoke, then assign), the step's assignment is the
    completed one and pending lists what the new member gets in the follow-up round."""
    result = models.trace(SMALL, "cooperative-sticky")
    join = result.steps[1]
    assert join.rounds == 2
    assert join.pending["c2"] == join.assignment["c2"] and len(join.assignment["c2"]["t0"]) == 4
    assert join.pending["c0"] == {} and join.pending["c1"] == {}
    assert [step.rounds for step in result.steps] == [1, 2, 1, 1]
    lines = list(result.lines())
    assert lines[1]["rounds"] == 2 and lines[1]["pending"] == join.pending
    assert "rounds" not in next(models.trace(SMALL, "sticky").lines())


def test_server_assignors_get_their_previous_target_as_the_input():
    """Tests that uniform's step input claims are exactly the previous step's answer."""
    result = models.trace(SMALL, "uniform")
    for before, after in zip(result.steps, result.steps[1:]):
        problem = after.result.problem
        claims = {problem.members[m]: [] for m in range(problem.num_members)}
        members, partitions = problem.owned_claims
        for m, g in zip(members.tolist(), partitions.tolist()):
            claims[problem.members[m]].append(int(problem.partition_index[g]))
        for member, topics in before.assignment.items():
            if member in claims and not (after.step == 3 and member == "c1"):
                assert claims[member] == topics.get("t0", [])
        if after.step == 3:  # c1 restarted (dynamic): a new member, no claims
            assert claims["c1"] == []


def test_static_members_keep_their_partitions_through_a_rolling_restart():
    """Tests that range keeps every partition in place through restarts of static members."""
    result = models.trace(ROOT / "examples/traces/rolling-restart-static.json", "range")
    assert result.moves == 0
    problem = result.steps[1].result.problem
    assert problem.has_generation == (True,) * problem.num_members


def test_usage_errors():
    """Tests an unknown solver, a lookahead without the horizon, a strategy of the other family."""
    with pytest.raises(UsageError, match="--solver nope is not a solver of a trace"):
        models.trace(SMALL, "sticky", "nope")
    with pytest.raises(UsageError, match="--lookahead is an option of --solver horizon"):
        models.trace(SMALL, "sticky", "flow", lookahead=2)
    with pytest.raises(UsageError, match="not available for --strategy range"):
        models.trace(SMALL, "range", "cpsat")
    with pytest.raises(ProblemError, match="a group-trace needs a group strategy"):
        models.trace(SMALL, "kafka-default")
    with pytest.raises(UsageError, match="--variant nope is not a variant of --strategy sticky"):
        models.trace(SMALL, "sticky", "step", variant="nope")
    # A heuristic's variant names the strategy; the per-step optimum is the objective's.
    step = models.trace(SMALL, "sticky", "step", variant="kafka-9987")
    assert step.status == "optimal" and step.steps[1].info["backend"] == "sticky/flow"


def test_the_horizon_answer_is_rescored_and_its_moves_counted_here(monkeypatch):
    """Tests the horizon route with a stand-in solver: the steps are re-scored, moves recounted,
    the status and bound passed on."""
    heuristic = models.trace(SMALL, "sticky")
    calls = []

    def solve_horizon(trace, strategy, options, lookahead=None):
        calls.append((strategy, options.time_limit, lookahead))
        return types.SimpleNamespace(
            assignments=[step.assignment for step in heuristic.steps],
            status="feasible",
            bound=5,
            info={"nodes": 3},
        )

    module = types.ModuleType("models.horizon.horizon")
    module.solve_horizon = solve_horizon
    monkeypatch.setitem(sys.modules, "models.horizon.horizon", module)
    result = models.trace(SMALL, "sticky", "horizon", time_limit=7)
    assert calls == [("sticky", 7.0, None)]
    assert [s.objective for s in result.steps] == [s.objective for s in heuristic.steps]
    assert [s.moves for s in result.steps] == [s.moves for s in heuristic.steps]
    assert result.status == "feasible" and result.bound == 5
    assert result.summary()["bound"] == 5 and result.info["nodes"] == 3
    ahead = models.trace(SMALL, "sticky", lookahead=1)
    assert calls[-1] == ("sticky", 10.0, 1) and ahead.solver == "lookahead=1"


def test_a_horizon_without_an_answer_gives_steps_without_answers(monkeypatch):
    """Tests that an infeasible horizon answer (no assignments) is every step without an answer."""
    module = types.ModuleType("models.horizon.horizon")
    module.solve_horizon = lambda trace, strategy, options, lookahead=None: types.SimpleNamespace(
        assignments=[], status="infeasible", bound=None, info={}
    )
    monkeypatch.setitem(sys.modules, "models.horizon.horizon", module)
    result = models.trace(SMALL, "sticky", "horizon")
    assert result.status == "infeasible" and result.moves == 0 and result.objective_sums == ()
    assert all(s.assignment is None and s.objective == () for s in result.steps)
    assert next(result.lines())["assignment"] is None


def test_a_lookahead_with_any_solver_but_the_horizon_is_refused():
    """Tests that ``lookahead`` implies the horizon only when no solver is named: an explicit
    ``heuristic`` (or any per-step solver) with a lookahead is a usage error, not a silent
    switch to the lookahead policy."""
    for solver in ("heuristic", "cpsat", "step"):
        with pytest.raises(UsageError, match=f"option of --solver horizon, not {solver}"):
            models.trace(SMALL, "sticky", solver, lookahead=1)
    assert models.trace(SMALL, "sticky", lookahead=1).solver == "lookahead=1"
    assert models.trace(SMALL, "sticky").solver == "heuristic"


def test_each_step_is_handed_on_as_soon_as_it_is_solved(monkeypatch):
    """Tests ``on_step``: step ``k`` is handed on before step ``k + 1`` is solved, and a run that
    does not keep answers keeps no step's answer."""
    module = sys.modules["models.trace.runner"]

    handed: list[int] = []
    seen_when_solving: list[list[int]] = []
    real_run = module.run

    def run(problem, strategy, solver, options):
        seen_when_solving.append(list(handed))
        return real_run(problem, strategy, solver, options)

    monkeypatch.setattr(module, "run", run)
    result = models.trace(
        SMALL, "sticky", on_step=lambda step: handed.append(step.step), keep_answers=False
    )
    assert seen_when_solving == [[], [0], [0, 1], [0, 1, 2]]
    assert handed == [0, 1, 2, 3]
    assert all(step.result is None for step in result.steps)
    kept = models.trace(SMALL, "sticky")
    assert result.summary() == kept.summary()
    assert [s.objective for s in result.steps] == [s.objective for s in kept.steps]


def test_the_time_limit_is_one_budget_for_the_whole_trace(monkeypatch):
    """Tests that every step's exact solve gets the time left of one budget, and that the steps
    past it are not solved (``unknown``, no answer, named) instead of each getting the limit."""
    module = sys.modules["models.trace.runner"]

    limits: list[float] = []
    real_run = module.run

    def slow_run(problem, strategy, solver, options):
        limits.append(options.time_limit)
        time.sleep(0.2)
        return real_run(problem, strategy, solver, options)

    monkeypatch.setattr(module, "run", slow_run)
    doc = {**SMALL, "steps": [{"restart": ["c1"]}] * 12}
    started = time.perf_counter()
    result = models.trace(doc, "sticky", "flow", time_limit=0.5)
    elapsed = time.perf_counter() - started
    assert elapsed < 0.5 + 0.2 + 1.0
    assert 1 <= len(limits) <= 3 and limits[0] <= 0.5
    assert all(later < earlier for earlier, later in zip(limits, limits[1:]))
    late = result.steps[len(limits) :]
    assert late and all(s.status == "unknown" and s.info["not_solved"] for s in late)
    assert all(s.result is None and s.assignment is None for s in late)
    assert result.status == "unknown" and len(result.steps) == 13
    # The heuristics take no time limit: every step is solved.
    assert models.trace(doc, "sticky", time_limit=0.01).status == "heuristic"


def test_the_horizon_keeps_the_time_limit_of_the_whole_trace():
    """Tests the lag-aware horizon (the steps' levels by CP-SAT, then the horizon model) within
    its one budget: 600 partitions x 20 members x 9 rebalances took 40 s with a 1 s limit when
    each step's solve and the model each had the limit."""
    rng = random.Random(3)
    lags = lambda: [rng.randrange(0, 100_000) for _ in range(600)]  # noqa: E731
    members = [{"id": f"c{i}", "topics": ["t0"]} for i in range(20)]
    doc = {
        "kind": "group-trace",
        "problem": {"topics": {"t0": 600}, "members": members, "lags": {"t0": lags()}},
        "steps": [{"lags": {"t0": lags()}} for _ in range(8)],
    }
    trace = load_trace(doc)
    started = time.perf_counter()
    result = models.trace(trace, "lag-aware", "horizon", time_limit=1)
    assert time.perf_counter() - started < 1 + 8
    assert result.status == "feasible" and all(s.assignment is not None for s in result.steps)
    recount(trace, result)


def test_a_horizon_refusal_names_the_trace_file(tmp_path):
    """Tests that a strategy without a horizon model is refused naming the trace's file."""
    path = tmp_path / "small.json"
    path.write_text(json.dumps(SMALL))
    with pytest.raises(ProblemError) as caught:
        models.trace(path, "share", "horizon")
    assert str(caught.value).startswith(f"{path}: strategy: share")


def test_the_horizon_holds_every_step_so_its_size_is_bounded_lower():
    """Tests the horizon's own size limit (it holds every step at once), and ``max_size``."""
    doc = {**SMALL, "problem": {**SMALL["problem"], "topics": {"t0": 3_000_000}}}
    trace = load_trace(doc)
    with pytest.raises(ProblemError, match="above the horizon solver's limit of 10,000,000"):
        models.trace(trace, "sticky", "horizon")
    with pytest.raises(ProblemError, match="12,000,000 partitions .* limit of 1,000"):
        models.trace(trace, "sticky", "heuristic", max_size=1000)
