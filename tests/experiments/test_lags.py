"""Tests of experiments.lags: KIP-169's lag from offsets snapshots, in pandas and on Spark, and `rebalance-lab lags`."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from experiments.cli import main
from experiments.lags import compute_lags, group_lags, lags_documents, read_snapshot
from problems import ProblemError, load_problem

DATA = Path(__file__).parents[1] / "data"
SNAPSHOT = DATA / "lags_snapshot.csv"

#: The lags of tests/data/lags_snapshot.csv, worked by hand from KIP-169's rules.
LATEST = {"g1": {"t0": [100_000, 60_000, 0], "t1": [0, 0]}, "g2": {"t0": [0, 60]}}
EARLIEST = {"g1": {"t0": [100_000, 60_000, 50_000], "t1": [70, 0]}, "g2": {"t0": [0, 60]}}


def lags_of(path, reset="latest"):
    return lags_documents(group_lags(read_snapshot(path), reset), str(path))


def error_of(tmp_path, text, name="bad.csv", reset="latest"):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ProblemError) as caught:
        lags_of(path, reset)
    return str(caught.value).removeprefix(f"{path}: ")


HEADER = "group,topic,partition,committed_offset,log_start_offset,log_end_offset\n"


# ------------------------------------------------------------ pure pandas
@pytest.mark.parametrize("reset, expected", [("latest", LATEST), ("earliest", EARLIEST), ("none", EARLIEST)])
def test_every_reset_case(reset, expected):
    """Tests committed, missing (latest: 0; earliest or any other value: end - start) and clamped offsets."""
    documents, warnings = lags_of(SNAPSHOT, reset)
    assert documents == expected
    assert list(documents) == ["g1", "g2"] and list(documents["g1"]) == ["t0", "t1"]  # snapshot order
    assert warnings == [f"warning: {SNAPSHOT}: 1 committed offsets above the log end offset: lag clamped to 0 "
                        f"(first: line 7, group 'g1', topic 't1', partition 1)"]


def test_kip169_example_lags_feed_a_problem():
    """Tests that a group's lags object is the `lags` of DESIGN section 2 (KIP-169's 100,000 / 60,000 / 50,000)."""
    documents, _ = lags_of(SNAPSHOT, "earliest")
    problem = load_problem({"topics": {"t0": 3, "t1": 2}, "lags": documents["g1"],
                            "members": [{"id": "c_0", "topics": ["t0"]}, {"id": "c_1", "topics": ["t0", "t1"]}]})
    assert problem.lags.tolist() == [100_000, 60_000, 50_000, 70, 0]


def test_describe_table_with_dashes_and_notes():
    """Tests the kafka-consumer-groups --describe table: '-' offsets, a note line, two header blocks."""
    documents, warnings = lags_of(DATA / "lags_describe.txt", "latest")
    assert documents == {"g1": {"t0": [100_000, 60_000, 0]}, "g2": {"t0": [0]}} and warnings == []
    documents, warnings = lags_of(DATA / "lags_describe.txt", "earliest")
    assert documents == {"g1": {"t0": [100_000, 60_000, 50_000]}, "g2": {"t0": [0]}}
    assert warnings == [f"warning: {DATA / 'lags_describe.txt'}: 1 partitions without a committed offset or a log "
                        f"start offset: lag taken as the log end offset (an upper bound) "
                        f"(first: line 5, group 'g1', topic 't0', partition 2)"]


def test_parquet_with_nullable_integers(tmp_path):
    """Tests a Parquet snapshot with integer columns and missing committed offsets (row numbers as lines)."""
    frame = pd.read_csv(SNAPSHOT, dtype={"committed_offset": "Int64", "log_start_offset": "Int64"})
    frame.to_parquet(tmp_path / "snapshot.parquet")
    assert lags_of(tmp_path / "snapshot.parquet", "earliest")[0] == EARLIEST


def test_offsets_near_10_to_the_18_stay_exact():
    """Tests that 18-digit offsets give exact integer lags (no float on the way)."""
    rows = group_lags(read_snapshot(SNAPSHOT), "latest")
    assert rows[rows.group == "g2"].lag.tolist() == [60, 0]
    assert str(rows.lag.dtype) == "int64"


@pytest.mark.parametrize("text, message", [
    (HEADER + "g,t,0,1,0,5\ng,t,1,14x,0,5\n",
     "line 3, committed_offset: must be an integer >= 0 of at most 18 digits, got '14x'"),
    (HEADER + "g,t,0,1,0,\n", "line 2, log_end_offset: must be an integer >= 0 of at most 18 digits, missing"),
    (HEADER + "g,t,0,1,0,5\ng,t,-1,1,0,5\n",
     "line 3, partition: must be an integer >= 0 of at most 18 digits, got '-1'"),
    (HEADER + "g,t,0,1,9,5\n", "line 2, log_start_offset: 9 is above the log end offset 5"),
    (HEADER + "g,t,0,1,0,5\n,t,1,1,0,5\n", "line 3, group: missing"),
    (HEADER + "g,t,0,1,0,5\ng,t,0,2,0,5\n", "line 3, partition: group 'g' topic 't' partition 0 is also on line 2"),
    (HEADER + "g,t,0,1,0,5\ng,t,2,2,0,5\n",
     "line 3, partition: group 'g' topic 't' has no row for partition 1 (it has partitions up to 2)"),
    (HEADER + "g,t,0,1,0\n", "line 2: has 5 fields, the header has 6"),
    ("group,topic,partition,log_end_offset\n", "line 1: the header lacks column 'committed_offset' "
     "(expected group,topic,partition,committed_offset,log_start_offset,log_end_offset)"),
    ("", "empty snapshot"),
])
def test_malformed_snapshots_name_line_and_field(tmp_path, text, message):
    """Tests that each kind of malformed row is an error naming the line and the field, never dropped."""
    assert error_of(tmp_path, text) == message


def test_malformed_describe_table(tmp_path):
    """Tests a describe table whose row has a missing column: the error names the line."""
    text = ("GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID\n"
            "g t 0 1 5 4 - - -\ng t 1 1 5 - - -\n")
    assert error_of(tmp_path, text, "bad.txt") == "line 3: has 8 columns, expected 9 columns like the header"


def test_command_line_error_is_one_line_and_exit_2(tmp_path, capsys):
    """Tests that `rebalance-lab lags` on a malformed file exits 2 with one stderr line naming file, line, field."""
    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER + "g,t,0,1,0,5,7\n")
    assert main(["lags", str(bad)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"error: {bad}: line 2: has 7 fields, the header has 6\n"


# ------------------------------------------------------------------ Spark
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
    with pytest.raises(ProblemError, match=r"lags_malformed.csv: line 3, committed_offset: must be an integer "
                                           r">= 0 of at most 18 digits, got '14x000'"):
        lags_documents(rows, str(DATA / "lags_malformed.csv"))


@pytest.mark.spark
def test_command_line_group_and_out(spark, tmp_path, capsys):
    """Tests `rebalance-lab lags --reset earliest --group g1 --out FILE` and the all-groups shape on stdout."""
    out = tmp_path / "lags.json"
    assert main(["lags", str(SNAPSHOT), "--reset", "earliest", "--group", "g1", "--out", str(out)]) == 0
    assert json.loads(out.read_text()) == EARLIEST["g1"]
    assert main(["lags", str(SNAPSHOT)]) == 0
    assert json.loads(capsys.readouterr().out) == LATEST
    assert main(["lags", str(SNAPSHOT), "--group", "nope"]) == 2
    assert capsys.readouterr().err.endswith("--group: group 'nope' is not in the snapshot (groups: g1, g2)\n")


@pytest.mark.spark
def test_command_line_prints_no_spark_banner(tmp_path):
    """Tests issue 11 finding 3: a real `rebalance-lab lags` process shows no JVM banner or Spark log on stderr
    (they go to a temporary log file), only the command's own warning lines."""
    import subprocess
    import sys

    root = Path(__file__).parents[2]
    done = subprocess.run([sys.executable, "-m", "experiments.cli", "lags", str(SNAPSHOT), "--master", "local[1]"],
                          cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == LATEST
    assert all(line.startswith("warning: ") for line in done.stderr.splitlines()), done.stderr
