"""``rebalance-lab lags``: the lags documents of an offsets snapshot (a Spark job) or of a live group.

The snapshot is read by :mod:`problems.snapshots`, its lags computed by
:mod:`experiments.lags_job` on Spark (a live group's few partitions: by
:func:`problems.lags.group_lags` in-process), and written as the ``lags``
objects of docs/formats.md (:func:`problems.lags.lags_documents`).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from experiments.lags_job import compute_lags
from experiments.options import Subcommands
from experiments.snapshot import add_cluster_arguments, connection_settings, write_json
from experiments.spark import spark_job
from problems import ProblemError
from problems.lags import group_lags, lags_documents
from problems.snapshots import COLUMNS, read_snapshot

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


def register(subcommands: Subcommands) -> None:
    """Add the ``lags`` subcommand to ``rebalance-lab``'s subparsers."""
    parser = subcommands.add_parser(
        "lags",
        help="per-partition lag (KIP-169) of consumer groups from an offsets snapshot (Spark job)",
        description="Compute KIP-169's per-partition lag of every group in an offsets snapshot, on Spark.",
        epilog=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "snapshot",
        metavar="SNAPSHOT",
        nargs="?",
        help="CSV, Parquet or kafka-consumer-groups --describe text (or --bootstrap-server)",
    )
    parser.add_argument(
        "--reset",
        choices=("latest", "earliest"),
        default="latest",
        help="auto.offset.reset for partitions without a committed offset (default: latest, Kafka's)",
    )
    parser.add_argument("--group", help="print only this group's lags object")
    add_cluster_arguments(parser)
    parser.add_argument("--out", metavar="FILE", help="write the JSON here instead of stdout")
    parser.add_argument(
        "--master", help="Spark master (default: $REBALANCE_LAB_SPARK_MASTER or local[*])"
    )
    parser.add_argument("--pretty", action="store_true", help="indent the JSON output")
    parser.set_defaults(handler=_command)


def cluster_frame(args: argparse.Namespace) -> pd.DataFrame:
    """The offsets of ``--group`` on ``--bootstrap-server`` as :func:`read_snapshot`'s frame (one line
    per partition, by topic name then partition)."""
    from clients import cluster

    if args.snapshot is not None:
        raise ProblemError(
            "", "give either SNAPSHOT or --bootstrap-server, not both", args.snapshot
        )
    if not args.group:
        raise ProblemError("--group", "missing (the consumer group to read)", args.bootstrap_server)
    settings = connection_settings(args)
    with cluster.connect(args.bootstrap_server, args.timeout, settings) as admin:
        rows = cluster.offset_rows(admin, args.group, args.bootstrap_server)
    values = [
        [
            line,
            args.group,
            topic,
            str(partition),
            None if committed < 0 else str(committed),
            str(start),
            str(end),
        ]
        for line, (topic, partition, committed, start, end) in enumerate(rows, start=1)
    ]
    return pd.DataFrame(values, columns=["line", *COLUMNS])


def _command(args: argparse.Namespace) -> int:
    check_out(args.out)  # before the cluster is read or Spark starts
    if (
        args.bootstrap_server is not None
    ):  # a live group: plain pandas, no Spark job for a few partitions
        rows = group_lags(cluster_frame(args), args.reset)
        documents, warnings = lags_documents(rows, args.bootstrap_server)
        return _write(args, documents.get(args.group, {}), warnings)
    if args.command_config is not None:
        raise ProblemError("--command-config", "only with --bootstrap-server", args.command_config)
    if args.snapshot is None:
        raise ProblemError(
            "", "give a SNAPSHOT or --bootstrap-server HOST:PORT --group G", "<command line>"
        )
    notes: list[str] = []
    frame = read_snapshot(args.snapshot, notes)
    # The group is checked before Spark starts (tens of seconds), as the output file above.
    groups = list(dict.fromkeys(frame["group"]))  # in the snapshot's order
    if args.group is not None and args.group not in groups:
        raise ProblemError(
            "--group",
            f"group {args.group!r} is not in the snapshot (groups: {', '.join(groups) or 'none'})",
            args.snapshot,
        )
    for note in notes:
        print(f"note: {args.snapshot}: {note}", file=sys.stderr)
    with spark_job(args.snapshot, args.master, "rebalance-lab lags") as spark:
        rows = compute_lags(spark, frame, args.reset)
    documents, warnings = lags_documents(rows, args.snapshot)
    return _write(args, documents if args.group is None else documents[args.group], warnings)


def check_out(out: str | None) -> None:
    """A :class:`ProblemError` unless ``out`` (``--out``) is absent or a file that can be written: its
    folder exists, it is not a folder itself."""
    if not out:
        return
    path = Path(out)
    if path.is_dir():
        raise ProblemError("--out", "cannot write: it is a folder", out)
    folder = path.absolute().parent
    if not folder.is_dir():
        raise ProblemError("--out", "cannot write: its folder does not exist", out)
    if not os.access(path if path.exists() else folder, os.W_OK):
        raise ProblemError("--out", "cannot write: permission denied", out)


def _write(args: argparse.Namespace, documents: dict[str, Any], warnings: list[str]) -> int:
    for line in warnings:
        print(line, file=sys.stderr)
    write_json(documents, args.out, args.pretty)
    return 0
