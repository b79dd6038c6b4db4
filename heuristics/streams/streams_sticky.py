"""KIP-1071's streams-group task assignor: Kafka 4.4's broker-side ``StickyTaskAssignor``.

``org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor`` of
``kafka-group-coordinator`` 4.4.0, step by step on the input the group coordinator hands it
(``TargetAssignmentBuilder.build``): every member's current active and standby tasks and the task
offsets it reports, in a ``HashMap`` of member id filled in the document's member order.

Active tasks (every task of every subtopology; stateful and stateless alike):

1. tasks sorted by partition number, then subtopology id: each goes back to its previous active
   member while that member has fewer active tasks than the quota (``ceil(tasks left / members
   left)``, recomputed each time a member reaches it);
2. then, same order, each remaining task goes to the least loaded of its previous standby
   candidates (below) while that member is under the quota;
3. the rest, sorted by subtopology id then partition number, each to the least loaded process
   (tasks / members of the process), within it to the member with the fewest tasks.

Standby tasks (``num_standby_replicas`` per task of a stateful subtopology), tasks sorted by
partition number then subtopology id, both descending: each replica goes to the task's previous
active member when its process does not hold the task yet and the member is under the total-task
quota, else to the least loaded previous standby candidate whose process does not hold the task and
which is under that quota; the first replica that finds neither sends that task's remaining
replicas to a final pass (tasks by subtopology id, then partition number, both descending): each
to the least loaded process that does not hold the task, within it to its least loaded member.  A
replica with no such process is not assigned (Kafka logs a warning).

A task's *standby candidates* are the members that held it as a standby, then the members that
report offsets for it (state on disk) without holding it as a standby, each group most caught up
first (highest offset sum), ties in member order.  The document gives lags, not offsets: a
process's offset sum for a task is the task's end offset minus its lag, the end offset being one
more than the largest lag any process reports for it (:func:`task_offset_sums`), so "most caught
up" is "least lag"; a standby without a reported lag counts offset 0 (Kafka's default), behind
every reported one.  Kafka 4.4 reads neither warm-up tasks nor racks nor client tags in this
assignor, and every member is one stream thread (a process's capacity is its member count):
``threads``, ``rack``, ``client_tags``, ``warmup`` and the rack configs do not change the answer.

Where Kafka's answer depends on iteration order, the Java structures are reproduced:

* member order: the iteration order of the coordinator's ``HashMap`` of member ids
  (:class:`heuristics.java.JavaHashSet`, ``put`` in document order);
* processes: ``processIdToState``, a ``HashMap`` sized for the member count and filled with
  ``computeIfAbsent`` (its values fill the priority queues of steps 3 and the final standby pass);
* a process's members: ``memberToTaskCounts``, a default ``HashMap`` filled with ``put``; the
  queue of members by task count is rebuilt from it after a task is added directly;
* ``java.util.PriorityQueue``'s binary heap (:class:`JavaPriorityQueue`): ties between equally
  loaded processes or members go the way the heap's sift-up and sift-down leave them;
* candidate lists sorted stably (``List.sort``), task lists sorted by total orders.

Strings compare as Java does (UTF-16 code units: :func:`heuristics.java.java_order_key`).
Kafka's own class is the oracle: tests/peers/test_streams_sticky_equality.py.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import numpy.typing as npt

from heuristics.java import (
    JavaHashSet,
    JavaPriorityQueue,
    grouped_hash_order,
    java_order_key,
    java_string_hashes,
)
from problems import Result
from problems.streams import NO_STATE, IntArray, StreamsAssignment, StreamsProblem

T = TypeVar("T")

STRATEGY = "streams-sticky"


class _Process:
    """Kafka's ``ProcessState``: a process's members, their task counts and its load.

    The members' task counts live in the assignor's per-member list ``counts`` (shared by all
    processes); ``members`` is the iteration order of ``memberToTaskCounts``.
    """

    __slots__ = ("index", "capacity", "task_count", "load", "counts", "members", "by_load")

    def __init__(self, index: int, members: list[int], counts: list[int]) -> None:
        self.index = index
        self.members = members
        self.counts = counts
        self.capacity = len(members)
        self.task_count = 0
        self.load = 0.0 if members else float("inf")
        self.by_load: JavaPriorityQueue[list[int]] | None = None  # [member, count] entries

    def add_to_least_loaded(self) -> tuple[int, int]:
        """``addTaskToLeastLoadedMember``: the member chosen and its new task count."""
        if self.capacity == 1:
            return self.members[0], self.counts[self.members[0]] + 1
        if self.by_load is None:
            self.by_load = JavaPriorityQueue(lambda a, b: (a[1] > b[1]) - (a[1] < b[1]))
            counts = self.counts
            for member in self.members:
                self.by_load.add([member, counts[member]])
        entry = self.by_load.poll()
        assert entry is not None
        entry[1] += 1
        self.by_load.add(entry)
        return entry[0], entry[1]


class _ProcessQueue(JavaPriorityQueue[_Process]):
    """:class:`~heuristics.java.JavaPriorityQueue` of processes by load (Kafka's comparator on
    ``ProcessState``'s ``load``), the comparisons written out in its sifts."""

    __slots__ = ()

    def __init__(self, processes: list[_Process]) -> None:
        super().__init__(lambda a, b: 0)  # the sifts below compare; this comparator is not called
        for process in processes:
            self.offer(process)

    def _sift_up(self, k: int, item: _Process) -> None:
        heap = self._queue
        load = item.load
        while k > 0:
            parent = (k - 1) >> 1
            above = heap[parent]
            if load >= above.load:
                break
            heap[k] = above
            k = parent
        heap[k] = item

    def _sift_down(self, k: int, item: _Process) -> None:
        heap = self._queue
        n = len(heap)
        half = n >> 1
        load = item.load
        while k < half:
            child = 2 * k + 1
            smaller = heap[child]
            right = child + 1
            if right < n and smaller.load > heap[right].load:
                child = right
                smaller = heap[child]
            if load <= smaller.load:
                break
            heap[k] = smaller
            k = child
        heap[k] = item


def task_offset_sums(problem: StreamsProblem) -> tuple[IntArray, IntArray]:
    """The offset sums the document's lags stand for: ``(end, offsets)``.

    ``end[t]`` is one more than the largest lag any process reports for task ``t`` (1 when none
    does); ``offsets[p, t] = end[t] - lag`` where process ``p`` reports a lag, -1 where it has no
    state (no offset reported).  Only the order of a task's offsets matters to the assignor.
    """
    lag = problem.process_lag
    end = lag.max(axis=0, initial=0).astype(np.int64) + 1
    offsets = end[None, :] - lag.astype(np.int64, copy=False)
    offsets[lag == NO_STATE] = -1
    stateless = ~problem.task_stateful
    if stateless.any():
        offsets[:, stateless] = -1
    return end, offsets


def _compute_if_absent_order(hashes: list[int], requested: int) -> list[int]:
    """Positions of keys (their ``hashCode``s, in insertion order) in the iteration order of a
    ``HashMap`` of ``requested`` initial capacity filled with ``computeIfAbsent``
    (:meth:`heuristics.java.JavaHashSet.compute_if_absent`: each key at the head of its chain)."""
    table = JavaHashSet(requested)
    if table.initial < 64:  # a crowded chain may grow the table early: put them one by one
        for i, h in enumerate(hashes):
            table.compute_if_absent(i, h)
        return table.order()
    capacity = table.initial
    for size in range(len(hashes)):
        if size > capacity * 3 // 4:
            capacity *= 2
    codes = np.asarray(hashes, dtype=np.int64) & 0xFFFFFFFF
    bucket = (codes ^ (codes >> 16)) & (capacity - 1)
    order: list[int] = np.lexsort((-np.arange(len(hashes)), bucket)).tolist()
    return order


#: candidate lists at least this long are scanned with numpy
_LONG = 48
#: at most this many candidates in all: every task's ranked at once
_AT_ONCE = 400_000


class _Sticky:
    """Kafka's ``LocalState`` and the passes over it.

    Members, processes and tasks are integer ids; a member's task count, a process's load and the
    processes holding a task are lists (the counts and loads mirrored in numpy arrays, for the
    long candidate lists).
    """

    def __init__(self, problem: StreamsProblem) -> None:
        self.problem = problem
        members = problem.members
        n_members = len(members)
        member_hash = java_string_hashes(members)
        self.member_order: list[int] = grouped_hash_order(
            np.zeros(n_members, dtype=np.int64), member_hash
        ).tolist()
        self.standbys = problem.configs.num_standby_replicas
        stateful_tasks = int(problem.partitions[problem.stateful].sum())
        self.total_active = problem.n_tasks
        self.total_tasks = problem.n_tasks + stateful_tasks * self.standbys
        self.members_with_active_capacity = n_members
        self.members_with_capacity = n_members
        self.active_quota = _per_member(self.total_active, n_members)
        self.total_quota = _per_member(self.total_tasks, n_members)

        # processIdToState, filled in member order; memberToTaskCounts of each process
        member_process = problem.member_process
        in_order = np.asarray(self.member_order, dtype=np.int64)
        process_in_order = member_process[in_order]
        seen, first = np.unique(process_in_order, return_index=True)
        by_arrival = seen[np.argsort(first)].tolist()
        process_hash = java_string_hashes(problem.processes)
        arrival_order = _compute_if_absent_order(
            [int(process_hash[p]) for p in by_arrival], n_members
        )
        grouped = grouped_hash_order(process_in_order, member_hash[in_order])
        members_of = np.split(in_order[grouped], np.cumsum(np.bincount(process_in_order))[:-1])
        self.counts: list[int] = [0] * n_members
        self.count_array = np.zeros(n_members, dtype=np.int64)
        states = {p: _Process(p, members_of[p].tolist(), self.counts) for p in by_arrival}
        self.processes = [states[by_arrival[i]] for i in arrival_order]
        self.member_process: list[int] = member_process.tolist()
        self.state: list[_Process | None] = [states.get(p) for p in range(problem.num_processes)]
        self.load_array = np.full(problem.num_processes, np.inf)
        for p, state in states.items():
            self.load_array[p] = state.load

        self.prev_active: list[int] = problem.prev_active.tolist()
        self.holders: list[list[int]] = [[] for _ in range(problem.n_tasks)]
        self._candidate_input()
        self.active: list[int] = [-1] * problem.n_tasks
        self.standby: list[tuple[int, int]] = []

    def _candidate_input(self) -> None:
        """What :meth:`_candidates` ranks each task's standby candidates from."""
        problem = self.problem
        _, offsets = task_offset_sums(problem)
        self.offsets = offsets
        self.offsets_by_task: IntArray | None = None
        rank = np.empty(problem.num_members, dtype=np.int64)
        rank[self.member_order] = np.arange(problem.num_members)
        self.rank = rank
        # each process's members by member order, as one array cut in runs
        by_process = np.lexsort((rank, problem.member_process))
        self.members_by_process = by_process
        sizes = np.bincount(problem.member_process, minlength=problem.num_processes)
        self.process_start = np.concatenate(([0], np.cumsum(sizes)))
        self.process_size = sizes
        self.held: dict[int, IntArray] | None = None  # each task's previous standbys, when needed
        has_state: np.ndarray = offsets >= 0
        self.reporting: list[bool] = np.asarray(has_state.any(axis=0)).tolist()
        self.cache: dict[int, list[int] | IntArray] = {}
        self.flat: tuple[list[int], IntArray, list[int]] | None = None
        if int(sizes @ has_state.sum(axis=1)) <= _AT_ONCE:
            self._rank_all(offsets, has_state)

    def _rank_all(self, offsets: IntArray, has_state: npt.NDArray[np.bool_]) -> None:
        """Every task's standby candidates ranked at once (:meth:`_candidates`), one flat array
        cut in runs by task."""
        problem = self.problem
        rank = self.rank
        held = problem.prev_standby
        held_task, held_member = held[:, 0], held[:, 1]
        held_offset = np.maximum(offsets[problem.member_process[held_member], held_task], 0)
        process, task = np.nonzero(has_state)
        sizes = self.process_size[process]
        total = int(sizes.sum())
        ends = np.cumsum(sizes)
        shift = np.repeat(self.process_start[process] - ends + sizes, sizes)
        member = self.members_by_process[np.arange(total) + shift]
        offset = np.repeat(offsets[process, task], sizes)
        task = np.repeat(task, sizes)
        width = max(problem.n_tasks, 1)
        if len(held_task):
            fresh = ~np.isin(member * width + task, held_member * width + held_task)
            member, task, offset = member[fresh], task[fresh], offset[fresh]
        group = np.concatenate(
            [np.zeros(len(held_task), dtype=np.int64), np.ones(len(task), dtype=np.int64)]
        )
        task = np.concatenate([held_task, task])
        member = np.concatenate([held_member, member])
        offset = np.concatenate([held_offset, offset])
        order = np.lexsort((rank[member], -offset, group, task))
        member = member[order]
        starts = np.searchsorted(task[order], np.arange(problem.n_tasks + 1)).tolist()
        self.flat = (member.tolist(), member, starts)

    def _candidates(self, task: int) -> list[int] | IntArray:
        """A task's standby candidates, ranked (``rankStandbyCandidates``): a list when short, an
        array when long.

        Kafka appends a member's candidates member by member (its standbys with their offsets,
        then the tasks it reports offsets for and is not a standby of) and sorts each task's list
        stably: standbys first, then by offset sum descending; ties stay in member order.
        """
        if self.flat is not None:
            listed, array, starts = self.flat
            start, end = starts[task], starts[task + 1]
            return listed[start:end] if end - start < _LONG else array[start:end]
        found = self.cache.get(task)
        if found is not None:
            return found
        if self.offsets_by_task is None:
            self.offsets_by_task = np.ascontiguousarray(self.offsets.T)
        offsets = self.offsets_by_task[task]
        rank = self.rank
        process = self.problem.member_process
        if self.held is None:
            self.held = {}
            pairs = self.problem.prev_standby
            if len(pairs):
                firsts = np.flatnonzero(np.diff(pairs[:, 0], prepend=-1))
                for t, members in zip(
                    pairs[firsts, 0].tolist(), np.split(pairs[:, 1], firsts[1:]), strict=True
                ):
                    self.held[t] = members
        held = self.held.get(task)
        parts = []
        if held is not None:
            held_offset = np.maximum(offsets[process[held]], 0)
            parts.append(held[np.lexsort((rank[held], -held_offset))])
        if self.reporting[task]:
            reporters = np.flatnonzero(offsets >= 0)
            sizes = self.process_size[reporters]
            process_starts = self.process_start[reporters]
            total = int(sizes.sum())
            shift = np.repeat(process_starts - np.cumsum(sizes) + sizes, sizes)
            members = self.members_by_process[np.arange(total) + shift]
            offset = np.repeat(offsets[reporters], sizes)
            if held is not None:
                fresh = ~np.isin(members, held)
                members, offset = members[fresh], offset[fresh]
            parts.append(members[np.lexsort((rank[members], -offset))])
        out = (
            np.concatenate(parts)
            if len(parts) > 1
            else (parts[0] if parts else np.zeros(0, dtype=np.int64))
        )
        ranked: list[int] | IntArray = out.tolist() if len(out) < _LONG else out
        self.cache[task] = ranked
        return ranked

    # ---------------------------------------------------------------- quotas
    def _count_active(self, count: int) -> None:
        if count == self.active_quota:
            self.members_with_active_capacity -= 1
            self.total_active -= count
            self.active_quota = _per_member(self.total_active, self.members_with_active_capacity)

    def _count_total(self, count: int) -> None:
        if count == self.total_quota:
            self.members_with_capacity -= 1
            self.total_tasks -= count
            self.total_quota = _per_member(self.total_tasks, self.members_with_capacity)

    def _least_loaded_previous(self, task: int, holding: bool) -> int | None:
        """``findPrevMemberWithLeastLoad``: the first candidate, replaced by a later one only when
        both its process load and its task count are lower; with ``holding``, the processes
        holding ``task`` skipped."""
        candidates = self._candidates(task)
        if not len(candidates):
            return None
        holders = self.holders[task] if holding else []
        if isinstance(candidates, list):
            state, counts, member_process = self.state, self.counts, self.member_process
            best = -1
            best_process = best_member = 0.0
            for m in candidates:
                p = member_process[m]
                if p in holders:
                    continue
                load = state[p].load  # type: ignore[union-attr]
                count = counts[m]
                if best < 0 or (load < best_process and count < best_member):
                    best, best_process, best_member = m, load, count
            return None if best < 0 else best
        processes = self.problem.member_process[candidates]
        if holders:
            keep = ~np.isin(processes, holders)
            candidates, processes = candidates[keep], processes[keep]
            if not len(candidates):
                return None
        loads = self.load_array[processes]
        counts_of = self.count_array[candidates]
        i = 0
        while True:
            better = (loads[i + 1 :] < loads[i]) & (counts_of[i + 1 :] < counts_of[i])
            k = int(better.argmax()) if len(better) else 0
            if not len(better) or not better[k]:
                return int(candidates[i])
            i += 1 + k

    def _add(self, member: int, task: int, process: _Process, count: int) -> None:
        """``addTask``: ``task`` to ``member`` (its ``count``-th task) of ``process``."""
        self.counts[member] = count
        self.count_array[member] = count
        process.task_count += 1
        process.load = process.task_count / process.capacity
        self.load_array[process.index] = process.load
        self.holders[task].append(process.index)

    def _add_direct(self, member: int, task: int) -> int:
        """``addTask`` to ``member`` itself; its process's members' queue is rebuilt later."""
        process = self.state[self.member_process[member]]
        assert process is not None
        count = self.counts[member] + 1
        self._add(member, task, process, count)
        process.by_load = None
        return count

    # ---------------------------------------------------------------- actives
    def _give_active(self, member: int, task: int) -> None:
        count = self._add_direct(member, task)
        self.active[task] = member
        self._count_active(count)
        self._count_total(count)

    def assign_active(self) -> None:
        problem = self.problem
        keys = [java_order_key(s) for s in problem.subtopologies]
        sub, number = problem.task_subtopology.tolist(), problem.task_partition.tolist()
        tasks = sorted(range(problem.n_tasks), key=lambda t: (number[t], keys[sub[t]]))
        counts, prev_active = self.counts, self.prev_active
        left = []
        for t in tasks:
            m = prev_active[t]
            if m >= 0 and counts[m] < self.active_quota:
                self._give_active(m, t)
            else:
                left.append(t)
        rest = []
        for t in left:
            least = self._least_loaded_previous(t, False)
            if least is not None and counts[least] < self.active_quota:
                self._give_active(least, t)
            else:
                rest.append(t)
        rest.sort(key=lambda t: (keys[sub[t]], number[t]))
        queue = _ProcessQueue(self.processes)
        active = self.active
        for t in rest:
            process = queue.poll()
            assert process is not None  # a group has a member
            member, count = process.add_to_least_loaded()
            self._add(member, t, process, count)
            active[t] = member
            self._count_active(count)
            self._count_total(count)
            queue.add(process)

    # ---------------------------------------------------------------- standbys
    def _give_standby(self, member: int, task: int) -> None:
        count = self._add_direct(member, task)
        self.standby.append((task, member))
        self._count_total(count)

    def _to_least_loaded(self, queue: _ProcessQueue, task: int) -> bool:
        """``assignStandbyToMemberWithLeastLoad``: the least loaded process without ``task``."""
        process = queue.poll()
        if process is None:
            return False
        found = False
        if process.index not in self.holders[task]:
            member, count = process.add_to_least_loaded()
            self._add(member, task, process, count)
            self.standby.append((task, member))
            found = True
            self._count_total(count)
        elif len(queue):
            found = self._to_least_loaded(queue, task)
        queue.add(process)
        return found

    def assign_standby(self) -> None:
        problem = self.problem
        keys = [java_order_key(s) for s in problem.subtopologies]
        sub, number = problem.task_subtopology.tolist(), problem.task_partition.tolist()
        stateful = np.flatnonzero(problem.task_stateful).tolist()
        tasks = sorted(stateful, key=lambda t: (number[t], keys[sub[t]]), reverse=True)
        counts, prev_active, member_process = self.counts, self.prev_active, self.member_process
        later: list[tuple[int, int]] = []
        for t in tasks:
            holders = self.holders[t]
            for i in range(self.standbys):
                m = prev_active[t]
                if m >= 0 and member_process[m] not in holders and counts[m] < self.total_quota:
                    self._give_standby(m, t)
                    continue
                least = self._least_loaded_previous(t, True)
                if least is not None and counts[least] < self.total_quota:
                    self._give_standby(least, t)
                    continue
                later.append((t, self.standbys - i))
                break
        later.sort(key=lambda x: (keys[sub[x[0]]], number[x[0]]), reverse=True)
        queue = _ProcessQueue(self.processes)
        for t, remaining in later:
            for _ in range(remaining):
                if not self._to_least_loaded(queue, t):
                    break  # Kafka: "not enough available capacity" (a warning)

    def answer(self) -> StreamsAssignment:
        return StreamsAssignment.of(np.asarray(self.active, dtype=np.int64), self.standby)


def _per_member(tasks: int, members: int) -> int:
    """``computeTasksPerMember``: ``ceil(tasks / members)``, 0 without members."""
    return 0 if members == 0 else -(-tasks // members)


def assign(problem: StreamsProblem) -> Result:
    """Kafka 4.4's streams-group ``StickyTaskAssignor`` on ``problem`` (module docstring)."""
    state = _Sticky(problem)
    state.assign_active()
    if state.standbys > 0:
        state.assign_standby()
    return Result(problem, STRATEGY, state.answer(), objective_name="streams")
