"""Traces: a starting problem and a sequence of events, one rebalance per step (docs/traces.md).

A trace is a JSON document ``{"kind": "group-trace" | "placement-trace", "problem": {...},
"steps": [{event: ...}, ...]}``.  Step 0 assigns ``problem`` as it is; the ``i``-th item of
``steps`` holds the events of step ``i + 1``, which happen together (one rebalance).  A strategy
runs through a trace as real members would: the input of step ``k`` is the output of step
``k - 1`` as the members' ``owned`` claims at generation ``k`` (:func:`next_document`), changed
by the step's events.

Events of a group trace, applied in this order within a step:

* ``leave``: member ids removed (their partitions are unowned at this step);
* ``restart``: member ids that leave and rejoin in the same step.  A dynamic member gets a new
  member id in Kafka: it sends no claims and joins at the end of the member list (it keeps its id
  here, so that moves can be counted by id).  A static member (``instance_id``, KIP-345) keeps its
  claims and its place;
* ``join``: member objects (``id``, ``topics``, optional ``rack`` and ``instance_id``; no
  ``owned`` or ``generation``) added at the end of the list;
* ``topics``: new partition counts by topic name: a new topic is added at the end, a topic grows
  (Kafka cannot shrink one), 0 deletes a topic;
* ``subscribe``: new subscriptions by member id;
* ``lags``: new lags by topic (the other topics keep theirs; the new partitions of a grown topic
  have lag 0 until a step gives their lags);
* ``racks``: new member racks by member id (``null`` clears one); ``partition_racks``: new
  replica racks by topic; ``topic_ids``: KIP-848 topic ids of new topics.

Events of a placement trace: ``remove_brokers`` (ids), ``add_brokers`` (broker objects) and
``partitions`` (partition objects added: ``replicas`` as Kafka created them, or ``[]`` with a
``replication_factor``, to be placed by the strategy).  A replica to be placed stands in the
step's document on a broker id that no broker of the trace has (the format's "replica on a broker
that is not in ``brokers``").

Every malformed trace raises :class:`ProblemError` on one line naming the file, the step and the
field (``steps[3].leave[0]: member 'c9' is not in the group (step 4)``); the document of every
step is built and checked by :func:`problems.io.parse_problem` when the trace is loaded, so a
strategy never meets a bad step half-way through.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import orjson

from problems import checks
from problems.arrays import frozen
from problems.errors import ProblemError
from problems.group import GroupProblem
from problems.io import _check_keys, _no_gc, parse_problem, read_json, read_problem_source
from problems.placement import PlacementProblem
from problems.recorded import check_assignment, parse_observed, parse_recorded

KINDS = ("group-trace", "placement-trace")
#: The largest trace read by default: partitions (a placement's replicas) summed over its
#: rebalances (:func:`trace_size`; ``--max-size`` raises it, in ``trace`` and the experiment files).
MAX_TRACE_SIZE = 100_000_000
GROUP_EVENTS = (
    "leave",
    "restart",
    "join",
    "topics",
    "subscribe",
    "lags",
    "racks",
    "partition_racks",
    "topic_ids",
)
PLACEMENT_EVENTS = ("remove_brokers", "add_brokers", "partitions")
TRACE_FIELDS = frozenset({"kind", "problem", "steps", "description", "recorded"})
JOIN_FIELDS = frozenset({"id", "topics", "rack", "instance_id"})
BROKER_FIELDS = frozenset({"id", "rack"})
PARTITION_FIELDS = frozenset({"topic", "partition", "replicas", "replication_factor"})


@dataclass(frozen=True)
class Trace:
    """A starting problem and the events of steps 1..T (build it with :func:`load_trace`).

    Attributes
    ----------
    kind
        ``"group-trace"`` or ``"placement-trace"``.
    start
        The starting problem document (a consumer group or a replica placement), as given.
    steps
        The events of steps 1..T: ``steps[i]`` is step ``i + 1``.
    name
        The file name, or ``<dict>`` / ``<text>``, for error messages.
    recorded
        A recorded trace's ``recorded`` header (``rebalance-lab record``), else ``None``.
    observed
        A recorded trace's ``observed`` object of each step 1..T (``None`` where a step has
        none); empty for a trace that is not recorded.  ``steps`` hold only the events.
    """

    kind: str
    start: dict[str, Any]
    steps: tuple[dict[str, Any], ...]
    name: str = "<trace>"
    recorded: dict[str, Any] | None = None
    observed: tuple[dict[str, Any] | None, ...] = ()

    def __len__(self) -> int:
        """The number of rebalances: step 0 and one per item of ``steps``."""
        return len(self.steps) + 1

    @property
    def is_placement(self) -> bool:
        return self.kind == "placement-trace"

    @cached_property
    def _built(self) -> _Built:
        """Every step's document and parsed problem (claims of ``start`` only at step 0)."""
        return _build(self)


@dataclass(frozen=True)
class BuiltStep:
    """One step of a trace as :func:`iter_steps` builds it.

    Attributes
    ----------
    document
        The step's problem document without claims (read-only: shared with the state that built
        it).
    problem
        ``document`` parsed.
    fresh
        The member ids that send no claims at this step (dynamic members restarted by it, and
        members that left and joined anew).
    added
        The ``(topic, partition)`` a placement step adds (empty for groups).
    """

    document: dict[str, Any]
    problem: GroupProblem | PlacementProblem
    fresh: frozenset[str]
    added: frozenset[tuple[str, int]]


