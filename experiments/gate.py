"""``rebalance-lab gate``: the CI regression gate on heuristic quality.

Runs the ``gate`` suite on this machine (the same :func:`experiments.runs.solve_frame` the Spark job
maps, without starting Spark: in one worker process per core, ``--processes``), computes each
heuristic's gap statistics against the proven optima (:func:`experiments.gap.summary`), and compares
them with a committed baseline (``baselines/gate.json``).  Exit 1 with a table of what got worse, 0
otherwise; ``--update`` rewrites the baseline.  ``--experiment FILE`` gates an experiment file
instead of a suite, and ``--plugin`` judges plugins (``java:`` with ``--classpath``) like the
built-ins; the statistics are also kept by churn event, so a failure names the events.

Why the statistics do not depend on the machine, what counts as worse and what a baseline must hold
(checked before anything is solved, :func:`parse_baseline`): docs/harness.md.  The suite's traces are
judged too, on their total moves against the horizon optimum (:mod:`experiments.trace_gate`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd

from experiments.baseline_checks import GAP, SHARE, read_object, type_name
from experiments.baseline_checks import statistics as checked_statistics
from experiments.experiment import Experiment, load_experiment, load_suite, suite
from experiments.experiment_plugins import Plugin, plugins_for, with_plugins
from experiments.gap import disagreements, gaps, summary
from experiments.options import Subcommands, integer_in, seconds
from experiments.plugin_java import with_classpath
from experiments.run_lock import check_writable
from experiments.runs import TIME_LIMITS, scenario_frame, solve_frame
from experiments.scenarios import SCENARIOS_SINCE, SUITE_VERSION, SUITES, build_problem
from experiments.trace_gate import (
    TRACE_DIRECTION,
    gate_trace_rows,
    judged_traces,
    parse_trace_optima,
    parse_traces,
    proven_trace_optima,
    trace_digests,
    trace_disagreements,
    trace_statistics,
)
from problems import LEVELS, ProblemError

BASELINE = Path(__file__).parents[1] / "baselines" / "gate.json"
#: The ``solver`` of a baseline's recorded optimum among a run's rows
#: (:func:`with_recorded_optima`).
RECORDED = "recorded"
LEVEL = [f"level{i}" for i in range(1, LEVELS + 1)]
BOUND = [f"bound{i}" for i in range(1, LEVELS + 1)]
TOLERANCE = 1e-9
#: Statistic -> +1 when higher is worse, -1 when lower is worse.
DIRECTION = {
    "valid": -1,
    "mean_rel_gap1": +1,
    "max_rel_gap1": +1,
    "mean_gap2": +1,
    "share_optimal": -1,
}
#: Each statistic's range (shares 0 to 1; gaps, relative or in level units, 0 to 2**63).
RANGES = {
    "valid": SHARE,
    "mean_rel_gap1": GAP,
    "max_rel_gap1": GAP,
    "mean_gap2": GAP,
    "share_optimal": SHARE,
}
#: A mean and its maximum (the mean is at most the maximum).
MEAN_MAX = ("mean_rel_gap1", "max_rel_gap1")
#: Statistics over no proven-optimal scenario (or no level-1 tie): nothing to regress on.
EMPTY = {"mean_rel_gap1": 0.0, "max_rel_gap1": 0.0, "mean_gap2": 0.0, "share_optimal": 1.0}


def gate_rows(
    suite_name: str = "gate",
    time_limit: float | None = None,
    progress: bool = True,
    processes: int | None = None,
    experiment: Experiment | None = None,
    plugins: list[Plugin] | None = None,
) -> pd.DataFrame:
    """Solve every scenario of the suite (or of ``experiment``, with ``plugins`` run on the
    scenarios judged on their objectives) on this machine, without Spark: in ``processes`` worker
    processes (default: one per core this process may run on; every solver is single-threaded; 1:
    in this process)."""
    if experiment is None:
        limit = TIME_LIMITS.get(suite_name, 5.0) if time_limit is None else time_limit
        scenarios = suite(suite_name)
    else:
        limit = experiment.time_limit if time_limit is None else time_limit
        scenarios, suite_name = experiment.scenarios, experiment.name
    processes = len(os.sched_getaffinity(0)) if processes is None else processes
    return solve_frame(
        scenario_frame(with_plugins(scenarios, plugins or [])),
        limit,
        progress=f"gate ({suite_name})" if progress else None,
        processes=processes,
    )


def scenario_digests(suite_name: str, experiment: Experiment | None = None) -> dict[str, str]:
    """Each scenario's problem document digest: a recorded optimum holds only for the same document
    (a scenario's previous owners come from Kafka's range and round robin, so changing them changes it)."""
    scenarios = suite(suite_name) if experiment is None else experiment.scenarios
    return {
        s.scenario_id: hashlib.sha256(
            orjson.dumps(build_problem(s), option=orjson.OPT_SORT_KEYS)
        ).hexdigest()[:16]
        for s in scenarios
    }


def proven_optima(rows: pd.DataFrame) -> dict[str, list[int]]:
    """Each scenario's proven optimum in ``rows``: its levels (those the objective has), by scenario id."""
    optimal = rows[(rows["role"] == "exact") & (rows["status"] == "optimal")].drop_duplicates(
        "scenario_id"
    )
    levels = [c for c in LEVEL if c in optimal]
    return {
        row["scenario_id"]: [int(row[c]) for c in levels if not pd.isna(row[c])]
        for row in optimal[["scenario_id", *levels]].to_dict("records")
    }


