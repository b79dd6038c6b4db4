"""Kafka Streams' ``HighAvailabilityTaskAssignor`` (KIP-441), step for step, on a :class:`StreamsInput`.

Clients are processes in process-UUID order, tasks in ``TaskId`` order
(:mod:`heuristics.streams.streams_ha_state`).  The steps, as Kafka 4.4 takes them:

1. stateful active tasks dealt round-robin over the clients, then balanced over threads
   (``balanceTasksOverThreads``: for each ordered pair of clients, the source's tasks in order
   move while a move lowers the pair's skew of tasks per thread); then KIP-925's min-cost flow
   when rack awareness is on (traffic cost 10, non-overlap cost 1 unless configured);
2. standbys (``num.standby.replicas`` > 0): the standby assignor
   (:mod:`heuristics.streams.streams_ha_standby`), balanced over threads the same way (a standby moves
   only where the assignor allows), then KIP-925's standby optimisation;
3. task movements (``TaskMovement``): an active task on a client that is not caught up (lag above
   ``acceptable.recovery.lag``; ``-2``, a running active, is always caught up) while a client with
   less lag exists moves to a caught-up client holding a standby (the two swap), else to the least
   loaded caught-up client, else to the least lagging client; the client that gives it up keeps a
   warm-up replica while ``max.warmup.replicas`` lasts.  Standbys on clients not caught up move the
   same way (their old client keeps a warm-up while warm-ups last).  Movements are taken by fewest
   caught-up clients, then task;
4. stateless active tasks, each to the client with the fewest active tasks per thread, then
   KIP-925's min-cost flow with traffic cost 1 and non-overlap cost 0.

A probing rebalance follows when step 3 planned any movement.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from heuristics.java import JavaPriorityQueue
from heuristics.streams.streams_ha_rack import RackAwareTaskAssignor
from heuristics.streams.streams_ha_standby import standby_assignor
from heuristics.streams.streams_ha_state import (
    LATEST_OFFSET,
    UNBOUNDED_LAG,
    ClientLoads,
    ClientState,
    ConstrainedPrioritySet,
    LagRows,
    StreamsInput,
)

#: ``DEFAULT_HIGH_AVAILABILITY_TRAFFIC_COST`` / ``..._NON_OVERLAP_COST``
HA_TRAFFIC_COST = 10
HA_NON_OVERLAP_COST = 1
#: ``STATELESS_TRAFFIC_COST`` / ``STATELESS_NON_OVERLAP_COST``
STATELESS_TRAFFIC_COST = 1
STATELESS_NON_OVERLAP_COST = 0


@dataclass
class HAOutput:
    """Per client: active and standby tasks (warm-ups included, as Kafka holds them), which of
    the standbys are warm-ups, and whether Kafka asks for a probing rebalance."""

    active: list[set[int]]
    standby: list[set[int]]
    warmup: list[set[int]]
    probing: bool
    rack_aware: bool


def high_availability_assign(inp: StreamsInput) -> HAOutput:
    loads = ClientLoads(inp.num_clients)
    clients = [
        ClientState(c, inp.capacity[c], inp.client_tags[c], (), loads)
        for c in range(inp.num_clients)
    ]
    if not clients:
        return HAOutput([], [], [], False, False)
    stateful = [t for t in range(inp.num_tasks) if inp.stateful[t]]
    stateless = [t for t in range(inp.num_tasks) if not inp.stateful[t]]
    rack = RackAwareTaskAssignor(inp)
    traffic = inp.traffic_cost if inp.traffic_cost is not None else HA_TRAFFIC_COST
    overlap = inp.non_overlap_cost if inp.non_overlap_cost is not None else HA_NON_OVERLAP_COST

    # 1. stateful actives
    for i, task in enumerate(stateful):
        clients[i % len(clients)].assign_active(task)
    _balance(clients, standby=False, allowed=lambda s, d: True)
    if rack.can_enable():
        rack.optimize_active(stateful, clients, traffic, overlap)

    # 2. standbys
    if inp.num_standby_replicas > 0:
        assignor = standby_assignor(inp)
        assignor.assign(clients, stateful)
        _balance(clients, standby=True, allowed=assignor.allowed)
        if rack.can_enable():
            rack.optimize_standby(clients, traffic, overlap, assignor.can_move)

    # 3. movements toward caught-up clients
    warmups_left = [inp.max_warmup_replicas]
    caught_up, by_lag = _lag_orders(inp, stateful)
    warmup: list[set[int]] = [set() for _ in clients]
    active_moves = _move_actives(clients, caught_up, by_lag, warmup, warmups_left, inp)
    standby_moves = _move_standbys(clients, caught_up, by_lag, warmup, warmups_left, inp)

    # 4. stateless actives
    queue = ConstrainedPrioritySet(
        lambda c, t: True, lambda c: clients[c].active_load(), inp.client_hashes(), loads.active
    )
    queue.offer_all(range(len(clients)))
    for task in stateless:
        client = queue.poll(task)
        assert client is not None
        clients[client].assign_active(task)
        queue.offer(client)
    if rack.can_enable():
        rack.optimize_active(stateless, clients, STATELESS_TRAFFIC_COST, STATELESS_NON_OVERLAP_COST)

    for c, state in enumerate(clients):
        warmup[c] &= state.standby
    return HAOutput(
        [c.active for c in clients],
        [c.standby for c in clients],
        warmup,
        active_moves + standby_moves > 0,
        rack.can_enable(),
    )


def _assigned_loads(clients: list[ClientState]) -> list[float] | None:
    """The clients' shared ``assignedTaskLoad`` list, when they keep one."""
    loads = clients[0].loads if clients else None
    return None if loads is None else loads.assigned


