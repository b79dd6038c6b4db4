"""A streams-group document as Kafka Streams' client-side task assignors see it, and their answer
handed back to the document's members.

:func:`streams_input` builds a :class:`~heuristics.streams.streams_ha_state.StreamsInput`:

* clients are the document's processes, named by ``UUID.nameUUIDFromBytes`` of the process id
  (or the id itself when it is a UUID) and ordered by that UUID as Kafka orders ``ProcessId``s;
  a client's capacity is the sum of its members' threads, its client tags its members' (they
  agree), its rack its members' racks;
* a task is ``TaskId(s, p)`` with ``s`` the subtopology's position in the document;
* lags (``ClientState.lagFor``): ``-2`` (``Task.LATEST_OFFSET``) for a task a member of the
  process held as an active task (Kafka's clients report a running active task so); the
  document's lag where the process has state; where it has none (``-1``), the task's whole
  changelog, which the document gives as the task's full restore cost
  (:attr:`problems.streams.StreamsProblem.restore_cost`: the largest lag any process reports);
* racks (KIP-925): a task's source topic-partitions are partition ``p`` of every topic in its
  subtopology's ``partition_racks`` (racks unknown past the listed partitions, or for a
  subtopology without ``partition_racks``: one source topic-partition of unknown racks);
  a stateful task has one changelog topic-partition, which the document does not describe:
  its replicas are taken to be on the racks of the task's source topic-partitions (unknown when
  any of those is unknown);
* previous tasks (KIP-924): a process's previous active tasks, and its previous standbys and
  warm-ups (both standbys to Kafka).

:func:`to_members` spreads each process's tasks over its members, which Kafka's task assignors
do not do (see its docstring).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np

from heuristics.streams.streams_ha_order import process_uuid
from heuristics.streams.streams_ha_state import LATEST_OFFSET, LagRows, RackSets, StreamsInput
from problems.streams import IntArray, StreamsAssignment, StreamsProblem


def streams_input(problem: StreamsProblem) -> tuple[StreamsInput, list[int]]:
    """The assignors' input, and the document's process index of each client."""
    uuids = [process_uuid(name) for name in problem.processes]
    order = sorted(range(problem.num_processes), key=lambda p: uuids[p])
    rank = {p: c for c, p in enumerate(order)}
    n_tasks = problem.n_tasks
    task_ids = tuple(zip(problem.task_subtopology.tolist(), problem.task_partition.tolist()))
    stateful = tuple(bool(x) for x in problem.task_stateful)
    member_process = problem.member_process.tolist()

    active_process = [-1 if m < 0 else member_process[m] for m in problem.prev_active.tolist()]
    previous_active: list[tuple[int, ...]] = [() if p < 0 else (rank[p],) for p in active_process]
    standby_sets: list[set[int]] = [set() for _ in range(n_tasks)]
    for t, m in [*problem.prev_standby.tolist(), *problem.prev_warmup.tolist()]:
        p = member_process[m]
        if p != active_process[t]:
            standby_sets[t].add(rank[p])
    previous_standby = [tuple(sorted(s)) for s in standby_sets]

    def lag_table() -> IntArray:
        """Each client's lag: a running active task's, the process's own, or the whole changelog."""
        rows = np.asarray(order, dtype=np.int64)
        lags = problem.process_lag[rows]
        table = np.where(lags >= 0, lags, problem.restore_cost[rows])
        running = np.asarray(active_process, dtype=np.int64)[None, :] == rows[:, None]
        table[running] = LATEST_OFFSET
        return table

    stateless = [t for t in range(n_tasks) if not stateful[t]]

    members_of = [problem.process_members[p].tolist() for p in order]
    source, changelog = _task_racks(problem)
    configs = problem.configs
    inp = StreamsInput(
        client_names=tuple(problem.processes[p] for p in order),
        client_uuids=tuple(uuids[p] for p in order),
        capacity=tuple(int(problem.process_threads[p]) for p in order),
        client_tags=tuple(
            dict(problem.client_tags[members[0]]) if members else {} for members in members_of
        ),
        member_racks=tuple(tuple(problem.racks[m] for m in members) for members in members_of),
        task_ids=task_ids,
        stateful=stateful,
        lag=LagRows(lag_table, stateless, len(order)),
        source_racks=source,
        changelog_racks=tuple(racks if stateful[t] else () for t, racks in enumerate(changelog)),
        num_standby_replicas=configs.num_standby_replicas,
        acceptable_recovery_lag=configs.acceptable_recovery_lag,
        max_warmup_replicas=configs.max_warmup_replicas,
        rack_aware_assignment_tags=tuple(configs.rack_aware_assignment_tags),
        rack_aware_assignment_strategy=configs.rack_aware_assignment_strategy,
        traffic_cost=configs.traffic_cost,
        non_overlap_cost=configs.non_overlap_cost,
        previous_active=tuple(previous_active),
        previous_standby=tuple(previous_standby),
    )
    return inp, order


