"""``rebalance-lab trace``: a strategy run through a trace of rebalances (docs/traces.md).

Prints one JSON line per step (``{"step", "assignment" | "reassignment", "status", "objective",
"moves"}``, with ``rounds`` and ``pending`` for ``cooperative-sticky``), then one summary line
(``{"summary": {"steps", "moves", "objective_sums", "status"}}``); ``--report`` adds a table of
the steps on stderr.  A malformed trace exits with status 2 and one line naming the file, the step
and the field; a step without an answer (a solver's time ran out) makes the exit status 3.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

import orjson

from experiments import plugin_cli
from experiments.options import Subcommands, integer_in, seconds
from experiments.trace_compare import observed_step, print_rows, row
from models.options import DEFAULT_TIME_LIMIT
from models.registry import STRATEGIES, UsageError
from models.trace import (
    MAX_HORIZON_SIZE,
    TRACE_SOLVERS,
    TraceResult,
    TraceStep,
    trace,
    trace_answers,
)
from models.trace.observed import observed_run
from problems import GroupProblem, PlacementProblem, Result, load_problem, problem_to_json
from problems.checks import INT32_MAX
from problems.trace import MAX_TRACE_SIZE, Trace, load_trace

EXIT_ANSWER, EXIT_NO_ANSWER = 0, 3
MAX_WORKERS = 64

EPILOG = """\
trace format (JSON; see docs/traces.md):
    {"kind": "group-trace",
     "problem": {"topics": {"t0": 12}, "members": [{"id": "c0", "topics": ["t0"]}]},
     "steps": [{"join": [{"id": "c1", "topics": ["t0"]}]}, {"restart": ["c0"]}, {"leave": ["c1"]}]}
  group events: join, leave, restart, topics, subscribe, lags, racks, partition_racks, topic_ids;
  "kind": "placement-trace": a placement problem, events remove_brokers, add_brokers, partitions.

output: one JSON line per step, then {"summary": {...}}.

example:
    rebalance-lab trace --strategy sticky --report examples/traces/rolling-restart.json
