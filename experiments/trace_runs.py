"""Solving trace scenarios in plain pandas: what the Spark job maps over for traces.

For each trace scenario (:class:`experiments.trace_scenarios.TraceScenario`): build its trace
document, then run through it every heuristic judged on the scenario's strategy (the Kafka
baselines and the strategy's variants, as :func:`experiments.runs.runs_for` lists them), each step
fed the previous step's answer as the members' claims (:func:`models.trace.trace`), and the
strategy's two exact references: ``step`` (each step optimal alone) and ``horizon`` (every step at
its optimum of the levels above moves, then the fewest moves over the whole trace).  Each run gives
one row per step and one per trace (``step`` missing): the step's levels, judged on the scenario's
strategy, and its trace moves; the trace's total moves, the sums of its levels, its status, a
proven lower bound on its total moves (``moves_bound``) and its runtime.  A run that fails is one
per-trace row saying so (status ``error``, or ``unknown`` when a model refuses the instance), never
a failed job.  Free of Spark, so it runs and is tested in a plain Python process.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pandas as pd

from experiments.results import ALL_COLUMNS
from experiments.runs import _describe, _peak_rss_mb, base_row, run_row, runs_for, solve_each
from experiments.trace_scenarios import RECORDED, TraceScenario, build_trace, trace_size
from models.registry import STRATEGIES
from models.trace.observed import ROW, SOURCE
from problems import LEVELS, ProblemError, evaluate

#: The exact references of a trace run: each step optimal alone, and the horizon optimum.
EXACT_TRACE_SOLVERS = ("step", "horizon")


def trace_runs_for(judged_on: str, settings: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    """The (strategy, variant, solver) runs of a trace judged on ``judged_on``: its heuristics, then
    ``step`` and ``horizon``, less what an experiment's ``strategies`` and ``solvers`` leave out."""
    runs = [run for run in runs_for(judged_on) if run[2] == "heuristic"]
    runs += [(judged_on, None, solver) for solver in EXACT_TRACE_SOLVERS]
    strategies, solvers = settings.get("strategies"), settings.get("solvers")
    return [
        (strategy, variant, solver)
        for strategy, variant, solver in runs
        if (strategies is None or strategy in strategies) and (solvers is None or solver in solvers)
    ]


def _base(scenario: TraceScenario, time_limit: float, options: dict[str, Any]) -> dict[str, Any]:
    return {
        **base_row(scenario, time_limit, options),
        "trace": scenario.trace,
        "steps": scenario.steps,
    }


def solve_trace_scenario(scenario: TraceScenario, time_limit: float) -> list[dict[str, Any]]:
    """Every run of ``scenario``: per (strategy, variant, solver), one row per step and one per trace.

    An experiment's settings (:attr:`TraceScenario.settings`) choose the runs, their time limit
    and solver options, as for a single rebalance.
    """
    from problems.trace import MAX_TRACE_SIZE, load_trace

    settings = json.loads(scenario.settings) if scenario.settings else {}
    time_limit = float(settings.get("time_limit", time_limit))
    solver_options = settings.get("options", {})
    base = _base(scenario, time_limit, solver_options)
    try:
        # the experiment reader held the trace to the command's --max-size (the same measure)
        accepted = max(MAX_TRACE_SIZE, trace_size(scenario)[0])
        trace = load_trace(build_trace(scenario), name=scenario.scenario_id, max_size=accepted)
        refused = ""
    except ProblemError as error:  # beyond the trace reader's limits: each run a row saying so
        trace, refused = None, f"refused: {error}"
    rows: list[dict[str, Any]] = []
    for strategy, variant, solver in trace_runs_for(scenario.judged_on, settings):
        run = run_row(base, strategy, variant, solver)
        if trace is None:
            rows.append({**run, "status": "unknown", "valid": False, "error": refused})
            continue
        rows.extend(_run_rows(trace, scenario, run, time_limit, solver_options.get(solver, {})))
    if scenario.trace == RECORDED:
        observed = {**base, "strategy": ROW, "variant": "", "solver": SOURCE, "role": ROW}
        if trace is None:
            rows.append({**observed, "status": "unknown", "valid": False, "error": refused})
        else:
            rows.extend(_observed_rows(trace, scenario, observed))
    return rows


def _observed_rows(
    trace: Any, scenario: TraceScenario, run: dict[str, Any]
) -> list[dict[str, Any]]:
    """The rows of a recorded trace's ``observed`` run (:func:`models.trace.observed.observed_run`):
    what the members held at each step, judged on the scenario's strategy, with the recording's
    rounds and settle times; then the trace's totals."""
    from models.trace.observed import measured_total, observed_run

    try:
        started = time.perf_counter()
        result = observed_run(trace, scenario.judged_on)
        runtime = time.perf_counter() - started
    except ProblemError as error:
        return [{**run, "status": "unknown", "valid": False, "error": f"refused: {error}"}]
    steps = []
    for step in result.steps:
        evaluation = None if step.result is None else step.result.evaluation
        steps.append(
            {
                **run,
                "step": int(step.step),
                "status": str(step.status),
                "valid": evaluation is not None and bool(evaluation.valid),
                "runtime_s": 0.0,
                "moves": int(step.moves),
                "rounds": step.info.get("rounds"),
                "settle_ms": step.info.get("settle_ms"),
                "unowned_partition_ms": step.info.get("unowned_partition_ms"),
                **{f"level{i}": int(v) for i, v in enumerate(step.objective[:LEVELS], start=1)},
            }
        )
    measured = {
        "rounds": _sum_rounds(steps),
        "settle_ms": measured_total(result, "settle_ms"),
        "unowned_partition_ms": measured_total(result, "unowned_partition_ms"),
    }
    return [*steps, _total_row(run, result, steps, runtime, measured)]


