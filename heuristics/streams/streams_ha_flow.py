"""KIP-925's task graphs and Kafka Streams' own min-cost flow, path for path.

Kafka Streams' rack-aware optimisation (``RackAwareTaskAssignor``, and KIP-924's
``TaskAssignmentUtils``) builds a flow graph over tasks and clients whose current assignment is a
feasible flow, then improves it with its own ``Graph.solveMinCostFlow``: cycle cancelling, each
negative cycle found by Bellman-Ford from a dummy node joined to every node, edges relaxed in the
order of its ``TreeMap``s (nodes ascending, the dummy first; each node's edges by destination).
Many assignments have the same cost, and which one comes out depends on which cycles that search
finds, so :class:`Graph` repeats it step for step (one shortcut, which changes nothing: a
Bellman-Ford pass that relaxes no edge ends the search, since every later pass would repeat it).

Two graph shapes (``RackAwareGraphConstructor``):

* ``min_traffic`` (:func:`min_traffic_graph`): source -> task (capacity 1) -> client (capacity 1,
  cost = cross-rack traffic + the non-overlap cost if the client does not hold the task now) ->
  sink, each client's capacity to the sink its current number of these tasks; node ids: tasks
  ``0..T-1``, clients ``T..T+C-1``, sink ``T+C``, source ``-1``;
* ``balance_subtopology`` (:func:`balance_subtopology_graph`): a client node per (subtopology,
  client), capped at ``ceil(current count / T * tasks of the subtopology)``, then a second client
  node capped at the client's current count; its first flow comes from Kafka's
  breadth-first Ford-Fulkerson (:meth:`Graph.max_flow`).

:func:`assign_from_flow` moves each task to the client its unit of flow reaches.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable, Sequence

SOURCE = -1


class Edge:
    """``Graph.Edge``: capacity, cost, residual flow, flow; a residual edge knows its counter edge."""

    __slots__ = ("destination", "capacity", "cost", "residual", "flow", "counter", "forward")

    def __init__(
        self, destination: int, capacity: int, cost: int, residual: int, flow: int, forward: bool
    ) -> None:
        self.destination = destination
        self.capacity = capacity
        self.cost = cost
        self.residual = residual
        self.flow = flow
        self.counter: Edge | None = None
        self.forward = forward


def _push(edge: Edge, amount: int) -> None:
    edge.residual -= amount
    if edge.forward:
        edge.flow += amount
    counter = edge.counter
    assert counter is not None
    counter.residual += amount
    if counter.forward and counter.flow >= amount:
        counter.flow -= amount


class Graph:
    """Kafka Streams' ``Graph<Integer>``: a flow network with its min-cost-flow and max-flow searches."""

    __slots__ = ("adjacency", "sink")

    def __init__(self) -> None:
        self.adjacency: dict[int, dict[int, Edge]] = {}
        self.sink = 0

    def add_edge(self, u: int, v: int, capacity: int, cost: int, flow: int) -> None:
        self.adjacency.setdefault(u, {})[v] = Edge(v, capacity, cost, capacity - flow, flow, True)
        self.adjacency.setdefault(v, {})

    def edges(self, node: int) -> list[Edge]:
        """``edges(node).values()``: the node's edges by destination."""
        out = self.adjacency.get(node, {})
        return [out[v] for v in sorted(out)]

    def total_cost(self) -> int:
        return sum(e.cost * e.flow for out in self.adjacency.values() for e in out.values())

    def _residual(self) -> dict[int, dict[int, Edge]]:
        residual: dict[int, dict[int, Edge]] = {}
        for u in sorted(self.adjacency):
            out = self.adjacency[u]
            for v in sorted(out):
                e = out[v]
                fwd = Edge(v, e.capacity, e.cost, e.capacity - e.flow, e.flow, True)
                bwd = Edge(u, e.capacity, -e.cost, e.flow, 0, False)
                fwd.counter, bwd.counter = bwd, fwd
                residual.setdefault(u, {})[v] = fwd
                residual.setdefault(v, {})[u] = bwd
        return residual

    def _copy_back(self, residual: dict[int, dict[int, Edge]]) -> None:
        for u, out in self.adjacency.items():
            for v, e in out.items():
                r = residual[u][v]
                e.flow = r.flow
                e.residual = r.residual

    def solve_min_cost_flow(self) -> None:
        """``solveMinCostFlow``: cancel negative cycles of the residual graph until none is left."""
        residual = self._residual()
        nodes = sorted(residual)
        index = {node: i for i, node in enumerate(nodes)}
        # Edges in Kafka's relaxation order: nodes ascending (Java's null dummy node first, then
        # the TreeMap's keys), each node's edges by destination.
        edges = [
            (index[u], index[v], out[v].cost, out[v])
            for u in nodes
            for out in (residual[u],)
            for v in sorted(out)
        ]
        while True:
            found = _negative_cycle(edges, len(nodes))
            if found is None:
                break
            node, parents, parent_edges = found
            visited: set[int] = set()
            while node not in visited:
                visited.add(node)
                node = parents[node]
            _cancel(node, parents, parent_edges)
        self._copy_back(residual)

    def max_flow(self) -> int:
        """``calculateMaxFlow``: breadth-first augmenting paths (Edmonds-Karp) from the source."""
        residual = self._residual()
        while True:
            parents: dict[int, int] = {}
            if not _breadth_first(residual, SOURCE, self.sink, parents):
                break
            amount = None
            node = self.sink
            while node != SOURCE:
                parent = parents[node]
                r = residual[parent][node].residual
                amount = r if amount is None else min(amount, r)
                node = parent
            assert amount is not None
            node = self.sink
            while node != SOURCE:
                parent = parents[node]
                _push(residual[parent][node], amount)
                node = parent
        self._copy_back(residual)
        return sum(e.flow for e in self.adjacency.get(SOURCE, {}).values())


