"""The offsets snapshots of tests/data and their hand-worked lags, shared by the snapshot, lag and `lags` tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from problems import ProblemError
from problems.lags import group_lags, lags_documents
from problems.snapshots import read_snapshot

DATA = Path(__file__).parents[1] / "data"
SNAPSHOT = DATA / "lags_snapshot.csv"

#: The lags of tests/data/lags_snapshot.csv, worked by hand from KIP-169's rules.
LATEST = {"g1": {"t0": [100_000, 60_000, 0], "t1": [0, 0]}, "g2": {"t0": [0, 60]}}
EARLIEST = {"g1": {"t0": [100_000, 60_000, 50_000], "t1": [70, 0]}, "g2": {"t0": [0, 60]}}

HEADER = "group,topic,partition,committed_offset,log_start_offset,log_end_offset\n"


def lags_of(path, reset="latest"):
    """The lags documents and warnings of a snapshot file, in-process (no Spark)."""
    return lags_documents(group_lags(read_snapshot(path), reset), str(path))


def error_of(tmp_path, text, name="bad.csv", reset="latest"):
    """The error (without the file name) of a snapshot holding ``text``."""
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ProblemError) as caught:
        lags_of(path, reset)
    return str(caught.value).removeprefix(f"{path}: ")