@dataclass(frozen=True)
class _Built:
    """What :func:`_build` derives once per trace (every step held at once: the horizon's)."""

    documents: tuple[dict[str, Any], ...]  # step 0..T, without owned claims (read-only)
    problems: tuple[GroupProblem | PlacementProblem, ...]  # parsed documents
    fresh: tuple[frozenset[str], ...]  # per step: member ids sending no claims (dynamic restarts)
    added: tuple[frozenset[tuple[str, int]], ...]  # per step: partitions added at that step


# ------------------------------------------------------------------ loading
def load_trace(
    source: str | os.PathLike[str] | bytes | dict[str, Any],
    name: str | None = None,
    *,
    max_size: int = MAX_TRACE_SIZE,
) -> Trace:
    """Read and check a trace from a path, JSON text, JSON bytes or a parsed ``dict``.

    The trace's size (:func:`trace_size`: the partitions, or a placement's replicas, of every
    rebalance, summed) is checked
    against ``max_size`` first; then every step's document is built and checked here (with the
    checks of every problem file, one step at a time: memory does not grow with the steps), so a
    bad event is reported before any step is assigned.

    Raises
    ------
    ProblemError
        One line naming the file, the step and the field; or the size above ``max_size``, naming
        the limit and the option that raises it (``--max-size``).
    """
    with _no_gc():
        data: bytes | None
        if isinstance(source, bytes):
            source_name, data = name or "<bytes>", source
            doc = read_json(data, source_name)
        else:
            source_name, data, doc = read_problem_source(source)
            source_name = name or source_name
        try:
            trace = _parse_trace(doc, source_name)
            check_size(trace, max_size)
            for _ in _walk(trace):  # every step built and checked now, one at a time
                pass
        except ProblemError as error:
            if data is not None and not _plain_keys(data, doc):
                _check_keys(data, {}, source_name)
            raise error.with_source(source_name) from None
        if data is not None and not _plain_keys(data, doc):
            _check_keys(data, {}, source_name)
        return trace


def _plain_keys(data: bytes, doc: Any) -> bool:
    """Whether ``data`` has exactly as many ``:`` as the trace's objects have keys (then no key
    was given twice; otherwise the exact search of :func:`problems.io._check_keys` runs)."""
    return data.count(b":") == _count_keys(doc)


def _count_keys(doc: Any) -> int:
    """Keys of every object in ``doc`` (lists of plain values are not walked item by item)."""
    total, stack = 0, [doc]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            total += len(node)
            stack.extend(v for v in node.values() if type(v) in (dict, list))
        elif type(node) is list and not (node and set(map(type, node)) <= {int, str}):
            stack.extend(v for v in node if type(v) in (dict, list))
    return total


def _parse_trace(doc: Any, name: str) -> Trace:
    checks.expect(doc, dict, "", "a JSON object (a trace: kind, problem, steps)")
    unknown = doc.keys() - TRACE_FIELDS
    if unknown:
        raise ProblemError(sorted(map(str, unknown))[0], "unknown field in a trace")
    if "kind" not in doc:
        raise ProblemError("kind", f"missing (one of {', '.join(KINDS)})")
    kind = doc["kind"]
    if kind not in KINDS:
        got = repr(kind) if type(kind) is str else checks.type_name(kind)
        raise ProblemError("kind", f"must be one of {', '.join(KINDS)}, got {got}")
    if doc.get("description") is not None:
        checks.string(doc["description"], "description")
    if "problem" not in doc:
        raise ProblemError("problem", "missing (the starting problem document)")
    start = checks.expect(doc["problem"], dict, "problem", "an object (a problem document)")
    steps = list(
        checks.expect(doc.get("steps"), list, "steps", "a list of steps (objects of events)")
    )
    recorded = None
    if "recorded" in doc:
        if kind != "group-trace":
            raise ProblemError("recorded", "only a group-trace is recorded")
        recorded = parse_recorded(doc["recorded"])
    observed: list[dict[str, Any] | None] = []
    for i, step in enumerate(steps):
        checks.expect(step, dict, f"steps[{i}]", "an object of events")
        events = PLACEMENT_EVENTS if kind == "placement-trace" else GROUP_EVENTS
        for key in step:
            if key not in events and not (key == "observed" and recorded is not None):
                raise ProblemError(
                    f"steps[{i}].{key}",
                    f"unknown event of a {kind} (events: {', '.join(events)})"
                    + ("; observed only in a recorded trace" if key == "observed" else ""),
                )
        if "observed" in step:
            observed.append(parse_observed(step["observed"], f"steps[{i}].observed"))
            steps[i] = {k: v for k, v in step.items() if k != "observed"}
        else:
            observed.append(None)
    return Trace(kind, start, tuple(steps), name, recorded, tuple(observed) if recorded else ())


def _count(value: Any) -> int:
    """A partition count as given (anything else counts 0: the checks name it later)."""
    return value if type(value) is int and value > 0 else 0


def _replicas(parts: Any) -> int:
    """Replicas of a list of partition objects as given: ``replicas`` listed, else their
    ``replication_factor`` (anything else counts 0: the checks name it later)."""
    if type(parts) is not list:
        return 0
    total = 0
    for part in parts:
        if type(part) is dict:
            replicas = part.get("replicas")
            if type(replicas) is list and replicas:
                total += len(replicas)
            else:
                total += _count(part.get("replication_factor"))
    return total


