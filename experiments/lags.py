"""Per-partition lag from an offsets snapshot, as KIP-169 defines it: a Spark job and ``rebalance-lab lags``.

KIP-169, "Proposed Changes / Algorithm", step 1 (seed 001): the lag of a
partition is its log end offset minus the group's committed offset; without a
committed offset it is 0 under ``auto.offset.reset=latest`` and log end minus
log start offset under ``earliest`` (or any other value).  A committed offset
above the end offset gives lag 0 (the prototype's ``max(end - next, 0)``) and
is counted in a warning.

Snapshots (one row per group, topic and partition, many groups at once):

* CSV with a header ``group,topic,partition,committed_offset,log_start_offset,log_end_offset``
  (an empty ``committed_offset`` or ``log_start_offset`` is missing);
* Parquet (``.parquet`` / ``.pq``) with the same columns;
* the text table ``kafka-consumer-groups --describe`` prints (columns GROUP
  TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID,
  ``-`` for a missing value; the ``LAG`` column is recomputed).  It has no log
  start offset: a partition without a committed offset under ``earliest`` then
  gets lag = log end offset (start taken as 0, an upper bound), counted in a
  warning.

Offsets are integers of at most 18 digits, so every lag is an exact 64-bit
integer.  A malformed row, a duplicated partition or a gap in a topic's
partitions is an error naming the file, the line (row, for Parquet) and the
field; nothing is dropped silently.

The lag arithmetic is plain pandas (:func:`group_lags`, one group at a time);
:func:`compute_lags` runs it on Spark with ``groupBy("group").applyInPandas``.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from clients.cluster import kip169_lags
from experiments.snapshot import add_cluster_arguments, write_json
from experiments.spark import jvm_output_to_log, quiet_pyspark_warnings, spark_session
from problems import ProblemError
from problems.checks import INT32_MAX

#: Snapshot columns (CSV and Parquet), in order.
COLUMNS = ("group", "topic", "partition", "committed_offset", "log_start_offset", "log_end_offset")
#: The ``kafka-consumer-groups --describe`` columns each snapshot column comes from.
DESCRIBE = {"group": "GROUP", "topic": "TOPIC", "partition": "PARTITION",
            "committed_offset": "CURRENT-OFFSET", "log_end_offset": "LOG-END-OFFSET"}
OUTPUT_SCHEMA = ("line long, group string, topic string, partition long, lag long, "
                 "clamped boolean, start_unknown boolean, error string")
_INTEGER = r"[0-9]{1,18}"


# ------------------------------------------------------------------ reading
def read_snapshot(path: str | Path) -> pd.DataFrame:
    """Read a snapshot into strings: ``line`` plus :data:`COLUMNS` (``None`` where missing).

    ``line`` is the line number in a CSV or text file, the 1-based row in Parquet.

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
    rows = _read_describe(text, path) if first[0] == "GROUP" else _read_csv(text, path)
    return _grouped(pd.DataFrame(rows, columns=["line", *COLUMNS]), path)


