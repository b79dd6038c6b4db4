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
  (:class:`heuristics.share.JavaHashSet`, ``put`` in document order);
* processes: ``processIdToState``, a ``HashMap`` sized for the member count and filled with
  ``computeIfAbsent`` (its values fill the priority queues of steps 3 and the final standby pass);
* a process's members: ``memberToTaskCounts``, a default ``HashMap`` filled with ``put``; the
  queue of members by task count is rebuilt from it after a task is added directly;
* ``java.util.PriorityQueue``'s binary heap (:class:`JavaPriorityQueue`): ties between equally
  loaded processes or members go the way the heap's sift-up and sift-down leave them;
* candidate lists sorted stably (``List.sort``), task lists sorted by total orders.

Strings compare as Java does (UTF-16 code units: :func:`heuristics.kafka_orders.java_order_key`).
Kafka's own class is the oracle: tests/peers/test_streams_sticky_equality.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

import numpy as np

from heuristics.kafka_orders import java_order_key, java_string_hash
from heuristics.share import JavaHashSet
from problems import Result
from problems.streams import NO_STATE, IntArray, StreamsAssignment, StreamsProblem

T = TypeVar("T")

STRATEGY = "streams-sticky"


class JavaPriorityQueue(Generic[T]):
    """``java.util.PriorityQueue`` with a comparator: the same binary heap, sifted the same way
    (``offer``: sift up; ``poll``: the last element sifted down from the root), so that ties come
    out in Java's order.  ``compare(a, b)`` returns a negative, zero or positive ``int``."""

    def __init__(self, compare: Callable[[T, T], int]) -> None:
        self.compare = compare
        self.heap: list[T] = []

    def __len__(self) -> int:
        return len(self.heap)

    def add(self, item: T) -> None:
        heap, compare = self.heap, self.compare
        heap.append(item)
        k = len(heap) - 1
        while k > 0:
            parent = (k - 1) >> 1
            above = heap[parent]
            if compare(item, above) >= 0:
                break
            heap[k] = above
            k = parent
        heap[k] = item

    def poll(self) -> T | None:
        heap, compare = self.heap, self.compare
        if not heap:
            return None
        result = heap[0]
        last = heap.pop()
        n = len(heap)
        if n:
            k, half = 0, n >> 1
            while k < half:
                child = 2 * k + 1
                smaller = heap[child]
                right = child + 1
                if right < n and compare(smaller, heap[right]) > 0:
                    child = right
                    smaller = heap[child]
                if compare(last, smaller) <= 0:
                    break
                heap[k] = smaller
                k = child
            heap[k] = last
        return result


def _sign(a: float, b: float) -> int:
    return (a > b) - (a < b)


class _Process:
    """Kafka's ``ProcessState``: a process's members, their task counts and its load."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.capacity = 0
        self.task_count = 0
        self.load = float("inf")
        self.counts: dict[int, int] = {}  # member -> tasks (memberToTaskCounts)
        self.members = JavaHashSet()  # memberToTaskCounts' iteration order
        self.tasks: set[int] = set()
        self.by_load: JavaPriorityQueue[list[int]] | None = None  # [member, count] entries

    def add_member(self, member: int, member_id: str) -> None:
        self.members.add(member, java_string_hash(member_id))
        self.counts[member] = 0
        self.capacity += 1
        self.load = self.task_count / self.capacity

    def _add(self, member: int, task: int) -> int:
        self.task_count += 1
        self.tasks.add(task)
        count = self.counts[member] + 1
        self.counts[member] = count
        self.load = self.task_count / self.capacity
        return count

    def add_task(self, member: int, task: int) -> int:
        """``addTask``: to ``member``; the members' queue is rebuilt at its next use."""
        count = self._add(member, task)
        self.by_load = None
        return count

    def add_to_least_loaded(self, task: int) -> tuple[int, int]:
        """``addTaskToLeastLoadedMember``: the member chosen and its new task count."""
        if len(self.counts) == 1:
            member = next(iter(self.counts))
            return member, self._add(member, task)
        if self.by_load is None:
            self.by_load = JavaPriorityQueue(lambda a, b: (a[1] > b[1]) - (a[1] < b[1]))
            for member in self.members.order():
                self.by_load.add([member, self.counts[member]])
        entry = self.by_load.poll()
        assert entry is not None
        count = self._add(entry[0], task)
        entry[1] = count
        self.by_load.add(entry)
        return entry[0], count


