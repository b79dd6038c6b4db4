"""Documents read from a live Kafka cluster through kafka-python's admin client.

Details: docs/live-clusters.md.
"""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from problems import ProblemError
from problems.lags import kip169_lags

if TYPE_CHECKING:
    from kafka import TopicPartition
    from kafka.admin import KafkaAdminClient
    from kafka.structs import OffsetAndMetadata

#: Seconds to wait for a broker to answer (connection and each request).
TIMEOUT = 10.0
#: Kafka's error code of a topic the principal may not Describe.
TOPIC_AUTHORIZATION_FAILED = 29
#: HOST:PORT, the host a name or an IPv4 address, or an IPv6 address in brackets (``[::1]:9092``), as
#: Kafka's clients write it (an IPv6 address without brackets would be ambiguous with its port).
_ADDRESS = re.compile(r"(?:\[(?P<ipv6>[^\s\[\],]+)\]|[^\s,:\[\]]+):(?P<port>[0-9]{1,5})")


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)  # a zone (``fe80::1%eth0``) included
    except ValueError:
        return False
    return True


def check_bootstrap(servers: str) -> str:
    """``servers`` if it is a comma-separated list of HOST:PORT (``[IPV6]:PORT`` for an IPv6 address),
    else a :class:`ProblemError`."""
    for address in servers.split(","):
        match = _ADDRESS.fullmatch(address)
        if (
            match is None
            or not 0 < int(match["port"]) < 65536
            or (match["ipv6"] is not None and not _is_ipv6(match["ipv6"]))
        ):
            raise ProblemError(
                "--bootstrap-server", f"{address!r} is not HOST:PORT (a port 1-65535)", servers
            )
    return servers


def open_admin(
    servers: str, timeout: float = TIMEOUT, settings: Mapping[str, Any] | None = None
) -> KafkaAdminClient:
    """A kafka-python ``KafkaAdminClient`` on ``servers`` (the caller closes it).

    ``settings`` are kafka-python's connection settings (TLS, SASL: see
    :func:`clients.security.command_config`), none for PLAINTEXT.

    Raises
    ------
    ProblemError
        Malformed addresses, no broker answered within ``timeout`` seconds, or the cluster
        refused the credentials.
    """
    from kafka.admin import KafkaAdminClient
    from kafka.errors import KafkaError

    check_bootstrap(servers)
    milliseconds = int(timeout * 1000)
    failures = _Failures()
    logging.getLogger("kafka").addHandler(failures)
    try:
        return KafkaAdminClient(
            **{
                "bootstrap_servers": servers,
                "client_id": "rebalance-lab",
                "bootstrap_timeout_ms": milliseconds,
                "request_timeout_ms": milliseconds,
                **(settings or {}),
            }
        )
    except (KafkaError, OSError, ValueError) as error:
        raise ProblemError("", failures.reason(error, timeout, settings), servers) from None
    finally:
        logging.getLogger("kafka").removeHandler(failures)


