"""Offsets snapshots (docs/cli/index.md, ``rebalance-lab lags``): read into rows of text, checked later.

Step by step, with its sources and where it follows Kafka: docs/strategies/lag-aware.md.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd

from problems.errors import ProblemError

#: Snapshot columns (CSV and Parquet), in order.
COLUMNS = ("group", "topic", "partition", "committed_offset", "log_start_offset", "log_end_offset")
#: The ``kafka-consumer-groups --describe`` columns each snapshot column comes from.
DESCRIBE = {
    "group": "GROUP",
    "topic": "TOPIC",
    "partition": "PARTITION",
    "committed_offset": "CURRENT-OFFSET",
    "log_end_offset": "LOG-END-OFFSET",
}

#: One snapshot row as read: the line number, then each of :data:`COLUMNS` as text or ``None``.
Row = list[int | str | None]


def read_snapshot(path: str | Path, notes: list[str] | None = None) -> pd.DataFrame:
    """Read a snapshot into strings: ``line`` plus :data:`COLUMNS` (``None`` where missing).

    ``line`` is the line number in a CSV or text file, the 1-based row in Parquet.  ``notes``, when
    given, receives what is odd but not an error (a describe table's ``LAG`` that contradicts its
    offsets), one line each without the file name.

    Raises
    ------
    ProblemError
        Unreadable file, missing columns, or a row with the wrong number of fields.
    """
    path = Path(path)
    try:
        if path.suffix.lower() in (".parquet", ".pq"):
            return _read_parquet(path)
        text = path.read_text(encoding="utf-8-sig")  # a byte order mark (Excel's CSV) is not data
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ProblemError("", f"cannot read the snapshot: {error}", str(path)) from None
    first = next((line.split() for line in text.splitlines() if line.strip()), None)
    if first is None:
        raise ProblemError("", "empty snapshot", str(path))
    if first[0] == "GROUP":
        rows = _read_describe(text, path, [] if notes is None else notes)
    else:
        rows = _read_csv(text, path)
    return _grouped(pd.DataFrame(rows, columns=["line", *COLUMNS]), path)


def _grouped(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """``frame`` if every row names its group (the Spark job's key), else the first such error."""
    missing = frame["line"][frame["group"].isna()]
    if len(missing):
        raise ProblemError(f"line {int(missing.min())}, group", "missing", str(path))
    return frame


def _read_csv(text: str, path: Path) -> list[Row]:
    # No field is longer than the whole text: the csv module's own limit (131,072 characters) would
    # refuse a long group or topic name that JSON and the describe table accept.
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, len(text) + 1))
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    rows: list[Row] = []
    try:
        for fields in reader:
            if not fields:
                continue
            if header is None:
                header = [f.strip() for f in fields]
                missing = [c for c in COLUMNS if c not in header]
                if missing:
                    raise ProblemError(
                        f"line {reader.line_num}",
                        f"the header lacks column {missing[0]!r} (expected {','.join(COLUMNS)})",
                        str(path),
                    )
                continue
            if len(fields) != len(header):
                raise ProblemError(
                    f"line {reader.line_num}",
                    f"has {len(fields)} fields, the header has {len(header)}",
                    str(path),
                )
            values = dict(zip(header, (f.strip() or None for f in fields)))
            rows.append([reader.line_num, *(values[c] for c in COLUMNS)])
    except csv.Error as error:
        raise ProblemError(f"line {reader.line_num}", f"not CSV: {error}", str(path)) from None
    finally:
        csv.field_size_limit(limit)
    return rows


#: A describe table's offsets and lag (Kafka prints a negative lag for a committed offset past the end).
_DESCRIBE_INTEGER = re.compile(r"-?[0-9]{1,18}")


def _read_describe(text: str, path: Path, notes: list[str]) -> list[Row]:
    header: list[str] | None = None
    rows: list[Row] = []
    contradicted: list[tuple[int, int, int]] = []  # line, LAG, LOG-END-OFFSET - CURRENT-OFFSET
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        # Blank, or "Consumer group ... has no active members."
        if not fields or line.startswith("Consumer group "):
            continue
        if fields[0] == "GROUP":
            header = fields
            missing = [c for c in DESCRIBE.values() if c not in header]
            if missing:
                raise ProblemError(
                    f"line {number}", f"the header lacks column {missing[0]}", str(path)
                )
            continue
        if header is None or len(fields) != len(header):
            expected = (
                "a GROUP header first"
                if header is None
                else f"{len(header)} columns like the header"
            )
            raise ProblemError(
                f"line {number}", f"has {len(fields)} columns, expected {expected}", str(path)
            )
        values = {name: (None if value == "-" else value) for name, value in zip(header, fields)}
        rows.append([number, *(values[DESCRIBE[c]] if c in DESCRIBE else None for c in COLUMNS)])
        given = [values.get(c) or "" for c in ("LAG", "LOG-END-OFFSET", "CURRENT-OFFSET")]
        if all(_DESCRIBE_INTEGER.fullmatch(v) for v in given):
            lag, end, committed = (int(v) for v in given)
            if lag != end - committed:
                contradicted.append((number, lag, end - committed))
    if contradicted:
        first, lag, computed = contradicted[0]
        notes.append(
            f"{len(contradicted)} rows whose LAG is not LOG-END-OFFSET - CURRENT-OFFSET (first: "
            f"line {first}, LAG {lag}, the offsets give {computed}); the lags are computed from the "
            "offsets"
        )
    return rows


def _read_parquet(path: Path) -> pd.DataFrame:
    table = pd.read_parquet(path)
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise ProblemError(missing[0], f"missing column (expected {', '.join(COLUMNS)})", str(path))
    frame = pd.DataFrame({"line": np.arange(1, len(table) + 1, dtype=np.int64)})
    for column in COLUMNS:
        frame[column] = [_text(v) for v in table[column].astype(object)]
    return _grouped(frame, path)


def _text(value: object) -> str | None:
    """A Parquet cell as the text a CSV would hold (integral floats as integers)."""
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return None
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return str(value)
