"""``rebalance-lab snapshot``: a live cluster's consumer group or replica placement as a document,
and the ``--bootstrap-server`` options that ``assign``, ``reassign`` and ``lags`` share.

The reading itself is :mod:`clients.cluster`; this module only parses arguments and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from experiments.options import Subcommands, broker_ids, seconds
from problems import ProblemError

HELP = """\
output: with --group G, the group document of docs/formats.md (members in the coordinator's
order with their subscriptions, racks, instance ids and current assignments as "owned"; the
subscribed topics' partition counts; KIP-169 lags from committed and log end offsets); with
--placement, the placement document (brokers with racks; each partition's replicas, leader first).

An unreachable cluster, an unknown group or topic: exit status 2 and one line on stderr.  The
connection waits at most --timeout seconds (default 10) for a broker, each later request as long.
A TLS or SASL listener: --command-config FILE, the client properties file Kafka's own tools take
(security.protocol, ssl.truststore.location, sasl.mechanism, sasl.jaas.config, ...).

examples:
  rebalance-lab snapshot --bootstrap-server 127.0.0.1:9092 --group payments > group.json
  rebalance-lab snapshot --bootstrap-server 127.0.0.1:9092 --placement --topics orders
  rebalance-lab snapshot --bootstrap-server kafka1:9093 --command-config client.properties --placement
"""


def add_cluster_arguments(
    parser: argparse.ArgumentParser, *, group: bool = False, placement: bool = False
) -> None:
    """``--bootstrap-server``, ``--command-config`` and ``--timeout`` (and ``--group`` /
    ``--topics``, ``--remove-brokers``)."""
    from clients.cluster import TIMEOUT

    parser.add_argument(
        "--bootstrap-server",
        metavar="HOST:PORT",
        help="read the problem from a live Kafka cluster instead of a file",
    )
    parser.add_argument(
        "--command-config",
        metavar="FILE",
        help="Kafka client properties for the connection (security.protocol, ssl.*, sasl.*), "
        "as Kafka's own tools take them",
    )
    parser.add_argument(
        "--timeout",
        type=seconds,
        default=TIMEOUT,
        metavar="SEC",
        help=f"seconds to wait for the cluster, per request (default {TIMEOUT:g})",
    )
    if group:
        parser.add_argument(
            "--group", metavar="G", help="the consumer group (with --bootstrap-server)"
        )
    if placement:
        parser.add_argument(
            "--topics", nargs="+", metavar="T", help="only these topics (default: all)"
        )
        parser.add_argument(
            "--remove-brokers",
            type=broker_ids,
            default=[],
            metavar="IDS",
            help="decommission these brokers (comma-separated ids): their replicas move",
        )


def cluster_document(args: argparse.Namespace, kind: str) -> dict[str, Any]:
    """The group (``kind="group"``) or placement document ``args`` name on a live cluster."""
    from clients import cluster

    servers = args.bootstrap_server
    with cluster.connect(servers, args.timeout, connection_settings(args)) as admin:
        if kind == "group":
            return cluster.group_document(
                admin, args.group, servers, reset=getattr(args, "reset", "latest")
            )
        return cluster.placement_document(
            admin, servers, getattr(args, "topics", None), getattr(args, "remove_brokers", [])
        )


def connection_settings(args: argparse.Namespace) -> dict[str, Any]:
    """kafka-python's connection settings of ``--command-config`` (none: PLAINTEXT)."""
    from clients.security import command_config

    return command_config(args.command_config)


def problem_source(args: argparse.Namespace, kind: str) -> tuple[str | dict[str, Any], str]:
    """``(problem source, name)``: the file ``args.problem`` or the document read from the cluster."""
    if args.bootstrap_server is None:
        if args.command_config is not None:
            raise ProblemError(
                "--command-config", "only with --bootstrap-server", args.command_config
            )
        if args.problem is None:
            raise ProblemError(
                "", "give a PROBLEM.json or --bootstrap-server HOST:PORT", "<command line>"
            )
        if kind == "placement" and args.remove_brokers:
            raise ProblemError(
                "--remove-brokers",
                'needs --bootstrap-server (in a file, leave the brokers out of "brokers")',
                args.problem,
            )
        return args.problem, args.problem
    if args.problem is not None:
        raise ProblemError(
            "", "give either PROBLEM.json or --bootstrap-server, not both", args.problem
        )
    if kind == "group" and not args.group:
        raise ProblemError("--group", "missing (the consumer group to read)", args.bootstrap_server)
    return cluster_document(args, kind), args.bootstrap_server


def register(subcommands: Subcommands) -> None:
    """Add the ``snapshot`` subcommand to ``rebalance-lab``'s subparsers."""
    parser = subcommands.add_parser(
        "snapshot",
        help="read a consumer group or the replica placement from a live Kafka cluster",
        description="Write a live cluster's consumer group or replica placement as a problem document.",
        epilog=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_cluster_arguments(parser, group=True)
    parser.add_argument(
        "--placement", action="store_true", help="the replica placement instead of a group"
    )
    parser.add_argument(
        "--topics", nargs="+", metavar="T", help="with --placement: only these topics"
    )
    parser.add_argument(
        "--reset",
        choices=("latest", "earliest"),
        default="latest",
        help="auto.offset.reset for partitions without a committed offset (lags; default latest)",
    )
    parser.add_argument("--out", metavar="FILE", help="write the JSON here instead of stdout")
    parser.add_argument("--pretty", action="store_true", help="indent the JSON output")
    parser.set_defaults(handler=_command)


def _command(args: argparse.Namespace) -> int:
    if not args.bootstrap_server:
        raise ProblemError(
            "--bootstrap-server", "missing (HOST:PORT of a broker)", "<command line>"
        )
    if args.placement == bool(args.group):
        raise ProblemError(
            "", "give exactly one of --group G and --placement", args.bootstrap_server
        )
    if args.topics and not args.placement:
        raise ProblemError("--topics", "only with --placement", args.bootstrap_server)
    write_json(
        cluster_document(args, "placement" if args.placement else "group"), args.out, args.pretty
    )
    return 0


def write_json(document: Any, out: str | None, pretty: bool) -> None:
    """``document`` as JSON (indented with ``pretty``) to the file ``out``, or to stdout."""
    text = json.dumps(document, indent=2 if pretty else None) + "\n"
    if out:
        try:
            Path(out).write_text(text)
        except OSError as error:
            raise ProblemError("--out", f"cannot write: {error.strerror or error}", out) from None
    else:
        sys.stdout.write(text)
