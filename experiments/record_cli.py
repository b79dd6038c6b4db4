"""``rebalance-lab record``: a live consumer group's rebalances written as a group trace.

The watching is :mod:`clients.group_watch`, the trace building :mod:`clients.recorder`; this
module parses the arguments, connects, stops on Ctrl-C, SIGTERM, ``--duration`` or
``--rebalances``, and reports what was written.  Details: docs/record.md.
"""

from __future__ import annotations

import argparse
import logging
import re
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from experiments.options import integer_in, seconds
from problems import ProblemError
from problems.checks import INT32_MAX

if TYPE_CHECKING:
    from clients.coordinator_records import RecordReader

#: Exit status when the watch ended by itself (a group deleted, a missing ACL, the cluster lost);
#: the traces seen so far are written.
EXIT_ENDED = 3

EPILOG = """\
output: a group trace (docs/formats.md) whose problem is the group as first seen and whose steps
are the rebalances seen, each with its events and an "observed" object (the assignment the
members held afterwards, rounds, settle_ms, unowned_partition_ms).  The file is rewritten
atomically after every rebalance: it is a complete trace at any moment.  With several groups
(--group repeated, or --groups PATTERN) --out is a folder: one GROUP.json per group.

Ctrl-C, SIGTERM, --duration and --rebalances stop it (exit status 0).  A group that disappears,
a missing ACL or a cluster that stops answering for --timeout seconds: one line on stderr, the
trace so far written, exit status 3.  A bad option or a cluster that refuses the connection:
one line, exit status 2.

examples:
  rebalance-lab record --bootstrap-server 127.0.0.1:9092 --group shop --duration 600 --out shop.json
  rebalance-lab record --bootstrap-server kafka1:9093 --command-config client.properties \\
      --groups 'orders-.*' --rebalances 20 --out traces/
  rebalance-lab trace --strategy sticky --report shop.json
"""


def register(subcommands: Any) -> None:
    """Add the ``record`` subcommand to ``rebalance-lab``'s subparsers."""
    from clients.cluster import TIMEOUT

    parser = subcommands.add_parser(
        "record",
        help="record a live group's rebalances as a trace (with what Kafka's members held)",
        description="Watch live consumer groups and write their rebalances as group traces, "
        "each step with the assignment the members actually held.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT")
    parser.add_argument(
        "--command-config",
        metavar="FILE",
        help="Kafka client properties for the connection (security.protocol, ssl.*, sasl.*)",
    )
    parser.add_argument(
        "--timeout",
        type=seconds,
        default=TIMEOUT,
        metavar="SEC",
        help=f"seconds to wait for the cluster before giving up (default {TIMEOUT:g})",
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--group", action="append", metavar="G", help="a consumer group (repeat for several)"
    )
    which.add_argument(
        "--groups", metavar="PATTERN", help="every group whose name matches this regex"
    )
    until = parser.add_mutually_exclusive_group()
    until.add_argument("--duration", type=seconds, metavar="SEC", help="stop after SEC seconds")
    until.add_argument(
        "--rebalances",
        type=integer_in(1, INT32_MAX),
        metavar="N",
        help="stop after N rebalances (all groups together)",
    )
    parser.add_argument(
        "--poll-interval",
        type=seconds,
        default=0.2,
        metavar="SEC",
        help="seconds between two looks at the groups (default 0.2): the resolution of the "
        "times in the trace",
    )
    parser.add_argument(
        "--source",
        choices=("auto", "admin"),
        default="auto",
        help="auto (default): the coordinator's records in __consumer_offsets where the "
        "principal may read them (no rebalance missed), else the admin API; admin: polling "
        "the admin API only",
    )
    parser.add_argument(
        "--out", required=True, metavar="PATH", help="the trace file (a folder for several groups)"
    )
    parser.set_defaults(handler=command)


def _target(args: argparse.Namespace) -> Path:
    out = Path(args.out)
    several = args.groups is not None or len(args.group) > 1
    if several:
        if out.exists() and not out.is_dir():
            raise ProblemError("--out", "must be a folder when recording several groups", args.out)
        out.mkdir(parents=True, exist_ok=True)
    elif out.is_dir():
        raise ProblemError("--out", "is a folder; give the trace file to write", args.out)
    elif not out.parent.is_dir():
        raise ProblemError("--out", "its folder does not exist", args.out)
    return out


def _record_reader(servers: str, settings: dict[str, Any], timeout: float) -> RecordReader | None:
    """A reader of the coordinator's records, or ``None`` (one line says why) when the principal
    may not read ``__consumer_offsets``."""
    from kafka.errors import KafkaError

    from clients.coordinator_records import RecordReader

    try:
        return RecordReader(servers, settings, timeout)
    except (KafkaError, PermissionError, OSError) as error:
        reason = (
            "no Describe and Read on topic __consumer_offsets"
            if isinstance(error, PermissionError) or "Authorization" in type(error).__name__
            else type(error).__name__
        )
        print(
            f"record: the coordinator's records are not readable ({reason}): polling the admin "
            "API (a rebalance between two polls may be missed)",
            file=sys.stderr,
        )
        return None


def command(args: argparse.Namespace) -> int:
    """Record until stopped; 0, or :data:`EXIT_ENDED` when the watch ended by itself."""
    from clients.cluster import check_bootstrap, open_admin
    from clients.group_watch import Watch, run
    from clients.security import command_config

    pattern = None
    if args.groups is not None:
        try:
            pattern = re.compile(args.groups)
        except re.error as error:
            raise ProblemError(
                "--groups", f"not a regular expression: {error}", args.groups
            ) from None
    out = _target(args)
    check_bootstrap(args.bootstrap_server)
    settings = command_config(args.command_config)
    # kafka-python logs its retries (a broker that went away) at WARNING, which Python prints on
    # stderr when no handler takes them: the one line that matters is the recorder's own
    kafka_log = logging.getLogger("kafka")
    if not any(isinstance(h, logging.NullHandler) for h in kafka_log.handlers):
        kafka_log.addHandler(logging.NullHandler())
    stop = threading.Event()
    main = threading.current_thread() is threading.main_thread()  # signals reach only it
    previous = {
        sig: signal.signal(sig, lambda *_: stop.set())
        for sig in ((signal.SIGINT, signal.SIGTERM) if main else ())
    }
    try:
        admin = open_admin(args.bootstrap_server, args.timeout, settings)
        watch = Watch(
            admin,
            out,
            groups=list(args.group or []),
            pattern=pattern,
            interval=args.poll_interval,
            timeout=args.timeout,
            say=lambda line: print(line, file=sys.stderr, flush=True),
        )
        try:
            if args.source == "auto":
                watch.reader = _record_reader(args.bootstrap_server, settings, args.timeout)
            ended = run(watch, stop, args.duration, args.rebalances)
        finally:
            if watch.reader is not None:
                watch.reader.close()
            admin.close()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    for line in watch.summary():
        print(line, file=sys.stderr)
    return EXIT_ENDED if ended else 0