def trace_size(trace: Trace) -> int:
    """The size of ``trace``: the items of every rebalance, summed (step 0 included) — a group's
    partitions, a placement's replicas — from the events alone (nothing is parsed or built: a
    malformed value counts 0 and is named by the checks later).

    A group's partitions follow its ``topics`` events; a placement's replicas its ``partitions``
    events (``replicas`` listed, or ``replication_factor`` to place).  The experiment files'
    trace scenarios count the same (:func:`experiments.trace_scenarios.trace_size`).
    """
    total = 0
    if trace.is_placement:
        current = _replicas(trace.start.get("partitions"))
        for step in (None, *trace.steps):
            if step is not None:
                current += _replicas(step.get("partitions"))
            total += current
        return total
    given = trace.start.get("topics")
    counts = {k: _count(v) for k, v in given.items()} if type(given) is dict else {}
    current = sum(counts.values())
    total = current
    for step in trace.steps:
        changes = step.get("topics")
        if type(changes) is dict:
            for name, value in changes.items():
                current += _count(value) - counts.get(name, 0)
                counts[name] = _count(value)
        total += current
    return total


def size_refusal(
    size: int,
    rebalances: int,
    placement: bool,
    limit: int,
    whose: str = "",
    at_least: bool = False,
) -> str:
    """The one line refusing a trace of ``size`` (:func:`trace_size`; ``at_least``: a lower
    bound) over ``rebalances`` above ``limit`` (``whose``: the limit's owner, e.g. ``the horizon
    solver's``), naming the option that raises it: the same words for ``trace`` and the
    experiment files."""
    items = "replicas" if placement else "partitions"
    owner = f"{whose} limit" if whose else "the limit"
    bound = "at least " if at_least else ""
    return (
        f"{bound}{size:,} {items} summed over the {rebalances:,} rebalances is above {owner} "
        f"of {limit:,} (--max-size raises it)"
    )


def check_size(trace: Trace, max_size: int = MAX_TRACE_SIZE, whose: str = "") -> None:
    """A :class:`ProblemError` (field ``steps``) when :func:`trace_size` is above ``max_size``:
    one line naming the size, the limit (``whose``: its owner, e.g. ``the horizon solver's``)
    and the option that raises it (:func:`size_refusal`)."""
    size = trace_size(trace)
    if size > max_size:
        raise ProblemError(
            "steps", size_refusal(size, len(trace), trace.is_placement, max_size, whose)
        )


def _start_problem(trace: Trace) -> GroupProblem | PlacementProblem:
    try:
        problem = parse_problem(trace.start)
    except ProblemError as error:
        field = f"problem.{error.field}" if error.field else "problem"
        raise ProblemError(field, error.message) from None
    want = PlacementProblem if trace.is_placement else GroupProblem
    if not isinstance(problem, want):
        other = "a replica placement" if trace.is_placement else "a consumer group"
        raise ProblemError("problem", f"must be {other} for a {trace.kind}")
    return problem


def _parsed(doc: dict[str, Any]) -> GroupProblem | PlacementProblem:
    """A step's document (a consumer group or a replica placement, built here) parsed."""
    problem = parse_problem(doc)
    if not isinstance(problem, (GroupProblem, PlacementProblem)):
        raise ProblemError("", "is neither a consumer group nor a replica placement")
    return problem


def _step_problem(doc: dict[str, Any], i: int) -> GroupProblem | PlacementProblem:
    """``doc`` (the document after ``steps[i]``) parsed; an error names the step."""
    try:
        return _parsed(doc)
    except ProblemError as error:
        where = f"{error.field}: " if error.field else ""
        raise ProblemError(
            f"steps[{i}]", f"the problem after this step (step {i + 1}): {where}{error.message}"
        ) from None


def _build(trace: Trace) -> _Built:
    steps = list(_walk(trace))
    return _Built(
        tuple(s.document for s in steps),
        tuple(s.problem for s in steps),
        tuple(s.fresh for s in steps),
        tuple(s.added for s in steps),
    )


def _walk(trace: Trace) -> Iterator[BuiltStep]:
    """Every step of ``trace`` built and checked, in order, holding one step at a time."""
    start = _start_problem(trace)
    if trace.is_placement:
        return _walk_placement(trace, start)
    return _walk_group(trace, start)


def iter_steps(trace: Trace) -> Iterator[BuiltStep]:
    """Every step of ``trace`` (step 0 first), built one at a time as it is asked for: memory
    holds one step, whatever the number of steps (the steps already built by
    :func:`step_problems` are used as they are)."""
    built = trace.__dict__.get("_built")
    if built is None:
        yield from _walk(trace)
        return
    yield from map(BuiltStep, built.documents, built.problems, built.fresh, built.added)


# ----------------------------------------------------------------- groups
def _plain_member(member: dict[str, Any]) -> dict[str, Any]:
    """A member object without its claims (``owned``, ``generation``)."""
    return {k: v for k, v in member.items() if k not in ("owned", "generation")}


def _ids(values: Any, field: str, present: dict[str, int], step: int) -> list[str]:
    """A list of member ids, each in the group (``present``) and listed once."""
    return _listed_once(values, field, present, step, checks.string, "member", "group")


def _listed_once(
    values: Any,
    field: str,
    present: Collection[Any],
    step: int,
    read: Callable[[Any, str], Any],
    what: str,
    within: str,
) -> list[Any]:
    """A list of ``what`` ids (each checked by ``read``), each in the ``within`` at ``step``
    (``present``) and listed once."""
    checks.expect(values, list, field, f"a list of {what} ids")
    seen: set[Any] = set()
    for j, value in enumerate(values):
        key = read(value, f"{field}[{j}]")
        if key not in present:
            raise ProblemError(
                f"{field}[{j}]", f"{what} {key!r} is not in the {within} (step {step})"
            )
        if key in seen:
            raise ProblemError(f"{field}[{j}]", f"{what} {key!r} is listed twice")
        seen.add(key)
    return list(values)


