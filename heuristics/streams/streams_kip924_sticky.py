"""``streams-kip924-sticky``: KIP-924's public ``StickyTaskAssignor`` of Kafka Streams 4.4.

``org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor``, the assignor a
Kafka Streams application gets with ``task.assignor.class`` set to it, on the ``ApplicationState``
that ``StreamsPartitionAssignor`` builds (:mod:`heuristics.streams.streams_ha_input` turns the document
into it; processes are the clients):

1. active tasks: each task stays with its previous active client while that client has fewer
   active tasks than ``ceil(tasks * threads / all threads)``; a task still unassigned goes to a
   previous standby client with that room; every other task, in task order, to the "best" client:
   its previous client unless that client is loaded (at least one task per thread and someone has
   fewer), then a previous standby client, else the least loaded client (tasks per thread) that
   would pair the task with a task it does not yet share a client with;
2. KIP-925's min-cost flow over the stateful, then the stateless active tasks (when
   ``rack.aware.assignment.strategy`` is set, *both* ``traffic_cost`` and ``non_overlap_cost``
   are configured, and every client and topic-partition has racks);
3. ``num.standby.replicas`` standbys per stateful task, each to the best client not holding it;
4. KIP-925's standby optimisation over pairs of clients on different racks.

Where Kafka walks a ``HashMap`` or ``HashSet`` this walks it in Java's order (process ids, task
ids: their ``hashCode``s; :mod:`heuristics.streams.streams_ha_order`).  One order is not reproducible:
Kafka takes the stateful tasks for step 3 from a ``HashSet`` of ``TaskInfo`` objects, which have
no ``hashCode`` of their own, so the order follows the JVM's identity hash codes and changes from
run to run.  :func:`assign` takes them as ``task_info_hashes`` (the equality tests pass the ones
Kafka's run used); without them it uses each task's ``TaskId.hashCode``, one of the orders Kafka
may take.  Two details of Kafka's that this keeps: the standby optimisation's movement check
compares the source client with itself (so with client tags every movement passes it), and the
active optimisation counts a task's changelog topic-partitions in its traffic as well as its
source topic-partitions.
"""

from __future__ import annotations

from collections.abc import Sequence

from heuristics.java import from_collection_capacity, hash_set_order, spread_set_order, spreads
from heuristics.streams.streams_ha_flow import (
    CostOf,
    HasTask,
    TaskGraph,
    assign_from_flow,
    balance_subtopology_graph,
    min_traffic_graph,
    traffic_cost,
)
from heuristics.streams.streams_ha_input import streams_input, to_members
from heuristics.streams.streams_ha_order import task_hash
from heuristics.streams.streams_ha_state import StreamsInput
from problems import Result
from problems.streams import StreamsProblem

ACTIVE, STANDBY = "active", "standby"
#: ``DEFAULT_STICKY_TRAFFIC_COST`` / ``DEFAULT_STICKY_NON_OVERLAP_COST``
STICKY_TRAFFIC_COST = 1
STICKY_NON_OVERLAP_COST = 10
STANDBY_ROUNDS = 4


def assign(problem: StreamsProblem, task_info_hashes: Sequence[int] | None = None) -> Result:
    """KIP-924's ``StickyTaskAssignor`` on ``problem``."""
    inp, order = streams_input(problem)
    active, standby = kip924_sticky_assign(inp, task_info_hashes)
    answer = to_members(problem, order, active, standby, [set() for _ in active])
    return Result(problem, "streams-kip924-sticky", answer, objective_name="streams")


class _HashOrder:
    """Java ``HashMap``/``HashSet`` iteration orders of clients and tasks."""

    def __init__(self, inp: StreamsInput) -> None:
        self.client_hash = inp.client_hashes()
        self.task_hash = [task_hash(s, p) for s, p in inp.task_ids]
        self.client_spread = spreads(self.client_hash)
        self.task_spread = spreads(self.task_hash)

    def clients(self, inserted: Sequence[int], capacity: int = 16) -> list[int]:
        return spread_set_order(inserted, self.client_hash, self.client_spread, capacity)

    def tasks(self, inserted: Sequence[int], capacity: int = 16) -> list[int]:
        return spread_set_order(inserted, self.task_hash, self.task_spread, capacity)


