"""The gate over traces: each heuristic's total trace moves against the horizon optimum.

``rebalance-lab gate`` solves the suite's trace scenarios as it solves its scenarios (in worker
processes, without Spark), and judges, per objective, trace family and heuristic
(``judged_on/trace/heuristic``): the share of traces where the heuristic ties the optimum's levels
at every step (``share_tied``, lower is worse), and over those with a proven horizon optimum the
mean and largest excess of its total moves over the optimum (``mean_excess_moves``,
``max_excess_moves``, in moves: higher is worse) and the share of traces where its total is the
optimum (``share_optimal``, lower is worse).  Moves are counted, not timed, so the statistics do
not depend on the machine once the horizon optima are proven; a baseline records them
(``trace_optima``: each trace's optimal total moves by scenario id and trace digest), and a run that
does not prove a recorded trace's optimum within its time limit uses the recorded one.

A baseline's ``traces`` and ``trace_optima`` are optional: a baseline without them (one written
before the suites had traces) judges no trace until ``--update`` records them.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import orjson
import pandas as pd

from experiments.baseline_checks import GAP, SHARE, type_name
from experiments.baseline_checks import statistics as checked_statistics
from experiments.experiment import Experiment, load_suite
from experiments.runs import TIME_LIMITS
from experiments.trace_gap import STEP_OPTIMAL, trace_gaps
from experiments.trace_runs import solve_trace_frame, trace_frame
from experiments.trace_scenarios import build_trace
from problems import ProblemError

#: Statistic -> +1 when higher is worse, -1 when lower is worse.
TRACE_DIRECTION = {
    "share_tied": -1,
    "mean_excess_moves": +1,
    "max_excess_moves": +1,
    "share_optimal": -1,
}
#: Each statistic's range (shares 0 to 1, excess moves 0 to 2**63), and a mean with its maximum.
TRACE_RANGES = {
    "share_tied": SHARE,
    "mean_excess_moves": GAP,
    "max_excess_moves": GAP,
    "share_optimal": SHARE,
}
TRACE_MEAN_MAX = ("mean_excess_moves", "max_excess_moves")
#: Statistics over no tied trace with a proven optimum: nothing to regress on.
TRACE_EMPTY = {"mean_excess_moves": 0.0, "max_excess_moves": 0.0, "share_optimal": 1.0}


def gate_trace_rows(
    suite_name: str = "gate",
    time_limit: float | None = None,
    progress: bool = True,
    processes: int | None = None,
    experiment: Experiment | None = None,
) -> pd.DataFrame:
    """Solve every trace scenario of the suite (or of ``experiment``) on this machine, without
    Spark (as :func:`experiments.gate.gate_rows` does its scenarios); no rows when it has none."""
    traces = (experiment or load_suite(suite_name)).traces
    if time_limit is not None:
        limit = time_limit
    elif experiment is not None:
        limit = experiment.time_limit
    else:
        limit = TIME_LIMITS.get(suite_name, 5.0)
    processes = len(os.sched_getaffinity(0)) if processes is None else processes
    return solve_trace_frame(
        trace_frame(traces),
        limit,
        progress=f"gate ({suite_name}, traces)" if progress and traces else None,
        processes=processes,
    )


def trace_digests(suite_name: str, experiment: Experiment | None = None) -> dict[str, str]:
    """Each trace scenario's trace document digest: a recorded optimum holds only for the same trace."""
    return {
        t.scenario_id: hashlib.sha256(
            orjson.dumps(build_trace(t), option=orjson.OPT_SORT_KEYS)
        ).hexdigest()[:16]
        for t in (experiment or load_suite(suite_name)).traces
    }


def proven_trace_optima(rows: pd.DataFrame) -> dict[str, int]:
    """Each trace's proven optimal total moves in ``rows`` (the horizon's per-trace rows)."""
    if rows.empty:
        return {}
    totals = rows[
        (rows["solver"] == "horizon") & rows["step"].isna() & (rows["status"] == "optimal")
    ]
    return {str(r["scenario_id"]): int(r["moves"]) for r in totals.to_dict("records")}