def _new_id(
    item: dict[str, Any],
    where: str,
    read: Callable[[Any, str], Any],
    present: Collection[Any],
    seen: set[Any],
    what: str,
    within: str,
) -> None:
    """``item``'s id (checked by ``read``) noted in ``seen``: refused when the ``within`` or an
    earlier item of the step (``seen``) has it."""
    if "id" not in item:
        raise ProblemError(f"{where}.id", "missing")
    item_id = read(item["id"], f"{where}.id")
    if item_id in present or item_id in seen:
        raise ProblemError(f"{where}.id", f"{what} {item_id!r} is already in the {within}")
    seen.add(item_id)


def _by_name(values: Any, field: str, what: str) -> dict[str, Any]:
    """An object keyed by names (``what`` describes the values)."""
    checks.expect(values, dict, field, f"an object of {what}")
    checks.strings(list(values), lambda _: field)
    return dict(values)


class _GroupState:
    """The group after the events so far (documents shared between steps where unchanged)."""

    def __init__(self, start: dict[str, Any], problem: GroupProblem) -> None:
        self.topics: dict[str, int] = dict(zip(problem.topics, problem.partition_counts.tolist()))
        self.members: list[dict[str, Any]] = [_plain_member(m) for m in start["members"]]
        self.lags: dict[str, list[Any]] | None = (
            None if start.get("lags") is None else dict(start["lags"])
        )
        self.partition_racks: dict[str, list[Any]] | None = (
            None if start.get("partition_racks") is None else dict(start["partition_racks"])
        )
        self.topic_ids: dict[str, Any] | None = (
            None if start.get("topic_ids") is None else dict(start["topic_ids"])
        )

    def document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"topics": dict(self.topics), "members": list(self.members)}
        for key in ("lags", "partition_racks", "topic_ids"):
            value = getattr(self, key)
            if value is not None:
                doc[key] = {t: value[t] for t in self.topics if t in value}
        return doc

    def apply(self, step: dict[str, Any], i: int) -> frozenset[str]:
        """Apply ``steps[i]``; returns the ids of members that send no claims (dynamic restarts)."""
        field = f"steps[{i}]"
        present = {m["id"]: k for k, m in enumerate(self.members)}
        leave = _ids(step.get("leave", []), f"{field}.leave", present, i + 1)
        restart = _ids(step.get("restart", []), f"{field}.restart", present, i + 1)
        for j, member_id in enumerate(restart):
            if member_id in leave:
                raise ProblemError(
                    f"{field}.restart[{j}]", f"member {member_id!r} also leaves in this step"
                )
        gone = set(leave)
        staying = {m: k for m, k in present.items() if m not in gone}  # leave comes before join
        joins = self._joins(step.get("join", []), f"{field}.join", staying)
        dynamic = {m for m in restart if self.members[present[m]].get("instance_id") is None}
        kept = [m for m in self.members if m["id"] not in gone and m["id"] not in dynamic]
        self.members = kept + [self.members[present[m]] for m in restart if m in dynamic] + joins
        dynamic |= {m["id"] for m in joins if m["id"] in gone}  # left and joined anew: no claims
        if "topics" in step:
            self._topics(step["topics"], f"{field}.topics")
        if "subscribe" in step:
            self._subscribe(step["subscribe"], f"{field}.subscribe", i + 1)
        if "lags" in step:
            lags = _by_name(step["lags"], f"{field}.lags", "topic -> list of lags")
            for name in lags:
                if name not in self.topics:
                    raise ProblemError(f"{field}.lags.{name}", "topic is not in the group")
            if self.lags is None:
                self.lags = {t: [0] * n for t, n in self.topics.items()}
            self.lags.update(lags)
        if "racks" in step:
            self._racks(step["racks"], f"{field}.racks", i + 1)
        for key in ("partition_racks", "topic_ids"):
            if key in step:
                values = _by_name(step[key], f"{field}.{key}", "topic -> value")
                for name in values:
                    if name not in self.topics:
                        raise ProblemError(f"{field}.{key}.{name}", "topic is not in the group")
                current = getattr(self, key)
                setattr(self, key, values if current is None else current | values)
        return frozenset(dynamic)

    def _joins(self, values: Any, field: str, present: dict[str, int]) -> list[dict[str, Any]]:
        checks.expect(values, list, field, "a list of member objects")
        joins: list[dict[str, Any]] = []
        seen: set[str] = set()
        for j, member in enumerate(values):
            where = f"{field}[{j}]"
            checks.expect(member, dict, where, "an object (a member)")
            for key in member:
                if key in ("owned", "generation"):
                    raise ProblemError(f"{where}.{key}", "a joining member has no claims")
                if key not in JOIN_FIELDS:
                    raise ProblemError(f"{where}.{key}", "unknown field")
            _new_id(member, where, checks.string, present, seen, "member", "group")
            if "topics" not in member:
                raise ProblemError(f"{where}.topics", "missing (the member's subscription)")
            joins.append(dict(member))
        return joins

    def _topics(self, values: Any, field: str) -> None:
        counts = _by_name(values, field, "topic -> partition count")
        for name, count in counts.items():
            checks.integer(count, f"{field}.{name}")
        total = sum(n for t, n in self.topics.items() if t not in counts) + sum(counts.values())
        checks.at_most(total, checks.MAX_PARTITIONS, field, "partitions in all")
        for name, count in counts.items():
            now = self.topics.get(name)
            if count == 0:
                if now is None:
                    raise ProblemError(
                        f"{field}.{name}", "topic does not exist (0 deletes a topic)"
                    )
                del self.topics[name]
                for table in (self.lags, self.partition_racks, self.topic_ids):
                    if table is not None:
                        table.pop(name, None)
                continue
            if now is not None and count < now:
                raise ProblemError(
                    f"{field}.{name}",
                    f"{count} partitions < the topic's {now}: Kafka cannot shrink a topic "
                    "(0 deletes it)",
                )
            self.topics[name] = count
            if self.lags is not None:
                lags = self.lags.get(name, [])
                if type(lags) is list and len(lags) < count:
                    self.lags[name] = lags + [0] * (count - len(lags))

    def _by_member(
        self, values: Any, field: str, step: int, what: str
    ) -> Iterator[tuple[int, str, Any]]:
        """The position, id and value of each member ``values`` names (an object keyed by member
        ids, ``what`` describing it), each in the group."""
        named = _by_name(values, field, what)
        position = {m["id"]: k for k, m in enumerate(self.members)}
        for member_id, value in named.items():
            if member_id not in position:
                raise ProblemError(
                    f"{field}.{member_id}",
                    f"member {member_id!r} is not in the group (step {step})",
                )
            yield position[member_id], member_id, value

    def _subscribe(self, values: Any, field: str, step: int) -> None:
        for k, member_id, topics in self._by_member(
            values, field, step, "member id -> list of topics"
        ):
            checks.expect(topics, list, f"{field}.{member_id}", "a list of topic names")
            self.members[k] = self.members[k] | {"topics": topics}

    def _racks(self, values: Any, field: str, step: int) -> None:
        for k, member_id, rack in self._by_member(
            values, field, step, "member id -> rack (or null)"
        ):
            member = {key: v for key, v in self.members[k].items() if key != "rack"}
            if rack is not None:
                member["rack"] = checks.string(rack, f"{field}.{member_id}")
            self.members[k] = member


