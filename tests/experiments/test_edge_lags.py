"""`rebalance-lab lags` at its edges: names longer than the csv module's limit, --out and --group checked
before Spark starts, a note for a describe table's LAG that contradicts its offsets."""

from __future__ import annotations

import json
from contextlib import contextmanager

import pytest

import experiments.lags
from experiments.cli import main
from problems.lags import group_lags
from support.lag_snapshots import HEADER, SNAPSHOT

DESCRIBE = "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID\n"


@pytest.fixture
def no_spark(monkeypatch):
    """Fail the test if `lags` starts Spark."""

    def refuse(*args, **kwargs):
        raise AssertionError("Spark was started")

    monkeypatch.setattr(experiments.lags, "spark_job", refuse)


def test_out_and_group_are_checked_before_spark_starts(no_spark, tmp_path, capsys):
    """Tests `lags --out` naming a folder, or a file in a missing folder, and `--group` naming no group
    of the snapshot: exit 2 and one line, and Spark is not started."""
    cases = [
        (["--out", str(tmp_path)], f"error: {tmp_path}: --out: cannot write: it is a folder"),
        (
            ["--out", str(tmp_path / "no" / "x.json")],
            f"error: {tmp_path / 'no' / 'x.json'}: --out: cannot write: its folder does not exist",
        ),
        (
            ["--group", "nobody"],
            f"error: {SNAPSHOT}: --group: group 'nobody' is not in the snapshot (groups: g1, g2)",
        ),
    ]
    for arguments, line in cases:
        assert main(["lags", str(SNAPSHOT), *arguments]) == 2
        captured = capsys.readouterr()
        assert (captured.out, captured.err) == ("", line + "\n")


@pytest.mark.spark
def test_a_topic_name_longer_than_the_csv_field_limit(spark, tmp_path, capsys):
    """Tests, through the command and its Spark job, a CSV snapshot whose topic name is longer than
    131,072 characters: its lags, no csv field-limit traceback."""
    topic = "t" * 131_073
    snapshot = tmp_path / "long.csv"
    snapshot.write_text(HEADER + f"g,{topic},0,1,0,5\n")
    assert main(["lags", str(snapshot), "--master", "local[2]"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"g": {topic: [4]}} and captured.err == ""


def test_a_lag_column_contradicting_the_offsets_is_a_note(tmp_path, monkeypatch, capsys):
    """Tests `lags` on a describe table whose LAG column contradicts its offsets: the lags of the
    offsets, and a note (the job's arithmetic run in-process: group_lags, what Spark maps)."""

    @contextmanager
    def in_process(source, master, app_name, **kwargs):
        yield None

    monkeypatch.setattr(experiments.lags, "spark_job", in_process)
    monkeypatch.setattr(
        experiments.lags, "compute_lags", lambda spark, frame, reset: group_lags(frame, reset)
    )
    describe = tmp_path / "d.txt"
    describe.write_text(DESCRIBE + "g t 0 1 5 9 - - -\ng t 1 2 2 0 - - -\n")
    assert main(["lags", str(describe), "--group", "g"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"t": [4, 0]}
    assert captured.err == (
        f"note: {describe}: 1 rows whose LAG is not LOG-END-OFFSET - CURRENT-OFFSET (first: line 2, "
        "LAG 9, the offsets give 4); the lags are computed from the offsets\n"
    )
