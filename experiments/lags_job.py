"""The Spark job of ``rebalance-lab lags``: KIP-169's lag of every group of a snapshot, one task per group.

The arithmetic is :func:`problems.lags.group_lags` (plain pandas);
:func:`compute_lags` maps it over the groups with ``groupBy("group").applyInPandas``.
"""

from __future__ import annotations

import pandas as pd

from experiments.spark import Session, quiet_pyspark_warnings
from problems.lags import LAG_COLUMNS, group_lags
from problems.snapshots import COLUMNS

#: The Spark schema of the job's rows (:data:`problems.lags.LAG_COLUMNS`).
OUTPUT_SCHEMA = ", ".join(f"{name} {kind}" for name, kind in LAG_COLUMNS.items())


def compute_lags(spark: Session, frame: pd.DataFrame, reset: str = "latest") -> pd.DataFrame:
    """:func:`group_lags` of every group of ``frame`` on Spark (one ``applyInPandas`` task per group)."""
    schema = "line long, " + ", ".join(f"{c} string" for c in COLUMNS)
    snapshot = spark.createDataFrame(frame[["line", *COLUMNS]], schema=schema)

    def batch(group: pd.DataFrame) -> pd.DataFrame:
        quiet_pyspark_warnings()
        return group_lags(group, reset)

    lags: pd.DataFrame = snapshot.groupBy("group").applyInPandas(batch, OUTPUT_SCHEMA).toPandas()
    return lags
