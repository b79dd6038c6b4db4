"""``rebalance-lab compare``: run a suite on Spark, analyse the gaps, write the report."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from experiments.experiment import load_experiment, load_suite, recorded_experiment
from experiments.experiment_cli import add_limit_arguments, limits
from experiments.experiment_plugins import plugins_for
from experiments.gap import disagreements, gaps
from experiments.options import Subcommands, integer_in, seconds
from experiments.pipeline import run_suite
from experiments.plugin_java import with_classpath
from experiments.report import write_report
from experiments.results import load_results
from experiments.run_lock import check_writable
from experiments.runs import TIME_LIMITS
from experiments.scenarios import SUITES
from experiments.tables import headline_numbers, headline_tables, to_markdown
from experiments.trace_gap import trace_gaps, trace_numbers, trace_tables
from problems import ProblemError
from problems.checks import INT32_MAX

#: A run id: one folder name (what ``new_run_id`` makes: a UTC time stamp and a random suffix).
RUN_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")


def register(subcommands: Subcommands) -> None:
    """Add the ``compare`` subcommand to the command line."""
    parser = subcommands.add_parser(
        "compare",
        help="run a scenario suite on Spark and report every heuristic's gap to optimal",
        description="Run a scenario suite as a Spark job (resumable with --run-id), write one Parquet row per "
        "(scenario, strategy, solver) under OUT/results/, print the headline table and write an HTML report "
        "under OUT/report/ (Markdown and LaTeX beside it; `rebalance-lab report` renders them again).",
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--suite", default="default", choices=SUITES, help="scenario suite (default: default)"
    )
    which.add_argument(
        "--experiment",
        metavar="FILE",
        help="an experiment file (TOML: factors and levels crossed; `experiment show FILE`)",
    )
    which.add_argument(
        "--recorded",
        metavar="DIR",
        help="a folder of recorded traces (`rebalance-lab record`): each runs every heuristic and "
        "the step and horizon optima through its events, beside the observed row",
    )
    parser.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="SPEC",
        help="a researcher's strategy, run on the scenarios judged on its objective: "
        "[NAME=]module:function, [NAME=]exec:COMMAND or an installed name (docs/plugins.md; "
        "repeatable; those installed under rebalance_lab.strategies always run)",
    )
    parser.add_argument(
        "--classpath",
        metavar="JARS|DIR",
        help="the jars and class folders of every java:CLASS plugin (separated by ':'; a folder: "
        "its classes and its jars), before the Kafka release `make peers` built",
    )
    parser.add_argument(
        "--master",
        help="Spark master, e.g. local[2] or spark://host:7077 (default local[*]); "
        "sc://host:15002 is a Spark Connect server",
    )
    parser.add_argument("--out", default="results", help="output folder (default: results)")
    parser.add_argument(
        "--run-id", help="resume this run (only scenarios not yet written are solved)"
    )
    parser.add_argument(
        "--time-limit",
        type=seconds,
        metavar="SEC",
        help="seconds per exact solver and scenario (default per suite: "
        + ", ".join(f"{k} {v:g}" for k, v in TIME_LIMITS.items())
        + ")",
    )
    parser.add_argument(
        "--batch-size", type=integer_in(1, INT32_MAX), help="scenarios per atomically written batch"
    )
    parser.add_argument(
        "--limit",
        type=integer_in(0, INT32_MAX),
        help="solve at most this many pending scenarios now",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--no-report",
        action="store_true",
        help="print the headline tables but write no report (a cluster's driver, a run resumed in "
        "parts: `rebalance-lab report OUT/results/suite=NAME/run_id=ID` renders it later)",
    )
    add_limit_arguments(parser)
    parser.set_defaults(handler=command)


def command(args: argparse.Namespace) -> int:
    within = limits(args)
    if args.recorded:
        experiment = recorded_experiment(args.recorded, args.time_limit)
    elif args.experiment:
        experiment = load_experiment(args.experiment, within)
    else:
        experiment = load_suite(args.suite, within)
    specs = [with_classpath(spec, args.classpath) for spec in args.plugin]
    plugins = plugins_for(specs, experiment=experiment)
    out = Path(args.out)
    # Before any solving: a bad --out or --run-id is exit 2 now, not a traceback after the run.
    check_writable(out)
    if args.run_id is not None and not RUN_ID.fullmatch(args.run_id):
        raise ProblemError(
            "--run-id",
            "must be letters, digits, '.', '_' and '-' (a folder name), not starting with '.'",
            args.run_id,
        )
    info = run_suite(
        experiment,
        out,
        run_id=args.run_id,
        master=args.master,
        batch_size=args.batch_size,
        time_limit=args.time_limit,
        limit=args.limit,
        progress=not args.no_progress,
        plugins=plugins,
    )
    print(
        f"run {info.run_id}: {info.computed} scenarios solved now, {info.skipped} already done, "
        f"{info.scenarios} in {experiment.name}; rows in {info.folder}",
        file=sys.stderr,
    )
    if info.traces:
        print(
            f"run {info.run_id}: {info.traces_computed} traces solved now, "
            f"{info.traces_skipped} already done, {info.traces} in {experiment.name}",
            file=sys.stderr,
        )
    for note in info.notes:
        print(f"note: {note}", file=sys.stderr)
    notes: list[str] = []
    rows = load_results(info.folder, notes)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    for objective, table in headline_tables(headline_numbers(gaps(rows))).items():
        print(f"{objective}\n\n{to_markdown(table)}\n")
    for objective, table in trace_tables(trace_numbers(trace_gaps(rows))).items():
        print(f"{objective}, over a trace\n\n{to_markdown(table)}\n")
    contradicted = disagreements(rows)
    if len(contradicted):
        shown = contradicted[["scenario_id", "solver", "status", "reason"]]
        print(
            f"exact solvers disagree (a solver bug) on {contradicted['scenario_id'].nunique()} scenarios\n\n"
            f"{to_markdown(shown)}\n"
        )
        print(
            f"warning: exact solvers disagree on {contradicted['scenario_id'].nunique()} scenarios "
            "(listed above and in the report)",
            file=sys.stderr,
        )
    if args.no_report:
        return 0
    report = write_report(
        rows,
        out / "report" / f"{experiment.name}-{info.run_id}",
        str(info.folder),
        notes=tuple(notes),
    )
    print(f"report: {report}", file=sys.stderr)
    return 0