def _walk_group(trace: Trace, start: GroupProblem | PlacementProblem) -> Iterator[BuiltStep]:
    assert isinstance(start, GroupProblem)
    state = _GroupState(trace.start, start)
    empty: frozenset[Any] = frozenset()
    document = state.document()
    yield BuiltStep(document, _parsed(document), empty, empty)
    for i, step in enumerate(trace.steps):
        fresh = state.apply(step, i)
        document = state.document()
        observed = trace.observed[i] if trace.observed else None
        if observed is not None:
            check_assignment(observed, document, f"steps[{i}].observed")
        yield BuiltStep(document, _step_problem(document, i), fresh, empty)


# -------------------------------------------------------------- placements
def _used_ids(trace: Trace) -> set[Any]:
    """Every broker id that a broker or a replica of the trace names."""
    used: set[Any] = set()
    for broker in trace.start.get("brokers", []):
        if type(broker) is dict and type(broker.get("id")) is int:
            used.add(broker["id"])
    for part in trace.start.get("partitions", []):
        if type(part) is dict and type(part.get("replicas")) is list:
            used.update(v for v in part["replicas"] if type(v) is int)
    for step in trace.steps:
        for broker in step.get("add_brokers", []) if type(step.get("add_brokers")) is list else []:
            if type(broker) is dict and type(broker.get("id")) is int:
                used.add(broker["id"])
        parts = step.get("partitions")
        for part in parts if type(parts) is list else []:
            if type(part) is dict and type(part.get("replicas")) is list:
                used.update(v for v in part["replicas"] if type(v) is int)
    return used


