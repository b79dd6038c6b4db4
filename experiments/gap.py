"""Gap analysis: how far each heuristic falls short of the exact optimum.

Heuristic rows are joined to the exact reference of the same scenario.  The reference is an exact
row with status ``optimal`` when there is one (all optimal rows of a scenario must agree:
:func:`disagreements` lists those that do not, nor any valid answer beat them); otherwise the
lexicographically best ``feasible`` row, whose proven bound turns the level-1 gap into an interval
``[H - E, H - B]`` (H heuristic, E incumbent, B bound): columns ``gap1_low``, ``gap1_high``,
``rel_gap1`` (low, over E), ``rel_gap1_high`` (high, over B) and ``certified_width1`` (``E - B``).
Everything here is plain pandas over the Parquet rows.  A trace's rows (a per-step and a per-trace row
per run) are left out here (:func:`single`); :mod:`experiments.trace_gap` analyses them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from problems import LEVELS

LEVEL = [f"level{i}" for i in range(1, LEVELS + 1)]


def label(rows: pd.DataFrame) -> pd.Series:
    """``strategy`` or ``strategy[variant]``: the name of a heuristic run."""
    variant = rows["variant"].fillna("")
    return rows["strategy"].where(variant == "", rows["strategy"] + "[" + variant + "]")


def single(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of single rebalances: ``rows`` less a trace's (those naming a trace family)."""
    if "trace" not in rows:
        return rows
    return rows[rows["trace"].astype(object).fillna("").astype(str) == ""]


def _lexicographic_key(frame: pd.DataFrame) -> list[str]:
    return [c for c in LEVEL if c in frame and frame[c].notna().any()]


def reference(rows: pd.DataFrame) -> pd.DataFrame:
    """One exact reference row per scenario (optimal preferred, then lexicographically best)."""
    rows = single(rows)
    exact = rows[
        (rows["role"] == "exact") & rows["status"].isin(["optimal", "feasible"]) & rows["valid"]
    ].copy()
    if exact.empty:
        return pd.DataFrame(
            columns=[
                "scenario_id",
                "ref_status",
                "ref_solver",
                *[f"ref_{c}" for c in LEVEL],
                "ref_bound1",
            ]
        )
    exact["_rank"] = (exact["status"] != "optimal").astype(int)
    exact = exact.sort_values(["scenario_id", "_rank", *_lexicographic_key(exact)])
    best_bound = exact.groupby("scenario_id")["bound1"].max().rename("ref_bound1")
    best = exact.drop_duplicates("scenario_id").set_index("scenario_id")
    out = best[["status", "solver", *LEVEL]].rename(
        columns={"status": "ref_status", "solver": "ref_solver", **{c: f"ref_{c}" for c in LEVEL}}
    )
    return out.join(best_bound).reset_index()


def disagreements(rows: pd.DataFrame) -> pd.DataFrame:
    """Exact ``optimal`` rows that other rows contradict (a bug if any).

    Two contradictions: two exact rows of a scenario both ``optimal`` with
    different levels, or a valid answer of any run (another backend, a
    heuristic, a frontier point) lexicographically better than an ``optimal``
    one.  Returns the contradicted ``optimal`` rows with a ``reason`` column.
    """
    rows = single(rows)
    optimal = rows[(rows["role"] == "exact") & (rows["status"] == "optimal")]
    key = _lexicographic_key(optimal)
    if optimal.empty or not key:
        return optimal.iloc[0:0].assign(reason=pd.Series(dtype="string"))
    spread = optimal.groupby("scenario_id")[key].nunique(dropna=False)
    differ = optimal["scenario_id"].isin(spread[(spread > 1).any(axis=1)].index).to_numpy()
    answers = rows[rows["valid"].fillna(False).astype(bool) & rows[key[0]].notna()].copy()
    answers["_who"] = label(answers) + "/" + answers["solver"].astype(str)
    best = (
        answers.sort_values(["scenario_id", *key])
        .drop_duplicates("scenario_id")
        .set_index("scenario_id")
    )
    best = best.reindex(optimal["scenario_id"])
    beaten, tied = np.zeros(len(optimal), dtype=bool), np.ones(len(optimal), dtype=bool)
    for column in key:  # best < optimal, lexicographically (a level missing on both sides ties)
        mine, theirs = _floats(optimal[column]), _floats(best[column])
        beaten |= tied & (theirs < mine)
        tied &= (theirs == mine) | (np.isnan(theirs) & np.isnan(mine))
    levels = best[key].astype("string").fillna("-").agg(", ".join, axis=1).to_numpy()
    reason = np.where(
        beaten,
        "beaten by " + best["_who"].astype(str).to_numpy() + " [" + levels + "]",
        "another optimal row differs",
    )
    out = optimal.assign(reason=reason)
    return out[beaten | differ]


