"""The inputs of Kafka Streams' client-side task assignors, as Kafka's own structures hold them.

:class:`StreamsInput` is what ``StreamsPartitionAssignor`` hands its task assignor, built from a
streams-group document by :mod:`heuristics.streams_ha_input`:

* clients: one per *process* (Kafka's ``ClientState``), in the order of their process UUIDs
  (Kafka's ``TreeMap<ProcessId, ClientState>``; :func:`heuristics.streams_ha_order.process_uuid`),
  so a client's index is its rank and comparing two clients compares two indexes.  A client's
  ``capacity`` is its number of stream threads (Kafka counts one per consumer);
* tasks: ``TaskId(subtopology, partition)`` where the subtopology id is the subtopology's
  position in the document; task indexes follow ``TaskId.compareTo`` (subtopology, then
  partition), so comparing two tasks compares two indexes;
* lags: each client's ``lagFor(task)`` for every stateful task: ``-2`` (``Task.LATEST_OFFSET``)
  for a task the process runs as an active task, else its changelog lag (a process without state
  for the task lags by the task's whole changelog);
* racks: each client's rack (``None`` when a member of the process has none or the members
  disagree: Kafka's ``validateClientRack`` then fails) and the racks of each task's source and
  changelog topic-partitions (``None`` where unknown).

:class:`ClientState` is the mutable state the assignors work on (its assigned active and standby
tasks), and :class:`ConstrainedPrioritySet` Kafka's least-loaded-client queue.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from heuristics.kafka_orders import hash_table_order
from heuristics.streams_ha_order import JavaPriorityQueue, uuid_hash

#: ``Task.LATEST_OFFSET``: the lag of a task its process runs as a running active task.
LATEST_OFFSET = -2
#: ``Long.MAX_VALUE``: ``acceptable.recovery.lag`` that makes every client caught up.
UNBOUNDED_LAG = (1 << 63) - 1

RackSets = tuple[frozenset[str] | None, ...]


@dataclass(frozen=True)
class StreamsInput:
    """One rebalance as Kafka Streams' task assignor sees it (see the module docstring)."""

    #: process names, in client (UUID) order
    client_names: tuple[str, ...]
    #: ``(mostSigBits, leastSigBits)`` of each client's ``ProcessId``
    client_uuids: tuple[tuple[int, int], ...]
    capacity: tuple[int, ...]
    client_tags: tuple[dict[str, str], ...]
    #: the rack of each member of each client (``None``: the member has none)
    member_racks: tuple[tuple[str | None, ...], ...]
    #: ``TaskId`` of each task: ``(subtopology, partition)``, in ``TaskId`` order
    task_ids: tuple[tuple[int, int], ...]
    stateful: tuple[bool, ...]
    #: ``lag[c][t]`` for stateful tasks (``None`` for a stateless task)
    lag: tuple[tuple[int | None, ...], ...]
    #: each task's source topic-partitions' rack sets, and its changelog topic-partitions'
    source_racks: tuple[RackSets, ...]
    changelog_racks: tuple[RackSets, ...]
    num_standby_replicas: int = 0
    acceptable_recovery_lag: int = 10000
    max_warmup_replicas: int = 2
    rack_aware_assignment_tags: tuple[str, ...] = ()
    rack_aware_assignment_strategy: str = "none"
    #: ``rack.aware.assignment.traffic_cost`` / ``non_overlap_cost``; ``None``: not configured
    traffic_cost: int | None = None
    non_overlap_cost: int | None = None
    #: each task's previous active clients (at most one) and previous standby clients
    previous_active: tuple[tuple[int, ...], ...] = field(default=())
    previous_standby: tuple[tuple[int, ...], ...] = field(default=())

    @property
    def num_clients(self) -> int:
        return len(self.client_names)

    @property
    def num_tasks(self) -> int:
        return len(self.task_ids)

    @property
    def client_rack(self) -> tuple[str | None, ...]:
        """Each client's rack, ``None`` unless all its members name the same rack
        (``RackAwareTaskAssignor.validateClientRack``)."""
        out: list[str | None] = []
        for racks in self.member_racks:
            first = racks[0] if racks else None
            out.append(first if racks and all(r == first for r in racks) else None)
        return tuple(out)

    def client_hashes(self) -> list[int]:
        """``ProcessId.hashCode`` of every client."""
        return [uuid_hash(msb, lsb) for msb, lsb in self.client_uuids]


