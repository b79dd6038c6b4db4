"""Tests of problems.snapshots: reading offsets snapshots (CSV, Parquet, the describe table), their shape errors."""

from __future__ import annotations

import pandas as pd
import pytest

from problems.snapshots import read_snapshot
from support.lag_snapshots import DATA, EARLIEST, HEADER, SNAPSHOT, error_of, lags_of


def test_describe_table_with_dashes_and_notes():
    """Tests the kafka-consumer-groups --describe table: '-' offsets, a note line, two header blocks."""
    documents, warnings = lags_of(DATA / "lags_describe.txt", "latest")
    assert documents == {"g1": {"t0": [100_000, 60_000, 0]}, "g2": {"t0": [0]}} and warnings == []
    documents, warnings = lags_of(DATA / "lags_describe.txt", "earliest")
    assert documents == {"g1": {"t0": [100_000, 60_000, 50_000]}, "g2": {"t0": [0]}}
    assert warnings == [
        f"warning: {DATA / 'lags_describe.txt'}: 1 partitions without a committed offset or a log "
        f"start offset: lag taken as the log end offset (an upper bound) "
        f"(first: line 5, group 'g1', topic 't0', partition 2)"
    ]


def test_parquet_with_nullable_integers(tmp_path):
    """Tests a Parquet snapshot with integer columns and missing committed offsets (row numbers as lines)."""
    frame = pd.read_csv(SNAPSHOT, dtype={"committed_offset": "Int64", "log_start_offset": "Int64"})
    frame.to_parquet(tmp_path / "snapshot.parquet")
    assert lags_of(tmp_path / "snapshot.parquet", "earliest")[0] == EARLIEST


@pytest.mark.parametrize(
    "text, message",
    [
        (HEADER + "g,t,0,1,0,5\n,t,1,1,0,5\n", "line 3, group: missing"),
        (HEADER + "g,t,0,1,0\n", "line 2: has 5 fields, the header has 6"),
        (
            "group,topic,partition,log_end_offset\n",
            "line 1: the header lacks column 'committed_offset' "
            "(expected group,topic,partition,committed_offset,log_start_offset,log_end_offset)",
        ),
        ("", "empty snapshot"),
    ],
)
def test_malformed_snapshots_name_line_and_field(tmp_path, text, message):
    """Tests that each kind of malformed snapshot is an error naming the line and the field, never dropped."""
    assert error_of(tmp_path, text) == message


def test_malformed_describe_table(tmp_path):
    """Tests a describe table whose row has a missing column: the error names the line."""
    text = (
        "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID\n"
        "g t 0 1 5 4 - - -\ng t 1 1 5 - - -\n"
    )
    assert (
        error_of(tmp_path, text, "bad.txt")
        == "line 3: has 8 columns, expected 9 columns like the header"
    )


#: Longer than the csv module's default field size limit (131,072 characters).
LONG = "t" * 131_073


@pytest.mark.parametrize("where", ["group", "topic"])
def test_names_longer_than_the_csv_field_limit_are_read(tmp_path, where):
    """Tests that a CSV snapshot whose group or topic name is longer than the csv module's default field
    limit is read as the describe table and JSON read it (no `field larger than field limit`)."""
    group, topic = (LONG, "t") if where == "group" else ("g", LONG)
    path = tmp_path / "long.csv"
    path.write_text(HEADER + f"{group},{topic},0,1,0,5\n{group},{topic},1,,0,7\n")
    assert lags_of(path) == ({group: {topic: [4, 0]}}, [])
    describe = tmp_path / "long.txt"
    describe.write_text(
        "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID\n"
        f"{group} {topic} 0 1 5 4 - - -\n{group} {topic} 1 - 7 - - - -\n"
    )
    assert lags_of(describe) == lags_of(path)


def test_a_quote_never_closed_is_an_error_naming_its_line(tmp_path):
    """Tests that a quoted field running to the end of the file (its quote never closed) is an error
    naming the line where it starts, as any row with the wrong number of fields."""
    text = HEADER + 'g,t,0,1,0,5\ng,"t,1,1,0,5\n'
    assert error_of(tmp_path, text) == "line 3: has 2 fields, the header has 6"


def test_a_describe_lag_that_contradicts_the_offsets_is_a_note(tmp_path):
    """Tests that the describe table's LAG column, which the lags are recomputed without, is compared with
    LOG-END-OFFSET - CURRENT-OFFSET: rows where it differs are counted in one note naming the first."""
    path = tmp_path / "d.txt"
    path.write_text(
        "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID\n"
        "g t 0 1 5 4 - - -\ng t 1 2 9 3 - - -\ng t 2 - 7 - - - -\ng t 3 5 6 2 - - -\n"
        "g t 4 9 8 -1 - - -\n"
    )
    notes: list[str] = []
    frame = read_snapshot(path, notes=notes)
    assert len(frame) == 5
    assert notes == [
        "2 rows whose LAG is not LOG-END-OFFSET - CURRENT-OFFSET (first: line 3, LAG 3, the "
        "offsets give 7); the lags are computed from the offsets"
    ]
    consistent: list[str] = []
    read_snapshot(DATA / "lags_describe.txt", notes=consistent)
    assert consistent == []
