"""One live 3-broker KRaft cluster for every test under tests/clients/ (package scope).

Started from the Maven-resolved Kafka release (``make peers``) by :mod:`kraft_cluster`: storage
formatted, brokers ``1``-``3`` on racks ``r1``-``r3``, free loopback ports, logs in pytest's
temporary folder; stopped when the last test of tests/clients/ ends (its brokers
would otherwise run beside the rest of the suite), also when a test or the start fails.  Its
start-up time is printed in pytest's summary.
"""

from __future__ import annotations

import pytest

from support.kraft_cluster import KraftCluster

_started: list[KraftCluster] = []


@pytest.fixture(scope="package")
def kafka_cluster(tmp_path_factory):
    """The running cluster (:class:`kraft_cluster.KraftCluster`): ``.bootstrap``, ``.tool(...)``."""
    cluster = KraftCluster(tmp_path_factory.mktemp("kraft"))
    cluster.start()
    _started.append(cluster)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="package")
def admin(kafka_cluster):
    """A kafka-python admin client on the cluster."""
    from kafka.admin import KafkaAdminClient

    client = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap, request_timeout_ms=30000)
    yield client
    client.close()


def pytest_terminal_summary(terminalreporter):
    for cluster in _started:
        terminalreporter.write_line(
            f"KRaft cluster (3 brokers) started in {cluster.start_seconds:.1f} s; "
            f"logs in {cluster.folder}"
        )