def _task_racks(problem: StreamsProblem) -> tuple[tuple[RackSets, ...], tuple[RackSets, ...]]:
    """Each task's source topic-partitions' rack sets, and its changelog topic-partition's."""
    topics: dict[int, list[str]] = {}
    racks: dict[tuple[str, int], frozenset[str]] = {}
    subtopology = problem.task_subtopology
    for task, topic, names in zip(
        problem.source_task.tolist(), problem.source_topic, problem.source_racks
    ):
        s = int(subtopology[task])
        if topic not in topics.setdefault(s, []):
            topics[s].append(topic)
        racks[(topic, task)] = frozenset(names)
    source: list[tuple[frozenset[str] | None, ...]] = []
    changelog: list[tuple[frozenset[str] | None, ...]] = []
    for t in range(problem.n_tasks):
        s = int(subtopology[t])
        named = topics.get(s)
        if not named:
            parts: tuple[frozenset[str] | None, ...] = (None,)
        else:
            parts = tuple(racks.get((topic, t)) or None for topic in named)
        source.append(parts)
        if any(r is None for r in parts):
            changelog.append((None,))
        else:
            changelog.append((frozenset().union(*parts),))  # type: ignore[arg-type]
    return tuple(source), tuple(changelog)


def to_members(
    problem: StreamsProblem,
    order: Sequence[int],
    active: Sequence[set[int]],
    standby: Sequence[set[int]],
    warmup: Sequence[set[int]],
) -> StreamsAssignment:
    """Each client's tasks spread over its process's members (our rule, not Kafka's).

    Kafka's task assignors stop at processes; the group then splits a process's tasks over its
    members.  Here, kind by kind (stateful actives, standbys and warm-ups, stateless actives, each
    in task order), a task stays with the member that held it before (as an active task for an
    active task, as any replica for a standby) while that member has fewer tasks than its share
    (``ceil`` of the process's tasks so far times its threads over the process's threads); every
    other task goes to the member with the fewest tasks per thread (ties: document order).
    """
    n_tasks = problem.n_tasks
    owner = np.full(n_tasks, -1, dtype=np.int64)
    standby_pairs: list[tuple[int, int]] = []
    warmup_pairs: list[tuple[int, int]] = []
    threads = problem.threads.tolist()
    prev_active = problem.prev_active.tolist()
    prev_replica: dict[int, set[int]] = {}
    for t, m in [*problem.prev_standby.tolist(), *problem.prev_warmup.tolist()]:
        prev_replica.setdefault(t, set()).add(m)
    stateful = problem.task_stateful.tolist()
    for c, p in enumerate(order):
        members = problem.process_members[p].tolist()
        if not members:
            continue
        total_threads = sum(threads[m] for m in members)
        position = {m: i for i, m in enumerate(members)}
        load = dict.fromkeys(members, 0)
        # the members by (tasks per thread, document order): a heap whose stale entries (a
        # member's earlier load; loads only grow) are dropped when they come to the top
        least = [(0 / threads[m], i) for i, m in enumerate(members)]
        assigned_so_far = 0
        kinds = [
            ("active", sorted(t for t in active[c] if stateful[t])),
            ("standby", sorted(standby[c])),
            ("active", sorted(t for t in active[c] if not stateful[t])),
        ]
        for kind, tasks in kinds:
            for t in tasks:
                assigned_so_far += 1
                before = (
                    (prev_active[t],)
                    if kind == "active"
                    else prev_replica.get(t, set()) | {prev_active[t]}
                )
                chosen = None
                for i in sorted(position[m] for m in before if m in position):
                    m = members[i]
                    share = -(-assigned_so_far * threads[m] // total_threads)
                    if load[m] < share:
                        chosen = m
                        break
                if chosen is None:
                    while True:
                        key, i = least[0]
                        m = members[i]
                        if key == load[m] / threads[m]:
                            break
                        heapq.heappop(least)
                    chosen = m
                load[chosen] += 1
                heapq.heappush(least, (load[chosen] / threads[chosen], position[chosen]))
                if kind == "active":
                    owner[t] = chosen
                elif t in warmup[c]:
                    warmup_pairs.append((t, chosen))
                else:
                    standby_pairs.append((t, chosen))
    return StreamsAssignment.of(owner, standby_pairs, warmup_pairs)