def with_recorded_optima(rows: pd.DataFrame, optima: dict[str, list[int]]) -> pd.DataFrame:
    """``rows`` plus, for every recorded scenario, its recorded optimum as one more exact row.

    The added row (solver :data:`RECORDED`, status ``optimal``, bound = levels)
    copies the scenario's columns from the scenario's first row, and the
    strategy from its exact rows, so gaps and disagreements treat it as any
    proven optimum.
    """
    present = [sid for sid in optima if sid in set(rows["scenario_id"])]
    if not present:
        return rows
    exact = (
        rows[rows["role"] == "exact"]
        .drop_duplicates("scenario_id")
        .set_index("scenario_id")["strategy"]
    )
    added = rows.drop_duplicates("scenario_id").set_index("scenario_id").loc[present].reset_index()
    levels = pd.DataFrame(
        [optima[sid] + [None] * (LEVELS - len(optima[sid])) for sid in present], columns=LEVEL
    )
    missing = pd.Series(pd.NA, index=added.index, dtype=object)
    added = added.assign(
        role="exact",
        solver=RECORDED,
        variant=missing,
        status="optimal",
        valid=True,
        runtime_s=0.0,
        error=missing,
        strategy=exact.reindex(present).fillna(added["strategy"]).to_numpy(),
        **{c: levels[c].to_numpy() for c in LEVEL},
        **{b: levels[c].to_numpy() for c, b in zip(LEVEL, BOUND)},
    )
    return pd.concat([rows, added.astype(rows.dtypes.to_dict())], ignore_index=True)


def statistics(
    rows: pd.DataFrame, counted: Collection[str] | None = None
) -> dict[str, dict[str, float]]:
    """Per ``judged_on/heuristic``: validity (every row) and gap statistics over proven-optimal scenarios,
    only those of ``counted`` when given (the baseline's recorded ones)."""
    gap_rows = gaps(rows)
    # Where the optimum's level 1 is 0 (a restore cost with every task on a caught-up process), a
    # relative gap is infinite and can neither be recorded nor get worse: the gate takes the
    # absolute gap there.
    relative = pd.to_numeric(gap_rows["rel_gap1"], errors="coerce")
    gap_rows["rel_gap1"] = relative.where(
        ~np.isinf(relative), pd.to_numeric(gap_rows["gap1"], errors="coerce")
    )
    if counted is not None:
        gap_rows["ref_status"] = gap_rows["ref_status"].where(
            gap_rows["scenario_id"].isin(list(counted))
        )
    table = summary(gap_rows, by=("judged_on", "heuristic"), proven_only=True).fillna(EMPTY)
    return {
        f"{row['judged_on']}/{row['heuristic']}": {
            "scenarios": int(row["scenarios"]),
            "compared": int(row["compared"]),
            "valid": float(row["valid"]),
            **{name: float(row[name]) for name in EMPTY},
        }
        for row in table.to_dict("records")
    }