class _Failures(logging.Handler):
    """The connection failures kafka-python logs while it retries its bootstrap (it raises only
    a timeout in the end): what tells a refused password or an untrusted certificate apart."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if len(self.messages) < 100:
            self.messages.append(record.getMessage())

    def reason(self, error: Exception, timeout: float, settings: Mapping[str, Any] | None) -> str:
        """Why no admin client connected, in one line (never the credentials themselves)."""
        seen = " ".join(self.messages) + f" {type(error).__name__} {error}"
        mechanism = (settings or {}).get("sasl_mechanism")
        if "SaslAuthenticationFailedError" in seen:
            return f"the cluster refused the credentials ({mechanism} authentication failed)"
        if mechanism and "socket disconnected" in seen:
            # kafka-python drops the broker's authentication error when the broker's close arrives
            # in the same read: a closed connection during SASL is that refusal
            return (
                f"the cluster refused the credentials ({mechanism}: the broker closed the "
                "connection while authenticating)"
            )
        if "CERTIFICATE_VERIFY_FAILED" in seen or "certificate verify failed" in seen:
            return (
                "the TLS handshake failed: the broker's certificate is not trusted "
                "(ssl.truststore.*) or does not name its host"
            )
        return f"no broker answered within {timeout:g} s ({type(error).__name__})"


@contextmanager
def connect(
    servers: str, timeout: float = TIMEOUT, settings: Mapping[str, Any] | None = None
) -> Iterator[KafkaAdminClient]:
    """:func:`open_admin`, closed on exit; a failed request becomes a :class:`ProblemError`."""
    from kafka.errors import KafkaError

    admin = open_admin(servers, timeout, settings)
    try:
        yield admin
    except KafkaError as error:
        raise ProblemError(
            "", f"the cluster failed a request: {type(error).__name__}: {error}", servers
        ) from None
    finally:
        admin.close()


def not_authorized(resource: str, name: str, servers: str) -> ProblemError:
    """The error of a request the cluster's authorizer denied: the ACL it needs."""
    return ProblemError(
        "",
        f"not authorized: the principal needs Describe on {resource} {name!r} (a missing ACL)",
        servers,
    )


# ------------------------------------------------------------------ members
def _get(record: Any, name: str, default: Any = None) -> Any:
    """Field ``name`` of a decoded protocol record or of its ``to_dict()`` form."""
    value = (
        record.get(name, default) if isinstance(record, dict) else getattr(record, name, default)
    )
    return default if value is None else value


def _partition_lists(entries: Any) -> dict[str, list[int]]:
    """``[{topic, partitions}]`` (or ``(topic, partitions)`` pairs) as ``{topic: sorted indexes}``."""
    out: dict[str, list[int]] = {}
    for entry in entries or ():
        topic, partitions = (
            entry
            if isinstance(entry, (tuple, list))
            else (_get(entry, "topic"), _get(entry, "partitions", []))
        )
        out.setdefault(topic, []).extend(int(p) for p in partitions)
    return {t: sorted(set(p)) for t, p in out.items() if p}


def member_document(
    member_id: str,
    instance_id: str | None,
    subscription: Any,
    owned: dict[str, list[int]] | None = None,
) -> dict[str, Any]:
    """One member of a group document from its decoded ``ConsumerProtocolSubscription``.

    ``owned`` defaults to the subscription's own ``owned_partitions`` (v1+); the generation
    (v2+, -1 when absent) and the rack (v3+) are kept when the subscription carries them.
    """
    doc: dict[str, Any] = {"id": member_id, "topics": sorted(set(_get(subscription, "topics", [])))}
    owned = _partition_lists(_get(subscription, "owned_partitions", [])) if owned is None else owned
    if owned:
        doc["owned"] = owned
    generation = int(_get(subscription, "generation_id", -1))
    if generation >= 0:
        doc["generation"] = generation
    rack = _get(subscription, "rack_id")
    if rack:
        doc["rack"] = rack
    if instance_id:
        doc["instance_id"] = instance_id
    return doc


def group_problem_document(
    members: list[dict[str, Any]],
    partition_counts: dict[str, int],
    lags: dict[str, list[int]] | None = None,
) -> dict[str, Any]:
    """A group document: ``members`` (from :func:`member_document`), the topics of ``partition_counts``
    (sorted by name), and ``lags`` of those topics when given."""
    topics = sorted(partition_counts)
    doc: dict[str, Any] = {
        "topics": {t: int(partition_counts[t]) for t in topics},
        "members": members,
    }
    if lags is not None:
        doc["lags"] = {t: [int(v) for v in lags[t]] for t in topics}
    return doc


