"""KIP-925's ``RackAwareTaskAssignor`` as ``HighAvailabilityTaskAssignor`` uses it.

Switched on (``canEnableRackAwareAssignor``) exactly when Kafka switches it on:
``rack.aware.assignment.strategy`` is not ``none``; every client has a rack (all members of a
process on one rack); every source topic-partition of every task has racks; and, when
``num.standby.replicas`` > 0, every changelog topic-partition has racks as well (Kafka describes
the changelog topics then, and a failure switches the optimisation off for active tasks too).

The cost of a task on a client (``getCost``): ``traffic_cost`` for each of the task's source
topic-partitions (changelog topic-partitions for a standby) with no replica on the client's rack,
plus ``non_overlap_cost`` when the client does not hold the task now.  Active tasks are
re-placed by one min-cost flow over all clients (``optimizeActiveTasks``, the graph of the
configured strategy); standbys by min-cost flows over pairs of clients on different racks, up to
four rounds while a standby moves (``optimizeStandbyTasks``, always the ``min_traffic`` graph).
"""

from __future__ import annotations

from collections.abc import Callable

from heuristics.streams.streams_ha_flow import (
    assign_from_flow,
    balance_subtopology_graph,
    min_traffic_graph,
    traffic_cost,
)
from heuristics.streams.streams_ha_state import ClientState, RackSets, StreamsInput

#: ``STANDBY_OPTIMIZER_MAX_ITERATION``
STANDBY_ROUNDS = 4

MoveCheck = Callable[[ClientState, ClientState, int, list[ClientState]], bool]


class RackAwareTaskAssignor:
    """The rack information of one rebalance and the two optimisations."""

    def __init__(self, inp: StreamsInput) -> None:
        self.inp = inp
        self.racks = inp.client_rack
        self._enabled: bool | None = None

    def valid_client_rack(self) -> bool:
        return all(rack is not None for rack in self.racks)

    def can_enable(self) -> bool:
        """``canEnableRackAwareAssignor`` (computed once, as Kafka caches it)."""
        inp = self.inp
        if inp.rack_aware_assignment_strategy == "none":
            return False
        if self._enabled is None:
            enabled = self.valid_client_rack() and _all_racked(inp.source_racks)
            if enabled and inp.num_standby_replicas > 0:
                enabled = _all_racked(inp.changelog_racks)
            self._enabled = enabled
        return self._enabled

    def cost(
        self, task: int, client: int, current: bool, traffic: int, overlap: int, standby: bool
    ) -> int:
        rack = self.racks[client]
        partitions = (self.inp.changelog_racks if standby else self.inp.source_racks)[task]
        if not partitions:
            raise ValueError(f"task {task} has no topic-partitions")
        return traffic_cost(rack, partitions, traffic, overlap, current)

    def subtopology_tasks(self) -> list[list[int]]:
        """``tasksForTopicGroup`` in subtopology order: every task of each subtopology."""
        groups: dict[int, list[int]] = {}
        for t, (subtopology, _) in enumerate(self.inp.task_ids):
            groups.setdefault(subtopology, []).append(t)
        return [groups[s] for s in sorted(groups)]

    def optimize_active(
        self, tasks: list[int], clients: list[ClientState], traffic: int, overlap: int
    ) -> None:
        """``optimizeActiveTasks``: ``tasks`` (sorted) re-placed over all clients."""
        if not tasks:
            return
        order = [c.index for c in clients]

        def has(c: int, t: int) -> bool:
            return t in clients[c].active

        def cost(t: int, c: int, current: bool) -> int:
            return self.cost(t, c, current, traffic, overlap, False)

        if self.inp.rack_aware_assignment_strategy == "balance_subtopology":
            built = balance_subtopology_graph(
                order, tasks, order, has, cost, self.subtopology_tasks()
            )
        else:
            built = min_traffic_graph(order, tasks, order, has, cost)
        built.graph.solve_min_cost_flow()

        def move(t: int, source: int, destination: int) -> None:
            clients[source].unassign_active(t)
            clients[destination].assign_active(t)

        assign_from_flow(built, move)

    def optimize_standby(
        self, clients: list[ClientState], traffic: int, overlap: int, can_move: MoveCheck
    ) -> None:
        """``optimizeStandbyTasks``: pairs of clients on different racks swap standbys."""
        racks = self.racks
        order = [c.index for c in clients]

        def has(c: int, t: int) -> bool:
            return t in clients[c].standby

        def cost(t: int, c: int, current: bool) -> int:
            return self.cost(t, c, current, traffic, overlap, True)

        def movable(source: ClientState, destination: ClientState) -> list[int]:
            return sorted(
                t
                for t in source.standby
                if not destination.has_assigned(t) and can_move(source, destination, t, clients)
            )

        def move(t: int, source: int, destination: int) -> None:
            clients[source].unassign_standby(t)
            clients[destination].assign_standby(t)

        moved = True
        rounds = 0
        while moved and rounds < STANDBY_ROUNDS:
            moved = False
            rounds += 1
            for i in range(len(clients)):
                for j in range(i + 1, len(clients)):
                    if racks[i] == racks[j]:
                        continue
                    first = movable(clients[i], clients[j])
                    second = movable(clients[j], clients[i])
                    if not first or not second:
                        continue
                    tasks = sorted(first + second)
                    built = min_traffic_graph([i, j], tasks, order, has, cost)
                    built.graph.solve_min_cost_flow()
                    moved |= assign_from_flow(built, move)


def _all_racked(racks_per_task: tuple[RackSets, ...]) -> bool:
    """Every topic-partition of every task has a non-empty set of racks."""
    return all(racks for partitions in racks_per_task for racks in partitions)