def with_recorded_trace_optima(rows: pd.DataFrame, optima: dict[str, int]) -> pd.DataFrame:
    """``rows`` where every recorded trace's horizon total is the recorded optimum, proven: a run
    that proved it agrees (else :func:`trace_disagreements` says so), one that did not uses it."""
    if rows.empty or not optima:
        return rows
    rows = rows.copy()
    total = rows["step"].isna() & (rows["solver"] == "horizon")
    recorded = rows["scenario_id"].map(optima)
    unproven = total & recorded.notna() & (rows["status"] != "optimal")
    rows.loc[unproven, "moves"] = recorded[unproven].astype("int64")
    rows.loc[unproven, "moves_bound"] = recorded[unproven].astype("int64")
    rows.loc[unproven, "status"] = "optimal"
    rows.loc[unproven, "valid"] = True
    return rows


def trace_disagreements(gap_rows: pd.DataFrame) -> pd.DataFrame:
    """Runs whose levels tie the optimum's at every step with fewer total moves than a proven horizon
    optimum: the optimum is wrong (a bug)."""
    if gap_rows.empty:
        return gap_rows
    proven = gap_rows["horizon_status"].astype(object) == "optimal"
    beaten = gap_rows["levels_tie"].astype(bool) & proven & (gap_rows["gap_moves"] < 0)
    return gap_rows[beaten]


def trace_statistics(gap_rows: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Per ``judged_on/trace/heuristic`` (heuristics only): traces, ties and the gate's statistics."""
    out: dict[str, dict[str, float]] = {}
    heuristics = gap_rows[gap_rows["heuristic"] != STEP_OPTIMAL] if len(gap_rows) else gap_rows
    for (objective, trace, run), group in heuristics.groupby(
        ["judged_on", "trace", "heuristic"], sort=True
    ):
        tied = group[group["levels_tie"].astype(bool)]
        proven = tied[tied["horizon_status"].astype(object) == "optimal"]
        excess = pd.to_numeric(proven["gap_moves"], errors="coerce").dropna()
        out[f"{objective}/{trace}/{run}"] = {
            "traces": int(group["scenario_id"].nunique()),
            "tied": int(len(tied)),
            "compared": int(len(excess)),
            "share_tied": float(len(tied) / len(group)) if len(group) else 1.0,
            "mean_excess_moves": float(excess.mean())
            if len(excess)
            else TRACE_EMPTY["mean_excess_moves"],
            "max_excess_moves": float(excess.max())
            if len(excess)
            else TRACE_EMPTY["max_excess_moves"],
            "share_optimal": float((excess == 0).mean())
            if len(excess)
            else TRACE_EMPTY["share_optimal"],
        }
    return out


def judged_traces(rows: pd.DataFrame, optima: dict[str, int]) -> pd.DataFrame:
    """The gap rows of a gate run's traces, the recorded optima standing in for unproven ones."""
    return trace_gaps(with_recorded_trace_optima(rows, optima))


# ----------------------------------------------------------------- baseline parts


def parse_traces(document: dict[str, Any], source: str) -> dict[str, dict[str, float]]:
    """A baseline's ``traces`` statistics (none when absent), checked: every statistic a finite
    number in its range (:data:`TRACE_RANGES`)."""
    entries = document.get("traces", {})
    if type(entries) is not dict:
        raise ProblemError("traces", f"must be an object, got {type_name(entries)}", source)
    return checked_statistics(entries, "traces", TRACE_RANGES, source, TRACE_MEAN_MAX)


def parse_trace_optima(document: dict[str, Any], source: str) -> dict[str, dict[str, Any]]:
    """A baseline's ``trace_optima`` (none when absent), checked: a digest and total moves each."""
    entries = document.get("trace_optima", {})
    if type(entries) is not dict:
        raise ProblemError("trace_optima", f"must be an object, got {type_name(entries)}", source)
    for scenario, entry in entries.items():
        field = f"trace_optima.{scenario}"
        if type(entry) is not dict:
            raise ProblemError(field, f"must be an object, got {type_name(entry)}", source)
        if type(entry.get("digest")) is not str:
            raise ProblemError(
                f"{field}.digest",
                f"must be a string, got {type_name(entry.get('digest'))}",
                source,
            )
        moves = entry.get("moves")
        if type(moves) is not int or not 0 <= moves < 2**63:
            shown = repr(moves) if type(moves) in (int, float, str) else type_name(moves)
            raise ProblemError(f"{field}.moves", f"must be an integer >= 0, got {shown}", source)
    return entries