def event_statistics(
    rows: pd.DataFrame, counted: Collection[str] | None = None
) -> dict[str, dict[str, dict[str, float]]]:
    """:func:`statistics` of every ``judged_on/heuristic`` by churn event (the scenarios' ``churn``):
    what names the event a regression is on."""
    table: dict[str, dict[str, dict[str, float]]] = {}
    for event, part in rows.groupby("churn", dropna=True):
        for name, values in statistics(part, counted).items():
            table.setdefault(name, {})[str(event)] = values
    return table


def event_regressions(
    baseline: dict[str, dict[str, dict[str, float]]],
    current: dict[str, dict[str, dict[str, float]]],
) -> pd.DataFrame:
    """One row per statistic of one heuristic on one event that got worse (:func:`regressions` by event)."""
    parts = []
    for name, events in sorted(baseline.items()):
        for event, before in sorted(events.items()):
            now = current.get(name, {}).get(event)
            if now is None:
                continue  # the heuristic's disappearance is the overall table's
            worse = regressions({name: before}, {name: now})
            parts.append(worse.assign(event=event))
    columns = ["heuristic", "event", "statistic", "baseline", "now"]
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True)[columns]


def regressions(
    baseline: dict[str, dict[str, float]],
    current: dict[str, dict[str, float]],
    direction: dict[str, int] = DIRECTION,
) -> pd.DataFrame:
    """One row per statistic that got worse (beyond ``TOLERANCE``) or heuristic that disappeared
    (``direction``: the statistics judged, :data:`DIRECTION`, or the traces' ``TRACE_DIRECTION``)."""
    worse = []
    for name, before in sorted(baseline.items()):
        now = current.get(name)
        if now is None:
            worse.append(
                {"heuristic": name, "statistic": "(missing)", "baseline": "present", "now": "gone"}
            )
            continue
        for statistic, sign in direction.items():
            if sign * (now[statistic] - before[statistic]) > TOLERANCE:
                worse.append(
                    {
                        "heuristic": name,
                        "statistic": statistic,
                        "baseline": f"{before[statistic]:.6g}",
                        "now": f"{now[statistic]:.6g}",
                    }
                )
    return pd.DataFrame(worse, columns=["heuristic", "statistic", "baseline", "now"])


def _still_recorded(
    recorded: dict[str, dict[str, Any]], digests: dict[str, str], field: str
) -> dict[str, Any]:
    """The baseline's ``field`` of every scenario whose document has the digest it was recorded
    with (a changed document's optimum is not taken)."""
    return {
        sid: entry[field] for sid, entry in recorded.items() if digests.get(sid) == entry["digest"]
    }


def _failed(what: str, shown: pd.DataFrame) -> int:
    """Exit status 1, saying on stderr what failed and the rows that show it."""
    print(f"gate: FAILED, {what}:\n{shown.to_string(index=False)}", file=sys.stderr)
    return 1


def register(subcommands: Subcommands) -> None:
    """Add the ``gate`` subcommand to the command line."""
    parser = subcommands.add_parser(
        "gate",
        help="fail (exit 1) when any heuristic's gap to optimal got worse than the committed baseline",
        description=__doc__.split("\n\n")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--suite", default="gate", choices=SUITES, help="scenario suite (default: gate)"
    )
    which.add_argument(
        "--experiment",
        metavar="FILE",
        help="an experiment file instead of a suite (its name is the baseline's suite)",
    )
    parser.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="[NAME=]SPEC",
        help="an assignor of your own judged like a built-in: module:function, exec:COMMAND or "
        "java:CLASS (repeatable; docs/gate-ci.md)",
    )
    parser.add_argument(
        "--classpath",
        metavar="JARS|DIR",
        help="the jars and class folders of every java: plugin (separated by ':'; a folder: its "
        "classes and its jars), before the Kafka release `make peers` built",
    )
    parser.add_argument(
        "--baseline", default=str(BASELINE), help=f"baseline file (default: {BASELINE})"
    )
    parser.add_argument(
        "--update", action="store_true", help="rewrite the baseline with this run's statistics"
    )
    parser.add_argument(
        "--time-limit", type=seconds, metavar="SEC", help="seconds per exact solver and scenario"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--processes",
        type=integer_in(1, 1024),
        metavar="N",
        help="solve in N worker processes (default: one per core; 1: in this process)",
    )
    parser.set_defaults(handler=command)