def kip924_sticky_assign(
    inp: StreamsInput, task_info_hashes: Sequence[int] | None = None
) -> tuple[list[set[int]], list[set[int]]]:
    """Each client's active and standby tasks."""
    n_clients, n_tasks = inp.num_clients, inp.num_tasks
    if n_clients == 0:
        return [], []
    order = _HashOrder(inp)
    clients = order.clients(list(range(n_clients)))  # kafkaStreamsStates(): a HashMap
    all_tasks = order.tasks(list(range(n_tasks)))  # allTasks(): a HashMap, filled in task order
    threads = inp.capacity

    # previous active / standby maps (HashMaps filled client by client, tasks in order)
    prev_active_of: dict[int, int] = {}
    inserted_active: list[int] = []
    prev_standby_of: dict[int, list[int]] = {}
    inserted_standby: list[int] = []
    by_client_active: list[list[int]] = [[] for _ in range(n_clients)]
    by_client_standby: list[list[int]] = [[] for _ in range(n_clients)]
    for t in range(n_tasks):
        for c in inp.previous_active[t]:
            by_client_active[c].append(t)
        for c in inp.previous_standby[t]:
            by_client_standby[c].append(t)
    for c in clients:
        for t in sorted(by_client_active[c]):
            if t not in prev_active_of:
                inserted_active.append(t)
            prev_active_of[t] = c
        for t in sorted(by_client_standby[c]):
            if t not in prev_standby_of:
                inserted_standby.append(t)
                prev_standby_of[t] = []
            prev_standby_of[t].append(c)
    prev_standby_sets = {t: order.clients(cs) for t, cs in prev_standby_of.items()}

    state = _State(inp, clients, prev_active_of, prev_standby_sets, order)

    # 1. actives
    total_threads = sum(threads)
    unassigned = order.tasks(all_tasks, from_collection_capacity(n_tasks))
    left = set(range(n_tasks))
    for t in order.tasks(inserted_active):
        c = prev_active_of[t]
        if state.has_room(c, n_tasks, total_threads):
            state.finalize(t, c, ACTIVE)
            left.discard(t)
    for t in unassigned:
        if t not in left:
            continue
        for c in prev_standby_sets.get(t, []):
            if state.has_room(c, n_tasks, total_threads):
                state.finalize(t, c, ACTIVE)
                left.discard(t)
                break
    candidates = list(clients)
    for t in sorted(left):
        state.finalize(t, state.best_client(t, candidates), ACTIVE)

    # 2. KIP-925 over the actives
    stateful = [t for t in range(n_tasks) if inp.stateful[t]]
    stateless = [t for t in range(n_tasks) if not inp.stateful[t]]
    traffic = inp.traffic_cost if inp.traffic_cost is not None else STICKY_TRAFFIC_COST
    overlap = inp.non_overlap_cost if inp.non_overlap_cost is not None else STICKY_NON_OVERLAP_COST
    state.optimize_active(stateful, traffic, overlap)
    state.optimize_active(stateless, 1, 0)
    state.relocate()

    # 3. standbys, stateful tasks in the order of a HashSet<TaskInfo>
    hashes = list(task_info_hashes) if task_info_hashes is not None else order.task_hash
    with_changelog = [t for t in all_tasks if inp.stateful[t]]
    standby_order = [with_changelog[i] for i in hash_set_order([hashes[t] for t in with_changelog])]
    # ``clients`` is in bucket order at its table's size; a table of more than 48 of them that
    # has the same size keeps that order (no early growth past 48 keys)
    full_size = _table_size(n_clients)
    for t in standby_order:
        for _ in range(inp.num_standby_replicas):
            holders = state.locations.get(t, set())
            kept = list(clients)
            for c in holders:
                kept.remove(c)
            if len(kept) > 48 and _table_size(len(kept)) == full_size:
                candidates = kept
            else:
                candidates = order.clients(kept)
            if not candidates:
                break
            state.finalize(t, state.best_client(t, candidates), STANDBY)

    # 4. KIP-925 over the standbys
    if inp.num_standby_replicas > 0:
        state.optimize_standby(traffic, overlap)
        state.relocate()

    active = [{t for t, k in state.tasks[c].items() if k == ACTIVE} for c in range(n_clients)]
    standby = [{t for t, k in state.tasks[c].items() if k == STANDBY} for c in range(n_clients)]
    return active, standby


