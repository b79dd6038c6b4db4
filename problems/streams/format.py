"""The streams-group document (docs/formats.md): read into a :class:`StreamsProblem` and written back.

Bad documents raise :class:`~problems.errors.ProblemError` naming the field (one line).
"""

from __future__ import annotations

from collections.abc import Mapping
from math import lcm
from types import MappingProxyType
from typing import Any

import numpy as np

from problems import checks
from problems.arrays import frozen
from problems.errors import ProblemError
from problems.streams.problem import (
    DOCUMENT_FIELDS,
    KIND,
    MEMBER_FIELDS,
    NO_STATE,
    RACK_STRATEGIES,
    SUBTOPOLOGY_FIELDS,
    TASK_KINDS,
    BoolArray,
    IntArray,
    StreamsConfigs,
    StreamsProblem,
    pairs,
    tasks_by_subtopology,
)


# ================================================================= parsing
def _lags_list(value: Any, field: str, count: int) -> IntArray:
    checks.expect(value, list, field, "a list of lags, one per partition number")
    if len(value) != count:
        raise ProblemError(
            field, f"must have {count} lags (one per partition number), got {len(value)}"
        )
    return checks.integers(value, checks.items(field), low=NO_STATE, high=checks.INT64_MAX)


def task_lists(
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
        checks.known_fields(sub, SUBTOPOLOGY_FIELDS, field)
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
        checks.known_fields(member, MEMBER_FIELDS, field)
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
            tasks = task_lists(
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
        partitions=frozen(partitions),
        stateful=frozen(stateful),
        members=tuple(reader.ids),
        member_process=frozen(np.array(reader.process, dtype=np.int64)),
        processes=tuple(reader.processes),
        threads=frozen(np.array(reader.threads, dtype=np.int64)),
        racks=tuple(reader.racks),
        client_tags=tuple(reader.tags),
        prev_active=frozen(prev_active),
        prev_standby=frozen(pairs(*reader.claims["standby"])),
        prev_warmup=frozen(pairs(*reader.claims["warmup"])),
        process_lag=frozen(lag),
        configs=configs,
        source_task=frozen(np.array(source_task, dtype=np.int64)),
        source_topic=tuple(source_topic),
        source_racks=tuple(source_racks),
    )


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
                member[kind] = tasks_by_subtopology(problem, tasks)
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


#: Every level of the ``streams`` objective stays within this many (integers exact in a double):
#: a document whose levels could pass it is refused when it is read.
MAX_LEVEL = 2**53


def _check_objective_range(lag: np.ndarray, threads: list[int], n_tasks: int) -> None:
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