def _negative_cycle(
    edges: list[tuple[int, int, int, Edge]], count: int
) -> tuple[int, list[int], list[Edge | None]] | None:
    """``detectNegativeCycles(null, ...)``: Bellman-Ford from the dummy node over ``count`` nodes
    (indexes; the dummy is ``count``); the node relaxed first in the last pass with the parent
    pointers at that moment, or None.

    The dummy's edges (cost 0 to every node) come first in every pass: the first pass sets every
    distance to 0 through them, and distances only fall, so they never relax again; the state
    after them is set up directly.  A pass that relaxes nothing ends the search (every later pass
    would repeat it), which changes no answer.
    """
    distance = [0] * count
    parents = [count] * count
    parent_edges: list[Edge | None] = [None] * count
    active = [(s, d, c, e) for s, d, c, e in edges if e.residual != 0]
    last = count  # the passes are 0 .. count (count + 1 nodes with the dummy)
    for i in range(count + 1):
        changed = False
        for start, end, cost, edge in active:
            candidate = distance[start] + cost
            if candidate < distance[end]:
                distance[end] = candidate
                parents[end] = start
                parent_edges[end] = edge
                if i == last:
                    return end, parents, parent_edges
                changed = True
        if not changed:
            return None
    return None


def _cancel(node: int, parents: list[int], parent_edges: list[Edge | None]) -> None:
    """``cancelNegativeCycle``: push the cycle's smallest residual flow around it."""
    cycle = [node]
    current = parents[node]
    while current != node:
        cycle.append(current)
        current = parents[current]
    path = [parent_edges[n] for n in cycle]
    amount = min(e.residual for e in path if e is not None)
    for edge in path:
        assert edge is not None
        _push(edge, amount)


def _breadth_first(
    residual: dict[int, dict[int, Edge]], source: int, target: int, parents: dict[int, int]
) -> bool:
    visited = {source}
    queue = deque([source])
    while queue:
        node = queue.popleft()
        out = residual[node]
        for nxt in sorted(out):
            if nxt in visited or out[nxt].residual <= 0:
                continue
            if nxt == target:
                parents[target] = node
                return True
            queue.append(nxt)
            parents[nxt] = node
            visited.add(nxt)
    return False


HasTask = Callable[[int, int], bool]  # (client, task) -> holds it now
CostOf = Callable[[int, int, bool], int]  # (task, client, in current assignment) -> cost


def _original_counts(
    clients: Sequence[int], tasks: Sequence[int], all_clients: Sequence[int], has: HasTask
) -> dict[int, int]:
    counts: dict[int, int] = {}
    for t in tasks:
        for c in all_clients:
            if has(c, t):
                counts[c] = counts.get(c, 0) + 1
    return counts


class TaskGraph:
    """A built graph with what ``assignTaskFromMinCostFlow`` needs."""

    __slots__ = ("graph", "clients", "tasks", "holder", "groups")

    def __init__(
        self,
        graph: Graph,
        clients: Sequence[int],
        tasks: Sequence[int],
        holder: dict[int, int],
        groups: list[list[int]] | None,
    ) -> None:
        self.graph = graph
        self.clients = list(clients)
        self.tasks = list(tasks)
        self.holder = holder  # task -> the client holding it now (the last one, for replicas)
        self.groups = groups  # balance_subtopology: tasks per subtopology, in order


