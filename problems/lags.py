"""Per-partition lag from an offsets snapshot, as KIP-169 defines it, and the ``lags`` documents.

Step by step, with its sources and where it follows Kafka: docs/strategies/lag-aware.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from problems.checks import INT32_MAX
from problems.errors import ProblemError
from problems.snapshots import COLUMNS

#: The columns of :func:`group_lags`'s rows and their types (Spark's names).
LAG_COLUMNS = {
    "line": "long",
    "group": "string",
    "topic": "string",
    "partition": "long",
    "lag": "long",
    "clamped": "boolean",
    "start_unknown": "boolean",
    "error": "string",
}
_INTEGER = r"[0-9]{1,18}"


def kip169_lags(
    committed: np.ndarray, start: np.ndarray, end: np.ndarray, reset: str = "latest"
) -> np.ndarray:
    """KIP-169's lag: ``end - committed`` (at least 0); without a committed offset (``-1``) 0 under
    ``auto.offset.reset=latest``, ``end - start`` otherwise."""
    since = np.where(committed >= 0, committed, end if reset == "latest" else start)
    lags: np.ndarray = np.maximum(end - since, 0)
    return lags


def group_lags(frame: pd.DataFrame, reset: str = "latest") -> pd.DataFrame:
    """KIP-169's lag of every row of ``frame`` (one group or several), checked.

    Parameters
    ----------
    frame
        Columns ``line`` and :data:`problems.snapshots.COLUMNS`, strings or ``None``
        (:func:`problems.snapshots.read_snapshot`).
    reset
        ``auto.offset.reset``: ``latest`` gives lag 0 without a committed offset,
        anything else the log end minus the log start offset.

    Returns
    -------
    pandas.DataFrame
        Columns of :data:`LAG_COLUMNS`: one row per partition, or only the
        error rows (``error`` set, ``partition`` -1, ``lag`` 0) when a row is
        malformed, a partition appears twice or a topic has a gap.
    """
    text = {c: frame[c].astype(object) for c in COLUMNS}
    lines = frame["line"].to_numpy(dtype=np.int64)
    errors, numbers = _read_columns(text, lines)
    end, _ = numbers["log_end_offset"]
    start, has_start = numbers["log_start_offset"]
    committed, has_committed = numbers["committed_offset"]
    inverted = has_start & (start > end)
    for line, s, e in zip(lines[inverted], start[inverted], end[inverted]):
        errors.append((int(line), f"log_start_offset: {s} is above the log end offset {e}"))
    if not errors:
        errors += _coverage(frame, numbers["partition"][0], lines)
    if errors:
        return _error_rows(frame, errors)
    return pd.DataFrame(
        {
            "line": lines,
            "group": text["group"],
            "topic": text["topic"],
            "partition": numbers["partition"][0],
            "lag": kip169_lags(
                np.where(has_committed, committed, -1), np.where(has_start, start, 0), end, reset
            ),
            "clamped": has_committed & (committed > end),
            "start_unknown": ~has_committed & ~has_start & (reset != "latest"),
            "error": None,
        }
    )


def _read_columns(
    text: dict[str, pd.Series], lines: np.ndarray
) -> tuple[list[tuple[int, str]], dict[str, tuple[np.ndarray, np.ndarray]]]:
    """The errors of the rows' fields (``(line, message)``), and each number column as integers
    (0 where absent or malformed) with whether it was present and well formed."""
    errors: list[tuple[int, str]] = []
    for column in ("group", "topic"):
        for line in lines[text[column].isna().to_numpy()]:
            errors.append((int(line), f"{column}: missing"))
    numbers = {}
    for column in ("partition", "committed_offset", "log_start_offset", "log_end_offset"):
        values = text[column]
        present = values.notna().to_numpy()
        good = present & values.fillna("").str.fullmatch(_INTEGER).to_numpy(dtype=bool)
        bad = (present & ~good) | (~present & (column in ("partition", "log_end_offset")))
        for line, value in zip(lines[bad], values[bad]):
            shown = "missing" if pd.isna(value) else f"got {value!r}"
            errors.append(
                (int(line), f"{column}: must be an integer >= 0 of at most 18 digits, {shown}")
            )
        numbers[column] = (values.where(good, "0").astype(np.int64).to_numpy(), good)
    index, _ = numbers["partition"]
    for line, value in zip(lines[index > INT32_MAX], index[index > INT32_MAX]):
        errors.append(
            (
                int(line),
                f"partition: must be at most {INT32_MAX} (an int32, as in Kafka), got {value}",
            )
        )
    return errors, numbers


def _error_rows(frame: pd.DataFrame, errors: list[tuple[int, str]]) -> pd.DataFrame:
    """The rows :func:`group_lags` returns for ``errors``: one per error, by line."""
    errors = sorted(errors)
    return pd.DataFrame(
        {
            "line": [e[0] for e in errors],
            "group": frame["group"].iloc[:1].tolist() * len(errors),
            "topic": [None] * len(errors),
            "partition": -1,
            "lag": 0,
            "clamped": False,
            "start_unknown": False,
            "error": [e[1] for e in errors],
        }
    )


def _coverage(
    frame: pd.DataFrame, partitions: np.ndarray, lines: np.ndarray
) -> list[tuple[int, str]]:
    """Duplicated partitions (at the later line) and gaps in each (group, topic)."""
    keyed = pd.DataFrame(
        {
            "group": frame["group"].to_numpy(),
            "topic": frame["topic"].to_numpy(),
            "partition": partitions,
            "line": lines,
        }
    ).sort_values("line")
    errors: list[tuple[int, str]] = []
    twice = keyed.duplicated(["group", "topic", "partition"])
    again = keyed[twice]
    for line, group, topic, partition in zip(
        *_columns(again, "line", "group", "topic", "partition")
    ):
        first = keyed[
            (keyed.group == group) & (keyed.topic == topic) & (keyed.partition == partition)
        ]
        errors.append(
            (
                line,
                f"partition: group {group!r} topic {topic!r} partition {partition} "
                f"is also on line {first.line.iloc[0]}",
            )
        )
    counts = (
        keyed[~twice]
        .groupby(["group", "topic"], sort=False)
        .agg(n=("partition", "size"), top=("partition", "max"), line=("line", "max"))
    )
    short = counts[counts.n != counts.top + 1].reset_index()
    for group, topic, line, top in zip(*_columns(short, "group", "topic", "line", "top")):
        have = np.unique(
            keyed[(keyed.group == group) & (keyed.topic == topic)].partition.to_numpy()
        )
        gap = int(np.flatnonzero(have != np.arange(len(have)))[0])  # the first index missing
        errors.append(
            (
                line,
                f"partition: group {group!r} topic {topic!r} has no row for partition {gap} "
                f"(it has partitions up to {top})",
            )
        )
    return errors


def _columns(frame: pd.DataFrame, *names: str) -> list[list[Any]]:
    """The columns ``names`` of ``frame`` as lists of Python values (numbers as ``int``)."""
    return [frame[name].to_numpy().tolist() for name in names]


def lags_documents(
    rows: pd.DataFrame, source: str
) -> tuple[dict[str, dict[str, list[int]]], list[str]]:
    """``{group: lags}`` (the ``lags`` object of docs/formats.md per group) and warning lines.

    Groups and topics keep the order in which they first appear in the snapshot.

    Raises
    ------
    ProblemError
        The first error row (by line), naming ``source``, the line and the field.
    """
    errors = rows[rows["error"].notna()].sort_values("line")
    if len(errors):
        first = errors.iloc[0]
        field, message = first["error"].split(": ", 1)
        raise ProblemError(f"line {first['line']}, {field}", message, source)
    rows = rows.sort_values("line")
    documents: dict[str, dict[str, list[int]]] = {}
    for (group, topic), part in rows.groupby(["group", "topic"], sort=False):
        ordered = part.sort_values("partition")
        documents.setdefault(str(group), {})[str(topic)] = [int(v) for v in ordered["lag"]]
    warnings = []
    for flag, what in (
        ("clamped", "committed offsets above the log end offset: lag clamped to 0"),
        (
            "start_unknown",
            "partitions without a committed offset or a log start offset: "
            "lag taken as the log end offset (an upper bound)",
        ),
    ):
        flagged = rows[rows[flag].astype(bool)]
        if len(flagged):
            row = flagged.iloc[0]
            warnings.append(
                f"warning: {source}: {len(flagged)} {what} (first: line {row['line']}, group "
                f"{row['group']!r}, topic {row['topic']!r}, partition {row['partition']})"
            )
    return documents, warnings