class _PlacementState:
    """The cluster after the events so far (documents shared between steps where unchanged)."""

    def __init__(self, start: dict[str, Any], used: set[Any]) -> None:
        self.brokers: list[dict[str, Any]] = list(start["brokers"])
        self.partitions: list[dict[str, Any]] = list(start["partitions"])
        self.keys: set[tuple[str, int]] = {(p["topic"], p["partition"]) for p in self.partitions}
        self.used = used
        self.unplaced: list[int] = []

    def placeholders(self, count: int) -> list[int]:
        """``count`` broker ids that no broker or replica of the trace names (from the int32
        maximum down): replicas to be placed."""
        candidate = self.unplaced[-1] - 1 if self.unplaced else checks.INT32_MAX
        while len(self.unplaced) < count:
            if candidate not in self.used:
                self.unplaced.append(candidate)
            candidate -= 1
        return self.unplaced[:count]

    def document(self) -> dict[str, Any]:
        return {"brokers": list(self.brokers), "partitions": list(self.partitions)}

    def apply(self, step: dict[str, Any], i: int) -> frozenset[tuple[str, int]]:
        field = f"steps[{i}]"
        present = {b["id"]: k for k, b in enumerate(self.brokers)}
        removed: set[int] = set()
        if "remove_brokers" in step:
            where = f"{field}.remove_brokers"
            listed = _listed_once(
                step["remove_brokers"], where, present, i + 1, checks.integer, "broker", "cluster"
            )
            removed.update(listed)
        added: list[dict[str, Any]] = []
        if "add_brokers" in step:
            where = f"{field}.add_brokers"
            brokers = checks.expect(step["add_brokers"], list, where, "a list of broker objects")
            seen: set[int] = set()
            for j, broker in enumerate(brokers):
                checks.expect(broker, dict, f"{where}[{j}]", "an object (a broker)")
                for key in broker:
                    if key not in BROKER_FIELDS:
                        raise ProblemError(f"{where}[{j}].{key}", "unknown field")
                _new_id(broker, f"{where}[{j}]", checks.integer, present, seen, "broker", "cluster")
                added.append(dict(broker))
        self.brokers = [b for b in self.brokers if b["id"] not in removed] + added
        new: set[tuple[str, int]] = set()
        if "partitions" in step:
            where = f"{field}.partitions"
            parts = checks.expect(step["partitions"], list, where, "a list of partition objects")
            for j, part in enumerate(parts):
                self.partitions.append(self._partition(part, f"{where}[{j}]", new))
        return frozenset(new)

    def _partition(self, part: Any, where: str, new: set[tuple[str, int]]) -> dict[str, Any]:
        checks.expect(part, dict, where, "an object (a partition)")
        for key in part:
            if key not in PARTITION_FIELDS:
                raise ProblemError(f"{where}.{key}", "unknown field")
        for key in ("topic", "partition", "replicas"):
            if key not in part:
                raise ProblemError(f"{where}.{key}", "missing")
        topic = checks.string(part["topic"], f"{where}.topic")
        index = checks.integer(part["partition"], f"{where}.partition")
        if (topic, index) in self.keys:
            raise ProblemError(where, f"partition {topic}-{index} already exists")
        replicas = checks.expect(
            part["replicas"], list, f"{where}.replicas", "a list of broker ids"
        )
        factor = part.get("replication_factor")
        if replicas:
            if factor is not None and factor != len(replicas):
                raise ProblemError(
                    f"{where}.replication_factor",
                    f"is {factor!r} but the partition lists {len(replicas)} replicas",
                )
        else:
            if factor is None:
                raise ProblemError(
                    f"{where}.replication_factor",
                    "missing (replicas [] are placed by the strategy: give their number)",
                )
            factor = checks.integer(factor, f"{where}.replication_factor", low=1)
            if factor > len(self.brokers):
                raise ProblemError(
                    f"{where}.replication_factor",
                    f"{factor} is larger than the {len(self.brokers)} live brokers",
                )
            replicas = self.placeholders(factor)
        self.keys.add((topic, index))
        new.add((topic, index))
        return {"topic": topic, "partition": index, "replicas": replicas}


def _walk_placement(trace: Trace, start: GroupProblem | PlacementProblem) -> Iterator[BuiltStep]:
    assert isinstance(start, PlacementProblem)
    state = _PlacementState(trace.start, _used_ids(trace))
    empty: frozenset[Any] = frozenset()
    yield BuiltStep(state.document(), start, empty, empty)
    for i, step in enumerate(trace.steps):
        added = state.apply(step, i)
        document = state.document()
        yield BuiltStep(document, _step_problem(document, i), empty, added)


# ------------------------------------------------------------------ documents
def _copy(doc: dict[str, Any]) -> dict[str, Any]:
    copied: dict[str, Any] = orjson.loads(orjson.dumps(doc))
    return copied


def step_documents(trace: Trace) -> list[dict[str, Any]]:
    """The problem document of every step 0..T, without claims.

    Members, subscriptions, topics, lags and racks after each step's events (``owned`` and
    ``generation`` left out, also at step 0), or the brokers and partitions with their starting
    replicas (partitions added by a step: replicas as given, or on unused broker ids, to be
    placed).  The assignment decisions are the strategy's: see :func:`next_document`.
    """
    return [_copy(doc) for doc in trace._built.documents]


def step_problems(trace: Trace) -> tuple[GroupProblem | PlacementProblem, ...]:
    """:func:`step_documents` parsed, built once per trace (read-only, shared)."""
    return trace._built.problems


def fresh_members(trace: Trace, k: int) -> frozenset[str]:
    """The member ids that send no claims at step ``k`` (dynamic members restarted by it)."""
    return trace._built.fresh[k]


def added_partitions(trace: Trace, k: int) -> frozenset[tuple[str, int]]:
    """The ``(topic, partition)`` of a placement trace that step ``k`` adds."""
    return trace._built.added[k]


def _step_index(trace: Trace, k: int) -> int:
    if type(k) is not int or not 0 <= k < len(trace):
        raise ValueError(f"step {k!r} is not a step of the trace (0 .. {len(trace) - 1})")
    return k


def next_document(trace: Trace, k: int, previous: dict[str, Any] | None) -> dict[str, Any]:
    """The input document of step ``k`` as the members send it.

    Step 0 is the starting problem as given.  Step ``k > 0`` is step ``k``'s document
    (:func:`step_documents`) with ``previous``, step ``k - 1``'s output, as the claims:

    * a group: ``previous`` is the assignment JSON ``{member: {topic: [partition, ...]}}``;
      every member of step ``k`` that is in it sends its part as ``owned`` with generation ``k``,
      except a dynamic member restarted at step ``k`` (a new member: no claims, no generation);
      a member that joins sends none;
    * a placement: ``previous`` is the reassignment JSON; each partition's replicas are its
      replicas in it (a partition added at step ``k`` keeps its own).

    Claims on partitions that no longer exist, or of members that no longer subscribe, are kept
    as sent: they are stale, and every strategy drops them as Kafka does.

    Raises
    ------
    ProblemError
        ``previous`` is not such a document (named ``previous``).
    """
    k = _step_index(trace, k)
    if k == 0:
        return _copy(trace.start)
    built = trace._built
    step = BuiltStep(built.documents[k], built.problems[k], built.fresh[k], built.added[k])
    return claimed_document(trace, k, step, previous)


