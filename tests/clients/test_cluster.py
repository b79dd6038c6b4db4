"""clients/cluster.py against the live KRaft cluster: placement and group snapshots, lags, errors."""

from __future__ import annotations

import pytest

from support.kafka_support import commit, create_topic, produce, run_cli, run_json
from support.kraft_cluster import free_ports

pytestmark = pytest.mark.kafka


def test_placement_snapshot_is_the_clusters_placement(kafka_cluster, admin, capsys):
    replicas = {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2], 3: [1, 3, 2]}
    create_topic(admin, "placed", 4, replicas=replicas)
    doc = run_json(
        capsys,
        "snapshot",
        "--bootstrap-server",
        kafka_cluster.bootstrap,
        "--placement",
        "--topics",
        "placed",
    )
    assert doc == {
        "brokers": [{"id": 1, "rack": "r1"}, {"id": 2, "rack": "r2"}, {"id": 3, "rack": "r3"}],
        "partitions": [
            {"topic": "placed", "partition": p, "replicas": r} for p, r in replicas.items()
        ],
    }
    everything = run_json(
        capsys, "snapshot", "--bootstrap-server", kafka_cluster.bootstrap, "--placement"
    )
    assert [p for p in everything["partitions"] if p["topic"] == "placed"] == doc["partitions"]
    assert not any(
        p["topic"].startswith("__") for p in everything["partitions"]
    )  # internal topics left out


def test_lags_and_group_snapshot_from_known_offsets(kafka_cluster, admin, capsys):
    create_topic(admin, "lagged", 3, replicas={0: [1], 1: [3], 2: [2]})
    produce(kafka_cluster.bootstrap, "lagged", [5, 7, 3])
    commit(
        admin, "lagger", {("lagged", 0): 2, ("lagged", 1): 7}
    )  # partition 2: no committed offset
    server = kafka_cluster.bootstrap
    assert run_json(capsys, "lags", "--bootstrap-server", server, "--group", "lagger") == {
        "lagged": [3, 0, 0]
    }
    assert run_json(
        capsys, "lags", "--bootstrap-server", server, "--group", "lagger", "--reset", "earliest"
    ) == {"lagged": [3, 0, 3]}
    doc = run_json(capsys, "snapshot", "--bootstrap-server", server, "--group", "lagger")
    assert doc == {
        "topics": {"lagged": 3},
        "members": [],
        "lags": {"lagged": [3, 0, 0]},
        "partition_racks": {"lagged": [["r1"], ["r3"], ["r2"]]},
    }


@pytest.mark.parametrize(
    "argv, message",
    [
        (["snapshot", "--group", "nobody"], "--group: group 'nobody' is unknown to the cluster"),
        (["lags", "--group", "nobody"], "--group: group 'nobody' is unknown to the cluster"),
        (
            ["snapshot", "--placement", "--topics", "nothing"],
            "--topics: topic 'nothing' does not exist",
        ),
        (
            ["reassign", "--strategy", "sticky-replica", "--remove-brokers", "7"],
            "--remove-brokers: broker 7 is not",
        ),
        (
            ["assign", "--strategy", "range", "--group", "nobody"],
            "--group: group 'nobody' is unknown",
        ),
    ],
)
def test_unknown_group_topic_or_broker_is_one_line_and_exit_2(kafka_cluster, capsys, argv, message):
    status, out, err = run_cli(
        capsys, *argv[:1], "--bootstrap-server", kafka_cluster.bootstrap, *argv[1:]
    )
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"error: {kafka_cluster.bootstrap}: {message}")


def test_unreachable_cluster_is_one_line_within_the_timeout(capsys):
    import time

    server = f"127.0.0.1:{free_ports(1)[0]}"  # nothing listens there
    started = time.perf_counter()
    status, out, err = run_cli(
        capsys, "snapshot", "--bootstrap-server", server, "--placement", "--timeout", "2"
    )
    assert time.perf_counter() - started < 10
    assert status == 2 and out == ""
    assert err == f"error: {server}: no broker answered within 2 s (KafkaTimeoutError)\n"
    status, _, err = run_cli(capsys, "snapshot", "--bootstrap-server", "no-port", "--placement")
    assert (
        status == 2
        and err
        == "error: no-port: --bootstrap-server: 'no-port' is not HOST:PORT (a port 1-65535)\n"
    )