# ------------------------------------------------------------------- reading
def _describe_group(admin: KafkaAdminClient, group: str, servers: str) -> dict[str, Any]:
    from kafka.errors import GroupAuthorizationFailedError

    try:
        info: dict[str, Any] = admin.describe_groups([group])[group]
    except GroupAuthorizationFailedError:
        raise not_authorized("group", group, servers) from None
    if "GroupAuthorizationFailed" in (info.get("error") or ""):
        raise not_authorized("group", group, servers)
    if info.get("group_state") in ("Dead", None) or info.get("error"):
        raise ProblemError("--group", f"group {group!r} is unknown to the cluster", servers)
    if info.get("protocol_type") not in ("consumer", ""):
        raise ProblemError(
            "--group",
            f"group {group!r} is not a consumer group (protocol type {info['protocol_type']!r})",
            servers,
        )
    return info


def _topics(
    admin: KafkaAdminClient, topics: list[str] | None, servers: str, *, strict: bool = True
) -> list[dict[str, Any]]:
    if topics is not None and not topics:
        return []
    described = admin.describe_topics(None if topics is None else list(dict.fromkeys(topics)))
    out = []
    for topic in described:
        if topic.get("error_code") == TOPIC_AUTHORIZATION_FAILED:
            raise not_authorized("topic", topic["name"], servers)
        if topic.get("error_code"):
            if strict:
                raise ProblemError("--topics", f"topic {topic['name']!r} does not exist", servers)
            continue
        if topics is None and topic.get("is_internal"):
            continue
        out.append(topic)
    return sorted(out, key=lambda t: t["name"])


def _committed(
    admin: KafkaAdminClient, group: str, servers: str
) -> dict[TopicPartition, OffsetAndMetadata]:
    """The group's committed offsets, ``{TopicPartition: OffsetAndMetadata}``."""
    from kafka.errors import GroupAuthorizationFailedError

    try:
        offsets: dict[TopicPartition, OffsetAndMetadata] = admin.list_group_offsets(group).get(
            group, {}
        )
        return offsets
    except GroupAuthorizationFailedError:
        raise not_authorized("group", group, servers) from None


def _offsets(
    admin: KafkaAdminClient, group: str, counts: dict[str, int], servers: str = ""
) -> list[tuple[str, int, int, int, int]]:
    """Committed (``-1``: none), log start and log end offset of every partition of ``counts``."""
    from kafka import TopicPartition
    from kafka.admin import OffsetSpec

    partitions = [TopicPartition(t, p) for t, n in counts.items() for p in range(n)]
    committed = _committed(admin, group, servers)
    ends = (
        admin.list_partition_offsets({tp: OffsetSpec.LATEST for tp in partitions})
        if partitions
        else {}
    )
    starts = (
        admin.list_partition_offsets({tp: OffsetSpec.EARLIEST for tp in partitions})
        if partitions
        else {}
    )
    rows = []
    for tp in partitions:
        mark = committed.get(tp)
        rows.append(
            (
                tp.topic,
                tp.partition,
                -1 if mark is None or mark.offset < 0 else int(mark.offset),
                int(starts[tp].offset),
                int(ends[tp].offset),
            )
        )
    return rows