#: Result rows hold levels as 64-bit integers.
INT64 = (-(2**63), 2**63 - 1)


@dataclass(frozen=True)
class Baseline:
    """A checked baseline: each heuristic's statistics, and the recorded optima by scenario id."""

    heuristics: dict[str, dict[str, float]]
    optima: dict[str, dict[str, Any]]
    #: Each trace heuristic's statistics, and the recorded horizon optima (none in a baseline
    #: written before the suites had traces).
    traces: dict[str, dict[str, float]] = field(default_factory=dict)
    trace_optima: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Each heuristic's statistics by churn event (none in a baseline written before they were kept).
    events: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)


def _document(data: bytes, source: str, suite_name: str) -> dict[str, Any]:
    """The baseline's top-level object, of this suite and version, else a :class:`ProblemError`."""
    try:
        document = read_object(data.decode("utf-8-sig"), source)
    except ProblemError:  # a key given twice, named
        raise
    except UnicodeDecodeError as error:
        raise ProblemError(
            "", f"not UTF-8 (byte {error.start}); re-create it with --update", source
        ) from None
    except (
        ValueError,
        RecursionError,
    ) as error:  # malformed JSON, digits beyond int's limit, depth
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ProblemError(
            "", f"cannot read the baseline ({first}); re-create it with --update", source
        ) from None
    if type(document) is not dict:
        raise ProblemError(
            "",
            f"must be a JSON object, got {type_name(document)}; re-create it with --update",
            source,
        )
    version = document.get("suite_version")
    known = type(version) is int and SCENARIOS_SINCE <= version <= SUITE_VERSION
    if not known or document.get("suite") != suite_name:
        raise ProblemError(
            "",
            f"baseline is for suite {document.get('suite')!r} version "
            f"{document.get('suite_version')!r}, this run is {suite_name!r} version "
            f"{SUITE_VERSION}; re-create it with --update",
            source,
        )
    return document


def _object(document: dict[str, Any], field: str, source: str) -> dict[str, Any]:
    if field not in document:
        raise ProblemError(field, "missing; re-create the baseline with --update", source)
    value = document[field]
    if type(value) is not dict:
        raise ProblemError(field, f"must be an object, got {type_name(value)}", source)
    return value


def _heuristics(document: dict[str, Any], source: str) -> dict[str, dict[str, float]]:
    entries = _object(document, "heuristics", source)
    if not entries:
        raise ProblemError(
            "heuristics",
            "empty: the baseline would compare nothing; re-create it with --update",
            source,
        )
    return checked_statistics(entries, "heuristics", RANGES, source, MEAN_MAX)


def _events(document: dict[str, Any], source: str) -> dict[str, dict[str, dict[str, float]]]:
    """The baseline's statistics by event (optional), each entry checked as ``heuristics``' are."""
    if "events" not in document:
        return {}
    entries = _object(document, "events", source)
    checked = {}
    for name, events in entries.items():
        if type(events) is not dict or not events:
            raise ProblemError(
                f"events.{name}", f"must be a non-empty object, got {type_name(events)}", source
            )
        checked[name] = _heuristics({"heuristics": events}, f"{source} (events.{name})")
    return checked


def _optima(document: dict[str, Any], source: str) -> dict[str, dict[str, Any]]:
    entries = _object(document, "optima", source)
    for scenario, entry in entries.items():
        field = f"optima.{scenario}"
        if type(entry) is not dict:
            raise ProblemError(field, f"must be an object, got {type_name(entry)}", source)
        for key in ("digest", "levels"):
            if key not in entry:
                raise ProblemError(
                    f"{field}.{key}", "missing; re-create the baseline with --update", source
                )
        if type(entry["digest"]) is not str:
            raise ProblemError(
                f"{field}.digest", f"must be a string, got {type_name(entry['digest'])}", source
            )
        levels = entry["levels"]
        if type(levels) is not list or not 1 <= len(levels) <= LEVELS:
            shown = f"{len(levels)} levels" if type(levels) is list else type_name(levels)
            raise ProblemError(
                f"{field}.levels", f"must be a list of 1 to {LEVELS} integers, got {shown}", source
            )
        for i, level in enumerate(levels):
            if type(level) is not int or not INT64[0] <= level <= INT64[1]:
                shown = repr(level) if type(level) in (int, float, str) else type_name(level)
                raise ProblemError(
                    f"{field}.levels[{i}]", f"must be a 64-bit integer, got {shown}", source
                )
    return entries