class _ByLag(dict[int, list[int]]):
    """Each stateful task's clients by ``(lag, client)``, sorted when first asked for."""

    def __init__(self, lags: np.ndarray, position: dict[int, int]) -> None:
        super().__init__()
        self.lags = lags
        self.position = position
        self.clients = np.arange(lags.shape[0])

    def lag(self, client: int, task: int) -> int:
        """``lagFor(task)`` of ``client``."""
        return int(self.lags[client, self.position[task]])

    def least(self, task: int) -> int:
        """The first client by ``(lag, client)`` on ``task``."""
        order = self.get(task)
        if order is not None:
            return order[0]
        return int(np.argmin(self.lags[:, self.position[task]]))

    def __missing__(self, task: int) -> list[int]:
        column = self.lags[:, self.position[task]]
        order: list[int] = np.lexsort((self.clients, column)).tolist()
        self[task] = order
        return order


def _lag_orders(inp: StreamsInput, stateful: list[int]) -> tuple[dict[int, set[int]], _ByLag]:
    """``tasksToCaughtUpClients`` (a client is caught up on a task it runs as an active task, on
    every task when the acceptable lag is unbounded, else within the acceptable lag) and the
    clients of each stateful task by lag."""
    if not stateful:
        return {}, _ByLag(np.zeros((inp.num_clients, 0), dtype=np.int64), {})
    if isinstance(inp.lag, LagRows):
        lags = inp.lag.array()[:, stateful]
    else:
        lags = np.array([[row[t] for t in stateful] for row in inp.lag], dtype=np.int64)
    limit = inp.acceptable_recovery_lag
    if limit == UNBOUNDED_LAG:
        caught = np.ones(lags.shape, dtype=bool)
    else:
        caught = (lags == LATEST_OFFSET) | ((lags >= 0) & (lags <= limit))
    caught_up = {t: set(np.flatnonzero(caught[:, i]).tolist()) for i, t in enumerate(stateful)}
    return caught_up, _ByLag(lags, {t: i for i, t in enumerate(stateful)})


def _should_move(source: ClientState, destination: ClientState) -> bool:
    """``shouldMoveATask``: the move lowers the skew of tasks per thread without reversing it."""
    at_source = len(source.active) + len(source.standby)
    at_destination = len(destination.active) + len(destination.standby)
    skew = at_source / source.capacity - at_destination / destination.capacity
    if skew <= 0:
        return False
    proposed = (at_source - 1.0) / source.capacity - (at_destination + 1.0) / destination.capacity
    if proposed < 0:
        return False
    return proposed < skew


def _balance(
    clients: list[ClientState],
    standby: bool,
    allowed: Callable[[ClientState, ClientState], bool],
) -> None:
    """``balanceTasksOverThreads`` over the active (or standby) tasks."""
    keep = True
    while keep:
        keep = False
        for source in clients:
            for destination in clients:
                if source is destination or not _should_move(source, destination):
                    continue  # (the move check below fails at once: no task would move)
                tasks = sorted(source.standby if standby else source.active)
                it = iter(tasks)
                while _should_move(source, destination):
                    task = next(it, None)
                    if task is None:
                        break
                    if not destination.has_assigned(task) and allowed(source, destination):
                        if standby:
                            source.unassign_standby(task)
                            destination.assign_standby(task)
                        else:
                            source.unassign_active(task)
                            destination.assign_active(task)
                        keep = True


class _Movement:
    __slots__ = ("task", "destination", "caught_up")

    def __init__(self, task: int, destination: int, caught_up: int) -> None:
        self.task = task
        self.destination = destination
        self.caught_up = caught_up


def _compare_movements(a: _Movement, b: _Movement) -> int:
    if a.caught_up != b.caught_up:
        return -1 if a.caught_up < b.caught_up else 1
    return (a.task > b.task) - (a.task < b.task)


def _lagging(
    task: int, client: int, inp: StreamsInput, caught_up: dict[int, set[int]], by_lag: _ByLag
) -> bool:
    """``taskIsNotCaughtUpOnClientAndOtherMoreCaughtUpClientsExist``."""
    if client in caught_up[task]:
        return False
    return by_lag.lag(by_lag.least(task), task) < by_lag.lag(client, task)


