"""Streams groups (KIP-1071, KIP-441): tasks, processes, their state, and the ``streams`` objective.

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

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from math import lcm
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from problems import checks
from problems.errors import ProblemError

if TYPE_CHECKING:
    from problems.evaluate import Evaluation

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


def _frozen(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    array.setflags(write=False)
    return array


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
        return _frozen(start)

    @property
    def n_tasks(self) -> int:
        return int(self.task_start[-1])

    @cached_property
    def task_subtopology(self) -> IntArray:
        """Each task's subtopology index (``int64``, length T)."""
        return _frozen(
            np.repeat(np.arange(self.num_subtopologies, dtype=np.int64), self.partitions)
        )

    @cached_property
    def task_partition(self) -> IntArray:
        """Each task's partition number (``int64``, length T)."""
        return _frozen(
            np.arange(self.n_tasks, dtype=np.int64) - self.task_start[self.task_subtopology]
        )

    @cached_property
    def task_stateful(self) -> BoolArray:
        """Whether each task belongs to a stateful subtopology (``bool``, length T)."""
        return _frozen(self.stateful[self.task_subtopology])

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
            _frozen(np.flatnonzero(self.member_process == p).astype(np.int64))
            for p in range(self.num_processes)
        )

    @cached_property
    def process_threads(self) -> IntArray:
        """Stream threads of each process (the sum over its members)."""
        return _frozen(
            np.bincount(
                self.member_process, weights=self.threads, minlength=self.num_processes
            ).astype(np.int64)
        )

    @cached_property
    def member_lag(self) -> IntArray:
        """``(members, tasks)``: each member's process's lag (:attr:`process_lag` by member)."""
        return _frozen(self.process_lag[self.member_process])

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
        return _frozen(cost)

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


# ================================================================= parsing
def _lags_list(value: Any, field: str, count: int) -> IntArray:
    checks.expect(value, list, field, "a list of lags, one per partition number")
    if len(value) != count:
        raise ProblemError(
            field, f"must have {count} lags (one per partition number), got {len(value)}"
        )
    return checks.integers(value, checks.items(field), low=NO_STATE, high=checks.INT64_MAX)


def _task_lists(
    doc: Any,
    field: str,
    index: dict[str, int],
    partitions: IntArray,
    start: IntArray,
) -> list[int]:
    """A member's ``{subtopology: [partition numbers]}`` as task ids (each list without repeats)."""
    if doc is None:
        return []
    checks.expect(doc, dict, field, "an object of subtopology -> partition number list")
    tasks: list[int] = []
    for name, numbers in doc.items():
        where = f"{field}.{name}"
        s = index.get(name)
        if s is None:
            raise ProblemError(where, "subtopology does not exist")
        checks.expect(numbers, list, where, "a list of partition numbers")
        values = checks.integers(numbers, checks.items(where))
        bad = np.flatnonzero(values >= partitions[s])
        if len(bad):
            i = int(bad[0])
            raise ProblemError(
                f"{where}[{i}]",
                f"task {name}_{int(values[i])} does not exist ({name} has {int(partitions[s])} partitions)",
            )
        if len(np.unique(values)) != len(values):
            seen: set[int] = set()
            for i, v in enumerate(values.tolist()):
                if v in seen:
                    raise ProblemError(f"{where}[{i}]", f"partition {v} is given twice")
                seen.add(v)
        tasks += (values + start[s]).tolist()
    return tasks