def gaps(rows: pd.DataFrame) -> pd.DataFrame:
    """Heuristic rows with their gap to the reference, per level, absolute and relative."""
    rows = single(rows)
    heuristic = rows[rows["role"] == "heuristic"].copy()
    heuristic["heuristic"] = label(heuristic)
    merged = heuristic.merge(reference(rows), on="scenario_id", how="left")
    # An invalid answer breaks a hard constraint: its levels are not comparable with the optimum
    # (uniform's idle members score a lower share level 1 than any valid share answer).
    valid = merged["valid"].astype(object).eq(True).to_numpy()
    for i, column in enumerate(LEVEL, start=1):
        value = np.where(valid, _floats(merged[column]), np.nan)
        ref = _floats(merged[f"ref_{column}"])
        gap = value - ref
        with np.errstate(divide="ignore", invalid="ignore"):
            relative = np.where(ref > 0, gap / ref, np.where(gap == 0, 0.0, np.inf))
        merged[f"gap{i}"] = gap
        merged[f"rel_gap{i}"] = np.where(np.isnan(gap), np.nan, relative)
    # Level-1 interval: exact where the reference is optimal, [H - E, H - B] where it is only
    # feasible.
    optimal_reference = np.asarray(merged["ref_status"].astype(object) == "optimal", dtype=bool)
    merged["gap1_low"] = merged["gap1"]
    merged["gap1_high"] = np.where(
        optimal_reference,
        merged["gap1"],
        np.where(valid, _floats(merged["level1"]), np.nan) - _floats(merged["ref_bound1"]),
    )
    # The interval relative to what it is measured from (low: the best found, high: the bound), and
    # its width (best found - bound: 0 where the reference is proven), for certified-gap tables and
    # plots.
    bound = np.where(
        optimal_reference, _floats(merged["ref_level1"]), _floats(merged["ref_bound1"])
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        merged["rel_gap1_high"] = np.where(
            bound > 0, merged["gap1_high"] / bound, np.where(merged["gap1_high"] == 0, 0.0, np.inf)
        )
    merged["rel_gap1_high"] = np.where(
        np.isnan(merged["gap1_high"]), np.nan, merged["rel_gap1_high"]
    )
    merged["certified_width1"] = merged["gap1_high"] - merged["gap1_low"]
    equal = np.ones(len(merged), dtype=bool)
    for column in LEVEL:  # a level the objective does not have is missing on both sides
        value, ref = _floats(merged[column]), _floats(merged[f"ref_{column}"])
        equal &= (value == ref) | (np.isnan(value) & np.isnan(ref))
    equal &= valid
    merged["heuristic_optimal"] = equal & optimal_reference
    return merged


def _floats(column: pd.Series) -> np.ndarray:
    """A nullable integer column as floats, NaN where missing."""
    return pd.to_numeric(column, errors="coerce").astype("float64").to_numpy()


# ------------------------------------------------- level-k statistics: the tie rule (docs/design/objectives.md)
def tied_above(gap_rows: pd.DataFrame, level: int) -> np.ndarray:
    """Rows whose levels 1 .. ``level - 1`` equal their reference's (and that have a level ``level`` gap).

    A lexicographic gap at level k means nothing below an unequal level, so
    level-k statistics are taken only over these rows (docs/design/objectives.md).
    """
    mask: np.ndarray = np.isfinite(_floats(gap_rows[f"gap{level}"]))
    for above in range(1, level):
        mask &= _floats(gap_rows[f"gap{above}"]) == 0
    return mask


def tied_gap(gap_rows: pd.DataFrame, level: int, *, relative: bool = False) -> pd.Series:
    """The level-``level`` gap (``rel_gap`` when ``relative``) where the levels above tie, NaN elsewhere."""
    column = f"rel_gap{level}" if relative else f"gap{level}"
    return pd.Series(
        np.where(tied_above(gap_rows, level), _floats(gap_rows[column]), np.nan),
        index=gap_rows.index,
        name=column,
    )


def _p95(values: pd.Series) -> float:
    values = values.dropna()
    if not len(values):
        return np.nan
    with np.errstate(invalid="ignore"):  # inf - inf where the 95th percentile lies among infinities
        found = float(np.percentile(values, 95))
    return np.inf if np.isnan(found) and np.isinf(values).any() else found


def summary(
    gap_rows: pd.DataFrame,
    by: tuple[str, ...] = ("family", "judged_on", "heuristic", "churn", "size"),
    *,
    proven_only: bool = False,
) -> pd.DataFrame:
    """Gap statistics per group of heuristic rows.

    ``scenarios``, ``valid`` (share of valid answers) and ``mean_runtime_s``
    count every row; the gaps only the ``compared`` rows, those with an exact
    reference (with ``proven_only``, a proven-optimal one): mean, p95 and max
    of the level-1 relative gap, the share equal to the optimum on every level,
    and ``mean_gap2``, taken only over rows whose level 1 ties the reference
    (:func:`tied_gap`).  NaN where no row qualifies.
    """
    status = gap_rows["ref_status"].astype(object)
    compared = gap_rows[(status == "optimal") if proven_only else status.notna()]
    compared = compared.assign(gap2=tied_gap(compared, 2))
    keys = list(by)
    grouped = gap_rows.groupby(keys, dropna=False)
    out = pd.DataFrame(
        {
            "scenarios": grouped["scenario_id"].nunique(),
            "compared": compared.groupby(keys, dropna=False)["scenario_id"].count(),
            "valid": grouped["valid"].mean(),
            "mean_rel_gap1": compared.groupby(keys, dropna=False)["rel_gap1"].mean(),
            "p95_rel_gap1": compared.groupby(keys, dropna=False)["rel_gap1"].agg(_p95),
            "max_rel_gap1": compared.groupby(keys, dropna=False)["rel_gap1"].max(),
            "mean_gap2": compared.groupby(keys, dropna=False)["gap2"].mean(),
            "share_optimal": compared.groupby(keys, dropna=False)["heuristic_optimal"].mean(),
            "mean_runtime_s": grouped["runtime_s"].mean(),
        }
    )
    out["compared"] = out["compared"].fillna(0).astype("int64")
    return out.reset_index()


def headline(gap_rows: pd.DataFrame) -> pd.DataFrame:
    """The headline table: one line per ``judged_on`` and heuristic (:func:`summary`; level 2 where level 1 ties)."""
    return summary(gap_rows, by=("judged_on", "heuristic"))


def runtime_scaling(rows: pd.DataFrame) -> pd.DataFrame:
    """Median runtime per (strategy judged on, strategy, solver, size): for log-log plots."""
    rows = single(rows)
    frame = rows[rows["status"] != "error"].copy()
    frame["run"] = label(frame) + "/" + frame["solver"]
    return (
        frame.groupby(["judged_on", "run", "role", "size"])["runtime_s"]
        .median()
        .rename("median_runtime_s")
        .reset_index()
    )
