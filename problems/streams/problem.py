"""Streams groups (KIP-1071, KIP-441): tasks, processes, their state and an answer's arrays.

A streams group assigns *tasks*, not partitions.  A subtopology with ``partitions`` = k has the
tasks ``(subtopology, 0) .. (subtopology, k - 1)``; :class:`StreamsProblem` numbers every task of
the group once (``0 .. n_tasks - 1``, subtopologies in document order, then partition number) and
holds members, processes, the previous assignment and the processes' lags as integer arrays.
An answer is a :class:`StreamsAssignment`: the member of each active task, and the
``(task, member)`` pairs of standby and warm-up replicas.  :func:`evaluate_streams` checks an
answer's hard constraints and scores the levels of :data:`STREAMS_LEVELS`; the levels and why they
are what they are: docs/strategies/streams.md; the document format: docs/formats.md.

Bad documents raise :class:`~problems.errors.ProblemError` naming the field (one line).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import numpy.typing as npt

from problems.arrays import frozen

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: The ``kind`` of a streams-group document.
KIND = "streams-group"
#: The levels of the ``streams`` objective, in lexicographic order.
STREAMS_LEVELS = (
    "restore_cost",
    "sum_sq_actives",
    "sum_sq_standbys",
    "cross_rack_traffic",
    "active_moves",
    "standby_moves",
)
#: ``rack.aware.assignment.strategy`` values of Kafka Streams (KIP-925).
RACK_STRATEGIES = ("none", "min_traffic", "balance_subtopology")
#: ``lags`` value of a task whose state the process does not have.
NO_STATE = -1

DOCUMENT_FIELDS = frozenset({"kind", "subtopologies", "members", "configs"})
SUBTOPOLOGY_FIELDS = frozenset({"partitions", "stateful", "partition_racks"})
MEMBER_FIELDS = frozenset(
    {"id", "process", "threads", "rack", "client_tags", "active", "standby", "warmup", "lags"}
)
TASK_KINDS = ("active", "standby", "warmup")


@dataclass(frozen=True)
class StreamsConfigs:
    """The assignment configs of a streams group (Kafka Streams' names, ``.`` as ``_``).

    Attributes
    ----------
    num_standby_replicas
        ``num.standby.replicas`` (Kafka's default 0).
    acceptable_recovery_lag
        ``acceptable.recovery.lag`` (default 10000): a process whose lag on a task is at most
        this is caught up on it (KIP-441).
    max_warmup_replicas
        ``max.warmup.replicas`` (default 2): warm-up replicas in the whole group at once.
    rack_aware_assignment_strategy
        ``rack.aware.assignment.strategy`` (KIP-925): ``none`` (default), ``min_traffic`` or
        ``balance_subtopology``.
    rack_aware_assignment_tags
        ``rack.aware.assignment.tags`` (KIP-708): the client tags standbys are spread over.
    traffic_cost, non_overlap_cost
        ``rack.aware.assignment.traffic_cost`` and ``.non_overlap_cost`` (KIP-925); ``None``
        (Kafka's default, null): the assignor's own default for the strategy.
    """

    num_standby_replicas: int = 0
    acceptable_recovery_lag: int = 10_000
    max_warmup_replicas: int = 2
    rack_aware_assignment_strategy: str = "none"
    rack_aware_assignment_tags: tuple[str, ...] = ()
    traffic_cost: int | None = None
    non_overlap_cost: int | None = None


def pairs(tasks: npt.ArrayLike, members: npt.ArrayLike) -> IntArray:
    """``(task, member)`` pairs as an ``int64`` array of shape ``(K, 2)``, sorted by task then
    member, distinct: how :class:`StreamsProblem` and :class:`StreamsAssignment` hold replicas."""
    t = np.asarray(tasks, dtype=np.int64).ravel()
    m = np.asarray(members, dtype=np.int64).ravel()
    if len(t) == 0:
        return np.zeros((0, 2), dtype=np.int64)
    return np.unique(np.stack([t, m], axis=1), axis=0).astype(np.int64)


@dataclass(frozen=True, eq=False)
class StreamsProblem:
    """A streams group: its subtopologies' tasks, members and processes, their previous
    assignment and state.  Build it with :func:`problems.load_problem`; arrays are read-only.

    Attributes
    ----------
    subtopologies
        Subtopology ids in document order; subtopology ``s`` is ``subtopologies[s]``.
    partitions
        Tasks (partition numbers) of each subtopology (``int64``, length S).
    stateful
        Whether each subtopology has state stores (``bool``, length S): only its tasks have
        standbys, warm-ups and lags.
    members
        Member ids in document order (the order the group coordinator holds them).
    member_process
        Each member's process (``int64`` index into ``processes``).
    processes
        Process ids in order of first appearance among the members.
    threads
        Each member's stream threads (``int64``, default 1; in KIP-1071 every member is one thread).
    racks
        Each member's rack (``None``: none); also :attr:`rack`.
    client_tags
        Each member's client tags (KIP-708), read-only mappings; members of a process agree.
    prev_active
        Each task's previous active member (``int64``, length T), -1 for none.
    prev_standby, prev_warmup
        The previous standby and warm-up replicas: ``(task, member)`` pairs (:func:`pairs`).
    process_lag
        ``(processes, tasks)`` ``int64``: each process's lag on each task, -1 (:data:`NO_STATE`)
        where it has no state for a stateful task, 0 for every stateless task.
    configs
        :class:`StreamsConfigs`.
    source_task, source_topic, source_racks
        KIP-925's source partitions with known replica racks (optional): source partition ``i``
        is partition ``source_task``'s number of topic ``source_topic[i]``, its replicas on the
        racks ``source_racks[i]``.  Empty when the document gives no ``partition_racks``.
    name
        The file the problem came from (for messages).
    """

    subtopologies: tuple[str, ...]
    partitions: IntArray
    stateful: BoolArray
    members: tuple[str, ...]
    member_process: IntArray
    processes: tuple[str, ...]
    threads: IntArray
    racks: tuple[str | None, ...]
    client_tags: tuple[Mapping[str, str], ...]
    prev_active: IntArray
    prev_standby: IntArray
    prev_warmup: IntArray
    process_lag: IntArray
    configs: StreamsConfigs = field(default_factory=StreamsConfigs)
    source_task: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    source_topic: tuple[str, ...] = ()
    source_racks: tuple[tuple[str, ...], ...] = ()
    name: str = "<problem>"

    kind = "streams"

    # ------------------------------------------------------------------ sizes
    @property
    def num_subtopologies(self) -> int:
        return len(self.subtopologies)

    @property
    def num_members(self) -> int:
        return len(self.members)

    @property
    def num_processes(self) -> int:
        return len(self.processes)

    @property
    def rack(self) -> tuple[str | None, ...]:
        """Each member's rack (the same as :attr:`racks`)."""
        return self.racks

    # ------------------------------------------------------------------ tasks
    @cached_property
    def task_start(self) -> IntArray:
        """Task id of each subtopology's partition 0, plus ``n_tasks`` (length S + 1)."""
        start = np.zeros(self.num_subtopologies + 1, dtype=np.int64)
        np.cumsum(self.partitions, out=start[1:])
        return frozen(start)

    @property
    def n_tasks(self) -> int:
        return int(self.task_start[-1])

    @cached_property
    def task_subtopology(self) -> IntArray:
        """Each task's subtopology index (``int64``, length T)."""
        return frozen(np.repeat(np.arange(self.num_subtopologies, dtype=np.int64), self.partitions))

    @cached_property
    def task_partition(self) -> IntArray:
        """Each task's partition number (``int64``, length T)."""
        return frozen(
            np.arange(self.n_tasks, dtype=np.int64) - self.task_start[self.task_subtopology]
        )

    @cached_property
    def task_stateful(self) -> BoolArray:
        """Whether each task belongs to a stateful subtopology (``bool``, length T)."""
        return frozen(self.stateful[self.task_subtopology])

    @property
    def tasks(self) -> list[tuple[int, int]]:
        """The flat task list: ``(subtopology index, partition number)`` by task id."""
        return list(zip(self.task_subtopology.tolist(), self.task_partition.tolist()))

    def task_id(self, subtopology: str, partition: int) -> int:
        """The task id of ``(subtopology, partition)``; ``KeyError``/``IndexError`` if none."""
        s = self.subtopology_index[subtopology]
        if not 0 <= partition < int(self.partitions[s]):
            raise IndexError(f"{subtopology} has no partition {partition}")
        return int(self.task_start[s]) + partition

    def task_name(self, task: int) -> str:
        """Kafka's name of a task: ``SUBTOPOLOGY_PARTITION`` (``TaskId.toString``)."""
        return f"{self.subtopologies[int(self.task_subtopology[task])]}_{int(self.task_partition[task])}"

    @cached_property
    def subtopology_index(self) -> dict[str, int]:
        return {s: i for i, s in enumerate(self.subtopologies)}

    @cached_property
    def member_index(self) -> dict[str, int]:
        return {m: i for i, m in enumerate(self.members)}

    @cached_property
    def process_members(self) -> tuple[IntArray, ...]:
        """Each process's members, in member order."""
        return tuple(
            frozen(np.flatnonzero(self.member_process == p).astype(np.int64))
            for p in range(self.num_processes)
        )

    @cached_property
    def process_threads(self) -> IntArray:
        """Stream threads of each process (the sum over its members)."""
        return frozen(
            np.bincount(
                self.member_process, weights=self.threads, minlength=self.num_processes
            ).astype(np.int64)
        )

    @cached_property
    def member_lag(self) -> IntArray:
        """``(members, tasks)``: each member's process's lag (:attr:`process_lag` by member)."""
        return frozen(self.process_lag[self.member_process])

    @cached_property
    def restore_cost(self) -> IntArray:
        """``(processes, tasks)``: what it costs a process to run each task active (level 1).

        The process's lag; where it has no state (-1), the task's *full restore cost*: the
        largest lag any process reports for the task (0 when none has state); 0 for stateless
        tasks.  Why: docs/strategies/streams.md.
        """
        lag = self.process_lag
        full = lag.max(axis=0, initial=0) if len(lag) else np.zeros(self.n_tasks, dtype=np.int64)
        cost = np.where(lag < 0, full[None, :], lag).astype(np.int64)
        cost[:, ~self.task_stateful] = 0
        return frozen(cost)

    @property
    def has_racks(self) -> bool:
        """Whether the document gives source partitions' replica racks (KIP-925)."""
        return len(self.source_task) > 0

    def member_tasks(self, pairs_array: IntArray, member: int) -> IntArray:
        """The tasks of ``(task, member)`` pairs held by ``member``."""
        return np.asarray(pairs_array[pairs_array[:, 1] == member, 0], dtype=np.int64)


@dataclass(frozen=True, eq=False)
class StreamsAssignment:
    """An answer to a streams group.

    Attributes
    ----------
    active
        Each task's active member (``int64``, length T; -1: not assigned, a violation).
    standby, warmup
        ``(task, member)`` pairs (:func:`pairs`: sorted, distinct; shape ``(K, 2)``).
    """

    active: IntArray
    standby: IntArray
    warmup: IntArray

    @staticmethod
    def of(
        active: npt.ArrayLike,
        standby: npt.ArrayLike | None = None,
        warmup: npt.ArrayLike | None = None,
    ) -> StreamsAssignment:
        """An answer from an active array and ``(task, member)`` pair lists (or ``(K, 2)`` arrays)."""

        def as_pairs(value: npt.ArrayLike | None) -> IntArray:
            array = np.asarray([] if value is None else value, dtype=np.int64).reshape(-1, 2)
            return pairs(array[:, 0], array[:, 1])

        return StreamsAssignment(
            np.asarray(active, dtype=np.int64).ravel().copy(), as_pairs(standby), as_pairs(warmup)
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StreamsAssignment):
            return NotImplemented
        return (
            np.array_equal(self.active, other.active)
            and np.array_equal(self.standby, other.standby)
            and np.array_equal(self.warmup, other.warmup)
        )

    __hash__ = None  # type: ignore[assignment]


def previous_assignment(problem: StreamsProblem) -> StreamsAssignment:
    """The document's previous assignment as an answer (tasks without a previous owner: -1)."""
    return StreamsAssignment(
        problem.prev_active.copy(), problem.prev_standby.copy(), problem.prev_warmup.copy()
    )


def tasks_by_subtopology(problem: StreamsProblem, tasks: IntArray) -> dict[str, list[int]]:
    """Task ids as ``{subtopology: [partition numbers ascending]}``, subtopologies in problem order."""
    out: dict[str, list[int]] = {}
    for t in np.sort(tasks).tolist():
        out.setdefault(problem.subtopologies[int(problem.task_subtopology[t])], []).append(
            int(problem.task_partition[t])
        )
    return out