def _parse_subtopologies(
    doc: Any,
) -> tuple[tuple[str, ...], IntArray, BoolArray, list[int], list[str], list[tuple[str, ...]]]:
    subs = doc.get("subtopologies")
    if subs is None:
        raise ProblemError(
            "subtopologies", "missing (an object of subtopology id -> {partitions, stateful})"
        )
    checks.expect(
        subs, dict, "subtopologies", "an object of subtopology id -> {partitions, stateful}"
    )
    names = tuple(subs)
    checks.strings(list(names), lambda i: "subtopologies")
    counts: list[int] = []
    stateful: list[bool] = []
    source_task: list[int] = []
    source_topic: list[str] = []
    source_racks: list[tuple[str, ...]] = []
    total = 0
    for name in names:
        field = f"subtopologies.{name}"
        sub = checks.expect(subs[name], dict, field, "an object {partitions, stateful}")
        unknown = sub.keys() - SUBTOPOLOGY_FIELDS
        if unknown:
            raise ProblemError(f"{field}.{sorted(map(str, unknown))[0]}", "unknown field")
        if "partitions" not in sub:
            raise ProblemError(f"{field}.partitions", "missing (the number of tasks)")
        count = checks.integer(sub["partitions"], f"{field}.partitions")
        checks.at_most(total + count, checks.MAX_PARTITIONS, "subtopologies", "tasks in all")
        flag = sub.get("stateful", False)
        checks.expect(flag, bool, f"{field}.stateful", "true or false")
        racks = sub.get("partition_racks")
        if racks is not None:
            checks.expect(
                racks,
                dict,
                f"{field}.partition_racks",
                "an object of source topic -> racks per partition",
            )
            for topic, lists in racks.items():
                where = f"{field}.partition_racks.{topic}"
                checks.string(topic, f"{field}.partition_racks")
                checks.expect(lists, list, where, "a list of rack lists, one per partition")
                if len(lists) > count:
                    raise ProblemError(
                        where, f"has {len(lists)} partitions, more than the subtopology's {count}"
                    )
                for k, rack_list in enumerate(lists):
                    checks.expect(rack_list, list, f"{where}[{k}]", "a list of rack names")
                    checks.strings(rack_list, checks.items(f"{where}[{k}]"))
                    source_task.append(total + k)
                    source_topic.append(topic)
                    source_racks.append(tuple(rack_list))
        counts.append(count)
        stateful.append(flag)
        total += count
    return (
        names,
        np.array(counts, dtype=np.int64),
        np.array(stateful, dtype=bool),
        source_task,
        source_topic,
        source_racks,
    )


def _parse_configs(doc: Any) -> StreamsConfigs:
    configs = doc.get("configs")
    if configs is None:
        return StreamsConfigs()
    checks.expect(configs, dict, "configs", "an object of config name -> value")
    known = {f for f in StreamsConfigs.__dataclass_fields__}
    unknown = configs.keys() - known
    if unknown:
        raise ProblemError(
            f"configs.{sorted(map(str, unknown))[0]}",
            f"unknown config (known: {', '.join(sorted(known))})",
        )
    values: dict[str, Any] = {}
    if configs.get("num_standby_replicas") is not None:
        values["num_standby_replicas"] = checks.integer(
            configs["num_standby_replicas"], "configs.num_standby_replicas"
        )
    if configs.get("acceptable_recovery_lag") is not None:
        values["acceptable_recovery_lag"] = checks.integer(
            configs["acceptable_recovery_lag"],
            "configs.acceptable_recovery_lag",
            high=checks.INT64_MAX,
        )
    if configs.get("max_warmup_replicas") is not None:
        values["max_warmup_replicas"] = checks.integer(
            configs["max_warmup_replicas"], "configs.max_warmup_replicas", low=1
        )
    strategy = configs.get("rack_aware_assignment_strategy")
    if strategy is not None:
        if strategy not in RACK_STRATEGIES or type(strategy) is not str:
            got = repr(strategy) if type(strategy) is str else f"a {type(strategy).__name__}"
            raise ProblemError(
                "configs.rack_aware_assignment_strategy",
                f"must be one of {', '.join(RACK_STRATEGIES)}, got {got}",
            )
        values["rack_aware_assignment_strategy"] = strategy
    tags = configs.get("rack_aware_assignment_tags")
    if tags is not None:
        checks.expect(tags, list, "configs.rack_aware_assignment_tags", "a list of client tag keys")
        checks.strings(tags, checks.items("configs.rack_aware_assignment_tags"))
        values["rack_aware_assignment_tags"] = tuple(tags)
    for name in ("traffic_cost", "non_overlap_cost"):
        if configs.get(name) is not None:
            values[name] = checks.integer(configs[name], f"configs.{name}")
    return StreamsConfigs(**values)


