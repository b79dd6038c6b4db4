"""Gap analysis over traces: each heuristic's total trace moves against the horizon optimum.

A trace run's rows (:mod:`experiments.trace_runs`) are one per step and one per trace.  The
horizon optimum keeps every step at its optimum of the levels above moves, then makes the fewest
moves over the whole trace; so a heuristic's total moves compare with it only where the heuristic,
too, is at the optimum of those levels at every step (DESIGN's lexicographic rule: a moves gap
below an unequal level means nothing).  :func:`trace_gaps` gives, per trace and heuristic run,
whether its levels tie the optimum's at every step (``levels_tie``) and, where they do, its
excess moves over the horizon optimum: exact where the horizon is ``optimal``, the interval
``[H - E, H - B]`` where it is only ``feasible`` (E its moves, B its proven bound), and over the
per-step optimum (``step``: each step optimal alone, knowing nothing of the steps to come).  The
per-step optimum is itself a row (``step-optimal``), measuring what foresight saves.

Plain pandas over the Parquet rows.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from experiments.gap import label
from experiments.tables import SEED, bootstrap_ci, heuristic_name, number, percent
from models.registry import judged_strategies
from problems import above_moves


def above_moves_of() -> dict[str, int]:
    """Levels above moves per strategy traces are judged on (:func:`problems.above_moves`): the
    levels a step must tie for its moves to compare (lag-aware has no moves level: every level)."""
    return {
        record.name: above_moves(record.objective)
        for record in judged_strategies()
        if record.judging is not None and record.judging.trace_panel is not None
    }


#: The label of the per-step optimum's run among the heuristics of a trace table.
STEP_OPTIMAL = "step-optimal"
#: Human names of the exact trace runs.
TRACE_NAMES = {STEP_OPTIMAL: "each step optimal alone (step)", "horizon": "horizon optimum"}


def trace_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The trace rows of ``rows`` (per step and per trace): those :func:`experiments.gap.single`
    leaves out."""
    if "trace" not in rows:
        return rows.iloc[0:0]
    return rows[rows["trace"].astype(object).fillna("").astype(str) != ""]


def _floats(column: pd.Series) -> np.ndarray:
    return pd.to_numeric(column, errors="coerce").astype("float64").to_numpy()


def _run_label(rows: pd.DataFrame) -> pd.Series:
    """``strategy[variant]`` for heuristics, ``step-optimal`` and ``horizon`` for the exact runs."""
    exact = rows["solver"].astype(object).map({"step": STEP_OPTIMAL, "horizon": "horizon"})
    return exact.where(exact.notna(), label(rows)).astype(str)


