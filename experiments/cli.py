"""The ``rebalance-lab`` command line (docs/cli/index.md): argument parsing only.

``assign`` and ``reassign`` run :func:`models.solve`, which looks the strategy
and solver up in the table :data:`models.registry.STRATEGIES`; a strategy, a
backend or a variant added there appears here.  ``lags``, ``compare`` and
``gate`` add their own subcommands (``register``).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TypeVar

from experiments import plugin_cli
from experiments.options import MAX_WORKERS, integer_in, seconds
from experiments.snapshot import add_cluster_arguments, problem_source
from models import frontier, solve
from models.options import DEFAULT_TIME_LIMIT
from models.registry import STRATEGIES, UsageError, preload, solvers, strategies
from problems import (
    GroupProblem,
    PlacementProblem,
    ProblemError,
    Result,
    StreamsProblem,
    evaluate,
    load_problem,
)
from problems.checks import INT32_MAX
from problems.output import result_bytes

FORMATS = """\
problem formats (JSON; see docs/formats.md):

  consumer group (assign):
    {"topics": {"t0": 3, "t1": 2},
     "members": [
       {"id": "c0", "topics": ["t0", "t1"], "owned": {"t0": [0, 1]},
        "generation": 4, "rack": "r1"},
       {"id": "c1", "topics": ["t0"], "instance_id": "static-1"}],
     "lags": {"t0": [100000, 60000, 50000], "t1": [0, 7]}}
    owned, generation, rack, instance_id and lags are optional.

  replica placement (reassign):
    {"brokers": [{"id": 1, "rack": "a"}, {"id": 2, "rack": "b"}],
     "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2]}]}

  streams group (assign --strategy streams-sticky):
    {"kind": "streams-group",
     "subtopologies": {"s0": {"partitions": 4, "stateful": true},
                       "s1": {"partitions": 2, "stateful": false}},
     "members": [
       {"id": "m0", "process": "p0", "active": {"s0": [0, 1]},
        "standby": {"s0": [2]}, "lags": {"s0": [0, 0, 500, -1]}},
       {"id": "m1", "process": "p1"}],
     "configs": {"num_standby_replicas": 1}}

output of assign:
    {"assignment": {"c0": {"t0": [0], "t1": [0, 1]}, "c1": {"t0": [1, 2]}},
     "status": "heuristic", "objective": [13, 0]}

example:
    rebalance-lab assign --strategy range examples/group/kip-54-three-consumers.json

A malformed file exits with status 2 and one line naming the file, the field
and the problem.
"""


# ----------------------------------------------------------------- commands
#: The kind of problem a command takes.
P = TypeVar("P", bound=GroupProblem | PlacementProblem | StreamsProblem)


def _load(args: argparse.Namespace, kind: type[P]) -> P:
    """The problem of ``args``: its file, or the document read from ``--bootstrap-server``."""
    source, path = problem_source(args, "placement" if kind is PlacementProblem else "group")
    try:
        problem = load_problem(source)
    except ProblemError as error:
        raise (error if isinstance(source, str) else error.with_source(path)) from None
    args.problem = path
    if not isinstance(problem, kind):
        raise ProblemError("", _other_kind(problem, kind, args.strategy), path)
    for note in getattr(problem, "notes", ()):
        print(f"note: {path}: {note}", file=sys.stderr)
    return problem


def _other_kind(
    problem: GroupProblem | PlacementProblem | StreamsProblem, kind: type, strategy: str
) -> str:
    """What to say when ``problem`` is not the ``kind`` of problem ``strategy`` takes."""
    if isinstance(problem, PlacementProblem):
        return "is a replica placement; use `rebalance-lab reassign`"
    if isinstance(problem, StreamsProblem):
        return f"is a streams group; use a streams strategy ({', '.join(strategies('streams'))})"
    if kind is StreamsProblem:
        return f"is a consumer group; --strategy {strategy} takes a streams group"
    return "is a consumer group; use `rebalance-lab assign`"


def _options(args: argparse.Namespace, *named: str) -> dict[str, Any]:
    """The solve options of ``args``: variant, time limit, seed, workers and the ``named`` ones of
    the command."""
    return {
        name: getattr(args, name) for name in ("variant", "time_limit", "seed", "workers", *named)
    }


def _run(
    args: argparse.Namespace,
    problem: GroupProblem | PlacementProblem | StreamsProblem,
    options: dict[str, Any],
) -> Result:
    # The solver's modules (OR-Tools, PuLP: about a second) are imported before the clock starts, so
    # the seconds printed are the solver's, the ones --time-limit bounds (docs/cli/index.md, "Time limits").
    preload(args.strategy, args.solver)
    started = time.perf_counter()
    try:
        result = solve(problem, args.strategy, args.solver, **options)
    except ProblemError as error:  # a solver refusing this input (e.g. lags beyond its exact range)
        raise (error if error.source else error.with_source(args.problem)) from None
    elapsed = time.perf_counter() - started
    if result.evaluation is not None and not result.evaluation.valid:
        print(
            f"warning: the answer breaks a hard constraint: {result.evaluation.violations[0]}",
            file=sys.stderr,
        )
    ignored = result.info.get("ignored_options", [])
    print(
        f"{args.strategy}/{args.solver}: {result.status}, objective {result.objective}, "
        f"{elapsed:.3f} s" + (f" (not used: {', '.join(map(_flag, ignored))})" if ignored else ""),
        file=sys.stderr,
    )
    return result


def _flag(option: str) -> str:
    return "--" + option.replace("_", "-")


def _with_plugin(args: argparse.Namespace, kinds: tuple[type, ...]) -> Result | None:
    """The answer of ``--plugin`` to the problem of ``args`` (``None``: none, said on stderr)."""
    found = plugin_cli.plugin(args.plugin, args.classpath)
    source, path = problem_source(args, "placement" if PlacementProblem in kinds else "group")
    try:
        problem = load_problem(source)
    except ProblemError as error:
        raise (error if isinstance(source, str) else error.with_source(path)) from None
    if not isinstance(problem, kinds):
        wanted = "a replica placement" if PlacementProblem in kinds else "a group"
        raise ProblemError("", f"is not {wanted}; use `rebalance-lab {_other(args)}`", path)
    document = plugin_cli.document_of(source)
    return plugin_cli.answer(found, problem, document, args.time_limit, path)


def _other(args: argparse.Namespace) -> str:
    return "assign" if args.command == "reassign" else "reassign"


def _command_assign(args: argparse.Namespace) -> int:
    if args.plugin is not None:
        result = _with_plugin(args, (GroupProblem, StreamsProblem))
        if result is None:
            return _outcome(args, None)
        _print_result(args, result)
        return _outcome(args, result)
    streams = args.strategy in strategies("streams")
    kind: type[GroupProblem | StreamsProblem] = StreamsProblem if streams else GroupProblem
    problem = _load(args, kind)
    result = _run(args, problem, _options(args, "max_size"))
    _print_result(args, result)
    return _outcome(args, result)


def _print_result(args: argparse.Namespace, result: Result) -> None:
    if args.pretty:
        json.dump(result.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:  # the same bytes as json.dump, written from the arrays in one pass
        sys.stdout.write(result_bytes(result).decode("ascii") + "\n")


def _outcome(args: argparse.Namespace, result: Result | None) -> int:
    """The exit status of ``assign`` and ``reassign``: 0 with an answer, 3 without (``unknown``/``infeasible``,
    or a plugin's failure)."""
    if result is not None and result.answer is not None:
        return EXIT_ANSWER
    shown = "a plugin's failure" if result is None else result.status
    print(f"rebalance-lab {args.command}: no answer ({shown})", file=sys.stderr)
    return EXIT_NO_ANSWER


def _command_reassign(args: argparse.Namespace) -> int:
    if args.plugin is not None:
        result = _with_plugin(args, (PlacementProblem,))
        if result is None or result.answer is None:
            return _outcome(args, result)
        json.dump(result.assignment, sys.stdout, indent=2 if args.pretty else None)
        sys.stdout.write("\n")
        return EXIT_ANSWER
    problem = _load(args, PlacementProblem)
    started = time.perf_counter()
    result = _run(args, problem, _options(args, "start_index", "max_moves"))
    if args.report:
        objective = STRATEGIES[args.strategy].objective_on(problem)
        before = evaluate(problem, problem.replica_brokers, objective)
        shown = before.objective if before.valid else "(replicas on removed brokers)"
        names = ", ".join(before.names)
        print(f"levels before: {shown}  ({names})", file=sys.stderr)
        print(f"levels after:  {result.objective or '(no placement)'}", file=sys.stderr)
        if result.objective:
            forced = int((problem.replica_positions < 0).sum())
            print(
                f"moves: {result.objective[3]} ({forced} forced by removed brokers)",
                file=sys.stderr,
            )
        if args.solver != "heuristic" and args.max_moves is not None:
            print(
                "frontier (best levels 1-3 within k moves): k, status, levels 1-3, moves",
                file=sys.stderr,
            )
            limit = args.time_limit if args.time_limit is not None else DEFAULT_TIME_LIMIT
            # one budget: the solve above and every point share it
            left = started + limit - time.perf_counter()
            points = frontier(
                problem,
                args.strategy,
                args.solver,
                args.max_moves,
                **{**_options(args, "start_index"), "time_limit": max(left, 0.0)},
            )
            for k, point in enumerate(points):
                if point.info.get("not_solved"):
                    print(
                        f"  {k}..{args.max_moves}: not solved (the --time-limit of {limit:g} s is spent)",
                        file=sys.stderr,
                    )
                    break
                levels = (
                    (point.objective[:3], point.objective[3]) if point.objective else ("-", "-")
                )
                print(f"  {k}, {point.status}, {levels[0]}, {levels[1]}", file=sys.stderr)
    if result.answer is None:
        return _outcome(args, result)
    json.dump(result.assignment, sys.stdout, indent=2 if args.pretty else None)
    sys.stdout.write("\n")
    return EXIT_ANSWER


# ------------------------------------------------------------------- parser
#: Exit statuses (docs/cli/index.md, "Exit statuses"): 0 an answer (heuristic, optimal or feasible); 2 bad
#: input or usage (one line on stderr); 3 no answer (status unknown or infeasible, named on
#: stderr).  1 is left to Python: an uncaught error, a bug.
EXIT_ANSWER, EXIT_BAD_INPUT, EXIT_NO_ANSWER = 0, 2, 3


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``rebalance-lab CMD: error: ...`` and exit 2, no usage dump."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def _common(sub: argparse.ArgumentParser, strategies: list[str]) -> None:
    sub.add_argument(
        "problem",
        metavar="PROBLEM.json",
        nargs="?",
        help="the problem file (see the formats below), or --bootstrap-server",
    )
    chosen = sub.add_mutually_exclusive_group(required=True)
    chosen.add_argument("--strategy", choices=strategies, help="the strategy to run")
    plugin_cli.add_argument(chosen)
    plugin_cli.add_classpath(sub)
    sub.add_argument(
        "--solver",
        default="heuristic",
        choices=solvers(),
        help="the documented heuristic (default) or an exact model",
    )
    sub.add_argument(
        "--variant", help="a named variant of the strategy (e.g. kafka-9987 for sticky)"
    )
    sub.add_argument(
        "--time-limit",
        type=seconds,
        metavar="SEC",
        help="time limit of an exact solver: model building, files and every solve (docs/cli/index.md)",
    )
    sub.add_argument(
        "--workers",
        type=integer_in(1, MAX_WORKERS),
        help=f"CP-SAT search workers (1-{MAX_WORKERS})",
    )
    sub.add_argument(
        "--seed",
        type=integer_in(0, INT32_MAX),
        help="random seed (solvers, kafka-default; 0-2**31-1)",
    )
    sub.add_argument("--pretty", action="store_true", help="indent the JSON output")


def build_parser(*, command_modules: bool = True) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rebalance-lab",
        description="Kafka's partition assignors and replica placement: the documented heuristics "
        "and exact optimisation models, scored by one evaluator.",
        epilog=FORMATS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    assign = commands.add_parser(
        "assign",
        help="assign a consumer group's partitions (or a streams group's tasks) to its members",
        description="Assign a consumer group's partitions; prints {assignment, status, objective}.",
        epilog=FORMATS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(assign, strategies("group") + strategies("streams"))
    assign.add_argument(
        "--max-size",
        type=integer_in(1, 2**62),
        metavar="N",
        help="the most task-member pairs (tasks x members) a streams exact model takes "
        "(default 2,000,000)",
    )
    add_cluster_arguments(assign, group=True)
    assign.set_defaults(handler=_command_assign)

    placement = strategies("placement")
    if placement:
        reassign = commands.add_parser(
            "reassign",
            help="place a cluster's replicas (output: kafka-reassign-partitions JSON)",
            description="Place replicas; prints the JSON that kafka-reassign-partitions --execute takes.",
            epilog=FORMATS,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        _common(reassign, placement)
        reassign.add_argument(
            "--start-index",
            type=integer_in(0, INT32_MAX),
            metavar="K",
            help="fix kafka-default's start index and replica shift (as Kafka's tests do)",
        )
        reassign.add_argument(
            "--max-moves",
            type=integer_in(0, INT32_MAX),
            metavar="K",
            help="at most K replica moves (exact solvers)",
        )
        reassign.add_argument(
            "--report", action="store_true", help="print levels before/after on stderr"
        )
        add_cluster_arguments(reassign, placement=True)
        reassign.set_defaults(handler=_command_reassign)
    # Light: reading experiment files and traces needs no Spark.
    from experiments import experiment_cli, record_cli, trace_cli

    experiment_cli.register(commands)
    trace_cli.register(commands)
    record_cli.register(commands)
    if command_modules:
        # Imported here, not at the top: pandas, Spark and matplotlib take seconds to import,
        # and `assign`/`reassign` need none of them.
        from experiments import compare, gate, lags, report, snapshot

        for module in (lags, compare, gate, report, snapshot):
            module.register(commands)
    return parser


@functools.lru_cache(maxsize=4)
def _parser(command_modules: bool, names: tuple[str, ...]) -> argparse.ArgumentParser:
    """:func:`build_parser`, built once per process and set of strategies ``names`` (``main`` may
    be called many times in one; a strategy registered since is a choice of the next one)."""
    return build_parser(command_modules=command_modules)


#: Exit status after the reader of stdout went away (128 + SIGPIPE, as the shell reports it).
EXIT_BROKEN_PIPE = 141


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rebalance-lab`` console script."""
    argv = sys.argv[1:] if argv is None else list(argv)
    # `assign` and `reassign` need none of the other commands' modules (pandas, Spark, matplotlib:
    # seconds of imports before a one-second assignment).
    builtin = bool(argv) and argv[0] in ("assign", "reassign", "experiment", "trace", "record")
    args = _parser(not builtin, tuple(STRATEGIES)).parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except ProblemError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except UsageError as error:
        print(f"rebalance-lab {args.command}: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        # The reader went away (`... | head`): stop quietly, as a program killed by SIGPIPE would,
        # and keep Python from reporting the failed flush of stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
