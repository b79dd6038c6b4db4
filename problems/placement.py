"""Immutable, array-backed data of a replica-placement problem.

Brokers are identified by their position in ``broker_ids`` (input order),
racks by their position in ``rack_names``.  The replicas of partition ``p`` are
``replica_brokers[replica_start[p]:replica_start[p + 1]]`` (compressed rows),
as broker ids exactly as given, the first being the preferred leader; an id
not among the live brokers is a replica to be placed again (a removed broker).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from problems.arrays import frozen


@dataclass(frozen=True, eq=False)
class PlacementProblem:
    """A cluster: live brokers with racks, and partitions with ordered replicas.

    Attributes
    ----------
    broker_ids
        Live broker ids in input order (``int64``).
    broker_racks
        Each broker's rack, or ``None`` everywhere in a rack-unaware cluster.
    topics, partitions
        Each partition's topic name and index, in input order.
    replica_start
        Offsets of each partition's replicas in ``replica_brokers`` (length P + 1).
    replica_brokers
        Current replicas as broker ids, possibly of brokers that no longer exist.
    """

    broker_ids: np.ndarray
    broker_racks: tuple[str | None, ...]
    topics: tuple[str, ...]
    partitions: np.ndarray
    replica_start: np.ndarray
    replica_brokers: np.ndarray

    kind = "placement"

    @property
    def num_brokers(self) -> int:
        return len(self.broker_ids)

    @property
    def num_partitions(self) -> int:
        return len(self.topics)

    @cached_property
    def replication_factors(self) -> np.ndarray:
        return frozen(np.diff(self.replica_start))

    @property
    def rack_aware(self) -> bool:
        return bool(self.broker_racks) and self.broker_racks[0] is not None

    @cached_property
    def rack_names(self) -> tuple[str, ...]:
        """Distinct racks in order of first appearance (one unnamed rack if rack-unaware)."""
        if not self.rack_aware:
            return ("",)
        # Either every broker has a rack or none does (the parser's check).
        return tuple(rack or "" for rack in dict.fromkeys(self.broker_racks))

    @cached_property
    def broker_rack(self) -> np.ndarray:
        """Rack position of each broker (all 0 when rack-unaware)."""
        if not self.rack_aware:
            return frozen(np.zeros(self.num_brokers, dtype=np.int32))
        index = {rack: k for k, rack in enumerate(self.rack_names)}
        return frozen(np.array([index[r or ""] for r in self.broker_racks], dtype=np.int32))

    @cached_property
    def broker_index(self) -> dict[int, int]:
        """Broker id -> broker position."""
        return {int(b): i for i, b in enumerate(self.broker_ids)}

    @cached_property
    def replica_positions(self) -> np.ndarray:
        """``replica_brokers`` as broker positions; -1 for a broker that is gone."""
        order = np.argsort(self.broker_ids, kind="stable")
        ids = self.broker_ids[order]
        at = np.minimum(np.searchsorted(ids, self.replica_brokers), max(len(ids) - 1, 0))
        if len(ids) == 0:
            return frozen(np.full(len(self.replica_brokers), -1, dtype=np.int32))
        live = ids[at] == self.replica_brokers
        return frozen(np.where(live, order[at], -1).astype(np.int32))

    def replicas(self, p: int) -> np.ndarray:
        """Current replica broker ids of partition ``p``."""
        return self.replica_brokers[self.replica_start[p] : self.replica_start[p + 1]]