def trace_gaps(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per trace scenario and run (heuristics and ``step-optimal``; not the horizon itself).

    Columns: the scenario's (``scenario_id``, ``judged_on``, ``trace``, ``family``, ``size``,
    ``steps``, ``seed``), ``heuristic`` (the run's label), ``status``, ``valid``, ``moves`` (its
    total), ``horizon_status``, ``horizon_moves``, ``horizon_bound``, ``step_moves``, ``steps_tied``
    (steps whose levels above moves equal the optimum's), ``levels_tie`` (every step),
    ``gap_moves`` (H - E, where the levels tie and the horizon has an answer), ``gap_moves_high``
    (H - B: the high end where the horizon is only feasible), ``rel_gap_moves`` (over E; 0 when
    both are 0, infinite when only E is), ``rel_gap_moves_high`` (over B), ``gap_vs_step`` (H - S
    where the levels tie) and ``horizon_optimal`` (the heuristic's total equals a proven optimum).
    """
    frame = trace_rows(rows).copy()
    columns = [
        "scenario_id",
        "judged_on",
        "trace",
        "family",
        "size",
        "steps",
        "seed",
        "heuristic",
        "status",
        "valid",
        "moves",
        "runtime_s",
        "horizon_status",
        "horizon_moves",
        "horizon_bound",
        "step_moves",
        "steps_tied",
        "levels_tie",
        "gap_moves",
        "gap_moves_high",
        "rel_gap_moves",
        "rel_gap_moves_high",
        "gap_vs_step",
        "horizon_optimal",
    ]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    frame["heuristic"] = _run_label(frame)
    per_step = frame[frame["step"].notna()]
    totals = frame[frame["step"].isna()].drop_duplicates(["scenario_id", "heuristic"])
    horizon = totals[(totals["heuristic"] == "horizon")].set_index("scenario_id")
    step = totals[(totals["heuristic"] == STEP_OPTIMAL)].set_index("scenario_id")
    answered = horizon["status"].astype(object).isin(["optimal", "feasible"]) & horizon[
        "valid"
    ].astype(object).eq(True)
    horizon = horizon[answered]
    step = step[step["status"].astype(object).isin(["optimal", "feasible"])]
    tied = _steps_tied(per_step)
    out = totals[totals["heuristic"] != "horizon"].copy()
    out = out.join(tied, on=["scenario_id", "heuristic"])
    out["horizon_status"] = out["scenario_id"].map(horizon["status"].astype(object))
    out["horizon_moves"] = out["scenario_id"].map(horizon["moves"].astype("float64"))
    bound = pd.to_numeric(horizon["moves_bound"], errors="coerce").astype("float64")
    proven = horizon["status"].astype(object) == "optimal"
    bound = bound.where(bound.notna() | ~proven, horizon["moves"].astype("float64"))
    out["horizon_bound"] = out["scenario_id"].map(bound)
    out["step_moves"] = out["scenario_id"].map(step["moves"].astype("float64"))
    length = per_step.groupby("scenario_id")["step"].nunique()
    valid = np.array(out["valid"].astype(object).eq(True), dtype=bool)
    out["levels_tie"] = valid & (
        _floats(out["steps_tied"]) == _floats(out["scenario_id"].map(length))
    )
    moves = np.where(out["levels_tie"], _floats(out["moves"]), np.nan)
    reference, low_bound = _floats(out["horizon_moves"]), _floats(out["horizon_bound"])
    out["gap_moves"] = moves - reference
    out["gap_moves_high"] = moves - low_bound
    with np.errstate(divide="ignore", invalid="ignore"):
        out["rel_gap_moves"] = _relative(out["gap_moves"].to_numpy(), reference)
        out["rel_gap_moves_high"] = _relative(out["gap_moves_high"].to_numpy(), low_bound)
    out["gap_vs_step"] = moves - _floats(out["step_moves"])
    out["horizon_optimal"] = (out["gap_moves"] == 0) & (
        out["horizon_status"].astype(object) == "optimal"
    )
    return out[columns].reset_index(drop=True)


def _relative(gap: np.ndarray, reference: np.ndarray) -> np.ndarray:
    relative = np.where(reference > 0, gap / reference, np.where(gap == 0, 0.0, np.inf))
    return np.where(np.isnan(gap), np.nan, relative)


def _steps_tied(per_step: pd.DataFrame) -> pd.Series:
    """Per (scenario, run): how many steps' levels above moves equal the optimum's at that step
    (a proven step's levels: the horizon's, else the per-step optimum's; unproven, the horizon's)."""
    if per_step.empty:  # no step was written (a damaged run): nothing ties
        index = pd.MultiIndex.from_tuples([], names=["scenario_id", "heuristic"])
        return pd.Series(dtype="float64", name="steps_tied", index=index)
    exact = per_step[per_step["heuristic"].isin(["horizon", STEP_OPTIMAL])].copy()
    exact = exact[exact["valid"].astype(object).eq(True)]
    # a proven step first (the horizon's, else the per-step optimum's), then the horizon's
    exact["_rank"] = 2 * (exact["status"].astype(object) != "optimal").astype(int) + (
        exact["heuristic"] != "horizon"
    ).astype(int)
    reference = exact.sort_values("_rank").drop_duplicates(["scenario_id", "step"])
    key = ["scenario_id", "step"]
    above_moves_by = above_moves_of()
    level_columns = [f"level{i}" for i in range(1, max(above_moves_by.values()) + 1)]
    merged = per_step.merge(
        reference[[*key, *level_columns]], on=key, how="left", suffixes=("", "_ref")
    )
    above = merged["judged_on"].map(above_moves_by).fillna(1).astype(int).to_numpy()
    equal = np.array(merged["valid"].astype(object).eq(True), dtype=bool)
    for i, column in enumerate(level_columns, start=1):
        mine, theirs = _floats(merged[column]), _floats(merged[f"{column}_ref"])
        equal &= (i > above) | (mine == theirs)
    merged["_tie"] = equal
    return merged.groupby(["scenario_id", "heuristic"])["_tie"].sum().rename("steps_tied")


# ------------------------------------------------------------------------ tables
#: The columns of :func:`trace_numbers`, in order.
TRACE_COLUMNS = [
    "judged_on",
    "trace",
    "heuristic",
    "name",
    "traces",
    "levels_tie",
    "proven",
    "bounded",
    "mean_moves",
    "mean_horizon_moves",
    "mean_excess",
    "ci95_low",
    "ci95_high",
    "max_excess",
    "mean_rel_gap",
    "mean_gap_vs_step",
    "share_optimal",
]


def trace_name(run: str) -> str:
    """The human name of a trace run label."""
    return TRACE_NAMES.get(run, heuristic_name(run))


def trace_numbers(gap_rows: pd.DataFrame, *, seed: int = SEED) -> pd.DataFrame:
    """Per objective, trace family and run: how many traces, how many tie the optimum's levels at
    every step, and over those with a proven horizon optimum the mean total moves (heuristic and
    optimum), the mean excess moves over the optimum with a seeded 95% bootstrap interval, its
    maximum, the mean relative excess (over the traces whose optimum moves at all), the mean excess
    over the per-step optimum and the share of traces matching the optimum."""
    records = []
    for (objective, trace, run), group in gap_rows.groupby(
        ["judged_on", "trace", "heuristic"], sort=True
    ):
        tie = group[group["levels_tie"].astype(bool)]
        proven = tie[tie["horizon_status"].astype(object) == "optimal"]
        excess = _floats(proven["gap_moves"])
        excess = excess[~np.isnan(excess)]
        relative = _floats(proven["rel_gap_moves"])
        relative = relative[np.isfinite(relative) & (_floats(proven["horizon_moves"]) > 0)]
        low, high = bootstrap_ci(excess, key=f"trace/{objective}/{trace}/{run}", seed=seed)
        versus_step = _floats(tie["gap_vs_step"])
        versus_step = versus_step[~np.isnan(versus_step)]
        records.append(
            {
                "judged_on": objective,
                "trace": trace,
                "heuristic": run,
                "name": trace_name(str(run)),
                "traces": int(group["scenario_id"].nunique()),
                "levels_tie": int(len(tie)),
                "proven": int(len(proven)),
                "bounded": int((tie["horizon_status"].astype(object) == "feasible").sum()),
                "mean_moves": float(_floats(proven["moves"]).mean()) if len(proven) else math.nan,
                "mean_horizon_moves": float(_floats(proven["horizon_moves"]).mean())
                if len(proven)
                else math.nan,
                "mean_excess": float(excess.mean()) if len(excess) else math.nan,
                "ci95_low": low,
                "ci95_high": high,
                "max_excess": float(excess.max()) if len(excess) else math.nan,
                "mean_rel_gap": float(relative.mean()) if len(relative) else math.nan,
                "mean_gap_vs_step": float(versus_step.mean()) if len(versus_step) else math.nan,
                "share_optimal": float(proven["horizon_optimal"].astype(bool).mean())
                if len(proven)
                else math.nan,
            }
        )
    return pd.DataFrame.from_records(records, columns=TRACE_COLUMNS)


def trace_caption(objective: str) -> str:
    """The sentence under an objective's trace table."""
    return (
        f"Total trace moves against the horizon optimum on the {objective} objective (every step at "
        "its optimum of the levels above moves, then the fewest moves over the trace), per trace "
        "family: compared only over traces where the run ties the optimum's levels at every step; "
        "excess moves over the traces with a proven optimum, seeded 95% bootstrap interval of the "
        "mean; relative: over the traces whose optimum moves at all; 'vs step' is the mean excess "
        "over each step optimal alone."
    )


def trace_tables(numbers: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """One formatted table per objective: a line per trace family and run."""
    tables: dict[str, pd.DataFrame] = {}
    for objective, group in numbers.groupby("judged_on", sort=True):
        # per trace family: the heuristics by label, the per-step optimum last
        group = group.assign(_last=group["heuristic"] == STEP_OPTIMAL).sort_values(
            ["trace", "_last", "heuristic"]
        )
        tables[str(objective)] = pd.DataFrame(
            {
                "trace": group["trace"],
                "run": group["name"],
                "traces": group["traces"].map(number),
                "levels tie every step": group["levels_tie"].map(number),
                "horizon: proven optimum": group["proven"].map(number),
                "mean moves (run / optimum)": [
                    f"{number(m)} / {number(h)}" if not math.isnan(m) else "-"
                    for m, h in zip(group["mean_moves"], group["mean_horizon_moves"])
                ],
                "mean excess moves [95% CI]": [
                    f"{number(m, signed=True)} [{number(lo)}, {number(hi)}]"
                    if not math.isnan(m)
                    else "-"
                    for m, lo, hi in zip(
                        group["mean_excess"], group["ci95_low"], group["ci95_high"]
                    )
                ],
                "max excess": group["max_excess"].map(lambda v: number(v, signed=True)),
                "mean relative excess": group["mean_rel_gap"].map(percent),
                "mean moves vs step": group["mean_gap_vs_step"].map(
                    lambda v: number(v, signed=True)
                ),
                "optimal total": group["share_optimal"].map(percent),
            }
        ).reset_index(drop=True)
    return tables


# ------------------------------------------------------------------------- plots
def cumulative_moves(rows: pd.DataFrame) -> pd.DataFrame:
    """Per trace scenario, run and step: the moves made so far (a run's per-step rows)."""
    frame = trace_rows(rows)
    frame = frame[frame["step"].notna()].copy()
    if frame.empty:
        return pd.DataFrame(columns=["scenario_id", "judged_on", "trace", "run", "step", "moves"])
    frame["run"] = _run_label(frame)
    frame["step"] = frame["step"].astype("int64")
    frame["moves"] = _floats(frame["moves"])
    frame = frame.sort_values(["scenario_id", "run", "step"])
    frame["moves"] = frame.groupby(["scenario_id", "run"])["moves"].cumsum()
    return frame[["scenario_id", "judged_on", "trace", "run", "step", "moves"]].reset_index(
        drop=True
    )