def traffic_cost(
    rack: str | None,
    partitions: Iterable[frozenset[str] | None],
    traffic: int,
    overlap: int,
    current: bool,
) -> int:
    """A task's cost on a client of ``rack`` (``getCost``): ``traffic`` per topic-partition with no
    replica on that rack, plus ``overlap`` when the client does not hold the task now."""
    total = 0
    for racks in partitions:
        assert racks is not None  # rack awareness is on: every topic-partition has racks
        if rack not in racks:
            total += traffic
    return total if current else total + overlap


def min_traffic_graph(
    clients: Sequence[int],
    tasks: Sequence[int],
    all_clients: Sequence[int],
    has: HasTask,
    cost: CostOf,
) -> TaskGraph:
    """``MinTrafficGraphConstructor.constructTaskGraph`` (its initial flow: the current assignment)."""
    counts = _original_counts(clients, tasks, all_clients, has)
    graph = Graph()
    n_tasks = len(tasks)
    holder: dict[int, int] = {}
    for node, t in enumerate(tasks):
        for j, c in enumerate(clients):
            flow = 1 if has(c, t) else 0
            if flow:
                holder[t] = c
            graph.add_edge(node, n_tasks + j, 1, cost(t, c, flow == 1), flow)
        if t not in holder:
            raise ValueError(f"task {t} is not assigned to any client")
        graph.add_edge(SOURCE, node, 1, 0, 1)
    sink = n_tasks + len(clients)
    for j, c in enumerate(clients):
        capacity = counts.get(c, 0)
        graph.add_edge(n_tasks + j, sink, capacity, 0, capacity)
    graph.sink = sink
    return TaskGraph(graph, clients, tasks, holder, None)


def balance_subtopology_graph(
    clients: Sequence[int],
    tasks: Sequence[int],
    all_clients: Sequence[int],
    has: HasTask,
    cost: CostOf,
    subtopology_tasks: list[list[int]],
) -> TaskGraph:
    """``BalanceSubtopologyGraphConstructor.constructTaskGraph``, its first flow by max flow.

    ``subtopology_tasks``: every task of each subtopology (``tasksForTopicGroup``), subtopologies
    in order; tasks outside ``tasks`` are skipped but their subtopology keeps its node block.
    """
    wanted = set(tasks)
    counts = _original_counts(clients, tasks, all_clients, has)
    graph = Graph()
    n_tasks, n_clients, n_groups = len(tasks), len(clients), len(subtopology_tasks)
    sink = n_clients + n_tasks + n_clients * n_groups
    holder: dict[int, int] = {}
    task_node = 0
    for g, group in enumerate(subtopology_tasks):
        members = sorted(group)
        for j, c in enumerate(clients):
            client_node = n_tasks + n_clients * g + j
            start = task_node
            valid = 0
            for t in members:
                if t not in wanted:
                    continue
                valid += 1
                current = has(c, t)
                graph.add_edge(start, client_node, 1, cost(t, c, current), 0)
                start += 1
                if current:
                    holder[t] = c
            if valid > 0:
                second = n_tasks + n_clients * n_groups + j
                capacity = math.ceil(counts[c] * 1.0 / n_tasks * valid) if c in counts else 0
                graph.add_edge(client_node, second, capacity, 0, 0)
        task_node += sum(1 for t in members if t in wanted)
    task_node = 0
    for group in subtopology_tasks:
        for t in sorted(group):
            if t in wanted:
                graph.add_edge(SOURCE, task_node, 1, 0, 0)
                task_node += 1
    for j, c in enumerate(clients):
        graph.add_edge(n_tasks + n_clients * n_groups + j, sink, counts.get(c, 0), 0, 0)
    graph.sink = sink
    flow = graph.max_flow()
    if flow != n_tasks:
        raise ValueError(f"max flow calculated: {flow} doesn't match taskSize: {n_tasks}")
    return TaskGraph(graph, clients, tasks, holder, [sorted(g) for g in subtopology_tasks])


def assign_from_flow(built: TaskGraph, move: Callable[[int, int, int], None]) -> bool:
    """``assignTaskFromMinCostFlow``: ``move(task, from_client, to_client)`` for every task whose
    flow reaches another client than the one holding it; whether any task moved."""
    moved = False
    n_tasks, n_clients = len(built.tasks), len(built.clients)
    if built.groups is None:
        plan = [(node, t, 0) for node, t in enumerate(built.tasks)]
    else:
        wanted = set(built.tasks)
        plan = []
        node = 0
        for g, group in enumerate(built.groups):
            for t in group:
                if t in wanted:
                    plan.append((node, t, g))
                    node += 1
    for node, t, g in plan:
        for edge in built.graph.edges(node):
            if edge.flow > 0:
                index = (
                    edge.destination - n_tasks - (n_clients * g if built.groups is not None else 0)
                )
                client = built.clients[index]
                original = built.holder[t]
                if client == original:
                    break
                move(t, original, client)
                moved = True
    return moved
