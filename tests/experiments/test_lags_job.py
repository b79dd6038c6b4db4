"""Tests of experiments.lags_job: the lags Spark job gives the rows plain pandas gives, errors included."""

from __future__ import annotations

import pytest

from experiments.lags_job import compute_lags
from problems import ProblemError
from problems.lags import group_lags, lags_documents
from problems.snapshots import read_snapshot
from support.lag_snapshots import DATA, EARLIEST, LATEST, SNAPSHOT


@pytest.mark.spark
@pytest.mark.parametrize("reset, expected", [("latest", LATEST), ("earliest", EARLIEST)])
def test_spark_job_gives_every_reset_case(spark, reset, expected):
    """Tests the applyInPandas job on the snapshot: the hand-worked lags and the same rows as plain pandas."""
    frame = read_snapshot(SNAPSHOT)
    on_spark = compute_lags(spark, frame, reset)
    documents, warnings = lags_documents(on_spark, str(SNAPSHOT))
    assert documents == expected and len(warnings) == 1
    in_process = group_lags(frame, reset)
    columns = ["line", "group", "topic", "partition", "lag", "clamped", "start_unknown"]
    left = on_spark[columns].sort_values("line").reset_index(drop=True)
    right = in_process[columns].sort_values("line").reset_index(drop=True)
    assert left.astype(str).equals(right.astype(str)), (left, right)


@pytest.mark.spark
def test_spark_job_reports_the_malformed_row(spark):
    """Tests that a malformed file run on Spark ends in the error naming its line and field."""
    rows = compute_lags(spark, read_snapshot(DATA / "lags_malformed.csv"))
    with pytest.raises(
        ProblemError,
        match=r"lags_malformed.csv: line 3, committed_offset: must be an integer "
        r">= 0 of at most 18 digits, got '14x000'",
    ):
        lags_documents(rows, str(DATA / "lags_malformed.csv"))
