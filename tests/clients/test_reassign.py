"""A sticky-replica plan read from the live cluster, executed by Kafka's own kafka-reassign-partitions.

The topic's replicas span all three brokers (replication factor 2, six partitions);
``reassign --strategy sticky-replica --bootstrap-server ... --remove-brokers 3`` plans every replica
off broker 3; Kafka's tool accepts the plan (``--execute``) and ``--verify`` reports it complete;
afterwards the replicas are where the plan says (order included) and every message produced
before is still readable.
"""

from __future__ import annotations

import json
import time

import pytest

from support.kafka_support import create_topic, produce, run_json

pytestmark = pytest.mark.kafka

TOOL = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
REPLICAS = {0: [1, 2], 1: [2, 3], 2: [3, 1], 3: [1, 3], 4: [2, 1], 5: [3, 2]}


def _read_all(bootstrap: str, topic: str, partitions: int) -> dict[int, list[bytes]]:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, fetch_max_wait_ms=50)
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    ends = consumer.end_offsets(tps)
    values: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
    deadline = time.monotonic() + 60
    while any(consumer.position(tp) < ends[tp] for tp in tps) and time.monotonic() < deadline:
        for tp, records in consumer.poll(timeout_ms=200).items():
            values[tp.partition].extend(r.value for r in records)
    consumer.close()
    return values


def test_remove_broker_plan_executed_by_kafka(kafka_cluster, admin, capsys, tmp_path):
    server = kafka_cluster.bootstrap
    create_topic(admin, "moved", len(REPLICAS), replicas=REPLICAS)
    counts = [10 + p for p in range(len(REPLICAS))]
    produce(server, "moved", counts)

    plan = run_json(capsys, "reassign", "--strategy", "sticky-replica", "--bootstrap-server", server,
                    "--remove-brokers", "3", "--topics", "moved")
    assert [(p["topic"], p["partition"]) for p in plan["partitions"]] == [("moved", p) for p in REPLICAS]
    for entry in plan["partitions"]:
        before = REPLICAS[entry["partition"]]
        assert len(entry["replicas"]) == len(before) == len(set(entry["replicas"]))
        assert 3 not in entry["replicas"] and set(entry["replicas"]) <= {1, 2}
        if 3 not in before:
            assert entry["replicas"] == before  # sticky: nothing moves that need not
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))

    executed = kafka_cluster.tool(TOOL, "--bootstrap-server", server, "--reassignment-json-file", str(path),
                                  "--execute")
    assert executed.returncode == 0, executed.stdout + executed.stderr
    assert "Successfully started partition reassignments" in executed.stdout
    deadline = time.monotonic() + 60
    while True:
        verified = kafka_cluster.tool(TOOL, "--bootstrap-server", server, "--reassignment-json-file", str(path),
                                      "--verify")
        done = [f"Reassignment of partition moved-{p} is completed." in verified.stdout for p in REPLICAS]
        if verified.returncode == 0 and all(done):
            break
        assert time.monotonic() < deadline, verified.stdout + verified.stderr
        time.sleep(1)

    placed = {p["partition_index"]: p["replica_nodes"] for p in admin.describe_topics(["moved"])[0]["partitions"]}
    assert placed == {entry["partition"]: entry["replicas"] for entry in plan["partitions"]}
    values = _read_all(server, "moved", len(REPLICAS))
    assert values == {p: [f"{p}:{i}".encode() for i in range(n)] for p, n in enumerate(counts)}