def group_topics(
    admin: KafkaAdminClient, group: str, servers: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The group's description and the descriptions of the topics it subscribes or has committed
    offsets for (topics that no longer exist left out), by name."""
    info = _describe_group(admin, group, servers)
    subscribed = {
        t for m in info["members"] for t in _get(m.get("member_metadata") or {}, "topics", [])
    }
    committed = {tp.topic for tp in _committed(admin, group, servers)}
    return info, _topics(admin, sorted(subscribed | committed), servers, strict=False)


def offset_rows(
    admin: KafkaAdminClient, group: str, servers: str
) -> list[tuple[str, int, int, int, int]]:
    """``(topic, partition, committed or -1, log start, log end)`` of every partition the group
    subscribes or has committed offsets for, by topic name then partition."""
    _, topics = group_topics(admin, group, servers)
    return _offsets(admin, group, {t["name"]: len(t["partitions"]) for t in topics}, servers)


def group_document(
    admin: KafkaAdminClient, group: str, servers: str, *, reset: str = "latest"
) -> dict[str, Any]:
    """The consumer group ``group`` as a group document (see the module's docstring)."""
    info, topics = group_topics(admin, group, servers)
    counts = {t["name"]: len(t["partitions"]) for t in topics}
    members = []
    for m in info["members"]:
        owned = _partition_lists(_get(m.get("member_assignment") or {}, "assigned_partitions", []))
        member = member_document(
            m["member_id"], m.get("group_instance_id"), m.get("member_metadata") or {}, owned
        )
        member.pop("generation", None)  # the subscription's is the previous assignment's generation
        members.append(member)
    doc = group_problem_document(
        members, counts, partition_lags(admin, group, counts, reset, servers)
    )
    racks = {b["broker_id"]: b.get("rack") for b in admin.describe_cluster()["brokers"]}
    replicas = {
        t["name"]: [
            p["replica_nodes"] for p in sorted(t["partitions"], key=lambda p: p["partition_index"])
        ]
        for t in topics
    }
    return with_partition_racks(doc, racks, replicas)


def with_partition_racks(
    doc: dict[str, Any], racks: dict[int, str | None], replicas: dict[str, list[list[int]]]
) -> dict[str, Any]:
    """The group document ``doc`` with KIP-881's racks of each partition's replicas
    (``partition_racks``: ``{topic: [[rack, ...] per partition]}``), from the brokers' racks
    (``{broker id: rack or None}``) and ``{topic: [replica broker ids per partition]}``; left
    without unless every broker has a rack (a group document's ``partition_racks`` is all or
    nothing)."""
    named = {broker: rack for broker, rack in racks.items() if rack}
    if racks and len(named) == len(racks):
        doc["partition_racks"] = {
            topic: [[named[r] for r in nodes if r in named] for nodes in partitions]
            for topic, partitions in replicas.items()
        }
    return doc


def partition_lags(
    admin: KafkaAdminClient,
    group: str,
    counts: dict[str, int],
    reset: str = "latest",
    servers: str = "",
) -> dict[str, list[int]]:
    """KIP-169's lag of every partition of ``counts`` (``{topic: partition count}``) for ``group``
    (``servers`` names the cluster in errors)."""
    rows = _offsets(admin, group, counts, servers)
    committed, start, end = np.array([r[2:] for r in rows], dtype=np.int64).reshape(-1, 3).T
    lags = kip169_lags(committed, start, end, reset)
    out, position = {}, 0
    for topic, count in counts.items():
        out[topic] = [int(v) for v in lags[position : position + count]]
        position += count
    return out


def placement_document(
    admin: KafkaAdminClient,
    servers: str,
    topics: list[str] | None = None,
    remove_brokers: Sequence[int] = (),
) -> dict[str, Any]:
    """The cluster's brokers (by id, with racks) and the replicas of ``topics`` (all non-internal
    topics when ``None``) as a placement document, partitions by topic name then index.

    ``remove_brokers`` are left out of ``brokers``: their replicas become unassigned, to be
    placed elsewhere (decommissioning).
    """
    brokers = sorted(admin.describe_cluster()["brokers"], key=lambda b: b["broker_id"])
    known = {b["broker_id"] for b in brokers}
    for broker in remove_brokers:
        if broker not in known:
            raise ProblemError(
                "--remove-brokers",
                f"broker {broker} is not in the cluster "
                f"(brokers: {', '.join(map(str, sorted(known)))})",
                servers,
            )
    racks = [b.get("rack") for b in brokers]
    rack_aware = all(racks)
    doc_brokers = [
        {"id": b["broker_id"], **({"rack": b["rack"]} if rack_aware else {})}
        for b in brokers
        if b["broker_id"] not in set(remove_brokers)
    ]
    partitions = []
    for topic in _topics(admin, topics, servers):
        for part in sorted(topic["partitions"], key=lambda p: p["partition_index"]):
            partitions.append(
                {
                    "topic": topic["name"],
                    "partition": int(part["partition_index"]),
                    "replicas": [int(r) for r in part["replica_nodes"]],
                }
            )
    return {"brokers": doc_brokers, "partitions": partitions}
