"""``rebalance-lab experiment show FILE``: what an experiment file makes, before running it.

Prints the experiment's name, description and digest, the factors it varies with their levels,
how many scenarios and result rows it makes and an estimate of the time: at most every exact
solver's whole time limit, shared by the cores.  Nothing is solved; only the frontier rows of the
smallest placements need their (tiny) problems built to be counted.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from experiments.experiment import (
    MAX_SCENARIOS,
    Experiment,
    Limits,
    load_experiment,
    load_suite,
)
from experiments.experiment_plugins import Plugin, plugins_for
from experiments.options import Subcommands, integer_in
from experiments.scenarios import SUITES, Scenario, build_problem
from models.registry import STRATEGIES
from problems import PlacementProblem, load_problem
from problems.trace import MAX_TRACE_SIZE


def register(subcommands: Subcommands) -> None:
    """Add the ``experiment`` subcommand to the command line."""
    parser = subcommands.add_parser(
        "experiment",
        help="check an experiment file and show what it makes (scenarios, rows, time)",
        description="Experiment files (TOML; docs/harness.md): `experiment show FILE` reads, checks "
        "and expands one, and prints its factors, how many scenarios and rows it makes and an "
        "estimate of the time.  `compare --experiment FILE` runs it.",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    show = actions.add_parser(
        "show",
        help="print an experiment's factors, scenario and row counts and a time estimate",
        description="Read, check and expand an experiment file (or a shipped suite by name) and "
        "print what it makes.  A bad file: exit 2 and one line naming the file, field and problem.",
    )
    show.add_argument(
        "file", metavar="FILE", help=f"an experiment file, or a suite ({', '.join(SUITES)})"
    )
    show.add_argument(
        "--cores",
        type=int,
        default=os.cpu_count() or 1,
        help="cores the estimate shares the work by",
    )
    show.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="SPEC",
        help="a researcher's strategy to count in (as compare --plugin)",
    )
    show.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_limit_arguments(show)
    show.set_defaults(handler=command)


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """``--max-scenarios`` and ``--max-size``: how large an experiment may be
    (:class:`experiments.experiment.Limits`), for ``experiment show`` and ``compare`` alike;
    ``--max-size`` is ``rebalance-lab trace``'s, the same measure and default."""
    parser.add_argument(
        "--max-scenarios",
        type=integer_in(1, 2**62),
        default=MAX_SCENARIOS,
        metavar="N",
        help="refuse an experiment whose blocks cross more than N combinations "
        f"(default {MAX_SCENARIOS:,})",
    )
    parser.add_argument(
        "--max-size",
        type=integer_in(1, 2**62),
        default=MAX_TRACE_SIZE,
        metavar="N",
        help="refuse a trace scenario larger than N: its partitions (a placement's replicas) "
        f"summed over its rebalances, as trace --max-size (default {MAX_TRACE_SIZE:,})",
    )


def limits(args: argparse.Namespace) -> Limits:
    """The :class:`Limits` of the command line's ``--max-scenarios`` and ``--max-size``."""
    return Limits(scenarios=args.max_scenarios, trace_size=args.max_size)


def read(file: str, within: Limits | None = None) -> Experiment:
    """An experiment file, or a shipped suite given by name (within ``within``'s limits)."""
    if file in SUITES and not os.path.exists(file):
        return load_suite(file, within)
    return load_experiment(file, within)


def _frontier_rows(scenario: Scenario) -> int:
    from experiments.runs import FRONTIER_MOVES

    problem = load_problem(build_problem(scenario))
    assert isinstance(problem, PlacementProblem)  # a placement scenario
    forced = int((problem.replica_positions < 0).sum())
    return forced + FRONTIER_MOVES + 1


#: The rough cost of a run no time limit bounds (seconds: per run, and per item to place), from
#: the harness's runs on a 2-core machine: heuristics and the flows, and each scenario's own
#: overhead (building its problem, a Spark task); and Spark's start-up, once.
HEURISTIC_SECONDS = (0.01, 1e-5)
UNLIMITED_EXACT_SECONDS = (0.5, 1e-4)
SCENARIO_SECONDS = 0.1
SPARK_START_SECONDS = 30.0


