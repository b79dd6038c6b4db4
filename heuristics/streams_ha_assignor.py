"""Kafka Streams' ``HighAvailabilityTaskAssignor`` (KIP-441), step for step, on a :class:`StreamsInput`.

Clients are processes in process-UUID order, tasks in ``TaskId`` order
(:mod:`heuristics.streams_ha_state`).  The steps, as Kafka 4.4 takes them:

1. stateful active tasks dealt round-robin over the clients, then balanced over threads
   (``balanceTasksOverThreads``: for each ordered pair of clients, the source's tasks in order
   move while a move lowers the pair's skew of tasks per thread); then KIP-925's min-cost flow
   when rack awareness is on (traffic cost 10, non-overlap cost 1 unless configured);
2. standbys (``num.standby.replicas`` > 0): the standby assignor
   (:mod:`heuristics.streams_ha_standby`), balanced over threads the same way (a standby moves
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

from dataclasses import dataclass

from heuristics.streams_ha_order import JavaPriorityQueue
from heuristics.streams_ha_rack import RackAwareTaskAssignor
from heuristics.streams_ha_standby import standby_assignor
from heuristics.streams_ha_state import (
    LATEST_OFFSET,
    UNBOUNDED_LAG,
    ClientState,
    ConstrainedPrioritySet,
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
    clients = [
        ClientState(c, inp.capacity[c], inp.client_tags[c], inp.lag[c])
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
        clients[i % len(clients)].active.add(task)
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
    caught_up = {t: _caught_up(inp, t) for t in stateful}
    by_lag = {
        t: sorted(range(len(clients)), key=lambda c, t=t: (inp.lag[c][t], c)) for t in stateful
    }
    warmup: list[set[int]] = [set() for _ in clients]
    active_moves = _move_actives(clients, caught_up, by_lag, warmup, warmups_left, inp)
    standby_moves = _move_standbys(clients, caught_up, by_lag, warmup, warmups_left, inp)

    # 4. stateless actives
    queue = ConstrainedPrioritySet(
        lambda c, t: True, lambda c: clients[c].active_load(), inp.client_hashes()
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


def _caught_up(inp: StreamsInput, task: int) -> set[int]:
    """``tasksToCaughtUpClients``: running active, unbounded acceptable lag, or lag within it."""
    limit = inp.acceptable_recovery_lag
    out = set()
    for c in range(inp.num_clients):
        lag = inp.lag[c][task]
        assert lag is not None
        if lag == LATEST_OFFSET or limit == UNBOUNDED_LAG or 0 <= lag <= limit:
            out.add(c)
    return out


def _should_move(source: ClientState, destination: ClientState) -> bool:
    """``shouldMoveATask``: the move lowers the skew of tasks per thread without reversing it."""
    skew = source.assigned_load() - destination.assigned_load()
    if skew <= 0:
        return False
    at_destination = (destination.assigned_count() + 1.0) / destination.capacity
    at_source = (source.assigned_count() - 1.0) / source.capacity
    proposed = at_source - at_destination
    if proposed < 0:
        return False
    return proposed < skew


def _balance(clients: list[ClientState], standby: bool, allowed) -> None:
    """``balanceTasksOverThreads`` over the active (or standby) tasks."""
    keep = True
    while keep:
        keep = False
        for source in clients:
            for destination in clients:
                if source is destination:
                    continue
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


def _lagging(task: int, client: int, inp: StreamsInput, caught_up: dict, by_lag: dict) -> bool:
    """``taskIsNotCaughtUpOnClientAndOtherMoreCaughtUpClientsExist``."""
    if client in caught_up[task]:
        return False
    return inp.lag[by_lag[task][0]][task] < inp.lag[client][task]


def _most_caught_up(by_lag: dict, task: int, destination: int, eligible) -> int | None:
    for client in by_lag[task]:
        if client == destination:
            break
        if eligible(client):
            return client
    return None


def _move_actives(clients, caught_up, by_lag, warmup, warmups_left, inp) -> int:
    """``assignActiveTaskMovements``; the number of movements planned."""
    queue = ConstrainedPrioritySet(
        lambda c, t: c in caught_up[t], lambda c: clients[c].assigned_load(), inp.client_hashes()
    )
    movements: JavaPriorityQueue[_Movement] = JavaPriorityQueue(_compare_movements)
    for state in clients:
        for task in sorted(state.active):
            if _lagging(task, state.index, inp, caught_up, by_lag):
                movements.offer(_Movement(task, state.index, len(caught_up[task])))
        queue.offer(state.index)
    needed = len(movements)
    while len(movements):
        m = movements.poll()
        assert m is not None
        task, destination = m.task, m.destination
        source = queue.poll(task, lambda c, task=task: task in clients[c].standby)
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


def _move_standbys(clients, caught_up, by_lag, warmup, warmups_left, inp) -> int:
    """``assignStandbyTaskMovements``; the number of movements made."""
    queue = ConstrainedPrioritySet(
        lambda c, t: c in caught_up[t], lambda c: clients[c].assigned_load(), inp.client_hashes()
    )
    movements: JavaPriorityQueue[_Movement] = JavaPriorityQueue(_compare_movements)
    for state in clients:
        for task in sorted(state.standby):
            if task in warmup[state.index]:
                continue
            if _lagging(task, state.index, inp, caught_up, by_lag):
                movements.offer(_Movement(task, state.index, len(caught_up[task])))
        queue.offer(state.index)
    made = 0
    while len(movements):
        m = movements.poll()
        assert m is not None
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


def _move_active(task, source: ClientState, destination: ClientState, warmup, warmups_left) -> None:
    """``moveActiveAndTryToWarmUp``."""
    source.assign_active(task)
    left = warmups_left[0]
    warmups_left[0] -= 1
    destination.unassign_active(task)
    if left > 0:
        destination.assign_standby(task)
        warmup[destination.index].add(task)