class _Reader:
    """The members read one by one into lists (checked, with the field of every problem)."""

    def __init__(self, names: tuple[str, ...], partitions: IntArray, stateful: BoolArray) -> None:
        self.names = names
        self.index = {s: i for i, s in enumerate(names)}
        self.partitions = partitions
        self.stateful = stateful
        self.start = np.zeros(len(names) + 1, dtype=np.int64)
        np.cumsum(partitions, out=self.start[1:])
        self.ids: list[str] = []
        self.seen: dict[str, int] = {}
        self.process: list[int] = []
        self.processes: dict[str, int] = {}
        self.threads: list[int] = []
        self.racks: list[str | None] = []
        self.tags: list[Mapping[str, str]] = []
        self.process_tags: dict[int, tuple[int, dict[str, str]]] = {}
        self.claims: dict[str, tuple[list[int], list[int]]] = {k: ([], []) for k in TASK_KINDS}
        self.active_owner: dict[int, int] = {}
        # process -> subtopology -> (member position, lags)
        self.lags: dict[int, dict[int, tuple[int, IntArray]]] = {}

    def read(self, i: int, member: Any) -> None:
        field = f"members[{i}]"
        checks.expect(member, dict, field, "an object")
        unknown = member.keys() - MEMBER_FIELDS
        if unknown:
            raise ProblemError(f"{field}.{sorted(map(str, unknown))[0]}", "unknown field")
        if "id" not in member:
            raise ProblemError(f"{field}.id", "missing")
        member_id = checks.string(member["id"], f"{field}.id")
        if member_id in self.seen:
            raise ProblemError(
                f"{field}.id",
                f"duplicate member id {member_id!r} (also members[{self.seen[member_id]}])",
            )
        self.seen[member_id] = i
        self.ids.append(member_id)
        if "process" not in member:
            raise ProblemError(f"{field}.process", "missing (the member's process id)")
        process_id = checks.string(member["process"], f"{field}.process")
        p = self.processes.setdefault(process_id, len(self.processes))
        self.process.append(p)
        threads = member.get("threads")
        self.threads.append(
            1 if threads is None else checks.integer(threads, f"{field}.threads", low=1)
        )
        rack = member.get("rack")
        self.racks.append(None if rack is None else checks.string(rack, f"{field}.rack"))
        self._tags(member.get("client_tags"), f"{field}.client_tags", p, i)
        held: dict[int, str] = {}
        for kind in TASK_KINDS:
            tasks = _task_lists(
                member.get(kind), f"{field}.{kind}", self.index, self.partitions, self.start
            )
            for t in tasks:
                where = f"{field}.{kind}"
                if t in held:
                    raise ProblemError(
                        where, f"task {self._name(t)} is also in the member's {held[t]}"
                    )
                held[t] = kind
                if kind != "active" and not self._task_stateful(t):
                    raise ProblemError(
                        where,
                        f"task {self._name(t)} is of a stateless subtopology (no {kind} replicas)",
                    )
                if kind == "active":
                    if t in self.active_owner:
                        other = self.active_owner[t]
                        raise ProblemError(
                            where,
                            f"task {self._name(t)} is also active on members[{other}] ({self.ids[other]!r})",
                        )
                    self.active_owner[t] = i
                self.claims[kind][0].append(t)
                self.claims[kind][1].append(i)
        self._lags(member.get("lags"), f"{field}.lags", p, i)

    def _task_stateful(self, t: int) -> bool:
        s = int(np.searchsorted(self.start, t, side="right")) - 1
        return bool(self.stateful[s])

    def _name(self, t: int) -> str:
        s = int(np.searchsorted(self.start, t, side="right")) - 1
        return f"{self.names[s]}_{t - int(self.start[s])}"

    def _tags(self, doc: Any, field: str, p: int, i: int) -> None:
        tags: dict[str, str] = {}
        if doc is not None:
            checks.expect(doc, dict, field, "an object of tag key -> value")
            for key, value in doc.items():
                checks.string(key, field)
                tags[key] = checks.string(value, f"{field}.{key}")
        first = self.process_tags.setdefault(p, (i, tags))
        if first[1] != tags:
            raise ProblemError(
                field,
                f"differs from members[{first[0]}], of the same process (client tags belong to the process)",
            )
        self.tags.append(MappingProxyType(tags))

    def _lags(self, doc: Any, field: str, p: int, i: int) -> None:
        if doc is None:
            return
        checks.expect(
            doc, dict, field, "an object of stateful subtopology -> lag per partition number"
        )
        for name, values in doc.items():
            where = f"{field}.{name}"
            s = self.index.get(name)
            if s is None:
                raise ProblemError(where, "subtopology does not exist")
            if not self.stateful[s]:
                raise ProblemError(
                    where, f"{name} is stateless: its tasks have no state, so no lag"
                )
            lags = _lags_list(values, where, int(self.partitions[s]))
            known = self.lags.setdefault(p, {})
            if s in known and not np.array_equal(known[s][1], lags):
                j = known[s][0]
                k = int(np.flatnonzero(known[s][1] != lags)[0])
                raise ProblemError(
                    f"{where}[{k}]",
                    f"lag {int(lags[k])} differs from members[{j}]'s {int(known[s][1][k])}, "
                    "of the same process (members of one process share its state)",
                )
            known.setdefault(s, (i, lags))


