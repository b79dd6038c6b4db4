"""Tests of experiments.jobs: a real local Spark job (proves Spark works on a clean machine)."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

from experiments.jobs import score_problems
from experiments.solve import solve_frame

EXAMPLES = sorted((Path(__file__).parents[2] / "examples" / "group").glob("*.json"))


@pytest.mark.spark
def test_map_in_pandas_scores_problems_like_plain_python(spark):
    """Tests that the Spark job over the examples returns exactly the rows of the plain-pandas function."""
    tasks = pd.DataFrame([
        {"scenario": path.stem, "problem": path.read_text(), "strategy": strategy, "solver": "heuristic"}
        for path in EXAMPLES for strategy in ("range", "roundrobin")
    ])
    assert len(tasks) == 10
    on_spark = score_problems(spark, tasks, partitions=2).toPandas()
    in_process = solve_frame(tasks)
    key = ["scenario", "strategy"]
    columns = ["scenario", "strategy", "status", "valid", "level1", "level2"]
    left = on_spark[columns].sort_values(key).reset_index(drop=True)
    right = in_process[columns].sort_values(key).reset_index(drop=True)
    assert left.astype(str).equals(right.astype(str)), (left, right)
    assert on_spark["valid"].all()
    assert spark.sparkContext.pythonExec == sys.executable  # workers run this interpreter
