"""rebalance-lab's consumer-group strategies as kafka-python partition assignors.

Details: docs/live-clusters.md.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from kafka.cluster import ClusterMetadata
from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor, RebalanceProtocol
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)

from clients.cluster import (
    TIMEOUT,
    group_problem_document,
    member_document,
    open_admin,
    partition_lags,
    with_partition_racks,
)
from models import solve
from models.registry import STRATEGIES as REGISTRY
from problems import load_problem

if TYPE_CHECKING:
    from kafka.admin import KafkaAdminClient

#: The strategies available as assignors (:attr:`models.registry.Strategy.client`).
STRATEGIES = tuple(name for name, record in REGISTRY.items() if record.client)
#: Our assignors' protocol names are the strategy names with this prefix.
PREFIX = "rebalance-lab-"
#: ConsumerProtocol subscription version 3: owned partitions, generation, rack.
SUBSCRIPTION_VERSION = 3


class GroupMember(Protocol):
    """A member of a JoinGroup response as kafka-python gives it to the leader's assignor."""

    member_id: str
    group_instance_id: str | None
    #: The member's decoded ``ConsumerProtocolSubscription``.
    metadata: Any


# kafka-python ships no type information: its base class is untyped to mypy.
class RebalanceLabAssignor(AbstractPartitionAssignor):  # type: ignore[misc]
    """One rebalance-lab strategy as a kafka-python assignor (one instance per consumer).

    Parameters
    ----------
    strategy
        One of :data:`STRATEGIES`.
    solver, variant, time_limit
        As for :func:`models.solve` (default: the documented heuristic).
    rack
        This consumer's rack, sent in its subscription: give the consumer's own ``client_rack``
        (Kafka's consumer sends its ``client.rack``; kafka-python does not show its configuration
        to assignors).
    bootstrap_servers, group_id, reset, timeout, settings
        ``lag-aware`` only: where the leader reads the offsets, ``auto.offset.reset``, and the
        connection's TLS/SASL settings (kafka-python's, as the consumer's own: e.g.
        ``clients.security.command_config("client.properties")``).
    """

    def __init__(
        self,
        strategy: str,
        *,
        solver: str = "heuristic",
        variant: str | None = None,
        time_limit: float | None = None,
        rack: str | None = None,
        bootstrap_servers: str | None = None,
        group_id: str | None = None,
        reset: str = "latest",
        timeout: float = TIMEOUT,
        settings: Mapping[str, Any] | None = None,
    ):
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy {strategy!r} is not one of {', '.join(STRATEGIES)}")
        self.strategy = strategy
        self.solver = solver
        self.variant = variant
        self.time_limit = time_limit
        self.rack = rack
        self.group_id = group_id or ""
        self.reset = reset
        self._admin: KafkaAdminClient | None = None
        if strategy == "lag-aware":
            if not (bootstrap_servers and group_id):
                raise ValueError(
                    "the lag-aware assignor reads lags: give bootstrap_servers and group_id"
                )
            # connected now, not on the consumer's IO loop where assign() runs
            self._admin = open_admin(bootstrap_servers, timeout, settings)
        self.owned: dict[str, list[int]] = {}
        self.generation = -1
        #: The last group document this assignor answered as the leader (for tests and logs).
        self.last_document: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        return PREFIX + self.strategy

    def supported_protocols(self) -> list[RebalanceProtocol]:
        """KIP-429's cooperative protocol for ``cooperative-sticky`` (members keep their partitions
        through a rebalance and give up only those the answer moves, then rejoin), else eager."""
        if self.strategy == "cooperative-sticky":
            return [RebalanceProtocol.COOPERATIVE]
        return [RebalanceProtocol.EAGER]

    def metadata(self, topics: Collection[str]) -> ConsumerProtocolSubscription:
        owned = [
            ConsumerProtocolSubscription.TopicPartition(topic=t, partitions=p)
            for t, p in self.owned.items()
        ]
        return ConsumerProtocolSubscription(
            version=SUBSCRIPTION_VERSION,
            topics=sorted(topics),
            user_data=b"",
            owned_partitions=owned,
            generation_id=self.generation,
            rack_id=self.rack,
        )

    def on_assignment(self, assignment: ConsumerProtocolAssignment, generation: int) -> None:
        owned: dict[str, list[int]] = {}
        for tp in assignment.partitions():
            owned.setdefault(tp.topic, []).append(tp.partition)
        self.owned = {t: sorted(p) for t, p in sorted(owned.items())}
        self.generation = generation

    def group_document(
        self, cluster: ClusterMetadata, members: Sequence[GroupMember]
    ) -> dict[str, Any]:
        """The group document of a JoinGroup's ``members`` (decoded subscriptions) on ``cluster``."""
        docs = [member_document(m.member_id, m.group_instance_id, m.metadata) for m in members]
        counts: dict[str, int] = {}
        for topic in sorted({t for d in docs for t in d["topics"]}):
            partitions = cluster.partitions_for_topic(topic)
            if (
                partitions is not None
            ):  # unknown to the leader's metadata: no partitions, as in Kafka
                counts[topic] = len(partitions)
        lags = None
        if self._admin is not None:  # lag-aware
            lags = partition_lags(self._admin, self.group_id, counts, self.reset)
        doc = group_problem_document(docs, counts, lags)
        # KIP-881: the racks of each partition's replicas, from the leader's metadata (as Kafka's
        # ConsumerCoordinator gives its assignor the Cluster with each partition's replica nodes).
        # kafka-python keeps each partition's MetadataResponse entry (replica_nodes) in _partitions.
        racks = {broker.node_id: broker.rack for broker in cluster.brokers()}
        replicas = {
            t: [
                list(cluster._partitions[t][p].replica_nodes)
                for p in sorted(cluster._partitions[t])
            ]
            for t in counts
        }
        return with_partition_racks(doc, racks, replicas)

    def assign(
        self, cluster: ClusterMetadata, members: Sequence[GroupMember]
    ) -> dict[str, ConsumerProtocolAssignment]:
        document = self.group_document(cluster, members)
        self.last_document = document
        result = solve(
            load_problem(document),
            self.strategy,
            self.solver,
            variant=self.variant,
            time_limit=self.time_limit,
        )
        if result.assignment is None:
            raise RuntimeError(f"{self.strategy}/{self.solver}: no assignment ({result.status})")
        return {
            member: ConsumerProtocolAssignment(0, sorted(topics.items()), b"")
            for member, topics in result.assignment.items()
        }

    def close(self) -> None:
        """Close the admin client of a ``lag-aware`` assignor (after the consumer is closed)."""
        if self._admin is not None:
            self._admin.close()
            self._admin = None


def assignor(strategy: str, **options: Any) -> RebalanceLabAssignor:
    """A new assignor for one consumer (see :class:`RebalanceLabAssignor` for ``options``)."""
    return RebalanceLabAssignor(strategy, **options)