def parse_streams(doc: dict[str, Any]) -> StreamsProblem:
    """Build a :class:`StreamsProblem` from a parsed ``streams-group`` document (errors name no file)."""
    unknown = doc.keys() - DOCUMENT_FIELDS
    if unknown:
        raise ProblemError(sorted(map(str, unknown))[0], "unknown field in a streams group")
    names, partitions, stateful, source_task, source_topic, source_racks = _parse_subtopologies(doc)
    configs = _parse_configs(doc)
    members = doc.get("members")
    if members is None:
        raise ProblemError("members", "missing (a list of members)")
    checks.expect(members, list, "members", "a list of members")
    if not members:
        raise ProblemError("members", "must list at least one member")
    reader = _Reader(names, partitions, stateful)
    n_tasks = int(partitions.sum())
    checks.at_most(
        len(members) * max(n_tasks, 1), checks.MAX_MEMBER_TOPICS, "members", "members x tasks"
    )
    for i, member in enumerate(members):
        reader.read(i, member)
    lag = np.full((len(reader.processes), n_tasks), NO_STATE, dtype=np.int64)
    for p, by_sub in reader.lags.items():
        for s, (_, values) in by_sub.items():
            lag[p, reader.start[s] : reader.start[s + 1]] = values
    task_stateful = np.repeat(stateful, partitions)
    lag[:, ~task_stateful] = 0
    _check_objective_range(lag, reader.threads, n_tasks)
    prev_active = np.full(n_tasks, -1, dtype=np.int64)
    tasks, owners = reader.claims["active"]
    prev_active[np.array(tasks, dtype=np.int64)] = np.array(owners, dtype=np.int64)
    return StreamsProblem(
        subtopologies=names,
        partitions=_frozen(partitions),
        stateful=_frozen(stateful),
        members=tuple(reader.ids),
        member_process=_frozen(np.array(reader.process, dtype=np.int64)),
        processes=tuple(reader.processes),
        threads=_frozen(np.array(reader.threads, dtype=np.int64)),
        racks=tuple(reader.racks),
        client_tags=tuple(reader.tags),
        prev_active=_frozen(prev_active),
        prev_standby=_frozen(pairs(*reader.claims["standby"])),
        prev_warmup=_frozen(pairs(*reader.claims["warmup"])),
        process_lag=_frozen(lag),
        configs=configs,
        source_task=_frozen(np.array(source_task, dtype=np.int64)),
        source_topic=tuple(source_topic),
        source_racks=tuple(source_racks),
    )


