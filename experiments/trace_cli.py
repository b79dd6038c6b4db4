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
from typing import Any

import orjson

from experiments import plugin_cli
from experiments.options import integer_in, seconds
from models.observed import observed_run
from models.options import DEFAULT_TIME_LIMIT
from models.registry import STRATEGIES, UsageError
from models.trace import TRACE_SOLVERS, TraceResult, trace, trace_answers
from problems import load_problem, problem_to_json
from problems.checks import INT32_MAX
from problems.trace import Trace, load_trace

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


def register(subcommands: Any) -> None:
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
    plugin_cli.add_classpath(parser)
    parser.add_argument(
        "--compare",
        action="store_true",
        help="a recorded trace: one line per row, what the members held (observed), every "
        "group strategy and the horizon optimum",
    )
    parser.add_argument(
        "--solver",
        default="heuristic",
        choices=TRACE_SOLVERS,
        help="each step alone (heuristic, cpsat, mip, flow), the exact per-step optimum (step), "
        "or the whole trace at once (horizon)",
    )
    parser.add_argument(
        "--lookahead",
        type=integer_in(0, INT32_MAX),
        metavar="K",
        help="the horizon solver as an online policy that sees the next K steps",
    )
    parser.add_argument(
        "--time-limit",
        type=seconds,
        metavar="SEC",
        help="time limit of each step's exact solve (horizon: of the whole trace; --plugin: of "
        "each step's call)",
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
    """Run the trace and print its lines (errors: ``ProblemError`` / ``UsageError``, exit 2)."""
    loaded = load_trace(args.trace)
    if args.compare:
        from experiments.trace_compare import compare

        return compare(loaded, args)
    if args.strategy is None and args.plugin is None:
        raise UsageError("--strategy or --plugin is required (or --compare, on a recorded trace)")
    started = time.perf_counter()
    if args.plugin is not None:
        result = _with_plugin(args, loaded)
    else:
        result = trace(
            loaded,
            args.strategy,
            args.solver,
            time_limit=args.time_limit,
            lookahead=args.lookahead,
            variant=args.variant,
            seed=args.seed,
            workers=args.workers,
        )
    elapsed = time.perf_counter() - started
    seen = None
    if loaded.recorded is not None and args.strategy is not None:
        from experiments.trace_compare import observed_lines

        seen = observed_run(loaded, args.strategy)
    write = sys.stdout.write
    lines = result.lines() if seen is None else observed_lines(result, seen)
    for line in lines:
        write(orjson.dumps(line, option=orjson.OPT_SERIALIZE_NUMPY).decode() + "\n")
    if args.report:
        report(loaded, result, elapsed)
        if seen is not None:
            from experiments.trace_compare import print_rows

            print_rows([seen, result])
    if any(step.result is None or step.result.answer is None for step in result.steps):
        print(f"rebalance-lab trace: a step has no answer ({result.status})", file=sys.stderr)
        return EXIT_NO_ANSWER
    return EXIT_ANSWER


def _with_plugin(args: argparse.Namespace, loaded: Trace) -> TraceResult:
    """The plugin of ``--plugin`` through the trace, each step one call (docs/plugins.md)."""
    from experiments.plugin_runner import run

    found = plugin_cli.plugin(args.plugin, args.classpath)
    start = load_problem(loaded.start)
    judged = plugin_cli.judged_on(found, start, loaded.name)
    limit = DEFAULT_TIME_LIMIT if args.time_limit is None else args.time_limit

    def answer(problem):
        call = run(found.name, found.target, problem, problem_to_json(problem), judged, limit)
        if call.answer.result is not None:
            return call.answer.result
        return plugin_cli.failed(problem, judged, call.answer.error or "no answer")

    return trace_answers(loaded, judged, answer, found.name)


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
