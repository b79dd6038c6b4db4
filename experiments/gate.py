"""``rebalance-lab gate``: the CI regression gate on heuristic quality.

Runs the ``gate`` suite in-process (the same :func:`experiments.runs.solve_frame`
the Spark job maps, without starting Spark), computes each heuristic's gap
statistics against the proven optima (:func:`experiments.gap.summary`), and
compares them with a committed baseline (``baselines/gate.json``).  Exit 1 with a table of what got worse,
0 otherwise; ``--update`` rewrites the baseline.

Only scenarios whose exact reference is proven ``optimal`` count, so the
statistics do not depend on how far a time-limited solver got; heuristics are
deterministic, so the statistics are exactly reproducible and the tolerance
(``TOLERANCE``) only absorbs floating-point noise.  Any disagreement between
exact solvers (:func:`experiments.gap.disagreements`) fails the gate first.  Worse means: a lower share
of valid answers, a higher mean or max relative level-1 gap, a higher mean
level-2 gap where level 1 ties, a lower share of optimal answers, or a
heuristic that is gone.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from experiments.gap import disagreements, gaps, summary
from experiments.options import seconds
from experiments.run_lock import check_writable
from experiments.runs import TIME_LIMITS, scenario_frame, solve_frame
from experiments.scenarios import SUITE_VERSION, SUITES, suite

BASELINE = Path(__file__).parents[1] / "baselines" / "gate.json"
TOLERANCE = 1e-9
#: Statistic -> +1 when higher is worse, -1 when lower is worse.
DIRECTION = {"valid": -1, "mean_rel_gap1": +1, "max_rel_gap1": +1, "mean_gap2": +1, "share_optimal": -1}
#: Statistics over no proven-optimal scenario (or no level-1 tie): nothing to regress on.
EMPTY = {"mean_rel_gap1": 0.0, "max_rel_gap1": 0.0, "mean_gap2": 0.0, "share_optimal": 1.0}


def gate_rows(suite_name: str = "gate", time_limit: float | None = None, progress: bool = True) -> pd.DataFrame:
    """Solve every scenario of the suite in this process."""
    limit = TIME_LIMITS.get(suite_name, 5.0) if time_limit is None else time_limit
    return solve_frame(scenario_frame(suite(suite_name)), limit, progress=f"gate ({suite_name})" if progress else None)


def statistics(rows: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Per ``objective/heuristic``: validity and gap statistics over proven-optimal scenarios."""
    table = summary(gaps(rows), by=("objective", "heuristic"), proven_only=True).fillna(EMPTY)
    return {
        f"{row['objective']}/{row['heuristic']}": {
            "scenarios": int(row["scenarios"]), "compared": int(row["compared"]), "valid": float(row["valid"]),
            **{name: float(row[name]) for name in EMPTY},
        }
        for row in table.to_dict("records")
    }


def regressions(baseline: dict[str, dict[str, float]], current: dict[str, dict[str, float]]) -> pd.DataFrame:
    """One row per statistic that got worse (beyond ``TOLERANCE``) or heuristic that disappeared."""
    worse = []
    for name, before in sorted(baseline.items()):
        now = current.get(name)
        if now is None:
            worse.append({"heuristic": name, "statistic": "(missing)", "baseline": "present", "now": "gone"})
            continue
        for statistic, direction in DIRECTION.items():
            if direction * (now[statistic] - before[statistic]) > TOLERANCE:
                worse.append({"heuristic": name, "statistic": statistic,
                              "baseline": f"{before[statistic]:.6g}", "now": f"{now[statistic]:.6g}"})
    return pd.DataFrame(worse, columns=["heuristic", "statistic", "baseline", "now"])


def register(subcommands) -> None:
    """Add the ``gate`` subcommand to the command line."""
    parser = subcommands.add_parser(
        "gate", help="fail (exit 1) when any heuristic's gap to optimal got worse than the committed baseline",
        description=__doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--suite", default="gate", choices=SUITES, help="scenario suite (default: gate)")
    parser.add_argument("--baseline", default=str(BASELINE), help=f"baseline file (default: {BASELINE})")
    parser.add_argument("--update", action="store_true", help="rewrite the baseline with this run's statistics")
    parser.add_argument("--time-limit", type=seconds, metavar="SEC", help="seconds per exact solver and scenario")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(handler=command)


def command(args: argparse.Namespace) -> int:
    path = Path(args.baseline)
    document = None
    if args.update:  # the baseline's folder is checked before any solving
        check_writable(path.parent)
    else:  # the baseline is read and checked before any solving
        try:
            document = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as error:
            print(f"error: {path}: cannot read the baseline ({error}); create it with --update", file=sys.stderr)
            return 2
        stale = any(set(DIRECTION) - set(entry) for entry in document.get("heuristics", {}).values())
        if document.get("suite_version") != SUITE_VERSION or document.get("suite") != args.suite or stale:
            print(f"error: {path}: baseline is for suite {document.get('suite')!r} version "
                  f"{document.get('suite_version')}, this run is {args.suite!r} version {SUITE_VERSION}"
                  f"{' (other statistics)' if stale else ''}; "
                  "re-create it with --update", file=sys.stderr)
            return 2
    rows = gate_rows(args.suite, args.time_limit, progress=not args.no_progress)
    contradicted = disagreements(rows)
    if len(contradicted):  # an exact solver's "optimal" is wrong: no statistic built on it can be trusted
        shown = contradicted[["scenario_id", "solver", "status", "reason"]]
        print(f"gate: FAILED, exact solvers disagree on {contradicted['scenario_id'].nunique()} scenarios:\n"
              f"{shown.to_string(index=False)}", file=sys.stderr)
        return 1
    current = statistics(rows)
    if args.update:
        document = {"suite": args.suite, "suite_version": SUITE_VERSION, "tolerance": TOLERANCE,
                    "heuristics": current}
        path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
        print(f"gate: baseline written to {path} ({len(current)} heuristics)", file=sys.stderr)
        return 0
    worse = regressions(document["heuristics"], current)
    table = pd.DataFrame.from_dict(current, orient="index")
    print(table.to_string(float_format=lambda v: f"{v:.4g}"))
    new = sorted(set(current) - set(document["heuristics"]))
    if new:
        print(f"gate: not in the baseline yet (not judged): {', '.join(new)}", file=sys.stderr)
    if len(worse):
        print("\ngate: FAILED, worse than the baseline (tolerance "
              f"{TOLERANCE:g}):\n{worse.to_string(index=False)}", file=sys.stderr)
        return 1
    print(f"gate: passed ({len(current)} heuristics, none worse than {path})", file=sys.stderr)
    return 0