def load_streams_problem(source: Any) -> StreamsProblem:
    """:func:`problems.load_problem` for a streams-group document (a path, JSON text or dict).

    Raises
    ------
    ProblemError
        The document is malformed, or is not a streams group.
    """
    from problems.io import load_problem

    problem = load_problem(source)
    if not isinstance(problem, StreamsProblem):
        raise ProblemError("kind", f"must be {KIND!r} (this is another kind of problem)")
    return problem


def streams_problem_to_json(problem: StreamsProblem) -> dict[str, Any]:
    """The document of ``problem`` (the inverse of :func:`parse_streams`)."""
    subs: dict[str, Any] = {}
    for s, name in enumerate(problem.subtopologies):
        sub: dict[str, Any] = {
            "partitions": int(problem.partitions[s]),
            "stateful": bool(problem.stateful[s]),
        }
        subs[name] = sub
    for t, topic, racks in zip(
        problem.source_task.tolist(), problem.source_topic, problem.source_racks
    ):
        sub = subs[problem.subtopologies[int(problem.task_subtopology[t])]]
        sub.setdefault("partition_racks", {}).setdefault(topic, []).append(list(racks))
    members: list[dict[str, Any]] = []
    shown_lags: set[int] = set()
    for m, member_id in enumerate(problem.members):
        p = int(problem.member_process[m])
        member: dict[str, Any] = {"id": member_id, "process": problem.processes[p]}
        if problem.threads[m] != 1:
            member["threads"] = int(problem.threads[m])
        if problem.racks[m] is not None:
            member["rack"] = problem.racks[m]
        if problem.client_tags[m]:
            member["client_tags"] = dict(problem.client_tags[m])
        active = np.flatnonzero(problem.prev_active == m)
        for kind, tasks in (
            ("active", active),
            ("standby", problem.member_tasks(problem.prev_standby, m)),
            ("warmup", problem.member_tasks(problem.prev_warmup, m)),
        ):
            if len(tasks):
                member[kind] = _by_subtopology(problem, tasks)
        if p not in shown_lags:
            shown_lags.add(p)
            lags = {
                name: problem.process_lag[
                    p, problem.task_start[s] : problem.task_start[s + 1]
                ].tolist()
                for s, name in enumerate(problem.subtopologies)
                if problem.stateful[s]
                and (
                    problem.process_lag[p, problem.task_start[s] : problem.task_start[s + 1]]
                    != NO_STATE
                ).any()
            }
            if lags:
                member["lags"] = lags
        members.append(member)
    doc: dict[str, Any] = {"kind": KIND, "subtopologies": subs, "members": members}
    configs = problem.configs
    if configs != StreamsConfigs():
        defaults = StreamsConfigs()
        doc["configs"] = {
            name: list(value) if isinstance(value, tuple) else value
            for name in StreamsConfigs.__dataclass_fields__
            if (value := getattr(configs, name)) != getattr(defaults, name)
        }
    return doc


# ================================================================= answers
def _by_subtopology(problem: StreamsProblem, tasks: IntArray) -> dict[str, list[int]]:
    """Task ids as ``{subtopology: [partition numbers ascending]}``, subtopologies in problem order."""
    out: dict[str, list[int]] = {}
    for t in np.sort(tasks).tolist():
        out.setdefault(problem.subtopologies[int(problem.task_subtopology[t])], []).append(
            int(problem.task_partition[t])
        )
    return out