def parse_baseline(data: bytes, source: str, suite_name: str) -> Baseline:
    """The baseline in ``data`` (the bytes of the file ``source``), checked for suite ``suite_name``.

    Raises
    ------
    ProblemError
        Not UTF-8 JSON, not an object, another suite or version, no heuristics, a statistic that is
        missing or not a finite number, a recorded optimum without a digest or integer levels.
    """
    document = _document(data, source, suite_name)
    heuristics = _heuristics(document, source)
    return Baseline(
        heuristics=heuristics,
        optima=_optima(document, source),
        traces=parse_traces(document, source),
        trace_optima=parse_trace_optima(document, source),
        events=_events(document, source),
    )


def read_baseline(path: Path, suite_name: str) -> Baseline:
    """:func:`parse_baseline` of the file ``path``."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise ProblemError(
            "",
            f"cannot read the baseline ({error.strerror or error}); create it with --update",
            str(path),
        ) from None
    return parse_baseline(data, str(path), suite_name)


def _recorded(path: Path, suite_name: str) -> dict[str, dict[str, Any]]:
    """The optima an existing baseline of this suite and version records (none when there is no
    such file; a malformed one's are not kept, said in a note)."""
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    try:
        return _optima(_document(data, str(path), suite_name), str(path))
    except ProblemError as error:
        print(f"note: {error}; its recorded optima are not kept", file=sys.stderr)
        return {}


def _recorded_trace_optima(path: Path, suite_name: str) -> dict[str, dict[str, Any]]:
    """The trace optima an existing baseline records (none when it has none or is malformed)."""
    try:
        return parse_trace_optima(_document(path.read_bytes(), str(path), suite_name), str(path))
    except (OSError, ProblemError):
        return {}


def command(args: argparse.Namespace) -> int:
    path = Path(args.baseline)
    experiment = load_experiment(args.experiment) if args.experiment else load_suite(args.suite)
    name = experiment.name
    given = experiment if args.experiment else None  # a shipped suite keeps its time limit
    specs = [with_classpath(spec, args.classpath) for spec in args.plugin]
    if args.classpath is not None and not any(s != p for s, p in zip(specs, args.plugin)):
        raise ProblemError(
            "--classpath", "no java: plugin without a classpath of its own to use it"
        )
    # Only the plugins named here or in the experiment file: the gate judges what it is told to.
    plugins = plugins_for(specs, experiment=experiment, entry_points=False)
    judged: dict[str, dict[str, float]] = {}  # the baseline's statistics (none with --update)
    judged_events: dict[str, dict[str, dict[str, float]]] = {}
    judged_trace_stats: dict[str, dict[str, float]] | None = None  # None: no traces recorded
    if args.update:  # the baseline's folder is checked before any solving
        check_writable(path.parent)
        if path.is_dir():
            raise ProblemError("", "cannot write the baseline: it is a folder", str(path))
        recorded = _recorded(path, name)
        recorded_traces = _recorded_trace_optima(path, name)
    else:  # the baseline is read and checked before any solving
        baseline = read_baseline(path, name)
        recorded, judged = baseline.optima, baseline.heuristics
        judged_events = baseline.events
        recorded_traces = baseline.trace_optima
        judged_trace_stats = baseline.traces if baseline.traces else None
    rows = gate_rows(
        name,
        args.time_limit,
        progress=not args.no_progress,
        processes=args.processes,
        experiment=given,
        plugins=plugins,
    )
    trace_run = gate_trace_rows(
        name,
        args.time_limit,
        progress=not args.no_progress,
        processes=args.processes,
        experiment=given,
    )
    trace_ids = trace_digests(name, given)
    trace_optima = _still_recorded(recorded_traces, trace_ids, "moves")
    proven_traces = proven_trace_optima(trace_run)
    if args.update:
        trace_optima.update(proven_traces)
    trace_gap_rows = judged_traces(trace_run, trace_optima)
    beaten = trace_disagreements(trace_gap_rows)
    if len(beaten):  # a horizon "optimum" that a run with the same levels beats is wrong
        shown = beaten[["scenario_id", "heuristic", "moves", "horizon_moves"]]
        return _failed(
            f"a run beats the horizon optimum on {shown['scenario_id'].nunique()} traces", shown
        )
    current_traces = trace_statistics(trace_gap_rows)
    digests = scenario_digests(name, given)
    proven = proven_optima(rows)
    optima = _still_recorded(recorded, digests, "levels")
    # their documents changed: counted only where proven in this run
    changed = set(recorded) - set(optima)
    if args.update:  # keep what the earlier baseline proved (same documents), add this run's
        optima.update(proven)
    rows = with_recorded_optima(rows, optima)
    contradicted = disagreements(rows)
    # an exact solver's "optimal" that is wrong: no statistic built on it can be trusted
    if len(contradicted):
        shown = contradicted[["scenario_id", "solver", "status", "reason"]]
        return _failed(
            f"exact solvers disagree on {shown['scenario_id'].nunique()} scenarios", shown
        )
    counted = set(optima) | (changed & set(proven))
    current = statistics(rows, counted)
    current_events = event_statistics(rows, counted)
    if args.update:
        document = {
            "suite": name,
            "suite_version": SUITE_VERSION,
            "tolerance": TOLERANCE,
            "heuristics": current,
            "events": current_events,
            "optima": {
                sid: {"digest": digests[sid], "levels": optima[sid]} for sid in sorted(optima)
            },
            "traces": current_traces,
            "trace_optima": {
                sid: {"digest": trace_ids[sid], "moves": trace_optima[sid]}
                for sid in sorted(trace_optima)
            },
        }
        path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
        print(
            f"gate: baseline written to {path} ({len(current)} heuristics, {len(optima)} optima, "
            f"{len(current_traces)} trace heuristics, {len(trace_optima)} trace optima)",
            file=sys.stderr,
        )
        return 0
    unrecorded = len(set(proven) - set(optima) - changed)
    print(
        f"gate: {len(optima)} recorded optima ({len(set(proven) & set(optima))} proven again in this run)"
        + (
            f"; {len(changed)} scenario documents changed since the baseline (counted where proven now)"
            if changed
            else ""
        )
        + (f"; {unrecorded} more proven now, not counted until --update" if unrecorded else ""),
        file=sys.stderr,
    )
    worse = regressions(judged, current)
    worse_events = event_regressions(judged_events, current_events)
    table = pd.DataFrame.from_dict(current, orient="index")
    print(table.to_string(float_format=lambda v: f"{v:.4g}"))
    if current_traces:
        print(
            pd.DataFrame.from_dict(current_traces, orient="index").to_string(
                float_format=lambda v: f"{v:.4g}"
            )
        )
    if judged_trace_stats is None:
        if current_traces:
            print(
                "gate: the baseline records no trace totals; traces not judged until --update",
                file=sys.stderr,
            )
    else:
        worse = pd.concat(
            [worse, regressions(judged_trace_stats, current_traces, TRACE_DIRECTION)],
            ignore_index=True,
        )
        new_traces = sorted(set(current_traces) - set(judged_trace_stats))
        if new_traces:
            print(
                f"gate: traces not in the baseline yet (not judged): {', '.join(new_traces)}",
                file=sys.stderr,
            )
    new = sorted(set(current) - set(judged))
    if new:
        print(f"gate: not in the baseline yet (not judged): {', '.join(new)}", file=sys.stderr)
    if len(worse) or len(worse_events):
        print(
            "\ngate: FAILED, worse than the baseline (tolerance "
            f"{TOLERANCE:g}):\n{worse.to_string(index=False)}",
            file=sys.stderr,
        )
        if len(worse_events):
            print(
                f"\nby event:\n{worse_events.to_string(index=False)}",
                file=sys.stderr,
            )
        return 1
    print(f"gate: passed ({len(current)} heuristics, none worse than {path})", file=sys.stderr)
    return 0
