"""``rebalance-lab gate``: the CI regression gate on heuristic quality.

Runs the ``gate`` suite on this machine (the same :func:`experiments.runs.solve_frame` the Spark job
maps, without starting Spark: in one worker process per core, ``--processes``), computes each
heuristic's gap statistics against the proven optima (:func:`experiments.gap.summary`), and compares
them with a committed baseline (``baselines/gate.json``).  Exit 1 with a table of what got worse, 0
otherwise; ``--update`` rewrites the baseline.

Why the statistics do not depend on the machine, and what counts as worse: docs/harness.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections.abc import Collection
from pathlib import Path

import orjson
import pandas as pd

from experiments.gap import disagreements, gaps, summary
from experiments.options import integer_in, seconds
from experiments.run_lock import check_writable
from experiments.runs import TIME_LIMITS, scenario_frame, solve_frame
from experiments.scenarios import SUITE_VERSION, SUITES, build_problem, suite
from problems import LEVELS

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
#: Statistics over no proven-optimal scenario (or no level-1 tie): nothing to regress on.
EMPTY = {"mean_rel_gap1": 0.0, "max_rel_gap1": 0.0, "mean_gap2": 0.0, "share_optimal": 1.0}


def gate_rows(
    suite_name: str = "gate",
    time_limit: float | None = None,
    progress: bool = True,
    processes: int | None = None,
) -> pd.DataFrame:
    """Solve every scenario of the suite on this machine, without Spark: in ``processes`` worker processes
    (default: one per core this process may run on; every solver is single-threaded; 1: in this process)."""
    limit = TIME_LIMITS.get(suite_name, 5.0) if time_limit is None else time_limit
    processes = len(os.sched_getaffinity(0)) if processes is None else processes
    return solve_frame(
        scenario_frame(suite(suite_name)),
        limit,
        progress=f"gate ({suite_name})" if progress else None,
        processes=processes,
    )


def scenario_digests(suite_name: str) -> dict[str, str]:
    """Each scenario's problem document digest: a recorded optimum holds only for the same document
    (a scenario's previous owners come from Kafka's range and round robin, so changing them changes it)."""
    return {
        s.scenario_id: hashlib.sha256(
            orjson.dumps(build_problem(s), option=orjson.OPT_SORT_KEYS)
        ).hexdigest()[:16]
        for s in suite(suite_name)
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
    added = added.assign(
        role="exact",
        solver=RECORDED,
        variant=pd.NA,
        status="optimal",
        valid=True,
        runtime_s=0.0,
        error=pd.NA,
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


def regressions(
    baseline: dict[str, dict[str, float]], current: dict[str, dict[str, float]]
) -> pd.DataFrame:
    """One row per statistic that got worse (beyond ``TOLERANCE``) or heuristic that disappeared."""
    worse = []
    for name, before in sorted(baseline.items()):
        now = current.get(name)
        if now is None:
            worse.append(
                {"heuristic": name, "statistic": "(missing)", "baseline": "present", "now": "gone"}
            )
            continue
        for statistic, direction in DIRECTION.items():
            if direction * (now[statistic] - before[statistic]) > TOLERANCE:
                worse.append(
                    {
                        "heuristic": name,
                        "statistic": statistic,
                        "baseline": f"{before[statistic]:.6g}",
                        "now": f"{now[statistic]:.6g}",
                    }
                )
    return pd.DataFrame(worse, columns=["heuristic", "statistic", "baseline", "now"])


def register(subcommands) -> None:
    """Add the ``gate`` subcommand to the command line."""
    parser = subcommands.add_parser(
        "gate",
        help="fail (exit 1) when any heuristic's gap to optimal got worse than the committed baseline",
        description=__doc__.split("\n\n")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--suite", default="gate", choices=SUITES, help="scenario suite (default: gate)"
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


def _recorded(path: Path, suite_name: str) -> dict[str, dict]:
    """The optima an existing baseline of this suite and version records (none when there is no such file)."""
    try:
        document = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    if document.get("suite") != suite_name or document.get("suite_version") != SUITE_VERSION:
        return {}
    return document.get("optima", {})


def command(args: argparse.Namespace) -> int:
    path = Path(args.baseline)
    document = None
    if args.update:  # the baseline's folder is checked before any solving
        check_writable(path.parent)
    else:  # the baseline is read and checked before any solving
        try:
            document = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as error:
            print(
                f"error: {path}: cannot read the baseline ({error}); create it with --update",
                file=sys.stderr,
            )
            return 2
        optima = document.get("optima")
        stale = (
            type(optima) is not dict
            or any(type(e) is not dict or {"digest", "levels"} - e.keys() for e in optima.values())
            or any(set(DIRECTION) - set(entry) for entry in document.get("heuristics", {}).values())
        )
        if (
            document.get("suite_version") != SUITE_VERSION
            or document.get("suite") != args.suite
            or stale
        ):
            print(
                f"error: {path}: baseline is for suite {document.get('suite')!r} version "
                f"{document.get('suite_version')}, this run is {args.suite!r} version {SUITE_VERSION}"
                f"{' (other statistics)' if stale else ''}; "
                "re-create it with --update",
                file=sys.stderr,
            )
            return 2
    rows = gate_rows(
        args.suite, args.time_limit, progress=not args.no_progress, processes=args.processes
    )
    digests = scenario_digests(args.suite)
    proven = proven_optima(rows)
    recorded = _recorded(path, args.suite) if args.update else document["optima"]
    optima = {
        sid: entry["levels"]
        for sid, entry in recorded.items()
        if digests.get(sid) == entry["digest"]
    }
    changed = set(recorded) - set(
        optima
    )  # their documents changed: counted only where proven in this run
    if (
        args.update
    ):  # keep what the earlier baseline proved (same documents), add what this run proved
        optima.update(proven)
    rows = with_recorded_optima(rows, optima)
    contradicted = disagreements(rows)
    if len(
        contradicted
    ):  # an exact solver's "optimal" is wrong: no statistic built on it can be trusted
        shown = contradicted[["scenario_id", "solver", "status", "reason"]]
        print(
            f"gate: FAILED, exact solvers disagree on {contradicted['scenario_id'].nunique()} scenarios:\n"
            f"{shown.to_string(index=False)}",
            file=sys.stderr,
        )
        return 1
    current = statistics(rows, set(optima) | (changed & set(proven)))
    if args.update:
        document = {
            "suite": args.suite,
            "suite_version": SUITE_VERSION,
            "tolerance": TOLERANCE,
            "heuristics": current,
            "optima": {
                sid: {"digest": digests[sid], "levels": optima[sid]} for sid in sorted(optima)
            },
        }
        path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
        print(
            f"gate: baseline written to {path} ({len(current)} heuristics, {len(optima)} optima)",
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
    worse = regressions(document["heuristics"], current)
    table = pd.DataFrame.from_dict(current, orient="index")
    print(table.to_string(float_format=lambda v: f"{v:.4g}"))
    new = sorted(set(current) - set(document["heuristics"]))
    if new:
        print(f"gate: not in the baseline yet (not judged): {', '.join(new)}", file=sys.stderr)
    if len(worse):
        print(
            "\ngate: FAILED, worse than the baseline (tolerance "
            f"{TOLERANCE:g}):\n{worse.to_string(index=False)}",
            file=sys.stderr,
        )
        return 1
    print(f"gate: passed ({len(current)} heuristics, none worse than {path})", file=sys.stderr)
    return 0
