"""Kafka Streams' standby task assignors as ``HighAvailabilityTaskAssignor`` picks them.

``StandbyTaskAssignorFactory``: with ``rack.aware.assignment.tags`` configured, the
``ClientTagAwareStandbyTaskAssignor`` (KIP-708); otherwise the ``DefaultStandbyTaskAssignor``
(the HA assignor passes no rack-aware assignor to the factory, so client racks never pick the tag
assignor here).

* Default: for each stateful task in ``TaskId`` order, ``num.standby.replicas`` times the least
  loaded client (assigned tasks / threads, ties by process id) that holds no copy of the task.
* Client tags: for each stateful task, starting from its active client, the least loaded client
  on none of the tag values already used (a tag key whose values are all used is forgotten, as
  KIP-708 describes); standbys it cannot place that way go, after all tasks, to the least loaded
  clients, tasks in the iteration order of Kafka's ``HashMap<TaskId, Integer>``.

Both offer a movement check that the HA assignor's balancing and KIP-925's standby optimisation
use: the tag assignor lets a standby move only between clients with the same tag values
(balancing), or when the task's copies keep at least as many distinct tags (optimisation).
"""

from __future__ import annotations

from heuristics.java import hash_set_order
from heuristics.streams.streams_ha_order import task_hash
from heuristics.streams.streams_ha_state import ClientState, ConstrainedPrioritySet, StreamsInput


class DefaultStandbyTaskAssignor:
    def __init__(self, inp: StreamsInput) -> None:
        self.inp = inp

    def allowed(self, source: ClientState, destination: ClientState) -> bool:
        return True

    def can_move(
        self, source: ClientState, destination: ClientState, task: int, clients: list[ClientState]
    ) -> bool:
        return True

    def assign(self, clients: list[ClientState], stateful: list[int]) -> None:
        replicas = self.inp.num_standby_replicas
        queue = least_loaded(clients, self.inp)
        queue.offer_all(range(len(clients)))
        for task in stateful:
            fill_standbys(clients, queue, task, replicas)


def least_loaded(clients: list[ClientState], inp: StreamsInput) -> ConstrainedPrioritySet:
    """``createLeastLoadedPrioritySetConstrainedByAssignedTask``."""
    loads = clients[0].loads if clients else None
    return ConstrainedPrioritySet(
        lambda c, t: not clients[c].has_assigned(t),
        lambda c: clients[c].assigned_load(),
        inp.client_hashes(),
        None if loads is None else loads.assigned,
    )


def fill_standbys(
    clients: list[ClientState], queue: ConstrainedPrioritySet, task: int, remaining: int
) -> int:
    """``pollClientAndMaybeAssignAndUpdateRemainingStandbyTasks``; the standbys left unplaced."""
    while remaining > 0:
        client = queue.poll(task)
        if client is None:
            break
        clients[client].assign_standby(task)
        remaining -= 1
        queue.offer(client)
    return remaining


class ClientTagAwareStandbyTaskAssignor:
    def __init__(self, inp: StreamsInput) -> None:
        self.inp = inp

    def allowed(self, source: ClientState, destination: ClientState) -> bool:
        """Balancing may move a standby only to a client with the source's tag values."""
        return all(destination.tags.get(k) == v for k, v in source.tags.items())

    def can_move(
        self, source: ClientState, destination: ClientState, task: int, clients: list[ClientState]
    ) -> bool:
        """A standby may move when its copies keep at least as many distinct (key, value) tags."""
        others: set[tuple[str, str]] = set()
        for c in clients:
            if c.has_assigned(task) and c.index != source.index and c.index != destination.index:
                others.update(c.tags.items())
        with_source = others | set(source.tags.items())
        with_destination = others | set(destination.tags.items())
        return len(with_destination) >= len(with_source)

    def assign(self, clients: list[ClientState], stateful: list[int]) -> None:
        inp = self.inp
        replicas = inp.num_standby_replicas
        tag_keys = set(inp.rack_aware_assignment_tags)
        values: dict[str, set[str]] = {}
        holders: dict[tuple[str, str], set[int]] = {}
        for c in clients:
            for key, value in c.tags.items():
                values.setdefault(key, set()).add(value)
                holders.setdefault((key, value), set()).add(c.index)
        queue = least_loaded(clients, inp)
        remaining = {t: replicas for t in stateful}
        for task in stateful:
            for c in clients:
                if task in c.active:
                    self._spread(
                        clients, queue, task, c.index, tag_keys, values, holders, remaining
                    )
        if remaining:
            queue.offer_all(range(len(clients)))
            # The map was filled with every stateful task in order, then shrank: its table kept
            # the size that all of them gave it.
            order = hash_set_order([task_hash(*inp.task_ids[t]) for t in stateful])
            for i in order:
                task = stateful[i]
                if task in remaining:
                    remaining[task] = fill_standbys(clients, queue, task, remaining[task])

    def _spread(
        self,
        clients: list[ClientState],
        queue: ConstrainedPrioritySet,
        task: int,
        active: int,
        tag_keys: set[str],
        values: dict[str, set[str]],
        holders: dict[tuple[str, str], set[int]],
        remaining: dict[int, int],
    ) -> None:
        """``assignStandbyTasksToClientsWithDifferentTags``."""
        queue.offer_all(range(len(clients)))
        used_clients = 1
        left = remaining[task]
        used: dict[tuple[str, str], set[int]] = {}
        last = active
        while True:
            for key, value in clients[last].tags.items():
                if key not in tag_keys:
                    continue
                every = values[key]
                if len(every) <= used_clients:
                    for v in every:
                        used.pop((key, v), None)
                else:
                    used[(key, value)] = holders[(key, value)]
            chosen = queue.poll(task, lambda c: not any(c in s for s in used.values()))
            if chosen is None:
                break
            used_clients += 1
            left -= 1
            clients[chosen].assign_standby(task)
            last = chosen
            if left <= 0:
                break
        if left > 0:
            remaining[task] = left
        else:
            del remaining[task]


def standby_assignor(
    inp: StreamsInput,
) -> DefaultStandbyTaskAssignor | ClientTagAwareStandbyTaskAssignor:
    """``StandbyTaskAssignorFactory.create(configs, null)``."""
    if inp.rack_aware_assignment_tags:
        return ClientTagAwareStandbyTaskAssignor(inp)
    return DefaultStandbyTaskAssignor(inp)
