"""One kafka-python consumer of the live client matrix (peers/client_matrix.py's line protocol).

Options: ``bootstrap``, ``group``, ``member``, ``topics`` (comma-separated), ``assignor``
(``range``, ``roundrobin``, ``sticky``, ``cooperative-sticky``), ``session_ms``,
``heartbeat_ms``, ``instance`` (a static member's ``group_instance_id``).  The rebalance
listener's callbacks are the events: ``revoked``/``assigned``/``lost`` with the partitions and the
coordinator's generation.
"""

from __future__ import annotations

import queue
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from kafka import KafkaConsumer  # noqa: E402
from kafka.consumer.subscription_state import ConsumerRebalanceListener  # noqa: E402
from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor  # noqa: E402
from kafka.coordinator.assignors.range import RangePartitionAssignor  # noqa: E402
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor  # noqa: E402
from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor  # noqa: E402
from member_io import commands, emit, options  # noqa: E402

ASSIGNORS = {
    "range": RangePartitionAssignor,
    "roundrobin": RoundRobinPartitionAssignor,
    "sticky": StickyPartitionAssignor,
    "cooperative-sticky": CooperativeStickyAssignor,
}


def main() -> None:
    opts = options()
    consumer = KafkaConsumer(
        bootstrap_servers=opts["bootstrap"],
        group_id=opts["group"],
        client_id=opts["member"],
        group_instance_id=opts.get("instance") or None,
        partition_assignment_strategy=[ASSIGNORS[opts["assignor"]]],
        session_timeout_ms=int(opts["session_ms"]),
        heartbeat_interval_ms=int(opts["heartbeat_ms"]),
        metadata_max_age_ms=1000,
        enable_auto_commit=False,
    )

    def generation() -> int | None:
        found = getattr(consumer._coordinator, "_generation", None)
        return getattr(found, "generation_id", None)

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked):
            emit("revoked", [(tp.topic, tp.partition) for tp in revoked], generation())

        def on_partitions_assigned(self, assigned):
            emit("assigned", [(tp.topic, tp.partition) for tp in assigned], generation())

        def on_partitions_lost(self, lost):
            emit("lost", [(tp.topic, tp.partition) for tp in lost], generation())

    listener = Listener()
    consumer.subscribe(opts["topics"].split(","), listener=listener)
    emit("ready")
    lines = commands()
    while True:
        consumer.poll(timeout_ms=100)
        try:
            line = lines.get_nowait()
        except queue.Empty:
            continue
        if line == "stop":
            break
        if line.startswith("subscribe "):
            consumer.subscribe(line.split(" ", 1)[1].split(","), listener=listener)
    consumer.close()
    emit("closed")


if __name__ == "__main__":
    main()