def _most_caught_up(
    by_lag: _ByLag, task: int, destination: int, eligible: Callable[[int], bool]
) -> int | None:
    for client in by_lag[task]:
        if client == destination:
            break
        if eligible(client):
            return client
    return None


def _caught_up_queue(
    clients: list[ClientState], caught_up: dict[int, set[int]], inp: StreamsInput
) -> ConstrainedPrioritySet:
    """The clients by assigned load, constrained to those caught up on the task (both movements')."""
    return ConstrainedPrioritySet(
        lambda c, t: c in caught_up[t],
        lambda c: clients[c].assigned_load(),
        inp.client_hashes(),
        _assigned_loads(clients),
    )


def _move_actives(
    clients: list[ClientState],
    caught_up: dict[int, set[int]],
    by_lag: _ByLag,
    warmup: list[set[int]],
    warmups_left: list[int],
    inp: StreamsInput,
) -> int:
    """``assignActiveTaskMovements``; the number of movements planned."""
    queue = _caught_up_queue(clients, caught_up, inp)
    planned: list[_Movement] = []
    for state in clients:
        for task in sorted(state.active):
            if _lagging(task, state.index, inp, caught_up, by_lag):
                planned.append(_Movement(task, state.index, len(caught_up[task])))
        queue.offer(state.index)
    needed = len(planned)
    # every movement is queued before the first is taken, and no two share a task (a task has
    # one active client): Kafka's queue gives them in (caught-up clients, task) order
    planned.sort(key=lambda m: (m.caught_up, m.task))
    for m in planned:
        task, destination = m.task, m.destination

        def on_standby(c: int, task: int = task) -> bool:
            return task in clients[c].standby

        source = queue.poll(task, on_standby)
        if source is not None:
            _swap(task, clients[source], clients[destination])
        else:
            source = queue.poll(task)
            if source is not None:
                _move_active(task, clients[source], clients[destination], warmup, warmups_left)
            else:
                source = _most_caught_up(by_lag, task, destination, lambda c: True)
                if source is None:
                    raise ValueError("no more caught-up client for a scheduled task movement")
                if task in clients[source].standby:
                    _swap(task, clients[source], clients[destination])
                else:
                    _move_active(task, clients[source], clients[destination], warmup, warmups_left)
        queue.offer_all([source, destination])
    return needed


def _move_standbys(
    clients: list[ClientState],
    caught_up: dict[int, set[int]],
    by_lag: _ByLag,
    warmup: list[set[int]],
    warmups_left: list[int],
    inp: StreamsInput,
) -> int:
    """``assignStandbyTaskMovements``; the number of movements made."""
    queue = _caught_up_queue(clients, caught_up, inp)
    planned: list[_Movement] = []
    for state in clients:
        for task in sorted(state.standby):
            if task in warmup[state.index]:
                continue
            if _lagging(task, state.index, inp, caught_up, by_lag):
                planned.append(_Movement(task, state.index, len(caught_up[task])))
        queue.offer(state.index)
    if len({m.task for m in planned}) == len(planned):
        # all queued before the first is taken, no two alike: Kafka's queue gives them sorted
        planned.sort(key=lambda m: (m.caught_up, m.task))
    else:  # two standbys of one task tie: the heap's layout orders them
        movements: JavaPriorityQueue[_Movement] = JavaPriorityQueue(_compare_movements)
        movements.offer_all(planned)
        planned = [movements.poll() for _ in range(len(planned))]  # type: ignore[misc]
    made = 0
    for m in planned:
        task, destination = m.task, m.destination

        def eligible(c: int, task: int = task) -> bool:
            return not clients[c].has_assigned(task)

        source = queue.poll(task, eligible)
        if source is None:
            source = _most_caught_up(by_lag, task, destination, eligible)
        if source is None:
            continue
        clients[source].assign_standby(task)
        left = warmups_left[0]
        warmups_left[0] -= 1
        if left > 0:
            warmup[destination].add(task)
        else:
            clients[destination].unassign_standby(task)
        queue.offer_all([source, destination])
        made += 1
    return made


def _swap(task: int, source: ClientState, destination: ClientState) -> None:
    """``swapStandbyAndActive``: the caught-up standby becomes active, the active a standby."""
    source.unassign_standby(task)
    source.assign_active(task)
    destination.unassign_active(task)
    destination.assign_standby(task)


def _move_active(
    task: int,
    source: ClientState,
    destination: ClientState,
    warmup: list[set[int]],
    warmups_left: list[int],
) -> None:
    """``moveActiveAndTryToWarmUp``."""
    source.assign_active(task)
    left = warmups_left[0]
    warmups_left[0] -= 1
    destination.unassign_active(task)
    if left > 0:
        destination.assign_standby(task)
        warmup[destination.index].add(task)
