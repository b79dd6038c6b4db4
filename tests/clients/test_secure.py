"""The commands over the cluster's SASL_SSL listener with ``--command-config``: every mechanism,
least privileges (a user with only Describe ACLs), and no credential in any output."""

from __future__ import annotations

import logging

import pytest

from support.kafka_support import commit, create_topic, produce, run_cli, run_json
from support.kraft_cluster import USERS, free_ports

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def lagged(admin, kafka_cluster):
    """Topic ``secure-t`` (3 partitions on brokers 1-3) and group ``secure-g``'s committed offsets."""
    create_topic(admin, "secure-t", 3, replicas={0: [1], 1: [2], 2: [3]})
    produce(kafka_cluster.bootstrap, "secure-t", [5, 7, 3])
    commit(admin, "secure-g", {("secure-t", 0): 2, ("secure-t", 1): 7})
    return "secure-g", "secure-t"


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_commands_over_sasl_ssl(kafka_cluster, lagged, capsys, mechanism):
    group, topic = lagged
    config = str(kafka_cluster.client_properties("admin", mechanism))
    secure = ("--bootstrap-server", kafka_cluster.secure_bootstrap, "--command-config", config)
    plain = ("--bootstrap-server", kafka_cluster.bootstrap)
    for command in (
        ("lags", "--group", group, "--reset", "earliest"),
        ("snapshot", "--group", group),
        ("snapshot", "--placement", "--topics", topic),
    ):
        assert run_json(capsys, *command, *secure) == run_json(capsys, *command, *plain)
    assert run_json(capsys, "lags", "--group", group, *secure) == {topic: [3, 0, 0]}


def _acl(principal: str, kind: str, name: str):
    from kafka.admin import (
        ACL,
        ACLOperation,
        ACLPermissionType,
        ResourcePattern,
        ResourceType,
    )

    resource = ResourceType.GROUP if kind == "group" else ResourceType.TOPIC
    return ACL(
        principal,
        "*",
        ACLOperation.DESCRIBE,
        ACLPermissionType.ALLOW,
        ResourcePattern(resource, name),
    )


def test_least_privileges(kafka_cluster, admin, lagged, capsys):
    """``reader`` may only Describe the group and the topic: every command works; without the
    group's or the topic's ACL, one line names the resource and the operation."""
    import time

    group, topic = lagged
    create_topic(admin, "secure-hidden", 1, replicas={0: [1]})
    result = admin.create_acls(
        [
            _acl("User:reader", "group", group),
            _acl("User:reader", "topic", topic),
        ]
    )
    assert not result["failed"], result
    config = str(kafka_cluster.client_properties("reader", "SCRAM-SHA-256"))
    server = kafka_cluster.secure_bootstrap
    secure = ("--bootstrap-server", server, "--command-config", config)
    # The ACLs reach each broker through the metadata log a moment apart; until the topic's has,
    # the group's committed offsets leave the topic out ({}).
    deadline = time.monotonic() + 30
    while run_cli(capsys, "lags", "--group", group, *secure)[:2] != (
        0,
        f'{{"{topic}": [3, 0, 0]}}\n',
    ):
        assert time.monotonic() < deadline, "the ACLs never took effect"
        time.sleep(0.5)
    assert run_json(capsys, "lags", "--group", group, *secure) == {topic: [3, 0, 0]}
    assert run_json(capsys, "snapshot", "--group", group, *secure)["lags"] == {topic: [3, 0, 0]}
    placement = run_json(capsys, "snapshot", "--placement", "--topics", topic, *secure)
    assert [p["replicas"] for p in placement["partitions"]] == [[1], [2], [3]]
    status, out, _ = run_cli(capsys, "assign", "--strategy", "range", "--group", group, *secure)
    assert status == 0 and '"assignment": {}' in out
    status, out, _ = run_cli(
        capsys, "reassign", "--strategy", "sticky-replica", "--topics", topic, *secure
    )
    assert status == 0 and '"partitions"' in out
    for argv, resource in (
        (("lags", "--group", "secure-other"), "group 'secure-other'"),
        (("snapshot", "--group", "secure-other"), "group 'secure-other'"),
        (("assign", "--strategy", "range", "--group", "secure-other"), "group 'secure-other'"),
        (("snapshot", "--placement", "--topics", "secure-hidden"), "topic 'secure-hidden'"),
        (
            ("reassign", "--strategy", "sticky-replica", "--topics", "secure-hidden"),
            "topic 'secure-hidden'",
        ),
    ):
        status, out, err = run_cli(capsys, *argv, *secure)
        assert (status, out) == (2, ""), err
        assert err == (
            f"error: {server}: not authorized: the principal needs Describe on {resource} "
            "(a missing ACL)\n"
        )


def test_no_credential_is_printed(kafka_cluster, lagged, capsys, caplog, tmp_path):
    """Every command with a wrong password, at a wrong address, and with the right password (with
    --out, --report, kafka-python's debug log): the password appears in no output, log or file."""
    group, topic = lagged
    password = USERS["admin"]
    right = kafka_cluster.client_properties("admin", "PLAIN")  # PLAIN sends the password itself
    wrong = tmp_path / "wrong.properties"
    wrong.write_text(right.read_text().replace(password, password + "-wrong"))
    nowhere = f"127.0.0.1:{free_ports(1)[0]}"
    commands = [
        ("lags", "--group", group, "--out", str(tmp_path / "lags.json")),
        ("snapshot", "--group", group, "--out", str(tmp_path / "group.json")),
        ("snapshot", "--placement", "--topics", topic, "--out", str(tmp_path / "placement.json")),
        ("assign", "--strategy", "sticky", "--group", group),
        ("reassign", "--strategy", "sticky-replica", "--topics", topic, "--report"),
    ]
    printed = []
    caplog.set_level(logging.DEBUG)
    # (a refused password is known once kafka-python gives up: 2 s leave room for the handshakes
    # of a loaded machine)
    for server, config, timeout, refused in (
        (kafka_cluster.secure_bootstrap, wrong, "2", "the cluster refused the credentials"),
        (nowhere, wrong, "1", "no broker answered within 1 s"),
        (kafka_cluster.secure_bootstrap, right, "10", None),
    ):
        for command in commands:
            argv = (*command, "--bootstrap-server", server, "--command-config", str(config))
            status, out, err = run_cli(capsys, *argv, "--timeout", timeout)
            printed.append(out + err)
            if refused:
                assert (status, out) == (2, "") and err.count("\n") == 1, err
                assert err.startswith(f"error: {server}: {refused}"), err
            else:
                assert status == 0, err
    # the debug log was on, with the PLAIN authentication's bytes
    assert "Starting KafkaAdminClient with configuration" in caplog.text
    assert "SaslAuthenticateRequest" in caplog.text and "\\x00admin\\x00******" in caplog.text
    written = "".join(path.read_text() for path in tmp_path.glob("*.json"))
    assert len(list(tmp_path.glob("*.json"))) == 3
    for text in (*printed, caplog.text, written):
        assert password not in text
