"""One confluent-kafka (librdkafka) consumer of the live client matrix (peers/client_matrix.py's line
protocol).

Options: ``bootstrap``, ``group``, ``member``, ``topics``, ``assignor`` (librdkafka's
``partition.assignment.strategy``: ``range``, ``roundrobin``, ``cooperative-sticky``; on the
consumer protocol the broker-side ``group.remote.assignor``: ``uniform``, ``range``),
``protocol`` (``classic`` or ``consumer``, KIP-848), ``session_ms``, ``heartbeat_ms`` (classic
only: the consumer protocol takes them from the broker), ``instance`` (``group.instance.id``).
The callbacks of ``subscribe`` are the events; an incremental protocol (cooperative-sticky, the
consumer protocol) hands over and takes back only the partitions that change
(``incremental_assign``/``incremental_unassign``), an eager one everything.
"""

from __future__ import annotations

import queue
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from confluent_kafka import Consumer  # noqa: E402
from member_io import commands, emit, options  # noqa: E402


def main() -> None:
    opts = options()
    config = {
        "bootstrap.servers": opts["bootstrap"],
        "group.id": opts["group"],
        "client.id": opts["member"],
        "enable.auto.commit": False,
        "topic.metadata.refresh.interval.ms": 1000,
        "log_level": 3,
    }
    if opts.get("protocol", "classic") == "consumer":
        config["group.protocol"] = "consumer"
        config["group.remote.assignor"] = opts["assignor"]
    else:
        config["partition.assignment.strategy"] = opts["assignor"]
        config["session.timeout.ms"] = int(opts["session_ms"])
        config["heartbeat.interval.ms"] = int(opts["heartbeat_ms"])
    if opts.get("instance"):
        config["group.instance.id"] = opts["instance"]
    consumer = Consumer(config)
    incremental = opts["assignor"] == "cooperative-sticky" or "group.protocol" in config

    def listed(partitions):
        return [(tp.topic, tp.partition) for tp in partitions]

    def on_assign(c, partitions):
        emit("assigned", listed(partitions))
        if incremental:
            c.incremental_assign(partitions)
        else:
            c.assign(partitions)

    def on_revoke(c, partitions):
        emit("revoked", listed(partitions))
        if incremental:
            c.incremental_unassign(partitions)
        else:
            c.unassign()

    def on_lost(c, partitions):
        emit("lost", listed(partitions))
        if incremental:
            c.incremental_unassign(partitions)
        else:
            c.unassign()

    def subscribe(topics):
        consumer.subscribe(topics, on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)

    subscribe(opts["topics"].split(","))
    emit("ready")
    lines = commands()
    while True:
        message = consumer.poll(0.1)
        if message is not None and message.error() is not None:
            emit("error", text=str(message.error()))
        try:
            line = lines.get_nowait()
        except queue.Empty:
            continue
        if line == "stop":
            break
        if line.startswith("subscribe "):
            subscribe(line.split(" ", 1)[1].split(","))
    consumer.close()
    emit("closed")


if __name__ == "__main__":
    main()