def claimed_document(
    trace: Trace, k: int, step: BuiltStep, previous: dict[str, Any] | None
) -> dict[str, Any]:
    """:func:`next_document` of step ``k > 0`` of ``trace``, built (:func:`iter_steps`) as
    ``step``."""
    doc = _copy(step.document)
    if previous is None:
        return doc
    checks.expect(previous, dict, "previous", "an object (the previous step's output)")
    if trace.is_placement:
        replicas = _previous_replicas(previous)
        for part in doc["partitions"]:
            key = (part["topic"], part["partition"])
            if key in replicas and key not in step.added:
                part["replicas"] = list(replicas[key])
        return doc
    fresh = step.fresh
    for member in doc["members"]:
        member_id = member["id"]
        if member_id in fresh or member_id not in previous:
            continue
        claims = checks.expect(
            previous[member_id], dict, f"previous.{member_id}", "an object of topic -> partitions"
        )
        if claims:
            member["owned"] = {t: list(p) for t, p in claims.items()}
        member["generation"] = k
    return doc


def _previous_replicas(previous: dict[str, Any]) -> dict[tuple[str, int], list[int]]:
    parts = checks.expect(
        previous.get("partitions"), list, "previous.partitions", "a list of partitions"
    )
    replicas: dict[tuple[str, int], list[int]] = {}
    for j, part in enumerate(parts):
        where = f"previous.partitions[{j}]"
        checks.expect(part, dict, where, "an object")
        topic = checks.string(part.get("topic"), f"{where}.topic")
        index = checks.integer(part.get("partition"), f"{where}.partition")
        chosen = checks.expect(part.get("replicas"), list, f"{where}.replicas", "a list")
        replicas[topic, index] = chosen
    return replicas


# ------------------------------------------------------------------- moves
def _holders(assignment: dict[str, Any]) -> dict[tuple[str, int], set[str]]:
    holders: dict[tuple[str, int], set[str]] = {}
    for member, topics in assignment.items():
        for topic, partitions in topics.items():
            for p in partitions:
                holders.setdefault((topic, p), set()).add(member)
    return holders


def trace_moves(previous: dict[str, Any], current: dict[str, Any]) -> int:
    """The trace ``moves`` of a group step: partitions owned at step ``k - 1`` that a member which
    did not own them owns at step ``k``, by member id.

    ``previous`` and ``current`` are assignment JSONs (``{member: {topic: [partition, ...]}}``).
    Every partition of a member that leaves moves (when another member takes it); a restarted
    member given its partitions back moves none; a partition that nobody owned at step ``k - 1``
    (new, or of a topic nobody subscribed), or that nobody owns at step ``k`` (its topic deleted
    or unsubscribed), does not move: no member hands it over.  Where a
    partition may have several owners (share groups) each new owner counts once.
    """
    before = _holders(previous)
    moves = 0
    for member, topics in current.items():
        for topic, partitions in topics.items():
            for p in partitions:
                owners = before.get((topic, p))
                if owners is not None and member not in owners:
                    moves += 1
    return moves


def placement_trace_moves(previous: dict[str, Any], current: dict[str, Any]) -> int:
    """The trace ``moves`` of a placement step: replicas, of partitions that existed at step
    ``k - 1``, on a broker that did not hold that partition at step ``k - 1``.

    ``previous`` and ``current`` are reassignment JSONs (``{"partitions": [{"topic",
    "partition", "replicas"}, ...]}``).
    """
    before = {(p["topic"], p["partition"]): set(p["replicas"]) for p in previous["partitions"]}
    moves = 0
    for part in current["partitions"]:
        held = before.get((part["topic"], part["partition"]))
        if held is not None:
            moves += sum(1 for b in part["replicas"] if b not in held)
    return moves


# ------------------------------------------------------ claims from arrays
#: The cached properties of a :class:`GroupProblem` that do not depend on its claims.
_CLAIMLESS = frozenset(
    {
        "topic_index",
        "member_index",
        "topic_start",
        "partition_topic",
        "partition_index",
        "subscribed_topics",
        "subscribes",
        "topic_subscribers",
        "assignable",
        "replica_rack_partition",
        "partition_rack_lists",
        "topic_uuids",
    }
)


def partition_map(previous: GroupProblem, current: GroupProblem) -> np.ndarray:
    """Each partition of ``previous`` as the global id of the same partition (topic name and index)
    in ``current``; -1 where it no longer exists (its topic deleted)."""
    mapping = np.full(previous.num_partitions, -1, dtype=np.int64)
    for t, name in enumerate(previous.topics):
        now = current.topic_index.get(name)
        if now is None:
            continue
        lo, hi = int(previous.topic_start[t]), int(previous.topic_start[t + 1])
        count = min(hi - lo, int(current.partition_counts[now]))
        start = int(current.topic_start[now])
        mapping[lo : lo + count] = np.arange(start, start + count)
    return mapping


def _stale_claims(
    problem: GroupProblem, previous: GroupProblem, members: np.ndarray, partitions: np.ndarray
) -> np.ndarray:
    """Partitions of ``previous`` (positions) whose topic is deleted while their claimant (member
    position in ``problem``, -1 none) still subscribes it by name."""
    gone = np.flatnonzero((members >= 0) & (partitions < 0))
    if not len(gone):
        return gone
    topic = previous.partition_topic[gone]
    keep = np.zeros(len(gone), dtype=bool)
    pairs = np.unique(np.stack([members[gone], topic]), axis=1)
    for member, t in pairs.T.tolist():  # one check per (member, deleted topic)
        if previous.topics[t] in problem.subscriptions[member]:
            keep |= (members[gone] == member) & (topic == t)
    return gone[keep]


