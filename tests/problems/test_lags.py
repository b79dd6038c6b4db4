"""Tests of problems.lags: KIP-169's lag of snapshot rows, their checks, and the lags documents."""

from __future__ import annotations

import pytest

from problems import load_problem
from problems.lags import group_lags
from problems.snapshots import read_snapshot
from support.lag_snapshots import EARLIEST, HEADER, LATEST, SNAPSHOT, error_of, lags_of


@pytest.mark.parametrize(
    "reset, expected", [("latest", LATEST), ("earliest", EARLIEST), ("none", EARLIEST)]
)
def test_every_reset_case(reset, expected):
    """Tests committed, missing (latest: 0; earliest or any other value: end - start) and clamped offsets."""
    documents, warnings = lags_of(SNAPSHOT, reset)
    assert documents == expected
    assert list(documents) == ["g1", "g2"] and list(documents["g1"]) == [
        "t0",
        "t1",
    ]  # snapshot order
    assert warnings == [
        f"warning: {SNAPSHOT}: 1 committed offsets above the log end offset: lag clamped to 0 "
        f"(first: line 7, group 'g1', topic 't1', partition 1)"
    ]


def test_kip169_example_lags_feed_a_problem():
    """Tests that a group's lags object is the `lags` of docs/formats.md (KIP-169's 100,000 / 60,000 / 50,000)."""
    documents, _ = lags_of(SNAPSHOT, "earliest")
    problem = load_problem(
        {
            "topics": {"t0": 3, "t1": 2},
            "lags": documents["g1"],
            "members": [{"id": "c_0", "topics": ["t0"]}, {"id": "c_1", "topics": ["t0", "t1"]}],
        }
    )
    assert problem.lags.tolist() == [100_000, 60_000, 50_000, 70, 0]


def test_offsets_near_10_to_the_18_stay_exact():
    """Tests that 18-digit offsets give exact integer lags (no float on the way)."""
    rows = group_lags(read_snapshot(SNAPSHOT), "latest")
    assert rows[rows.group == "g2"].lag.tolist() == [60, 0]
    assert str(rows.lag.dtype) == "int64"


@pytest.mark.parametrize(
    "text, message",
    [
        (
            HEADER + "g,t,0,1,0,5\ng,t,1,14x,0,5\n",
            "line 3, committed_offset: must be an integer >= 0 of at most 18 digits, got '14x'",
        ),
        (
            HEADER + "g,t,0,1,0,\n",
            "line 2, log_end_offset: must be an integer >= 0 of at most 18 digits, missing",
        ),
        (
            HEADER + "g,t,0,1,0,5\ng,t,-1,1,0,5\n",
            "line 3, partition: must be an integer >= 0 of at most 18 digits, got '-1'",
        ),
        (HEADER + "g,t,0,1,9,5\n", "line 2, log_start_offset: 9 is above the log end offset 5"),
        (
            HEADER + "g,t,0,1,0,5\ng,t,0,2,0,5\n",
            "line 3, partition: group 'g' topic 't' partition 0 is also on line 2",
        ),
        (
            HEADER + "g,t,0,1,0,5\ng,t,2,2,0,5\n",
            "line 3, partition: group 'g' topic 't' has no row for partition 1 (it has partitions up to 2)",
        ),
    ],
)
def test_malformed_rows_name_line_and_field(tmp_path, text, message):
    """Tests that each kind of malformed row is an error naming the line and the field, never dropped."""
    assert error_of(tmp_path, text) == message
