"""``--bootstrap-server`` addresses: an IPv6 address in brackets is accepted as Kafka's clients accept it."""

from __future__ import annotations

import socket
import time

import pytest

from clients.cluster import check_bootstrap
from experiments.cli import main
from problems import ProblemError


@pytest.mark.parametrize(
    "servers",
    ["[::1]:9092", "[fe80::1%eth0]:9092", "broker-1:9092,[2001:db8::7]:9093", "10.0.0.1:1"],
)
def test_bracketed_ipv6_is_host_port(servers):
    """Tests that ``[IPV6]:PORT`` (Kafka's form for an IPv6 host) passes, alone and in a list."""
    assert check_bootstrap(servers) == servers


@pytest.mark.parametrize(
    "servers, address",
    [
        ("::1:9092", "::1:9092"),  # without brackets the port cannot be told from the address
        ("[::1]", "[::1]"),
        ("[not-ipv6]:9092", "[not-ipv6]:9092"),
        ("[::1]:0", "[::1]:0"),
        ("h:1,[::1]:65536", "[::1]:65536"),
        ("[[::1]]:9092", "[[::1]]:9092"),
    ],
)
def test_other_addresses_are_refused_naming_the_address(servers, address):
    """Tests that a malformed address is refused with the address named."""
    with pytest.raises(ProblemError) as caught:
        check_bootstrap(servers)
    assert str(caught.value) == (
        f"{servers}: --bootstrap-server: {address!r} is not HOST:PORT (a port 1-65535)"
    )


def test_an_ipv6_bootstrap_server_is_contacted(capsys):
    """Tests that `snapshot --bootstrap-server [::1]:PORT` (nothing listening there) gets past the address
    check to the bounded wait for a broker: exit 2, one line, within the --timeout."""
    with socket.socket(socket.AF_INET6) as probe:  # a free port on ::1
        probe.bind(("::1", 0))
        port = probe.getsockname()[1]
    server = f"[::1]:{port}"
    started = time.perf_counter()
    status = main(["snapshot", "--bootstrap-server", server, "--placement", "--timeout", "1"])
    assert time.perf_counter() - started < 10
    assert status == 2
    err = capsys.readouterr().err
    assert (
        err.startswith(f"error: {server}: no broker answered within 1 s") and err.count("\n") == 1
    )