def streams_assignment_json(
    problem: StreamsProblem, answer: StreamsAssignment
) -> dict[str, dict[str, dict[str, list[int]]]]:
    """``{member: {"active": {s: [numbers]}, "standby": {...}, "warmup": {...}}}``: every member,
    in problem order, with all three kinds (possibly ``{}``); subtopologies in problem order, each
    list ascending, subtopologies with nothing omitted."""
    out: dict[str, dict[str, dict[str, list[int]]]] = {
        m: {"active": {}, "standby": {}, "warmup": {}} for m in problem.members
    }
    rows = [
        ("active", np.flatnonzero(answer.active >= 0), answer.active[answer.active >= 0]),
        ("standby", answer.standby[:, 0], answer.standby[:, 1]),
        ("warmup", answer.warmup[:, 0], answer.warmup[:, 1]),
    ]
    sub = problem.task_subtopology
    number = problem.task_partition
    for kind, tasks, members in rows:
        order = np.lexsort((tasks, members))
        for t, m in zip(np.asarray(tasks)[order].tolist(), np.asarray(members)[order].tolist()):
            out[problem.members[m]][kind].setdefault(problem.subtopologies[int(sub[t])], []).append(
                int(number[t])
            )
    return out


def streams_answer_from_json(
    problem: StreamsProblem, doc: Any, source: str = "<assignment>"
) -> StreamsAssignment:
    """Parse an assignment JSON (:func:`streams_assignment_json`'s shape; kinds may be omitted)
    into a :class:`StreamsAssignment`.  An active task given to two members is an error; replica
    pairs are kept as given (the evaluator judges them).

    Raises
    ------
    ProblemError
        Unknown member, kind or subtopology, a task that does not exist, or one given twice to a
        member in one kind.
    """
    if not isinstance(doc, dict):
        raise ProblemError(
            "", "an assignment must be an object of member -> {active, standby, warmup}", source
        )
    active = np.full(problem.n_tasks, -1, dtype=np.int64)
    found: dict[str, tuple[list[int], list[int]]] = {"standby": ([], []), "warmup": ([], [])}
    for member, kinds in doc.items():
        m = problem.member_index.get(member)
        if m is None:
            raise ProblemError(member, "not a member of the group", source)
        if not isinstance(kinds, dict):
            raise ProblemError(
                member, "must be an object of kind (active, standby, warmup) -> tasks", source
            )
        for kind, subs in kinds.items():
            if kind not in TASK_KINDS:
                raise ProblemError(
                    f"{member}.{kind}", "not a kind of task (active, standby, warmup)", source
                )
            try:
                tasks = _task_lists(
                    subs,
                    f"{member}.{kind}",
                    problem.subtopology_index,
                    problem.partitions,
                    problem.task_start,
                )
            except ProblemError as error:
                raise error.with_source(source) from None
            if kind == "active":
                for t in tasks:
                    if active[t] >= 0:
                        raise ProblemError(
                            f"{member}.active",
                            f"task {problem.task_name(t)} is also active on {problem.members[int(active[t])]}",
                            source,
                        )
                    active[t] = m
            else:
                found[kind][0].extend(tasks)
                found[kind][1].extend([m] * len(tasks))
    return StreamsAssignment(active, pairs(*found["standby"]), pairs(*found["warmup"]))


# ================================================================= evaluation
def _examples(hits: npt.NDArray[Any], describe: Callable[[int], str], limit: int = 3) -> list[str]:
    lines = [describe(int(i)) for i in hits[:limit]]
    if len(hits) > limit:
        lines.append(f"... and {len(hits) - limit} more")
    return lines


def streams_shape_problem(problem: StreamsProblem, answer: Any) -> str | None:
    """Why ``answer`` is not a :class:`StreamsAssignment` of ``problem`` at all (``None``: it is)."""
    if not isinstance(answer, StreamsAssignment):
        return f"a streams answer is a StreamsAssignment, got {type(answer).__name__}"
    if answer.active.shape != (problem.n_tasks,):
        return (
            f"answer has {answer.active.size} active owners, the group has {problem.n_tasks} tasks"
        )
    for kind, replicas in (("standby", answer.standby), ("warmup", answer.warmup)):
        if replicas.ndim != 2 or replicas.shape[1] != 2:
            return f"{kind} replicas must be (task, member) pairs of shape (K, 2), got {replicas.shape}"
        if len(replicas) and (
            replicas[:, 0].min() < 0
            or replicas[:, 0].max() >= problem.n_tasks
            or replicas[:, 1].min() < 0
            or replicas[:, 1].max() >= problem.num_members
        ):
            return f"{kind} replicas hold tasks or members that do not exist"
    if np.any((answer.active < -1) | (answer.active >= problem.num_members)):
        return "active owners hold positions that are not members"
    return None


