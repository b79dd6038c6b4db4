"""The atlas of Kafka's assignor benchmark grid: gap percentiles by assignor, event and topology.

Read from the gap rows of any run (:func:`experiments.gap.gaps`) whose scenarios cover Kafka's
benchmark events (:data:`experiments.scenarios.KAFKA_EVENTS`): over the instances with a proven
optimum only, per objective, heuristic, Kafka event and topic sizes (and subscription shape), the
share of answers optimal on every level, the share optimal on level 1, the percentiles of the
level-1 relative gap, and the mean level-2 gap where level 1 ties.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd

from experiments.gap import tied_gap
from experiments.scenarios import KAFKA_EVENTS
from experiments.tables import heuristic_name, number, percent

#: The atlas table's name in the report ("By ..."), beside the factor tables.
ATLAS_TITLE = "Kafka's benchmark event and topic sizes"
#: Percentiles of the level-1 relative gap shown per cell.
PERCENTILES = (50, 90, 99)
#: A run is an atlas when its rows cover at least this many of Kafka's events.
MIN_EVENTS = 3
#: The events of Kafka's grid that the other suites do not have.
GRID_EVENTS = ("stable", "join-many", "leave-many", "partitions-grow")


def is_atlas(rows: pd.DataFrame) -> bool:
    """Whether ``rows`` are an atlas run: at least :data:`MIN_EVENTS` of Kafka's benchmark events,
    one of them an event only the grid has (STABLE, JOIN_MANY, LEAVE_MANY, PARTITIONS_ADDED)."""
    if "churn" not in rows:
        return False
    events = set(rows["churn"].dropna().unique()) & set(KAFKA_EVENTS)
    return len(events) >= MIN_EVENTS and bool(events & set(GRID_EVENTS))


def atlas_numbers(
    gap_rows: pd.DataFrame, by: tuple[str, ...] = ("judged_on", "heuristic", "churn", "topology")
) -> pd.DataFrame:
    """Per ``by`` group of proven-optimum heuristic rows: instances and gap statistics (fractions)."""
    proven = gap_rows[
        (gap_rows["ref_status"].astype(object) == "optimal")
        & gap_rows["churn"].isin(list(KAFKA_EVENTS))
    ]
    if "topology" not in proven:
        proven = proven.assign(topology="equal")
    proven = proven.assign(
        topology=proven["topology"].astype(object).fillna("equal"),
        _level1_optimal=pd.to_numeric(proven["gap1"], errors="coerce") == 0,
        _gap2=tied_gap(proven, 2),
        _rel1=pd.to_numeric(proven["rel_gap1"], errors="coerce"),
    )
    grouped = proven.groupby(list(by), dropna=False)
    out = pd.DataFrame(
        {
            "instances": grouped["scenario_id"].nunique(),
            "valid": grouped["valid"].mean(),
            "optimal": grouped["heuristic_optimal"].mean(),
            "level1_optimal": grouped["_level1_optimal"].mean(),
            **{
                f"p{q}_rel_gap1": grouped["_rel1"].agg(partial(_percentile, q=q))
                for q in PERCENTILES
            },
            "max_rel_gap1": grouped["_rel1"].max(),
            "mean_gap2": grouped["_gap2"].mean(),
        }
    )
    return out.reset_index()


def _percentile(values: pd.Series, q: float) -> float:
    """The ``q``-th percentile of ``values``' present entries (NaN when none is)."""
    return float(np.percentile(values.dropna(), q)) if values.notna().any() else np.nan


def atlas_table(gap_rows: pd.DataFrame) -> pd.DataFrame:
    """:func:`atlas_numbers` by objective, heuristic, Kafka event and topic sizes, for reading."""
    found = atlas_numbers(gap_rows)
    order = {churn: i for i, churn in enumerate(KAFKA_EVENTS)}
    found = found.assign(_event=found["churn"].map(order)).sort_values(
        ["judged_on", "heuristic", "_event", "topology"]
    )
    return pd.DataFrame(
        {
            "judged on": found["judged_on"],
            "assignor": found["heuristic"].map(heuristic_name),
            "event": found["churn"].map(KAFKA_EVENTS),
            "topics": found["topology"].str.upper(),
            "instances": found["instances"].map(number),
            "optimal on every level": found["optimal"].map(percent),
            "balance optimal (level 1)": found["level1_optimal"].map(percent),
            **{f"p{q} gap, level 1": found[f"p{q}_rel_gap1"].map(percent) for q in PERCENTILES},
            "max gap, level 1": found["max_rel_gap1"].map(percent),
            "mean gap, level 2 (level 1 tied)": found["mean_gap2"].map(
                lambda v: "-" if pd.isna(v) else f"{v:.3g}"
            ),
        }
    ).reset_index(drop=True)


def atlas_overview(gap_rows: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per objective, one line per assignor and topic sizes, one column per Kafka event: the share
    of instances (proven optimum) where the assignor's answer is optimal on every level."""
    found = atlas_numbers(gap_rows)
    tables = {}
    for judged_on, part in found.groupby("judged_on", sort=True):
        wide = part.pivot_table(
            index=["heuristic", "topology"], columns="churn", values="optimal", aggfunc="first"
        )
        wide = wide[[c for c in KAFKA_EVENTS if c in wide.columns]]
        table = pd.DataFrame(
            {
                "assignor": [heuristic_name(h) for h, _ in wide.index],
                "topics": [t.upper() for _, t in wide.index],
                **{KAFKA_EVENTS[c]: wide[c].map(percent).to_numpy() for c in wide.columns},
            }
        )
        tables[str(judged_on)] = table
    return tables
