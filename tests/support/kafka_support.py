"""Small helpers for the live-cluster tests (tests/clients/): topics, messages, offsets, the CLI."""

from __future__ import annotations

import json

from experiments.cli import main


def create_topic(
    admin,
    name: str,
    partitions: int,
    replicas: dict[int, list[int]] | None = None,
    replication: int = 1,
) -> None:
    """Create topic ``name`` (explicit ``replicas`` per partition, or ``replication``) and wait for it."""
    from kafka.admin import NewTopic

    if replicas is not None:
        topic = NewTopic(name, -1, -1, replica_assignments=replicas)
    else:
        topic = NewTopic(name, partitions, replication)
    admin.create_topics([topic], timeout_ms=30000)
    admin.wait_for_topics([name], timeout_ms=30000)
    _wait_until_every_broker_knows(admin, name)


def _wait_until_every_broker_knows(admin, name: str, seconds: float = 30.0) -> None:
    """Wait until each broker's own metadata describes ``name`` and every partition of it without error: a
    command started right after (a fresh admin client asking any broker) then finds it.  KRaft
    brokers learn of a new topic from the metadata log a moment apart (measured: a snapshot right
    after creation
    once found no topic)."""
    import time

    from kafka.admin import KafkaAdminClient

    servers = [f"{b['host']}:{b['port']}" for b in admin.describe_cluster()["brokers"]]
    deadline = time.monotonic() + seconds
    for server in servers:
        client = KafkaAdminClient(bootstrap_servers=server, request_timeout_ms=10000)
        try:
            while True:
                described = client.describe_topics([name])
                if (
                    described
                    and described[0]["error_code"] == 0
                    and described[0]["partitions"]
                    and all(p["error_code"] == 0 for p in described[0]["partitions"])
                ):
                    break
                if time.monotonic() > deadline:
                    raise AssertionError(
                        f"broker {server} does not know topic {name!r} after {seconds:g} s"
                    )
                time.sleep(0.1)
        finally:
            client.close()


def produce(bootstrap: str, topic: str, counts: list[int]) -> None:
    """``counts[p]`` messages into partition ``p`` of ``topic``, values ``"p:i"``, all acknowledged."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    try:
        for partition, count in enumerate(counts):
            for i in range(count):
                producer.send(topic, value=f"{partition}:{i}".encode(), partition=partition)
        producer.flush(timeout=30)
    finally:
        producer.close()


def commit(admin, group: str, offsets: dict[tuple[str, int], int]) -> None:
    """Commit ``{(topic, partition): offset}`` for ``group`` (which has no active members)."""
    from kafka import TopicPartition
    from kafka.structs import OffsetAndMetadata

    result = admin.alter_group_offsets(
        group, {TopicPartition(t, p): OffsetAndMetadata(o, "", -1) for (t, p), o in offsets.items()}
    )
    failed = {tp: e for tp, e in result.items() if e.__name__ != "NoError"}
    assert not failed, failed


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """``rebalance-lab ARGV`` in this process: exit status, stdout, stderr."""
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def run_json(capsys, *argv: str):
    """The JSON ``rebalance-lab ARGV`` prints (exit status 0 asserted)."""
    status, out, err = run_cli(capsys, *argv)
    assert status == 0, err
    return json.loads(out)
