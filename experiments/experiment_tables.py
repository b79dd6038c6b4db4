"""The report's tables by factor: one per factor an experiment varies, beyond churn event and size.

Which factors vary is read from the rows themselves (a column with more than one value), so a
results folder of any experiment, old or new, is faceted by what it actually varies: the
subscription pattern, lag distribution, topic sizes, racks, seed, time limit and solver options.  The churn
event and the size are the detail table's own (:func:`experiments.tables.detail_table`).
"""

from __future__ import annotations

import pandas as pd

from experiments.gap import summary
from experiments.tables import heuristic_name, number, percent

#: Factor columns of the result rows, with their names in the report.
FACET_COLUMNS = {
    "pattern": "subscription pattern",
    "lags": "lag distribution",
    "topology": "topic sizes",
    "replication": "racks (groups) or replication factor (placements)",
    "seed": "seed",
    "time_limit_s": "time limit (s)",
    "options": "solver options",
}


def varied_factors(rows: pd.DataFrame) -> list[str]:
    """The factor columns of ``rows`` with more than one value (missing and empty count as one)."""
    out = []
    for column in FACET_COLUMNS:
        if column in rows and rows[column].astype(object).fillna("").nunique() > 1:
            out.append(column)
    return out


def facet_tables(gap_rows: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per varied factor: each heuristic's gap statistics by the factor's level (proven optima only)."""
    proven = gap_rows[gap_rows["ref_status"].astype(object) == "optimal"]
    tables = {}
    for column in varied_factors(gap_rows):
        if proven.empty:
            break
        frame = proven.assign(**{column: proven[column].astype(object).fillna("")})
        found = summary(frame, by=("judged_on", "heuristic", column))
        tables[FACET_COLUMNS[column]] = pd.DataFrame(
            {
                "judged on": found["judged_on"],
                "heuristic": found["heuristic"].map(heuristic_name),
                FACET_COLUMNS[column]: found[column].map(str),
                "scenarios: proven optimum": found["scenarios"].map(number),
                "valid answers": found["valid"].map(percent),
                "mean gap, level 1": found["mean_rel_gap1"].map(percent),
                "max gap, level 1": found["max_rel_gap1"].map(percent),
                "optimal on every level": found["share_optimal"].map(percent),
                "mean runtime (s)": found["mean_runtime_s"].map(lambda v: f"{v:.3g}"),
            }
        )
    return tables
