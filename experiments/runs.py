"""Solving scenarios in plain pandas: what the Spark job maps over.

For each scenario row: build the problem, run every heuristic judged on the
scenario's strategy (``judged_on``; its named variants too) and every exact
solver of that strategy, with a time limit and one CP-SAT worker, and re-score every answer
with :func:`problems.evaluate`.  A solver that crashes or runs out of time
yields a row saying so (status ``error`` / ``unknown``), never a failed job.
Free of Spark, so it runs and is tested in a plain Python process.
"""

from __future__ import annotations

import json
import multiprocessing
import resource
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from importlib import metadata
from itertools import repeat
from typing import Any

import pandas as pd
from tqdm import tqdm

from experiments.experiment_plugins import plugin_rows
from experiments.scenarios import SUITE_VERSION, Scenario, build_problem, scenario_problem
from models import frontier, solve
from models.registry import STRATEGIES, compared_on, register, registered
from problems import LEVELS, OBJECTIVES, PlacementProblem, ProblemError, evaluate

#: Exact solvers' time limit per suite (seconds per solver and scenario).
TIME_LIMITS = {"smoke": 2.0, "gate": 5.0, "default": 10.0, "scale": 60.0}
#: Placements up to this many partitions also get the exact moves/quality frontier
#: (best levels 1-3 within k moves, k = 0 .. forced moves + FRONTIER_MOVES), one row per k
#: (role ``frontier``; ``infeasible`` below the moves that removed brokers force), within one
#: budget of the suite's time limit per point.
FRONTIER_PARTITIONS = 12
FRONTIER_MOVES = 4
SCENARIO_COLUMNS = {
    "scenario_id": "string",
    "family": "string",
    "judged_on": "string",
    "churn": "string",
    "pattern": "string",
    "lags": "string",
    "topology": "string",
    "assignor": "string",
    "partitions": "int64",
    "members": "int64",
    "topics": "int64",
    "replication": "int64",
    "size": "int64",
    "seed": "int64",
}
RESULT_COLUMNS = {
    **SCENARIO_COLUMNS,
    "strategy": "string",
    "variant": "string",
    "solver": "string",
    "role": "string",
    "status": "string",
    "valid": "bool",
    **{f"level{i}": "Int64" for i in range(1, LEVELS + 1)},
    **{f"bound{i}": "Int64" for i in range(1, LEVELS + 1)},
    "runtime_s": "float64",
    "peak_rss_mb": "float64",
    "time_limit_s": "float64",
    "options": "string",
    "suite_version": "int64",
    "versions": "string",
    "error": "string",
    "experiment": "string",
    "experiment_digest": "string",
}


def _versions() -> str:
    names = ("rebalance-lab", "ortools", "pulp", "numpy")
    found: dict[str, str | None] = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return json.dumps(found, sort_keys=True)


VERSIONS = _versions()