def required_standbys(problem: StreamsProblem) -> IntArray:
    """The standby replicas each task must have: ``min(num_standby_replicas, processes - 1)`` for
    a task of a stateful subtopology (one per process besides the active's, as many as
    configured), none for a stateless one.  Kafka's assignors place that many whenever a process
    without a copy of the task is left, which this count guarantees; fewer would cost availability
    that no level of the objective measures (a standby's only cost is its balance, level 3)."""
    per_task = min(problem.configs.num_standby_replicas, max(problem.num_processes - 1, 0))
    return np.where(problem.task_stateful, per_task, 0).astype(np.int64)


def streams_validity(problem: StreamsProblem, answer: StreamsAssignment) -> list[str]:
    """The hard constraints of the ``streams`` objective (one line per broken kind, a few examples)."""
    violations: list[str] = []
    name = problem.task_name
    violations += _examples(
        np.flatnonzero(answer.active < 0), lambda t: f"task {name(t)} has no active member"
    )
    # copies of each task per process: active, standbys and warm-ups together
    assigned = np.flatnonzero(answer.active >= 0)
    copy_task = np.concatenate([assigned, answer.standby[:, 0], answer.warmup[:, 0]])
    copy_member = np.concatenate(
        [answer.active[assigned], answer.standby[:, 1], answer.warmup[:, 1]]
    )
    copy_process = problem.member_process[copy_member] if len(copy_member) else copy_member
    keys = copy_task * max(problem.num_processes, 1) + copy_process
    values, counts = np.unique(keys, return_counts=True)
    twice = values[counts > 1]
    violations += _examples(
        twice,
        lambda k: (
            f"process {problem.processes[k % max(problem.num_processes, 1)]} holds task "
            f"{name(k // max(problem.num_processes, 1))} more than once (active, standby, warm-up)"
        ),
    )
    for kind, replicas in (("standby", answer.standby), ("warm-up", answer.warmup)):
        stateless = (
            np.flatnonzero(~problem.task_stateful[replicas[:, 0]])
            if len(replicas)
            else replicas[:0, 0]
        )

        def replica(i: int, r: IntArray = replicas, k: str = kind) -> str:
            return (
                f"task {name(int(r[i, 0]))} of a stateless subtopology has a {k} replica on "
                f"{problem.members[int(r[i, 1])]}"
            )

        violations += _examples(stateless, replica)
    standbys = np.bincount(answer.standby[:, 0], minlength=problem.n_tasks)
    required = required_standbys(problem)
    violations += _examples(
        np.flatnonzero(standbys != required),
        lambda t: (
            f"task {name(t)} has {int(standbys[t])} standby replicas, not "
            f"min(num_standby_replicas, processes - 1) = {int(required[t])}"
        ),
    )
    warmups = len(answer.warmup)
    if warmups > problem.configs.max_warmup_replicas:
        violations.append(
            f"{warmups} warm-up replicas, more than max_warmup_replicas = {problem.configs.max_warmup_replicas}"
        )
    return violations


#: Every level of the ``streams`` objective stays within this many (integers exact in a double):
#: a document whose levels could pass it is refused when it is read.
MAX_LEVEL = 2**53