def plan(
    experiment: Experiment, plugins: list[Plugin], time_limit: float | None = None
) -> dict[str, Any]:
    """Scenarios, rows, exact runs and an estimate of the time they take (seconds of one core).

    ``at_most_core_seconds``: every time-limited exact solver spending its whole limit, plus the
    rough cost of the other runs (:data:`HEURISTIC_SECONDS`, :data:`UNLIMITED_EXACT_SECONDS`).
    """
    from experiments.runs import FRONTIER_PARTITIONS, selected_runs  # pandas: imported when used

    rows = exact = 0
    seconds = 0.0
    for scenario in experiment.scenarios:
        settings = json.loads(scenario.settings) if scenario.settings else {}
        limit = float(settings.get("time_limit", time_limit or experiment.time_limit))
        seconds += SCENARIO_SECONDS
        runs = selected_runs(scenario.judged_on, settings)
        mine = sum(scenario.judged_on in p.judged_on for p in plugins)
        for strategy, _variant, solver in runs:
            if solver == "heuristic":
                cost = HEURISTIC_SECONDS
            elif "time_limit" in STRATEGIES[strategy].runner(solver).uses:
                cost = (limit, 0.0)
            else:
                cost = UNLIMITED_EXACT_SECONDS
            seconds += cost[0] + cost[1] * scenario.size
        seconds += mine * (HEURISTIC_SECONDS[0] + HEURISTIC_SECONDS[1] * scenario.size)
        rows += len(runs) + mine
        exact += sum(solver != "heuristic" for _s, _v, solver in runs)
        wants_frontier = settings.get("solvers") is None or "cpsat" in settings["solvers"]
        if (
            scenario.family == "placement"
            and scenario.partitions <= FRONTIER_PARTITIONS
            and wants_frontier
        ):
            points = _frontier_rows(scenario)
            rows += points
            seconds += limit * points
    traced = _trace_plan(experiment, time_limit)
    exact += traced["exact"]
    seconds += traced["seconds"]
    return {
        "name": experiment.name,
        "description": experiment.description,
        "tier": experiment.tier,
        "digest": experiment.digest,
        "scenarios": len(experiment.scenarios),
        "traces": len(experiment.traces),
        "trace_rows": traced["rows"],
        "rows": rows,
        "exact_runs": exact,
        "largest_size": max(
            [s.size for s in experiment.scenarios] + [t.size for t in experiment.traces], default=0
        ),
        "at_most_core_seconds": seconds,
        "varied": {name: experiment.factors[name] for name in experiment.varied},
    }


def _trace_plan(experiment: Experiment, time_limit: float | None) -> dict[str, Any]:
    """Rows, exact runs and the rough cost of the trace scenarios: every run a row per rebalance and
    one per trace; heuristics and the per-step optimum at their rough cost per rebalance, the
    horizon at most its time limit."""
    from experiments.trace_runs import trace_runs_for
    from experiments.trace_scenarios import trace_length

    rows = exact = 0
    seconds = 0.0
    for trace in experiment.traces:
        settings = json.loads(trace.settings) if trace.settings else {}
        limit = float(settings.get("time_limit", time_limit or experiment.time_limit))
        rebalances = trace_length(trace)
        seconds += SCENARIO_SECONDS
        for _strategy, _variant, solver in trace_runs_for(trace.judged_on, settings):
            rows += rebalances + 1
            exact += solver != "heuristic"
            if solver == "horizon":
                seconds += limit
                continue
            cost = HEURISTIC_SECONDS if solver == "heuristic" else UNLIMITED_EXACT_SECONDS
            seconds += rebalances * (cost[0] + cost[1] * trace.size)
    return {"rows": rows, "exact": exact, "seconds": seconds}


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def command(args: argparse.Namespace) -> int:
    experiment = read(args.file, limits(args))
    plugins = plugins_for(args.plugin, experiment=experiment)
    summary: dict[str, Any] = plan(experiment, plugins)
    cores = max(1, args.cores)
    summary["cores"] = cores
    summary["at_most_seconds"] = SPARK_START_SECONDS + summary["at_most_core_seconds"] / cores
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(f"{experiment.name} ({experiment.tier}): {experiment.description}")
    print(f"file: {experiment.source} (digest {experiment.digest})")
    for name, levels in summary["varied"].items():
        print(f"  {name}: {', '.join(map(str, levels))}")
    if plugins:
        print(f"plugins: {', '.join(p.name for p in plugins)}")
    print(
        f"{summary['scenarios']:,} scenarios"
        + (f" and {summary['traces']:,} traces" if summary["traces"] else "")
        + f", {summary['rows']:,} rows "
        + (f"and {summary['trace_rows']:,} trace rows " if summary["traces"] else "")
        + f"({summary['exact_runs']:,} exact solves; largest {summary['largest_size']:,} items)"
    )
    bound = summary["at_most_core_seconds"]
    print(
        f"time: at most about {_duration(SPARK_START_SECONDS + bound / cores)} on {cores} cores "
        f"(Spark's start, then {_duration(bound)} of one core: every time-limited exact solver "
        "using its whole limit, the other runs at a rough cost per item)"
    )
    return 0
