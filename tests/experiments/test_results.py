"""Tests of experiments.results: the Parquet store is read without Spark."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_reading_results_needs_no_spark():
    """Tests that the results store, the gap analysis and the report load without importing pyspark."""
    code = "import sys, experiments.results, experiments.gap, experiments.report; print('pyspark' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_rows_written_before_the_rename_read_with_the_new_column(smoke_run, tmp_path):
    """Tests that a results folder written when ``judged_on`` was still called ``objective`` loads (and so
    reports) exactly as one written now: the column is renamed on read, in load_results."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    from experiments.gap import gaps, headline
    from experiments.results import load_results, results_folder

    old = results_folder(tmp_path, "smoke", "test")
    old.mkdir(parents=True)
    for path in smoke_run.glob("*.parquet"):  # as write_batch wrote them, with the old column name
        rows = pq.read_table(path).to_pandas().rename(columns={"judged_on": "objective"})
        pq.write_table(pa.Table.from_pandas(rows, preserve_index=False), old / path.name)
    assert "objective" in pq.read_schema(next(old.glob("*.parquet"))).names
    now, before = load_results(smoke_run), load_results(old)
    assert "objective" not in before.columns
    pd.testing.assert_frame_equal(before, now)
    assert headline(gaps(before)).equals(headline(gaps(now)))