def _table_size(keys: int) -> int:
    """Buckets of a default ``HashSet`` holding ``keys`` keys, from its load factor alone."""
    capacity = 16
    while keys > capacity * 3 // 4:
        capacity *= 2
    return capacity


class _State:
    """``AssignmentState``: the new assignment, where each task is, and the task pairs."""

    def __init__(
        self,
        inp: StreamsInput,
        clients: list[int],
        prev_active_of: dict[int, int],
        prev_standby_sets: dict[int, list[int]],
        order: _HashOrder,
    ) -> None:
        self.inp = inp
        self.clients = clients
        self.prev_active_of = prev_active_of
        self.prev_standby_sets = prev_standby_sets
        self.order = order
        self.tasks: list[dict[int, str]] = [{} for _ in range(inp.num_clients)]
        #: each client's tasks per thread, kept current with ``tasks``
        self.loads: list[float] = [0.0] * inp.num_clients
        self.locations: dict[int, set[int]] = {}
        n = inp.num_tasks
        self.max_pairs = n * (n - 1) // 2
        self.pairs: set[tuple[int, int]] = set()

    def load(self, c: int) -> float:
        return self.loads[c]

    def _changed(self, c: int) -> None:
        self.loads[c] = len(self.tasks[c]) / self.inp.capacity[c]

    def has_room(self, c: int, n_tasks: int, total_threads: int) -> bool:
        threads = self.inp.capacity[c]
        actives = sum(1 for k in self.tasks[c].values() if k == ACTIVE)
        return actives < (n_tasks * threads + total_threads - 1) // total_threads

    def finalize(self, t: int, c: int, kind: str) -> None:
        for other in self.tasks[c]:
            self.pairs.add((other, t) if other < t else (t, other))
        self.tasks[c][t] = kind
        self._changed(c)
        self.locations.setdefault(t, set()).add(c)

    def has_new_pair(self, t: int, c: int) -> bool:
        if len(self.pairs) == self.max_pairs:
            return False
        return any(((o, t) if o < t else (t, o)) not in self.pairs for o in self.tasks[c])

    def least_loaded(self, t: int, within: Sequence[int]) -> int | None:
        """``findLeastLoadedClient``: ``within`` in its hash-set order."""
        loads = self.loads
        least = None
        least_load = 0.0
        for c in within:
            load = loads[c]
            if load == 0:
                return c
            if (least is None or load < least_load) and self.has_new_pair(t, c):
                least, least_load = c, load
        if least is not None:
            return least
        for c in within:
            if least is None or loads[c] < least_load:
                least, least_load = c, loads[c]
        return least

    def previous_standby(self, t: int, within: Sequence[int]) -> int | None:
        ids = self.prev_standby_sets.get(t, [])
        inside = set(within)
        kept = [c for c in ids if c in inside]
        capacity = from_collection_capacity(len(ids))
        return self.least_loaded(t, self.order.clients(kept, capacity))

    def should_balance(self, c: int) -> bool:
        load = self.loads[c]
        if load < 1:
            return False
        return min(self.loads) < load

    def best_client(self, t: int, within: Sequence[int]) -> int:
        """``findBestClientForTask``."""
        if len(within) == 1:
            return within[0]
        previous = self.prev_active_of.get(t)
        if previous is None or previous not in within:
            previous = self.previous_standby(t, within)
        if previous is None:
            chosen = self.least_loaded(t, within)
        elif self.should_balance(previous):
            standby = self.previous_standby(t, within)
            if standby is None or self.should_balance(standby):
                chosen = self.least_loaded(t, within)
            else:
                chosen = standby
        else:
            chosen = previous
        assert chosen is not None
        return chosen

    def relocate(self) -> None:
        """``processOptimizedAssignments``: where each task is, from the assignment."""
        self.locations = {}
        for c in range(self.inp.num_clients):
            for t in self.tasks[c]:
                self.locations.setdefault(t, set()).add(c)

    # ------------------------------------------------------------ KIP-925
    def _enabled(self, standby: bool) -> bool:
        """``canPerformRackAwareOptimization``."""
        inp = self.inp
        if inp.rack_aware_assignment_strategy == "none":
            return False
        if inp.traffic_cost is None or inp.non_overlap_cost is None:
            return False
        if any(not racks or racks[0] is None for racks in inp.member_racks):
            return False
        for t in range(inp.num_tasks):
            parts = list(inp.changelog_racks[t])
            if not standby:
                parts += list(inp.source_racks[t])
            if any(not r for r in parts):
                return False
        return True

    def _rack(self, c: int) -> str:
        rack = self.inp.member_racks[c][0]
        assert rack is not None
        return rack

    def _cost(self, standby: bool, traffic: int, overlap: int) -> CostOf:
        inp = self.inp

        def cost(t: int, c: int, current: bool) -> int:
            rack = self._rack(c)
            parts = list(inp.changelog_racks[t])
            if not standby:
                parts = list(inp.source_racks[t]) + parts
            return traffic_cost(rack, parts, traffic, overlap, current)

        return cost

    def _graph(
        self,
        clients: Sequence[int],
        tasks: Sequence[int],
        has: HasTask,
        cost: CostOf,
        groups_from: Sequence[int],
    ) -> TaskGraph:
        if self.inp.rack_aware_assignment_strategy == "balance_subtopology":
            groups: dict[int, list[int]] = {}
            for t in groups_from:
                groups.setdefault(self.inp.task_ids[t][0], []).append(t)
            return balance_subtopology_graph(
                clients, tasks, self.clients, has, cost, [groups[s] for s in sorted(groups)]
            )
        return min_traffic_graph(clients, tasks, self.clients, has, cost)

    def optimize_active(self, tasks: list[int], traffic: int, overlap: int) -> None:
        """``optimizeRackAwareActiveTasks`` of ``tasks`` (sorted)."""
        if not tasks or not self._enabled(standby=False):
            return

        def has(c: int, t: int) -> bool:
            return self.tasks[c].get(t) == ACTIVE

        built = self._graph(self.clients, tasks, has, self._cost(False, traffic, overlap), tasks)
        built.graph.solve_min_cost_flow()

        def move(t: int, source: int, destination: int) -> None:
            self.tasks[source].pop(t, None)
            self.tasks[destination][t] = ACTIVE
            self._changed(source)
            self._changed(destination)

        assign_from_flow(built, move)

    def optimize_standby(self, traffic: int, overlap: int) -> None:
        """``optimizeRackAwareStandbyTasks`` (its movement check always passes: see the module)."""
        standbys = sorted(
            {
                t
                for c in range(self.inp.num_clients)
                for t, k in self.tasks[c].items()
                if k == STANDBY
            }
        )
        if not standbys or not self._enabled(standby=True):
            return

        def has(c: int, t: int) -> bool:
            return self.tasks[c].get(t) == STANDBY

        def movable(a: int, b: int) -> list[int]:
            return sorted(
                t for t, k in self.tasks[a].items() if k == STANDBY and t not in self.tasks[b]
            )

        def move(t: int, source: int, destination: int) -> None:
            self.tasks[source].pop(t, None)
            self.tasks[destination][t] = STANDBY
            self._changed(source)
            self._changed(destination)

        cost = self._cost(True, traffic, overlap)
        clients = self.clients
        moved, rounds = True, 0
        while moved and rounds < STANDBY_ROUNDS:
            moved = False
            rounds += 1
            for i in range(len(clients)):
                for j in range(i + 1, len(clients)):
                    a, b = clients[i], clients[j]
                    if self._rack(a) == self._rack(b):
                        continue
                    first, second = movable(a, b), movable(b, a)
                    if not first or not second:
                        continue
                    tasks = sorted(first + second)
                    built = self._graph(sorted((a, b)), tasks, has, cost, standbys)
                    built.graph.solve_min_cost_flow()
                    moved |= assign_from_flow(built, move)