def _grouped(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """``frame`` if every row names its group (the Spark job's key), else the first such error."""
    missing = frame["line"][frame["group"].isna()]
    if len(missing):
        raise ProblemError(f"line {int(missing.min())}, group", "missing", str(path))
    return frame


def _read_csv(text: str, path: Path) -> list[list]:
    reader = csv.reader(text.splitlines())
    header = None
    rows = []
    for fields in reader:
        if not fields:
            continue
        if header is None:
            header = [f.strip() for f in fields]
            missing = [c for c in COLUMNS if c not in header]
            if missing:
                raise ProblemError(f"line {reader.line_num}", f"the header lacks column {missing[0]!r} "
                                   f"(expected {','.join(COLUMNS)})", str(path))
            continue
        if len(fields) != len(header):
            raise ProblemError(f"line {reader.line_num}", f"has {len(fields)} fields, the header has {len(header)}",
                               str(path))
        values = dict(zip(header, (f.strip() or None for f in fields)))
        rows.append([reader.line_num, *(values[c] for c in COLUMNS)])
    return rows


def _read_describe(text: str, path: Path) -> list[list]:
    header = None
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields or line.startswith("Consumer group "):  # blank, or "... has no active members."
            continue
        if fields[0] == "GROUP":
            header = fields
            missing = [c for c in DESCRIBE.values() if c not in header]
            if missing:
                raise ProblemError(f"line {number}", f"the header lacks column {missing[0]}", str(path))
            continue
        if header is None or len(fields) != len(header):
            expected = "a GROUP header first" if header is None else f"{len(header)} columns like the header"
            raise ProblemError(f"line {number}", f"has {len(fields)} columns, expected {expected}", str(path))
        values = {name: (None if value == "-" else value) for name, value in zip(header, fields)}
        rows.append([number, *(values[DESCRIBE[c]] if c in DESCRIBE else None for c in COLUMNS)])
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


def _text(value) -> str | None:
    """A Parquet cell as the text a CSV would hold (integral floats as integers)."""
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return None
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return str(value)


# -------------------------------------------------------------- lag (pandas)
def group_lags(frame: pd.DataFrame, reset: str = "latest") -> pd.DataFrame:
    """KIP-169's lag of every row of ``frame`` (one group or several), checked.

    Parameters
    ----------
    frame
        Columns ``line`` and :data:`COLUMNS`, strings or ``None`` (:func:`read_snapshot`).
    reset
        ``auto.offset.reset``: ``latest`` gives lag 0 without a committed offset,
        anything else the log end minus the log start offset.

    Returns
    -------
    pandas.DataFrame
        Columns of :data:`OUTPUT_SCHEMA`: one row per partition, or only the
        error rows (``error`` set, ``partition`` -1, ``lag`` 0) when a row is
        malformed, a partition appears twice or a topic has a gap.
    """
    errors: list[tuple[int, str]] = []
    text = {c: frame[c].astype(object) for c in COLUMNS}
    for column in ("group", "topic"):
        for line in frame["line"][text[column].isna()]:
            errors.append((int(line), f"{column}: missing"))
    numbers = {}
    lines = frame["line"].to_numpy(dtype=np.int64)
    for column in ("partition", "committed_offset", "log_start_offset", "log_end_offset"):
        values = text[column]
        present = values.notna().to_numpy()
        good = present & values.fillna("").str.fullmatch(_INTEGER).to_numpy(dtype=bool)
        bad = (present & ~good) | (~present & (column in ("partition", "log_end_offset")))
        for line, value in zip(lines[bad], values[bad]):
            shown = "missing" if pd.isna(value) else f"got {value!r}"
            errors.append((int(line), f"{column}: must be an integer >= 0 of at most 18 digits, {shown}"))
        numbers[column] = (values.where(good, "0").astype(np.int64).to_numpy(), good)
    index, _ = numbers["partition"]
    for line, value in zip(lines[index > INT32_MAX], index[index > INT32_MAX]):
        errors.append((int(line), f"partition: must be at most {INT32_MAX} (an int32, as in Kafka), got {value}"))
    end, _ = numbers["log_end_offset"]
    start, has_start = numbers["log_start_offset"]
    committed, has_committed = numbers["committed_offset"]
    inverted = has_start & (start > end)
    for line, s, e in zip(lines[inverted], start[inverted], end[inverted]):
        errors.append((int(line), f"log_start_offset: {s} is above the log end offset {e}"))
    if not errors:
        errors += _coverage(frame, numbers["partition"][0], lines)
    if errors:
        errors.sort()
        return pd.DataFrame({
            "line": [e[0] for e in errors], "group": frame["group"].iloc[:1].tolist() * len(errors),
            "topic": [None] * len(errors), "partition": -1, "lag": 0, "clamped": False,
            "start_unknown": False, "error": [e[1] for e in errors],
        })
    return pd.DataFrame({
        "line": lines, "group": text["group"], "topic": text["topic"],
        "partition": numbers["partition"][0], "lag": kip169_lags(np.where(has_committed, committed, -1), np.where(has_start, start, 0), end, reset),
        "clamped": has_committed & (committed > end),
        "start_unknown": ~has_committed & ~has_start & (reset != "latest"),
        "error": None,
    })


def _coverage(frame: pd.DataFrame, partitions: np.ndarray, lines: np.ndarray) -> list[tuple[int, str]]:
    """Duplicated partitions (at the later line) and gaps in each (group, topic)."""
    keyed = pd.DataFrame({"group": frame["group"].to_numpy(), "topic": frame["topic"].to_numpy(),
                          "partition": partitions, "line": lines}).sort_values("line")
    errors = []
    twice = keyed.duplicated(["group", "topic", "partition"])
    for row in keyed[twice].itertuples():
        first = keyed[(keyed.group == row.group) & (keyed.topic == row.topic) & (keyed.partition == row.partition)]
        errors.append((row.line, f"partition: group {row.group!r} topic {row.topic!r} partition {row.partition} "
                                 f"is also on line {first.line.iloc[0]}"))
    counts = keyed[~twice].groupby(["group", "topic"], sort=False).agg(n=("partition", "size"),
                                                                          top=("partition", "max"),
                                                                          line=("line", "max"))
    for (group, topic), row in counts[counts.n != counts.top + 1].iterrows():
        have = np.unique(keyed[(keyed.group == group) & (keyed.topic == topic)].partition.to_numpy())
        gap = int(np.flatnonzero(have != np.arange(len(have)))[0])  # the first index missing
        errors.append((int(row.line), f"partition: group {group!r} topic {topic!r} has no row for partition {gap} "
                                      f"(it has partitions up to {int(row.top)})"))
    return errors


def lags_documents(rows: pd.DataFrame, source: str) -> tuple[dict[str, dict[str, list[int]]], list[str]]:
    """``{group: lags}`` (the ``lags`` object of DESIGN.md section 2 per group) and warning lines.

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
        documents.setdefault(group, {})[topic] = [int(v) for v in ordered["lag"]]
    warnings = []
    for flag, what in (("clamped", "committed offsets above the log end offset: lag clamped to 0"),
                       ("start_unknown", "partitions without a committed offset or a log start offset: "
                                         "lag taken as the log end offset (an upper bound)")):
        flagged = rows[rows[flag].astype(bool)]
        if len(flagged):
            row = flagged.iloc[0]
            warnings.append(f"warning: {source}: {len(flagged)} {what} (first: line {row['line']}, group "
                            f"{row['group']!r}, topic {row['topic']!r}, partition {row['partition']})")
    return documents, warnings


# -------------------------------------------------------------------- Spark
def compute_lags(spark, frame: pd.DataFrame, reset: str = "latest") -> pd.DataFrame:
    """:func:`group_lags` of every group of ``frame`` on Spark (one ``applyInPandas`` task per group)."""
    schema = "line long, " + ", ".join(f"{c} string" for c in COLUMNS)
    snapshot = spark.createDataFrame(frame[["line", *COLUMNS]], schema=schema)

    def batch(group: pd.DataFrame) -> pd.DataFrame:
        quiet_pyspark_warnings()
        return group_lags(group, reset)

    return snapshot.groupBy("group").applyInPandas(batch, OUTPUT_SCHEMA).toPandas()


# ------------------------------------------------------------ command line
HELP = """\
output: without --group, {"GROUP": {"TOPIC": [lag of partition 0, 1, ...]}} for every group;
with --group G, the "lags" object of group G alone, ready for a problem file:
{"TOPIC": [lag of partition 0, 1, ...]}.

snapshot formats (one row per group, topic, partition):
  CSV      group,topic,partition,committed_offset,log_start_offset,log_end_offset
           (empty committed_offset / log_start_offset = missing)
  Parquet  the same columns (.parquet or .pq)
  text     the table `kafka-consumer-groups --describe` prints (GROUP TOPIC PARTITION
           CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID, '-' = missing)

lag (KIP-169): log end offset - committed offset; without a committed offset, 0 under
--reset latest, log end - log start offset under --reset earliest.  A committed offset
above the end gives 0 (counted in a warning).  A malformed row is an error naming the
file, the line and the field (exit status 2).

example:
  rebalance-lab lags examples/offsets/two-groups.csv --reset earliest --group payments
"""


def register(subcommands) -> None:
    """Add the ``lags`` subcommand to ``rebalance-lab``'s subparsers."""
    parser = subcommands.add_parser(
        "lags", help="per-partition lag (KIP-169) of consumer groups from an offsets snapshot (Spark job)",
        description="Compute KIP-169's per-partition lag of every group in an offsets snapshot, on Spark.",
        epilog=HELP, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("snapshot", metavar="SNAPSHOT", nargs="?",
                        help="CSV, Parquet or kafka-consumer-groups --describe text (or --bootstrap-server)")
    parser.add_argument("--reset", choices=("latest", "earliest"), default="latest",
                        help="auto.offset.reset for partitions without a committed offset (default: latest, Kafka's)")
    parser.add_argument("--group", help="print only this group's lags object")
    add_cluster_arguments(parser)
    parser.add_argument("--out", metavar="FILE", help="write the JSON here instead of stdout")
    parser.add_argument("--master", help="Spark master (default: $REBALANCE_LAB_SPARK_MASTER or local[*])")
    parser.add_argument("--pretty", action="store_true", help="indent the JSON output")
    parser.set_defaults(handler=_command)


def cluster_frame(args: argparse.Namespace) -> pd.DataFrame:
    """The offsets of ``--group`` on ``--bootstrap-server`` as :func:`read_snapshot`'s frame (one line
    per partition, by topic name then partition)."""
    from clients import cluster

    if args.snapshot is not None:
        raise ProblemError("", "give either SNAPSHOT or --bootstrap-server, not both", args.snapshot)
    if not args.group:
        raise ProblemError("--group", "missing (the consumer group to read)", args.bootstrap_server)
    with cluster.connect(args.bootstrap_server, args.timeout) as admin:
        rows = cluster.offset_rows(admin, args.group, args.bootstrap_server)
    values = [[line, args.group, topic, str(partition), None if committed < 0 else str(committed), str(start),
               str(end)] for line, (topic, partition, committed, start, end) in enumerate(rows, start=1)]
    return pd.DataFrame(values, columns=["line", *COLUMNS])


def _command(args: argparse.Namespace) -> int:
    if args.bootstrap_server is not None:  # a live group: plain pandas, no Spark job for a few partitions
        rows = group_lags(cluster_frame(args), args.reset)
        documents, warnings = lags_documents(rows, args.bootstrap_server)
        return _write(args, documents.get(args.group, {}), warnings)
    if args.snapshot is None:
        raise ProblemError("", "give a SNAPSHOT or --bootstrap-server HOST:PORT --group G", "<command line>")
    frame = read_snapshot(args.snapshot)
    if args.out and not Path(args.out).absolute().parent.is_dir():  # before a minute of Spark
        raise ProblemError("--out", "cannot write: its folder does not exist", args.out)
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    with jvm_output_to_log() as log:
        try:
            rows = compute_lags(spark_session(args.master, app_name="rebalance-lab lags"), frame, args.reset)
        except (Py4JError, PySparkException) as error:
            first = next((line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__)
            raise ProblemError("", f"the Spark job failed: {first} (Spark's log: {log})", args.snapshot) from None
    documents, warnings = lags_documents(rows, args.snapshot)
    if args.group is not None:
        if args.group not in documents:
            raise ProblemError("--group", f"group {args.group!r} is not in the snapshot "
                               f"(groups: {', '.join(documents) or 'none'})", args.snapshot)
        documents = documents[args.group]
    return _write(args, documents, warnings)


def _write(args: argparse.Namespace, documents: dict, warnings: list[str]) -> int:
    for line in warnings:
        print(line, file=sys.stderr)
    write_json(documents, args.out, args.pretty)
    return 0