def _by_load(a: _Process, b: _Process) -> int:
    return _sign(a.load, b.load)


def task_offset_sums(problem: StreamsProblem) -> tuple[IntArray, IntArray]:
    """The offset sums the document's lags stand for: ``(end, offsets)``.

    ``end[t]`` is one more than the largest lag any process reports for task ``t`` (1 when none
    does); ``offsets[p, t] = end[t] - lag`` where process ``p`` reports a lag, -1 where it has no
    state (no offset reported).  Only the order of a task's offsets matters to the assignor.
    """
    lag = problem.process_lag
    end = lag.max(axis=0, initial=0).astype(np.int64) + 1
    offsets = np.where(lag == NO_STATE, -1, end[None, :] - lag).astype(np.int64)
    offsets[:, ~problem.task_stateful] = -1
    return end, offsets


class _Sticky:
    """Kafka's ``LocalState`` and the passes over it."""

    def __init__(self, problem: StreamsProblem) -> None:
        self.problem = problem
        members = problem.members
        order = JavaHashSet()
        for m, member_id in enumerate(members):
            order.add(m, java_string_hash(member_id))
        self.member_order: list[int] = order.order()
        n_members = len(members)
        self.standbys = problem.configs.num_standby_replicas
        stateful_tasks = int(problem.partitions[problem.stateful].sum())
        self.total_active = problem.n_tasks
        self.total_tasks = problem.n_tasks + stateful_tasks * self.standbys
        self.members_with_active_capacity = n_members
        self.members_with_capacity = n_members
        self.active_quota = _per_member(self.total_active, n_members)
        self.total_quota = _per_member(self.total_tasks, n_members)

        processes = JavaHashSet(n_members)
        self.process_of: dict[int, _Process] = {}
        states: dict[int, _Process] = {}
        for m in self.member_order:
            p = int(problem.member_process[m])
            if processes.compute_if_absent(p, java_string_hash(problem.processes[p])):
                states[p] = _Process(p)
            states[p].add_member(m, members[m])
            self.process_of[m] = states[p]
        self.processes = [states[p] for p in processes.order()]

        had = np.flatnonzero(problem.prev_active >= 0)  # one previous active member per task
        self.prev_active: dict[int, int] = dict(
            zip(had.tolist(), problem.prev_active[had].tolist())
        )
        self.prev_standby = self._standby_candidates()
        self.active: dict[int, int] = {}
        self.standby: list[tuple[int, int]] = []

    def _standby_candidates(self) -> dict[int, list[int]]:
        """Each task's standby candidates, ranked (``rankStandbyCandidates``).

        Kafka appends a member's candidates member by member (its standbys with their offsets,
        then the tasks it reports offsets for and is not a standby of) and sorts each task's list
        stably: standbys first, then by offset sum descending.  Here all candidates are sorted at
        once by (task, standby first, offset descending, member order), the same lists.
        """
        problem = self.problem
        _, offsets = task_offset_sums(problem)
        rank = np.empty(problem.num_members, dtype=np.int64)
        rank[self.member_order] = np.arange(problem.num_members)
        held_task, held_member = problem.prev_standby[:, 0], problem.prev_standby[:, 1]
        held_offset = np.maximum(offsets[problem.member_process[held_member], held_task], 0)
        # every member reports its process's offsets; those of its standbys are counted above
        reported_member, reported_task = np.nonzero(offsets[problem.member_process] >= 0)
        width = max(problem.n_tasks, 1)
        fresh = ~np.isin(reported_member * width + reported_task, held_member * width + held_task)
        reported_member, reported_task = reported_member[fresh], reported_task[fresh]
        task = np.concatenate([held_task, reported_task])
        member = np.concatenate([held_member, reported_member])
        group = np.concatenate([np.zeros(len(held_task)), np.ones(len(reported_task))])
        offset = np.concatenate(
            [held_offset, offsets[problem.member_process[reported_member], reported_task]]
        )
        order = np.lexsort((rank[member], -offset, group, task))
        task, member = task[order], member[order]
        starts = np.flatnonzero(np.diff(task, prepend=-1)) if len(task) else task
        lists = np.split(member, starts[1:]) if len(task) else []
        return dict(zip(task[starts].tolist(), (m.tolist() for m in lists)))

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

    def _least_loaded_previous(self, candidates: list[int] | None, task: int | None) -> int | None:
        """``findPrevMemberWithLeastLoad``: the first candidate, replaced by a later one only when
        both its process load and its task count are lower; processes holding ``task`` skipped."""
        if not candidates:
            return None
        best: int | None = None
        best_process = best_member = float("inf")
        for m in candidates:
            process = self.process_of[m]
            if task is not None and task in process.tasks:
                continue
            load, count = process.load, float(process.counts[m])
            if best is None or (load < best_process and count < best_member):
                best, best_process, best_member = m, load, count
        return best

    # ---------------------------------------------------------------- actives
    def _give_active(self, member: int, task: int) -> None:
        count = self.process_of[member].add_task(member, task)
        self.active[task] = member
        self._count_active(count)
        self._count_total(count)

    def assign_active(self) -> None:
        problem = self.problem
        keys = [java_order_key(s) for s in problem.subtopologies]
        sub, number = problem.task_subtopology.tolist(), problem.task_partition.tolist()
        tasks = sorted(range(problem.n_tasks), key=lambda t: (number[t], keys[sub[t]]))
        left = []
        for t in tasks:
            m = self.prev_active.get(t)
            if m is not None and self.process_of[m].counts[m] < self.active_quota:
                self._give_active(m, t)
            else:
                left.append(t)
        rest = []
        for t in left:
            m = self._least_loaded_previous(self.prev_standby.get(t), None)
            if m is not None and self.process_of[m].counts[m] < self.active_quota:
                self._give_active(m, t)
            else:
                rest.append(t)
        rest.sort(key=lambda t: (keys[sub[t]], number[t]))
        queue: JavaPriorityQueue[_Process] = JavaPriorityQueue(_by_load)
        for process in self.processes:
            queue.add(process)
        for t in rest:
            process = queue.poll()
            assert process is not None  # a group has a member
            member, count = process.add_to_least_loaded(t)
            self.active[t] = member
            self._count_active(count)
            self._count_total(count)
            queue.add(process)

    # ---------------------------------------------------------------- standbys
    def _give_standby(self, member: int, task: int) -> None:
        count = self.process_of[member].add_task(member, task)
        self.standby.append((task, member))
        self._count_total(count)

    def _to_least_loaded(self, queue: JavaPriorityQueue[_Process], task: int) -> bool:
        """``assignStandbyToMemberWithLeastLoad``: the least loaded process without ``task``."""
        process = queue.poll()
        if process is None:
            return False
        found = False
        if task not in process.tasks:
            member, count = process.add_to_least_loaded(task)
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
        later: list[tuple[int, int]] = []
        for t in tasks:
            for i in range(self.standbys):
                m = self.prev_active.get(t)
                if m is not None:
                    process = self.process_of[m]
                    if t not in process.tasks and process.counts[m] < self.total_quota:
                        self._give_standby(m, t)
                        continue
                m = self._least_loaded_previous(self.prev_standby.get(t), t)
                if m is not None and self.process_of[m].counts[m] < self.total_quota:
                    self._give_standby(m, t)
                    continue
                later.append((t, self.standbys - i))
                break
        later.sort(key=lambda x: (keys[sub[x[0]]], number[x[0]]), reverse=True)
        queue: JavaPriorityQueue[_Process] = JavaPriorityQueue(_by_load)
        for process in self.processes:
            queue.add(process)
        for t, remaining in later:
            for _ in range(remaining):
                if not self._to_least_loaded(queue, t):
                    break  # Kafka: "not enough available capacity" (a warning)

    def answer(self) -> StreamsAssignment:
        active = np.full(self.problem.n_tasks, -1, dtype=np.int64)
        for t, m in self.active.items():
            active[t] = m
        return StreamsAssignment.of(active, self.standby)


def _per_member(tasks: int, members: int) -> int:
    """``computeTasksPerMember``: ``ceil(tasks / members)``, 0 without members."""
    return 0 if members == 0 else -(-tasks // members)


def assign(problem: StreamsProblem) -> Result:
    """Kafka 4.4's streams-group ``StickyTaskAssignor`` on ``problem`` (module docstring)."""
    state = _Sticky(problem)
    state.assign_active()
    if state.standbys > 0:
        state.assign_standby()
    return Result(problem, STRATEGY, state.answer())
