"""Spark jobs.  The only place (with :mod:`experiments.spark`) that touches pyspark."""

from __future__ import annotations

from typing import Iterator

import pandas as pd

from experiments.solve import RESULT_COLUMNS, solve_frame
from experiments.spark import quiet_pyspark_warnings

_SPARK_TYPES = {"string": "string", "bool": "boolean", "Int64": "bigint", "float64": "double"}
RESULT_SCHEMA = ", ".join(f"{name} {_SPARK_TYPES[kind]}" for name, kind in RESULT_COLUMNS.items())


def _solve_batches(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    quiet_pyspark_warnings()
    for batch in batches:
        yield solve_frame(batch)


def score_problems(spark, frame: pd.DataFrame, partitions: int | None = None):
    """Solve and score every (scenario, problem, strategy, solver) row of ``frame`` on Spark.

    Returns the Spark DataFrame of :data:`experiments.solve.RESULT_COLUMNS`.
    """
    tasks = spark.createDataFrame(frame)
    if partitions:
        tasks = tasks.repartition(partitions)
    return tasks.mapInPandas(_solve_batches, schema=RESULT_SCHEMA)