def _check_objective_range(lag: IntArray, threads: list[int], n_tasks: int) -> None:
    """Refuse a document whose objective could leave :data:`MAX_LEVEL`: the largest restore cost
    (each task's largest lag, summed over the tasks) and the balance levels' ladders (the lcm of
    the thread counts x tasks^2 x members)."""
    largest = sum(int(v) for v in lag.max(axis=0, initial=0).tolist()) if lag.size else 0
    if largest > MAX_LEVEL:
        raise ProblemError(
            "members",
            f"lags: each task's largest lag summed over the tasks is {largest:,}, above "
            f"2**53 = {MAX_LEVEL:,}, the range the streams objective is computed in",
        )
    scale = lcm(*set(threads)) if threads else 1
    if scale * n_tasks * n_tasks * len(threads) > MAX_LEVEL:
        raise ProblemError(
            "members",
            f"threads: the lcm of the thread counts ({scale:,}) x tasks^2 x members is above "
            f"2**53 = {MAX_LEVEL:,}, the range the streams objective is computed in",
        )


def _weighted_squares(counts: IntArray, threads: IntArray) -> int:
    """``sum(L * c**2 / threads)`` with ``L`` the lcm of the thread counts (exact integers)."""
    if len(counts) == 0:
        return 0
    scale = lcm(*{int(t) for t in threads.tolist()})
    return sum(scale // t * c * c for c, t in zip(counts.tolist(), threads.tolist()))


def streams_levels(problem: StreamsProblem, answer: StreamsAssignment) -> tuple[int, ...]:
    """The levels of :data:`STREAMS_LEVELS` of a well-shaped answer (docs/strategies/streams.md)."""
    assigned = np.flatnonzero(answer.active >= 0)
    owner = answer.active[assigned]
    process = problem.member_process[owner]
    restore = int(problem.restore_cost[process, assigned].sum()) if len(assigned) else 0
    actives = np.bincount(owner, minlength=problem.num_members).astype(np.int64)
    standbys = np.bincount(answer.standby[:, 1], minlength=problem.num_members).astype(np.int64)
    traffic = cross_rack_traffic(problem, answer)
    prev = problem.prev_active
    had = prev >= 0
    active_moves = int(np.count_nonzero(answer.active[had] != prev[had]))
    # new standby copies: pairs whose member held the task in no role before
    width = max(problem.num_members, 1)
    before = np.concatenate(
        [
            np.flatnonzero(had) * width + prev[had],
            problem.prev_standby[:, 0] * width + problem.prev_standby[:, 1],
            problem.prev_warmup[:, 0] * width + problem.prev_warmup[:, 1],
        ]
    )
    now = answer.standby[:, 0] * width + answer.standby[:, 1]
    standby_moves = int(np.count_nonzero(~np.isin(now, before)))
    return (
        restore,
        _weighted_squares(actives, problem.threads),
        _weighted_squares(standbys, problem.threads),
        traffic,
        active_moves,
        standby_moves,
    )


def cross_rack_traffic(problem: StreamsProblem, answer: StreamsAssignment) -> int:
    """KIP-925's cross-rack traffic of the active tasks: source partitions (with known replica
    racks) of a task whose active member has a rack holding none of the partition's replicas.
    A partition listed with no racks has no known replica racks: it never counts (Kafka computes
    no traffic cost for it: its rack-aware assignor is not enabled then)."""
    if not problem.has_racks:
        return 0
    owners = answer.active[problem.source_task]
    total = 0
    for owner, racks in zip(owners.tolist(), problem.source_racks):
        rack = problem.racks[owner] if owner >= 0 else None
        if rack is not None and racks and rack not in racks:
            total += 1
    return total


def evaluate_streams(problem: StreamsProblem, answer: Any) -> Evaluation:
    """Check ``answer`` against the ``streams`` objective's hard constraints and score it.

    An answer of the wrong shape is invalid with no levels; an answer breaking a hard constraint
    is invalid and still scored (so that a report can show it).
    """
    from problems.evaluate import Evaluation

    shape = streams_shape_problem(problem, answer)
    if shape is not None:
        return Evaluation(False, (shape,), (), STREAMS_LEVELS)
    violations = streams_validity(problem, answer)
    return Evaluation(
        not violations, tuple(violations), streams_levels(problem, answer), STREAMS_LEVELS
    )