def with_claims(
    problem: GroupProblem,
    previous: GroupProblem,
    owner: np.ndarray,
    generation: int,
    fresh: Iterable[str] = (),
    *,
    cooperative: bool = False,
) -> GroupProblem:
    """``problem`` (a step's problem, no claims) with ``owner`` (step ``k - 1``'s owner of every
    partition of ``previous``, member positions, -1 for none) as the members' claims.

    What :func:`next_document` and parsing it give, built from arrays: each member of
    ``problem`` that is in ``previous`` and not in ``fresh`` claims its partitions that still
    exist, at ``generation``; the others send no claims and no generation.  Claims on partitions
    of deleted topics are left out (parsing drops them as stale: the objective is the same).

    ``cooperative``: the claims as a cooperative consumer sends them (Kafka's
    ``ConsumerCoordinator.onJoinPrepare``): partitions of topics the member no longer subscribes
    are revoked before it joins (not claimed); partitions of a deleted topic it still subscribes
    are still owned, so claimed by name (stale), which makes it rejoin after the round.
    """
    prev_index = previous.member_index
    dropped = set(fresh)
    # Member position in previous -> position in problem (-1: gone or sending no claims).
    to_new = np.full(previous.num_members + 1, -1, dtype=np.int64)
    has_generation = []
    for m, member_id in enumerate(problem.members):
        p = prev_index.get(member_id)
        claims = p is not None and member_id not in dropped
        if claims:
            to_new[p] = m
        has_generation.append(claims)
    to_partition = partition_map(previous, problem)
    owner = np.asarray(owner, dtype=np.int64)
    claimant = members = to_new[owner]  # owner -1 -> the last slot, -1
    partitions = to_partition
    keep = (members >= 0) & (partitions >= 0)
    if cooperative:
        subscribed = np.zeros(len(keep), dtype=bool)
        rows = np.flatnonzero(keep)
        subscribed[rows] = problem.subscribes[
            members[rows], problem.partition_topic[partitions[rows]]
        ]
        stale = _stale_claims(problem, previous, members, partitions)
        keep &= subscribed
    members, partitions = members[keep], partitions[keep]
    topics = problem.partition_topic[partitions].astype(np.int64)
    indices = problem.partition_index[partitions].astype(np.int64)
    names = problem.topics
    if cooperative and len(stale):  # deleted topics' claims, by their topics' names in previous
        members = np.concatenate([members, claimant[stale]])
        topics = np.concatenate([topics, problem.num_topics + previous.partition_topic[stale]])
        indices = np.concatenate([indices, previous.partition_index[stale].astype(np.int64)])
        names = (*problem.topics, *previous.topics)
        order = np.lexsort((indices, topics, members))
    elif len(partitions) > 1 and bool((partitions[1:] > partitions[:-1]).all()):
        # Partitions ascending (topics keep their order in a trace): one stable sort by member.
        order = np.argsort(members.astype(np.int32), kind="stable")
    else:
        order = np.lexsort((partitions, members))
    members, topics, indices = members[order], topics[order], indices[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (members[1:] != members[:-1]) | (topics[1:] != topics[:-1])
    starts = np.flatnonzero(first)
    entry_start = np.zeros(problem.num_members + 1, dtype=np.int64)
    np.cumsum(np.bincount(members[starts], minlength=problem.num_members), out=entry_start[1:])
    flags = np.array(has_generation, dtype=bool)
    result = dataclasses.replace(
        problem,
        owned_topics=tuple(np.array(names, dtype=object)[topics[starts]].tolist()),
        owned_entry_start=frozen(entry_start),
        owned_start=frozen(np.append(starts, len(order)).astype(np.int64)),
        owned_indices=frozen(indices),
        generations=frozen(np.where(flags, generation, -1).astype(np.int64)),
        has_generation=tuple(has_generation),
        notes=(),
    )
    problem.subscribes  # noqa: B018 (built once per step, shared by every answer to it)
    result.__dict__.update({k: v for k, v in problem.__dict__.items() if k in _CLAIMLESS})
    return result


def placement_with_replicas(
    problem: PlacementProblem,
    previous: PlacementProblem,
    replicas: np.ndarray,
    added: frozenset[tuple[str, int]] = frozenset(),
) -> PlacementProblem:
    """``problem`` (a step's placement, starting replicas) with each partition's replicas taken
    from ``replicas`` (step ``k - 1``'s answer to ``previous``, flat as ``previous.replica_brokers``);
    partitions in ``added`` keep their own."""
    where = {key: p for p, key in enumerate(zip(previous.topics, previous.partitions.tolist()))}
    prev_start = previous.replica_start.tolist()
    flat = np.asarray(replicas).tolist()
    own = problem.replica_brokers.tolist()
    start = problem.replica_start.tolist()
    out: list[int] = []
    for p, key in enumerate(zip(problem.topics, problem.partitions.tolist())):
        q = where.get(key)
        if q is None or key in added:
            out.extend(own[start[p] : start[p + 1]])
        else:
            out.extend(flat[prev_start[q] : prev_start[q + 1]])
    return dataclasses.replace(problem, replica_brokers=frozen(np.array(out, dtype=np.int64)))