def _run_rows(
    trace: Any,
    scenario: TraceScenario,
    run: dict[str, Any],
    time_limit: float,
    options: dict[str, Any],
) -> list[dict[str, Any]]:
    """The rows of one run through the trace: its steps, then the trace."""
    from models.trace import trace as solve_trace

    strategy, solver = run["strategy"], run["solver"]
    extra = {"variant": run["variant"]} if run["variant"] else {}
    try:
        started = time.perf_counter()
        result = solve_trace(
            trace,
            strategy,
            solver,
            time_limit=time_limit,
            **{"workers": 1, "seed": 0, **options, **extra},
        )
        runtime = time.perf_counter() - started
        steps = _step_rows(trace, scenario, run, result.steps)
    except ProblemError as error:  # a model refusing the instance (too large, out of range)
        return [{**run, "status": "unknown", "valid": False, "error": f"refused: {error}"}]
    except Exception as error:  # a crashing run is a row, not a failed job
        return [{**run, "status": "error", "valid": False, "error": _describe(error)}]
    measured = {
        "moves_bound": None if result.bound is None else int(result.bound),
        "rounds": _sum_rounds(steps),
    }
    return [*steps, _total_row(run, result, steps, runtime, measured)]


def _total_row(
    run: dict[str, Any],
    result: Any,
    steps: list[dict[str, Any]],
    runtime: float,
    measured: dict[str, Any],
) -> dict[str, Any]:
    """The trace's row of a run after its ``steps`` rows: its status and moves, valid when every
    step is, its time and peak memory, then what else it ``measured``, then the step levels
    summed."""
    return {
        **run,
        "status": str(result.status),
        "valid": all(row["valid"] for row in steps),
        "runtime_s": runtime,
        "peak_rss_mb": _peak_rss_mb(),
        "moves": int(result.moves),
        **measured,
        **_summed_levels(steps),
    }


def _sum_rounds(steps: list[dict[str, Any]]) -> int | None:
    rounds = [row["rounds"] for row in steps if row.get("rounds") is not None]
    return sum(rounds) if rounds else None


def _step_rows(
    trace: Any, scenario: TraceScenario, run: dict[str, Any], steps: list[Any]
) -> list[dict[str, Any]]:
    """One row per step of a run: its levels judged on the scenario's strategy, its trace moves."""
    rows = []
    for step in steps:
        levels, valid = _judged(scenario, run["strategy"], step)
        rows.append(
            {
                **run,
                "step": int(step.step),
                "status": str(step.status),
                "valid": valid,
                "runtime_s": float(step.runtime),
                "moves": int(step.moves),
                "rounds": None if step.rounds is None else int(step.rounds),
                **{f"level{i}": v for i, v in enumerate(levels[:LEVELS], start=1)},
            }
        )
    return rows


def _judged(scenario: TraceScenario, strategy: str, step: Any) -> tuple[list[int], bool]:
    """A step's levels and validity on the scenario's strategy: the step's own, re-scored where the
    strategy is judged on another objective than its own (range on lag-aware or stream-join)."""
    result = step.result
    if result is None or result.answer is None:
        return [], False
    problem = result.problem
    judged = STRATEGIES[scenario.judged_on].objective_on(problem)
    if STRATEGIES[strategy].objective_on(problem) == judged:
        return [int(v) for v in step.objective], bool(result.valid)
    verdict = evaluate(problem, result.answer, judged)
    return [int(v) for v in verdict.objective], bool(verdict.valid)


# ------------------------------------------------------------------------ frames
def trace_frame(scenarios: list[TraceScenario]) -> pd.DataFrame:
    """Trace scenarios as a DataFrame, one row each (the fields of :class:`TraceScenario`)."""
    fields = TraceScenario.__dataclass_fields__
    return pd.DataFrame([{k: getattr(s, k) for k in fields} for s in scenarios])


def solve_trace_frame(
    frame: pd.DataFrame, time_limit: float, progress: str | None = None, processes: int = 1
) -> pd.DataFrame:
    """Solve every trace scenario row of ``frame`` (columns of :class:`TraceScenario`), as
    :func:`experiments.runs.solve_frame` does scenarios; rows typed as :data:`ALL_COLUMNS`."""
    fields = TraceScenario.__dataclass_fields__
    scenarios = [TraceScenario(**{k: r[k] for k in fields}) for r in frame.to_dict("records")]
    return solve_each(
        solve_trace_scenario, scenarios, time_limit, ALL_COLUMNS, progress, processes, "trace"
    )


def _summed_levels(steps: list[dict[str, Any]]) -> dict[str, Any]:
    """Each ``level<i>`` summed over the trace's step rows, where every step has it."""
    summed: dict[str, Any] = {}
    for i in range(1, LEVELS + 1):
        values = [row.get(f"level{i}") for row in steps]
        if values and all(v is not None for v in values):
            summed[f"level{i}"] = sum(values)
    return summed
