"""Small helpers for the live-cluster tests (tests/clients/): topics, messages, offsets, the CLI."""

from __future__ import annotations

import json

from experiments.cli import main


def create_topic(admin, name: str, partitions: int, replicas: dict[int, list[int]] | None = None,
                 replication: int = 1) -> None:
    """Create topic ``name`` (explicit ``replicas`` per partition, or ``replication``) and wait for it."""
    from kafka.admin import NewTopic

    if replicas is not None:
        topic = NewTopic(name, -1, -1, replica_assignments=replicas)
    else:
        topic = NewTopic(name, partitions, replication)
    admin.create_topics([topic], timeout_ms=30000)
    admin.wait_for_topics([name], timeout_ms=30000)


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

    result = admin.alter_group_offsets(group, {TopicPartition(t, p): OffsetAndMetadata(o, "", -1)
                                               for (t, p), o in offsets.items()})
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