class ClientState:
    """Kafka's ``ClientState``: a client's capacity, lags, tags and assigned tasks."""

    __slots__ = ("index", "capacity", "active", "standby", "tags", "lag")

    def __init__(self, index: int, capacity: int, tags: dict[str, str], lag: tuple) -> None:
        self.index = index
        self.capacity = capacity
        self.tags = tags
        self.lag = lag
        self.active: set[int] = set()
        self.standby: set[int] = set()

    def assigned_count(self) -> int:
        return len(self.active) + len(self.standby)

    def assigned_load(self) -> float:
        return (len(self.active) + len(self.standby)) / self.capacity

    def active_load(self) -> float:
        return len(self.active) / self.capacity

    def has_assigned(self, task: int) -> bool:
        return task in self.active or task in self.standby

    def assign_active(self, task: int) -> None:
        if task in self.active or task in self.standby:
            raise ValueError(f"task {task} is already assigned to client {self.index}")
        self.active.add(task)

    def assign_standby(self, task: int) -> None:
        if task in self.active or task in self.standby:
            raise ValueError(f"task {task} is already assigned to client {self.index}")
        self.standby.add(task)

    def unassign_active(self, task: int) -> None:
        self.active.remove(task)

    def unassign_standby(self, task: int) -> None:
        self.standby.remove(task)


class ConstrainedPrioritySet:
    """Kafka's ``ConstrainedPrioritySet``: clients by ``(weight, client)`` in a priority queue.

    ``poll`` takes the least loaded client meeting the constraints; the clients it passed over
    go back through ``offerAll`` of a ``HashSet`` (so in that set's order); ``offer`` of a
    client already queued removes it first.
    """

    __slots__ = ("_queue", "_unique", "_constraint", "_hash")

    def __init__(
        self,
        constraint: Callable[[int, int], bool],
        weight: Callable[[int], float],
        client_hashes: list[int],
    ) -> None:
        def compare(a: int, b: int) -> int:
            wa, wb = weight(a), weight(b)
            if wa != wb:
                return -1 if wa < wb else 1
            return (a > b) - (a < b)

        self._queue: JavaPriorityQueue[int] = JavaPriorityQueue(compare)
        self._unique: set[int] = set()
        self._constraint = constraint
        self._hash = client_hashes

    def offer(self, client: int) -> None:
        if client in self._unique:
            self._queue.remove(client)
        else:
            self._unique.add(client)
        self._queue.offer(client)

    def offer_all(self, clients: Iterable[int]) -> None:
        for client in clients:
            self.offer(client)

    def poll(self, task: int, extra: Callable[[int], bool] | None = None) -> int | None:
        invalid: list[int] = []
        while len(self._queue):
            client = self._queue.poll()
            assert client is not None
            self._unique.discard(client)
            if self._constraint(client, task) and (extra is None or extra(client)):
                self.offer_all(self._hash_set_order(invalid))
                return client
            invalid.append(client)
        self.offer_all(self._hash_set_order(invalid))
        return None

    def _hash_set_order(self, clients: list[int]) -> list[int]:
        """The iteration order of a ``HashSet<ProcessId>`` filled with ``clients`` in turn."""
        if len(clients) < 2:
            return clients
        return [clients[i] for i in hash_set_order([self._hash[c] for c in clients])]


def hash_set_order(hashes: list[int], capacity: int = 16) -> list[int]:
    """Positions of keys (given by their ``hashCode``, in insertion order) in the iteration order
    of a Java ``HashMap``/``HashSet`` that started with ``capacity`` buckets (no removals)."""
    return [int(i) for i in hash_table_order(hashes, capacity)]
