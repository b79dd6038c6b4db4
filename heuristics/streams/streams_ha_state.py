"""The inputs of Kafka Streams' client-side task assignors, as Kafka's own structures hold them.

:class:`StreamsInput` is what ``StreamsPartitionAssignor`` hands its task assignor, built from a
streams-group document by :mod:`heuristics.streams.streams_ha_input`:

* clients: one per *process* (Kafka's ``ClientState``), in the order of their process UUIDs
  (Kafka's ``TreeMap<ProcessId, ClientState>``; :func:`heuristics.streams.streams_ha_order.process_uuid`),
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

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from heuristics.java import JavaPriorityQueue, spread_set_order
from heuristics.streams.streams_ha_order import uuid_hash

#: ``Task.LATEST_OFFSET``: the lag of a task its process runs as a running active task.
LATEST_OFFSET = -2
#: ``Long.MAX_VALUE``: ``acceptable.recovery.lag`` that makes every client caught up.
UNBOUNDED_LAG = (1 << 63) - 1

RackSets = tuple[frozenset[str] | None, ...]


class LagRows(Sequence[tuple[int | None, ...]]):
    """``lag[c][t]`` as :class:`StreamsInput` holds it, over a ``(clients, tasks)`` ``int64``
    table worked out when first read (``None`` at the stateless tasks); equal to the tuple of its
    rows."""

    __slots__ = ("_compute", "_table", "_rows", "_stateless", "_count")

    def __init__(self, compute: Callable[[], Any], stateless: list[int], clients: int) -> None:
        self._compute = compute
        self._table: Any = None
        self._rows: dict[int, tuple[int | None, ...]] = {}
        self._stateless = stateless
        self._count = clients

    def array(self) -> Any:
        """The table (its stateless columns hold no lags)."""
        if self._table is None:
            self._table = self._compute()
        return self._table

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, c: int) -> tuple[int | None, ...]: ...

    @overload
    def __getitem__(self, c: slice) -> Sequence[tuple[int | None, ...]]: ...

    def __getitem__(self, c: int | slice) -> Any:
        if isinstance(c, slice):
            return [self[i] for i in range(self._count)[c]]
        if c < 0:
            c += self._count
        if not 0 <= c < self._count:
            raise IndexError(c)
        row = self._rows.get(c)
        if row is None:
            values: list[int | None] = self.array()[c].tolist()
            for t in self._stateless:
                values[t] = None
            row = self._rows[c] = tuple(values)
        return row

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


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
    lag: Sequence[tuple[int | None, ...]]
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


class ClientLoads:
    """Every client's ``assignedTaskLoad`` and ``activeTaskLoad`` (tasks per thread), kept current
    by :class:`ClientState` so that the least-loaded queues compare numbers, not method calls."""

    __slots__ = ("assigned", "active")

    def __init__(self, clients: int) -> None:
        self.assigned: list[float] = [0.0] * clients
        self.active: list[float] = [0.0] * clients


class ClientState:
    """Kafka's ``ClientState``: a client's capacity, lags, tags and assigned tasks."""

    __slots__ = ("index", "capacity", "active", "standby", "tags", "lag", "loads")

    def __init__(
        self,
        index: int,
        capacity: int,
        tags: dict[str, str],
        lag: tuple[int | None, ...],
        loads: ClientLoads | None = None,
    ) -> None:
        self.index = index
        self.capacity = capacity
        self.tags = tags
        self.lag = lag
        self.active: set[int] = set()
        self.standby: set[int] = set()
        self.loads = loads
        if loads is not None:
            self._changed()

    def _changed(self) -> None:
        loads = self.loads
        if loads is not None:
            active = len(self.active)
            loads.assigned[self.index] = (active + len(self.standby)) / self.capacity
            loads.active[self.index] = active / self.capacity

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
        self._changed()

    def assign_standby(self, task: int) -> None:
        if task in self.active or task in self.standby:
            raise ValueError(f"task {task} is already assigned to client {self.index}")
        self.standby.add(task)
        self._changed()

    def unassign_active(self, task: int) -> None:
        self.active.remove(task)
        self._changed()

    def unassign_standby(self, task: int) -> None:
        self.standby.remove(task)
        self._changed()


class _LoadQueue(JavaPriorityQueue[int]):
    """:class:`~heuristics.java.JavaPriorityQueue` of clients ordered by ``(loads[client], client)``,
    the comparator written out in its sifts: the same array, the same sifts, each comparison on
    the loads of that moment."""

    __slots__ = ("_loads",)

    def __init__(self, loads: list[float]) -> None:
        super().__init__(lambda a, b: 0)  # the sifts below compare; this comparator is not called
        self._loads = loads

    def _sift_up(self, k: int, item: int) -> None:
        queue, loads = self._queue, self._loads
        load = loads[item]
        while k > 0:
            parent = (k - 1) >> 1
            e = queue[parent]
            other = loads[e]
            if load > other or (load == other and item >= e):
                break
            queue[k] = e
            k = parent
        queue[k] = item

    def _sift_down(self, k: int, item: int) -> None:
        queue, loads = self._queue, self._loads
        n = len(queue)
        half = n >> 1
        load = loads[item]
        while k < half:
            child = 2 * k + 1
            c = queue[child]
            c_load = loads[c]
            right = child + 1
            if right < n:
                r = queue[right]
                r_load = loads[r]
                if c_load > r_load or (c_load == r_load and c > r):
                    child, c, c_load = right, r, r_load
            if load < c_load or (load == c_load and item <= c):
                break
            queue[k] = c
            k = child
        queue[k] = item


class ConstrainedPrioritySet:
    """Kafka's ``ConstrainedPrioritySet``: clients by ``(weight, client)`` in a priority queue.

    ``poll`` takes the least loaded client meeting the constraints; the clients it passed over
    go back through ``offerAll`` of a ``HashSet`` (so in that set's order); ``offer`` of a
    client already queued removes it first.
    """

    __slots__ = ("_queue", "_unique", "_constraint", "_hash", "_spread")

    def __init__(
        self,
        constraint: Callable[[int, int], bool],
        weight: Callable[[int], float],
        client_hashes: list[int],
        loads: list[float] | None = None,
    ) -> None:
        def compare(a: int, b: int) -> int:
            wa, wb = weight(a), weight(b)
            if wa != wb:
                return -1 if wa < wb else 1
            return (a > b) - (a < b)

        self._queue: JavaPriorityQueue[int] | _LoadQueue = (
            JavaPriorityQueue(compare) if loads is None else _LoadQueue(loads)
        )
        self._unique: set[int] = set()
        self._constraint = constraint
        self._hash = client_hashes
        self._spread = [(h & 0xFFFFFFFF) ^ ((h & 0xFFFFFFFF) >> 16) for h in client_hashes]

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
        return spread_set_order(clients, self._hash, self._spread)
