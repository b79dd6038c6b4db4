"""Hand-made result rows (the pipeline's Parquet columns that the gap analysis reads), for tests."""

from __future__ import annotations

import pandas as pd


def row(scenario, strategy, solver, status, levels, bound=None, valid=True, variant=""):
    """One result row of ``scenario`` (sticky objective) with the given levels and bounds."""
    out = {"scenario_id": scenario, "family": "group", "judged_on": "sticky", "churn": "fresh", "size": 10,
           "strategy": strategy, "variant": variant, "solver": solver,
           "role": "heuristic" if solver == "heuristic" else "exact", "status": status, "valid": valid,
           "runtime_s": 0.1}
    for i in range(1, 5):
        out[f"level{i}"] = levels[i - 1] if i <= len(levels) else pd.NA
        out[f"bound{i}"] = (bound[i - 1] if bound and i <= len(bound) else pd.NA)
    return out


def frame(*rows):
    """Rows as the pipeline's frame (levels and bounds as nullable integers)."""
    out = pd.DataFrame(rows)
    for i in range(1, 5):
        out[f"level{i}"] = out[f"level{i}"].astype("Int64")
        out[f"bound{i}"] = out[f"bound{i}"].astype("Int64")
    return out