def runs_for(strategy: str) -> list[tuple[str, str | None, str]]:
    """The (strategy, variant, solver) runs judged on ``strategy``'s objective.

    From :data:`models.registry.STRATEGIES`: the heuristics of its baselines, then of the
    strategies compared on its scenarios (:attr:`models.registry.Strategy.compared_on`), the
    strategy's heuristic with each of its variants, and each exact backend.
    """
    entry = STRATEGIES[strategy]
    others = [*entry.baselines, *compared_on(strategy)]
    runs: list[tuple[str, str | None, str]] = [
        (other, None, "heuristic") for other in dict.fromkeys(others)
    ]
    runs += [(strategy, variant, "heuristic") for variant in entry.heuristic.variants]
    runs += [(strategy, None, backend) for backend in entry.exact]
    return runs


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def selected_runs(judged_on: str, settings: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    """:func:`runs_for` less what an experiment's ``strategies`` and ``solvers`` leave out.

    ``strategies`` selects the heuristic runs; the exact runs (the judged-on strategy's reference)
    are selected by ``solvers`` alone, so a block that names a few heuristics keeps its reference.
    """
    strategies, solvers = settings.get("strategies"), settings.get("solvers")
    return [
        (strategy, variant, solver)
        for strategy, variant, solver in runs_for(judged_on)
        if (strategies is None or strategy in strategies or solver != "heuristic")
        and (solvers is None or solver in solvers)
    ]


def base_row(scenario: Any, time_limit: float, options: dict[str, Any]) -> dict[str, Any]:
    """The columns every row of ``scenario`` (a :class:`Scenario` or a trace scenario) holds: its
    own, its id and size, the suite's and the libraries' versions, its time limit and the solver
    options it is run with."""
    base = {k: getattr(scenario, k, None) for k in SCENARIO_COLUMNS if k != "scenario_id"}
    base.update(
        scenario_id=scenario.scenario_id,
        size=scenario.size,
        suite_version=SUITE_VERSION,
        versions=VERSIONS,
        time_limit_s=time_limit,
        options=json.dumps(options, sort_keys=True) if options else "",
    )
    return base


def run_row(
    base: dict[str, Any], strategy: str, variant: str | None, solver: str
) -> dict[str, Any]:
    """``base`` (:func:`base_row`) with the columns naming one run: its strategy, variant (``""``
    for none), solver and role (``heuristic`` or ``exact``)."""
    return {
        **base,
        "strategy": strategy,
        "variant": variant or "",
        "solver": solver,
        "role": "heuristic" if solver == "heuristic" else "exact",
    }


def solve_scenario(
    scenario: Scenario, time_limit: float, plugin_logs: str | None = None
) -> list[dict[str, Any]]:
    """Every run of ``scenario``: one row per (strategy, variant, solver).

    An experiment's settings (:attr:`Scenario.settings`) choose the runs, their time limit and
    solver options, and add the researcher's plugins (:mod:`experiments.experiment_plugins`),
    each in its own process, its stderr kept in ``plugin_logs`` (a folder).
    """
    settings = json.loads(scenario.settings) if scenario.settings else {}
    time_limit = float(settings.get("time_limit", time_limit))
    solver_options = settings.get("options", {})
    base = base_row(scenario, time_limit, solver_options)
    problem = scenario_problem(scenario)
    judge = STRATEGIES[scenario.judged_on]
    names = OBJECTIVES[judge.objective]
    rows = []
    for strategy, variant, solver in selected_runs(scenario.judged_on, settings):
        row = run_row(base, strategy, variant, solver)
        try:  # the runners that cannot use a time limit (heuristics, flows) ignore it
            started = time.perf_counter()
            options = {"workers": 1, "seed": 0, **solver_options.get(solver, {})}
            result = solve(
                problem, strategy, solver, variant=variant, time_limit=time_limit, **options
            )
            row["runtime_s"] = time.perf_counter() - started
            row["peak_rss_mb"] = _peak_rss_mb()
            row["status"] = str(result.status)
            row["valid"] = False
            if result.answer is not None:
                # Judged on the scenario's strategy (range on sticky, kafka-default on
                # sticky-replica, ...).
                verdict = evaluate(problem, result.answer, judge.objective_on(problem))
                row["valid"] = verdict.valid
                for i, value in enumerate(verdict.objective[:LEVELS], start=1):
                    row[f"level{i}"] = value
            for i, value in enumerate((result.bound or ())[: len(names)], start=1):
                row[f"bound{i}"] = value
        except ProblemError as error:  # a model refusing the instance (too large, out of range)
            row.update(status="unknown", valid=False, error=f"refused: {error}")
        except Exception as error:  # a crashing solver is a row, not a failed job
            row.update(status="error", valid=False, error=_describe(error))
        rows.append(row)
    if settings.get("plugins"):
        rows.extend(
            plugin_rows(
                problem,
                scenario.judged_on,
                settings["plugins"],
                base,
                document=build_problem(scenario),
                logs=plugin_logs,
            )
        )
    frontier_wanted = settings.get("solvers") is None or "cpsat" in settings["solvers"]
    if (
        isinstance(problem, PlacementProblem)
        and scenario.partitions <= FRONTIER_PARTITIONS
        and frontier_wanted
    ):
        rows.extend(_frontier_rows(problem, scenario.judged_on, base, time_limit))
    return rows


def _frontier_rows(
    problem: PlacementProblem, strategy: str, base: dict[str, Any], time_limit: float
) -> list[dict[str, Any]]:
    """The exact moves/quality frontier of ``strategy``'s CP-SAT model (the scenario's; PR 18903's
    open question (b) for ``sticky-replica``), one row per move budget k."""
    row = {**base, "strategy": strategy, "solver": "cpsat", "role": "frontier"}
    try:
        started = time.perf_counter()
        forced = int((problem.replica_positions < 0).sum())  # replicas on removed brokers must move
        last = forced + FRONTIER_MOVES  # time_limit per point, as one budget for the whole frontier
        points = frontier(
            problem,
            strategy,
            "cpsat",
            last,
            time_limit=time_limit * (last + 1),
            workers=1,
            seed=0,
        )
        runtime = (time.perf_counter() - started) / max(len(points), 1)
    except Exception as error:  # a crashing solver is a row, not a failed job
        return [
            {
                **row,
                "variant": "frontier",
                "status": "error",
                "valid": False,
                "error": _describe(error),
            }
        ]
    rows = []
    for k, point in enumerate(points):
        levels = point.objective if point.answer is not None else []
        rows.append(
            {
                **row,
                "variant": f"k={k}",
                "status": str(point.status),
                "valid": point.valid,
                "runtime_s": runtime,
                **{f"level{i}": v for i, v in enumerate(levels[:LEVELS], start=1)},
                **{f"bound{i}": v for i, v in enumerate((point.bound or ())[:LEVELS], start=1)},
            }
        )
    return rows


def _describe(error: Exception) -> str:
    last = traceback.extract_tb(error.__traceback__)[-1]
    return f"{type(error).__name__}: {error} ({last.filename.rsplit('/', 1)[-1]}:{last.lineno})"


def scenario_frame(scenarios: list[Scenario]) -> pd.DataFrame:
    """Scenarios as a DataFrame, one row each (the fields of :class:`Scenario`): what :func:`solve_frame` takes."""
    return pd.DataFrame(
        [{k: getattr(s, k) for k in Scenario.__dataclass_fields__} for s in scenarios]
    )


def solve_frame(
    frame: pd.DataFrame,
    time_limit: float,
    progress: str | None = None,
    processes: int = 1,
    plugin_logs: str | None = None,
) -> pd.DataFrame:
    """Solve every scenario row of ``frame`` (columns of :class:`Scenario`); ``progress``: a progress bar's title;
    ``plugin_logs``: the folder the plugins' stderr is kept in (``None``: this process's stderr).

    ``processes`` > 1 (``rebalance-lab gate`` without Spark): the scenarios are shared among that
    many worker processes (one scenario per task, each on its own core as every solver is
    single-threaded); the rows come back in ``frame``'s order, as from one process.
    """
    fields = Scenario.__dataclass_fields__
    scenarios = [Scenario(**{k: record[k] for k in fields}) for record in frame.to_dict("records")]
    return solve_each(
        solve_scenario,
        scenarios,
        time_limit,
        RESULT_COLUMNS,
        progress,
        processes,
        "scenario",
        extra=(plugin_logs,),
    )


def solve_each(
    solve_one: Callable[..., list[dict[str, Any]]],
    items: list[Any],
    time_limit: float,
    columns: dict[str, str],
    progress: str | None,
    processes: int,
    unit: str,
    extra: tuple[Any, ...] = (),
) -> pd.DataFrame:
    """``solve_one(item, time_limit, *extra)``'s rows for every item, in ``items``' order, as a
    frame of ``columns`` (name -> pandas type): in this process, or shared among ``processes``
    worker processes (one item per task); ``progress``: a progress bar's title (counting
    ``unit``)."""
    processes = min(processes, len(items))
    bar = dict(total=len(items), desc=progress, unit=unit, disable=progress is None)
    if processes > 1:
        # spawn: a fork would copy the parent's solver libraries' threads and locks
        with ProcessPoolExecutor(
            processes,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=register,  # the strategies registered here, registered there too
            initargs=tuple(registered()),
        ) as pool:
            parts: Iterable[list[dict[str, Any]]] = list(
                tqdm(pool.map(solve_one, items, repeat(time_limit), *map(repeat, extra)), **bar)
            )
    else:
        parts = (solve_one(item, time_limit, *extra) for item in tqdm(items, **bar))
    out = pd.DataFrame([row for part in parts for row in part], columns=list(columns))
    return out.astype(columns)
