"""Hand-made result rows (the pipeline's Parquet columns that the gap analysis reads), for tests."""

from __future__ import annotations

import pandas as pd

from problems import LEVELS


def row(scenario, strategy, solver, status, levels, bound=None, valid=True, variant=""):
    """One result row of ``scenario`` (sticky objective) with the given levels and bounds."""
    out = {
        "scenario_id": scenario,
        "family": "group",
        "judged_on": "sticky",
        "churn": "fresh",
        "size": 10,
        "strategy": strategy,
        "variant": variant,
        "solver": solver,
        "role": "heuristic" if solver == "heuristic" else "exact",
        "status": status,
        "valid": valid,
        "runtime_s": 0.1,
    }
    for i in range(1, LEVELS + 1):
        out[f"level{i}"] = levels[i - 1] if i <= len(levels) else pd.NA
        out[f"bound{i}"] = bound[i - 1] if bound and i <= len(bound) else pd.NA
    return out


def frame(*rows):
    """Rows as the pipeline's frame (levels and bounds as nullable integers)."""
    out = pd.DataFrame(rows)
    for i in range(1, LEVELS + 1):
        out[f"level{i}"] = out[f"level{i}"].astype("Int64")
        out[f"bound{i}"] = out[f"bound{i}"].astype("Int64")
    return out


#: Result columns that differ between two runs of the same scenarios by nature.
TIMINGS = ["runtime_s", "peak_rss_mb", "run_id"]
KEY = ["scenario_id", "strategy", "variant", "solver"]


def assert_same_rows(there: pd.DataFrame, here: pd.DataFrame) -> None:
    """Two runs' result rows are equal apart from :data:`TIMINGS` and, where an exact solver stopped at
    its time limit in either run (a status other than ``optimal``), its status, levels and bounds."""
    # A column only one side has (a trace column of a run that also ran traces) must hold nothing.
    only = set(there.columns) ^ set(here.columns)
    for rows in (there, here):
        extra = [c for c in rows.columns if c in only]
        assert rows[extra].isna().all().all(), f"{extra} hold values on one side only"
    common = [c for c in there.columns if c in here.columns]
    there, here = (
        rows[common]
        .drop(columns=TIMINGS)
        .sort_values(KEY, na_position="first")
        .reset_index(drop=True)
        for rows in (there, here)
    )
    assert len(there) == len(here) > 0
    assert there[KEY].equals(here[KEY])
    timed_out = ((there["status"] != "optimal") | (here["status"] != "optimal")) & (
        there["role"] != "heuristic"
    )
    limited = ["status", *[c for c in there.columns if c.startswith(("bound", "level"))]]
    for rows in (there, here):
        rows.loc[timed_out, limited] = None
    assert there.equals(here), there.compare(here)