"""


def register(subcommands: Subcommands) -> None:
    """Add the ``trace`` subcommand to ``rebalance-lab``'s subparsers."""
    parser = subcommands.add_parser(
        "trace",
        help="run a strategy through a trace of rebalances (one JSON line per step)",
        description="Run a strategy through a trace: every step's input is the previous step's "
        "output as the members' claims, changed by the step's events.  Prints one JSON line per "
        "step, then a summary line.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("trace", metavar="TRACE.json", help="the trace file (docs/traces.md)")
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument(
        "--strategy",
        choices=list(STRATEGIES),
        help="the strategy to run (with --compare: the objective every row is judged on)",
    )
    plugin_cli.add_argument(chosen)
    parser.add_argument(
        "--compare",
        action="store_true",
        help="a recorded trace (rebalance-lab record): one line per row, what the members held "
        "(observed), every group strategy and the horizon optimum",
    )
    plugin_cli.add_classpath(parser)
    parser.add_argument(
        "--solver",
        choices=TRACE_SOLVERS,
        help="each step alone (heuristic, the default; cpsat, mip, flow), the exact per-step "
        "optimum (step), or the whole trace at once (horizon)",
    )
    parser.add_argument(
        "--lookahead",
        type=integer_in(0, INT32_MAX),
        metavar="K",
        help="the horizon solver as an online policy that sees the next K steps "
        "(--solver horizon, or no --solver)",
    )
    parser.add_argument(
        "--time-limit",
        type=seconds,
        metavar="SEC",
        help="seconds for the whole trace (default 10): every step's exact solve gets the time "
        "left, the horizon's step levels and model share it; steps it leaves unsolved are "
        "unknown (exit 3).  Unused by --solver heuristic; --plugin: each step's call gets the "
        "time left",
    )
    parser.add_argument(
        "--max-size",
        type=integer_in(1, 2**62),
        metavar="N",
        help="the largest trace taken: partitions (a placement's replicas) summed over its "
        f"rebalances, as experiment show and compare --max-size (default "
        f"{MAX_TRACE_SIZE:,}; the horizon solver, which holds every step at once, "
        f"{MAX_HORIZON_SIZE:,})",
    )
    parser.add_argument("--variant", help="a named variant of the strategy")
    parser.add_argument(
        "--seed", type=integer_in(0, INT32_MAX), help="random seed (solvers, kafka-default)"
    )
    parser.add_argument(
        "--workers",
        type=integer_in(1, MAX_WORKERS),
        help=f"CP-SAT search workers (1-{MAX_WORKERS})",
    )
    parser.add_argument(
        "--report", action="store_true", help="print a table of the steps on stderr"
    )
    parser.set_defaults(handler=command)


def command(args: argparse.Namespace) -> int:
    """Run the trace and print its lines as each step is solved (errors: ``ProblemError`` /
    ``UsageError``, exit 2)."""
    loaded = load_trace(
        args.trace, max_size=MAX_TRACE_SIZE if args.max_size is None else args.max_size
    )
    if args.compare:
        from experiments.trace_compare import compare

        if args.plugin is not None:
            raise UsageError("--compare runs the built-in strategies, not --plugin")
        return compare(loaded, args)
    if args.strategy is None and args.plugin is None:
        raise UsageError("give --strategy or --plugin (or --compare, on a recorded trace)")
    seen = None
    if loaded.recorded is not None and args.strategy is not None:
        seen = observed_run(loaded, args.strategy)
    started = time.perf_counter()
    unanswered: list[int] = []

    def write(step: TraceStep) -> None:
        doc = step.to_json()
        if seen is not None:
            doc["observed"] = observed_step(seen, step.step)
        line = orjson.dumps(doc, option=orjson.OPT_SERIALIZE_NUMPY)
        sys.stdout.write(line.decode() + "\n")
        sys.stdout.flush()  # a stopped run keeps the steps it solved
        if step.result is None or step.result.answer is None:
            unanswered.append(step.step)

    if args.plugin is not None:
        result = _with_plugin(args, loaded, write)
    else:
        result = trace(
            loaded,
            args.strategy,
            args.solver,
            time_limit=args.time_limit,
            lookahead=args.lookahead,
            max_size=args.max_size,
            on_step=write,
            keep_answers=False,
            variant=args.variant,
            seed=args.seed,
            workers=args.workers,
        )
    elapsed = time.perf_counter() - started
    summary = result.summary()
    if seen is not None:
        summary["observed"] = row(seen, None)
    sys.stdout.write(orjson.dumps({"summary": summary}).decode() + "\n")
    if args.report:
        report(loaded, result, elapsed)
        if seen is not None:
            print_rows([seen])
    if unanswered:
        late = [s.step for s in result.steps if "not_solved" in s.info]
        why = (
            f"the time limit ran out before step {late[0]}"
            if late
            else f"no answer at step {unanswered[0]}"
        )
        print(f"rebalance-lab trace: {why}", file=sys.stderr)
        print(f"rebalance-lab trace: no answer ({result.status})", file=sys.stderr)
        return EXIT_NO_ANSWER
    return EXIT_ANSWER


def _with_plugin(
    args: argparse.Namespace, loaded: Trace, on_step: Callable[[TraceStep], None]
) -> TraceResult:
    """The plugin of ``--plugin`` through the trace, each step one call (docs/plugins.md) given
    the time left of ``--time-limit``, one budget for the whole trace."""
    from experiments.plugin_runner import run

    found = plugin_cli.plugin(args.plugin, args.classpath)
    start = load_problem(loaded.start)
    judged = plugin_cli.judged_on(found, start, loaded.name)
    limit = DEFAULT_TIME_LIMIT if args.time_limit is None else args.time_limit

    def answer(problem: GroupProblem | PlacementProblem, seconds: float | None) -> Result:
        budget = limit if seconds is None else seconds
        call = run(found.name, found.target, problem, problem_to_json(problem), judged, budget)
        if call.answer.result is not None:
            return call.answer.result
        return plugin_cli.failed(problem, judged, call.answer.error or "no answer")

    return trace_answers(
        loaded, judged, answer, found.name, time_limit=limit, on_step=on_step, keep_answers=False
    )


def events(step: dict[str, Any]) -> str:
    """A short text of a step's events (``leave c3; join c9``)."""
    parts = []
    for name, value in step.items():
        if isinstance(value, list):
            items = [
                str(v.get("id", v.get("topic", "?"))) if isinstance(v, dict) else str(v)
                for v in value
            ]
        elif isinstance(value, dict):
            items = list(map(str, value))
        else:
            items = [str(value)]
        shown = " ".join(items[:3]) + (f" +{len(items) - 3}" if len(items) > 3 else "")
        parts.append(f"{name} {shown}")
    return "; ".join(parts)


def report(loaded: Trace, result: TraceResult, elapsed: float) -> None:
    """The steps as a table on stderr: events, status, objective, moves (and rounds)."""
    rounds = any(step.rounds is not None for step in result.steps)
    rows = [["step", "events", "status", "objective", "moves", *(["rounds"] if rounds else [])]]
    for step in result.steps:
        what = "(start)" if step.step == 0 else events(loaded.steps[step.step - 1])
        row = [str(step.step), what, step.status, str(list(step.objective)), str(step.moves)]
        if rounds:
            row.append("" if step.rounds is None else str(step.rounds))
        rows.append(row)
    total = [
        "total",
        f"{len(loaded.steps)} steps",
        result.status,
        str(list(result.objective_sums)),
        str(result.moves),
    ]
    if rounds:
        total.append(str(sum(step.rounds or 0 for step in result.steps)))
    rows.append(total)
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    for row in rows:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip(),
            file=sys.stderr,
        )
    print(
        f"{result.strategy}/{result.solver}: {len(result.steps)} rebalances, {elapsed:.3f} s"
        + ("" if result.bound is None else f", moves bound {result.bound}"),
        file=sys.stderr,
    )
