"""What every heuristic and every solver returns, and the JSON of docs/formats.md.

A :class:`Result` carries the raw answer (an ``owner`` array for a consumer
group, a ``replicas`` array for a placement).  The output JSON and the score are
computed on first access, by :mod:`problems.evaluate`, so that timing
``assign(problem)`` measures the algorithm and never trusts a solver's own value.

The answer is handed to a caller in two shapes:

* :attr:`Result.assignment`, the output JSON as plain dicts and lists.  A
  million-partition group is up to a million small lists (one per member and
  topic), so it is built without a Python loop per partition or per list: one
  stable sort of the owners, the lists made in C (``tolist`` of a column of
  single values, or slices of one list of ints), each member's dict made by
  ``dict(zip(names, lists))``.  Python's cyclic garbage collector is paused while
  those lists are made, and they are placed in its oldest generation, as the
  long-lived objects they are (:func:`_long_lived`): each list is a container it
  tracks, and with it running it rescans the growing heap many times over (three
  quarters of the time at a million lists);
* :meth:`Result.assignment_table`, the same answer as a pyarrow ``Table``, one
  row per assigned partition (per replica for a placement), in partition order;
  names are dictionary-encoded (the table holds each name once), so the table is
  the answer's arrays, filtered, without a sort or a Python object per row.
"""

from __future__ import annotations

import gc
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from itertools import repeat
from operator import mul
from typing import TYPE_CHECKING, Any

import numpy as np

from problems.errors import ProblemError
from problems.evaluate import evaluate
from problems.group import GroupProblem
from problems.placement import PlacementProblem
from problems.share import assignment_items, is_pairs, share_assignment_json
from problems.streams import StreamsAssignment, StreamsProblem, streams_assignment_json
from problems.verdict import Evaluation

if TYPE_CHECKING:
    import pyarrow as pa

#: The output JSON of a consumer group: ``{member: {topic: [partition indexes]}}``.
Assignment = dict[str, dict[str, list[int]]]


class Status(StrEnum):
    """How an answer came about; a ``str``, so it compares, prints and serialises as its value."""

    OPTIMAL = "optimal"  #: every objective level proven optimal
    FEASIBLE = "feasible"  #: a solver's answer, not proven optimal (``bound`` holds what is proven)
    INFEASIBLE = "infeasible"  #: proven: no answer satisfies the hard constraints
    HEURISTIC = "heuristic"  #: a heuristic's answer
    UNKNOWN = "unknown"  #: time ran out before any answer

    @property
    def solved(self) -> bool:
        """Whether a solver with this status has an answer (``optimal`` or ``feasible``)."""
        return self in (Status.OPTIMAL, Status.FEASIBLE)


STATUSES = tuple(Status)


@dataclass(eq=False)
class Result:
    """One answer to one problem.

    Attributes
    ----------
    problem
        The problem answered.
    strategy
        The strategy that answered.
    answer
        ``owner`` array (group), ``(member, partition)`` pairs (a share group:
        :mod:`problems.share`), ``replicas`` array (placement) or a
        :class:`~problems.streams.StreamsAssignment` (streams group); ``None`` when
        a solver found nothing (status ``infeasible`` or ``unknown``).
    status
        ``"heuristic"``, or a solver's ``"optimal"`` (proven), ``"feasible"``
        (with ``bound``), ``"infeasible"`` or ``"unknown"`` (time ran out with
        no answer).
    bound
        A solver's proven lower bounds on the objective levels, where it has them.
    info
        Anything else worth reporting (e.g. KIP-315's next ``epoch``).
    shown
        The ``owner`` array printed as the assignment when it is not the judged
        answer (``cooperative-sticky``: Kafka's round output, partitions changing
        owner left out, while ``answer`` is the completed assignment); ``None``:
        the answer is printed.
    objective_name
        The objective the answer is judged on (a key of :data:`problems.OBJECTIVES`): what the
        strategy's code answers; the strategy registry sets its record's
        (:meth:`models.registry.Strategy.objective_on`) on every answer it returns.  ``None``:
        not judged yet (:attr:`evaluation` refuses).
    """

    problem: GroupProblem | PlacementProblem | StreamsProblem
    strategy: str
    answer: np.ndarray | StreamsAssignment | None
    status: Status = Status.HEURISTIC
    bound: tuple[int, ...] | None = None
    info: dict[str, Any] = field(default_factory=dict)
    shown: np.ndarray | None = None
    objective_name: str | None = None

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}, got {self.status!r}")
        self.status = Status(self.status)

    @cached_property
    def evaluation(self) -> Evaluation | None:
        """The evaluator's verdict (``None`` without an answer)."""
        if self.answer is None:
            return None
        if self.objective_name is None:
            raise ValueError(f"{self.strategy}: the answer names no objective to judge it on")
        return evaluate(self.problem, self.answer, self.objective_name)

    @property
    def objective(self) -> list[int]:
        """The objective levels, re-scored by :func:`problems.evaluate`."""
        return [] if self.evaluation is None else list(self.evaluation.objective)

    @property
    def valid(self) -> bool:
        return self.evaluation is not None and self.evaluation.valid

    @cached_property
    def assignment(self) -> dict[str, Any] | None:
        """The output JSON: an assignment (group) or a reassignment (placement).

        Built on first access (:func:`assignment_json`, :func:`reassignment_json`);
        ``None`` without an answer.
        """
        answer = self.answer
        if answer is None:
            return None
        if isinstance(answer, StreamsAssignment):
            assert isinstance(self.problem, StreamsProblem), "a streams answer to another problem"
            return streams_assignment_json(self.problem, answer)
        problem = self.problem
        assert not isinstance(problem, StreamsProblem), "a streams problem needs a streams answer"
        if isinstance(problem, PlacementProblem):
            return reassignment_json(problem, answer)
        if is_pairs(answer):  # a share group's (member, partition) pairs
            return share_assignment_json(problem, answer)
        return assignment_json(problem, answer if self.shown is None else self.shown)

    def assignment_table(self) -> pa.Table | None:
        """The answer as a pyarrow ``Table``; ``None`` without one.

        A group (:func:`assignment_table`): columns ``member``, ``topic`` (both
        dictionary-encoded strings) and ``partition`` (``int32``), one row per
        assigned partition, in partition order.  A placement (:func:`reassignment_table`): ``topic``,
        ``partition``, ``replica`` (the replica's position in the partition's
        list, 0 the preferred leader) and ``broker`` (``int32`` each but the
        topic), one row per replica.  ``.to_pandas()`` gives a frame with
        categorical names.
        """
        answer, problem = self.answer, self.problem
        if answer is None:
            return None
        if isinstance(answer, StreamsAssignment) or isinstance(problem, StreamsProblem):
            raise TypeError("a streams answer has no assignment table")
        if isinstance(problem, PlacementProblem):
            return reassignment_table(problem, answer)
        return assignment_table(problem, answer if self.shown is None else self.shown)

    def to_json(self) -> dict[str, Any]:
        """What ``rebalance-lab assign`` prints (:func:`problems.output.result_bytes` writes it fast)."""
        return {"assignment": self.assignment, **self.json_fields()}

    def json_fields(self) -> dict[str, Any]:
        """:meth:`to_json` without the assignment: status, objective, bound, violations, info."""
        doc: dict[str, Any] = {"status": self.status, "objective": self.objective}
        if self.bound is not None:
            doc["bound"] = list(self.bound)
        if self.evaluation is not None and not self.evaluation.valid:
            doc["violations"] = list(self.evaluation.violations)
        doc.update(self.info)
        return doc


# ------------------------------------------------------------------ group JSON
#: Answers of at least this many lists and dicts are built with the collector paused and moved to
#: its oldest generation (:func:`_long_lived`); smaller ones are built as usual (the collector's
#: cost on them is small, and the young collection that precedes the move has a cost of its own).
_TENURE_AT = 50_000


@contextmanager
def _long_lived(containers: int) -> Iterator[None]:
    """The block's ``containers`` new lists and dicts built with the cyclic garbage collector
    paused, then moved to its oldest generation, as objects that live on.

    With the collector on, a million new lists cost about four times their making: every few
    hundred new containers start a young collection, and the older generations are rescanned as
    the heap grows.  Paused, the young collections that follow would still scan every new list
    twice (some 50 ms each at a million) before promoting it to the oldest generation, where an answer
    handed to a caller ends up.  The lists are placed there directly instead: the young
    generations are collected first (the caller's few young objects are not moved with them),
    then ``gc.freeze()`` and ``gc.unfreeze()`` (two list splices) move everything younger into
    the oldest generation.  Full collections scan them, as they scan every long-lived object.
    Left alone: a collector the caller turned off, and a caller's frozen objects (``gc.freeze``
    before ``fork``), which must stay frozen (the block then only pauses the collector); and
    everything for fewer than :data:`_TENURE_AT` containers.
    """
    if containers < _TENURE_AT or not gc.isenabled():
        yield
        return
    tenure = gc.get_freeze_count() == 0
    if tenure:
        gc.collect(1)
    gc.disable()
    try:
        yield
    finally:
        if tenure:
            gc.freeze()
            gc.unfreeze()
        gc.enable()


def _check_owners(problem: GroupProblem, owner: np.ndarray) -> None:
    """Raise ``IndexError`` when an owner is not a member's position (negative: unassigned)."""
    if len(owner) and int(owner.max()) >= problem.num_members:
        raise IndexError(
            f"owner {int(owner.max())} is not a member (the group has {problem.num_members})"
        )


def _member_order(problem: GroupProblem, owner: np.ndarray) -> np.ndarray:
    """The assigned partitions' global ids, by member position and then global id.

    Global ids order topics (input order) and indexes (ascending), so each member's
    partitions come out topic by topic, as the JSON lists them.  One stable sort of
    the owners: a radix sort on 16-bit keys when the group has fewer than 65,535
    members (unassigned, -1, first and dropped).

    Raises
    ------
    IndexError
        An owner that is not a member's position.
    """
    if len(owner) == 0:
        return np.zeros(0, dtype=np.intp)
    _check_owners(problem, owner)
    if problem.num_members < 0xFFFF and int(owner.min()) >= -1:
        keys = owner.astype(np.uint16)
        keys += 1  # 0: unassigned (-1 wraps around), m + 1: member m
    else:
        keys = np.maximum(owner, -1) + 1
    order = np.argsort(keys, kind="stable")
    return order[len(owner) - int(np.count_nonzero(keys)) :]


def _shared(values: np.ndarray) -> np.ndarray:
    """``values`` (integers >= 0) as Python int objects, one per distinct value, when there are
    fewer distinct values than values (an object array: its ``tolist`` only adds references);
    else ``values`` (``tolist`` makes an int per value)."""
    if len(values) and int(values.max()) < len(values):
        shared: np.ndarray = np.array(range(int(values.max()) + 1), dtype=object)[values]
        return shared
    return values


def _runs(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> list[list[int]]:
    """``values`` cut into consecutive runs (run ``r``: ``lengths[r]`` values from ``starts[r]``), one
    Python list of ints per run, made in C.

    Mostly single values (a member holding one partition of each topic, as the sticky
    and round-robin answers do): a column of them, ``tolist``'d into one-item lists,
    the longer runs replaced by slices of a list of their values; else slices of one
    list of all the values.  Partition indexes repeat across topics: when there are
    fewer distinct ones than values, the lists share one int object per index.
    """
    longer = lengths > 1
    multi = np.flatnonzero(longer)
    if 2 * len(multi) >= len(starts):
        flat = _shared(values).tolist()
        return list(map(flat.__getitem__, map(slice, starts.tolist(), (starts + lengths).tolist())))
    firsts = values if len(starts) == len(values) else values[starts]
    lists: list[list[int]] = _shared(firsts).reshape(-1, 1).tolist()
    if len(multi):
        rest = _shared(values[np.repeat(longer, lengths)]).tolist()  # the longer runs' values
        ends = np.cumsum(lengths[multi])
        slices = map(slice, (ends - lengths[multi]).tolist(), ends.tolist())
        deque(map(lists.__setitem__, multi.tolist(), map(rest.__getitem__, slices)), maxlen=0)
    return lists


def assignment_json(problem: GroupProblem, owner: np.ndarray) -> Assignment:
    """``owner`` as ``{member: {topic: [indices ascending]}}``, every member present.

    Members and topics keep the problem's input order; topics a member got
    nothing of are omitted.
    """
    owner = np.asarray(owner)
    order = _member_order(problem, owner)
    if len(order) == 0:
        return {m: {} for m in problem.members}
    members = owner[order]
    topics = problem.partition_topic[order]
    first = np.empty(len(order), dtype=bool)  # a (member, topic) list's first partition
    first[0] = True
    np.not_equal(topics[1:], topics[:-1], out=first[1:])
    first[1:] |= members[1:] != members[:-1]
    starts = np.flatnonzero(first)
    lengths = np.diff(starts, append=len(order))
    names = np.array(problem.topics, dtype=object)[topics[starts]]
    bounds = np.zeros(problem.num_members + 1, dtype=np.int64)  # each member's lists
    np.cumsum(np.bincount(members[starts], minlength=problem.num_members), out=bounds[1:])
    with _long_lived(len(starts) + problem.num_members):
        lists = _runs(problem.partition_index[order], starts, lengths)
        keys: list[str] = names.tolist()
        at: list[int] = bounds.tolist()
        return {
            member: dict(zip(keys[a:b], lists[a:b]))
            for member, a, b in zip(problem.members, at, at[1:])
        }


def assignment_table(problem: GroupProblem, owner: np.ndarray) -> pa.Table:
    """``owner`` as a pyarrow ``Table`` (``member``, ``topic``, ``partition``): one row per assigned
    partition, in partition order (topics in input order, indexes ascending), so each member's rows
    are its partitions in :func:`assignment_json`'s order.

    ``member`` and ``topic`` are dictionary-encoded, the dictionaries ``problem.members`` and
    ``problem.topics`` (an index is the member's or topic's position); ``partition`` is ``int32``.
    No sort and no Python object per row: a filter of the owner array (none when every partition
    is assigned) and the problem's topic and index arrays.

    Raises
    ------
    IndexError
        An owner that is not a member's position.
    """
    import pyarrow as pa

    owner = np.asarray(owner)
    _check_owners(problem, owner)
    assigned = owner >= 0
    if bool(assigned.all()):
        members = owner.astype(np.int32)  # a copy: the table must not change with the answer
        topics, indexes = problem.partition_topic, problem.partition_index
    else:
        members = owner[assigned].astype(np.int32)
        topics, indexes = problem.partition_topic[assigned], problem.partition_index[assigned]
    member = pa.DictionaryArray.from_arrays(
        members, pa.array(problem.members, pa.string()), safe=False
    )
    topic = pa.DictionaryArray.from_arrays(
        topics.astype(np.int32, copy=False), pa.array(problem.topics, pa.string()), safe=False
    )
    partition = pa.array(indexes.astype(np.int32))
    return pa.table({"member": member, "topic": topic, "partition": partition})


def owner_from_assignment(
    problem: GroupProblem, doc: Any, source: str = "<assignment>"
) -> np.ndarray:
    """Parse an assignment JSON into an ``owner`` array (for scoring outside answers).

    Raises
    ------
    ProblemError
        Unknown member or topic, a partition out of range, or a partition given twice.
    """
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    for name, m, index, g in assignment_items(problem, doc, source):
        if owner[g] >= 0:
            raise ProblemError(
                name, f"partition {index} is also given to {problem.members[owner[g]]}", source
            )
        owner[g] = m
    return owner


# ------------------------------------------------------------- placement JSON
def reassignment_json(problem: PlacementProblem, replicas: np.ndarray) -> dict[str, Any]:
    """The ``kafka-reassign-partitions --execute`` input, partitions in input order."""
    replicas = np.asarray(replicas)
    factors = np.diff(problem.replica_start)
    count = problem.num_partitions
    with _long_lived(2 * count + 1):
        if count and bool((factors == factors[0]).all()):  # one replication factor: a table's rows
            brokers: list[list[int]] = replicas.reshape(count, int(factors[0])).tolist()
        else:
            flat = replicas.tolist()
            start = problem.replica_start.tolist()
            brokers = list(map(flat.__getitem__, map(slice, start, start[1:])))
        log_dirs = map(mul, repeat(["any"]), factors.tolist())  # a new ["any", ...] each
        entries = [
            {"topic": topic, "partition": index, "replicas": chosen, "log_dirs": dirs}
            for topic, index, chosen, dirs in zip(
                problem.topics, problem.partitions.tolist(), brokers, log_dirs
            )
        ]
    return {"version": 1, "partitions": entries}


def reassignment_table(problem: PlacementProblem, replicas: np.ndarray) -> pa.Table:
    """``replicas`` as a pyarrow ``Table`` (``topic``, ``partition``, ``replica``, ``broker``), in
    the order of :func:`reassignment_json`: one row per replica, ``replica`` its position in the
    partition's list (0: the preferred leader), topics dictionary-encoded in order of first
    appearance."""
    import pyarrow as pa

    factors = np.diff(problem.replica_start)
    partition_of = np.repeat(np.arange(problem.num_partitions), factors)
    topics = pa.array(problem.topics, pa.string()).dictionary_encode()
    topic = pa.DictionaryArray.from_arrays(
        topics.indices.to_numpy()[partition_of], topics.dictionary
    )
    replica = np.arange(len(partition_of)) - np.repeat(problem.replica_start[:-1], factors)
    return pa.table(
        {
            "topic": topic,
            "partition": pa.array(problem.partitions[partition_of].astype(np.int32)),
            "replica": pa.array(replica.astype(np.int32)),
            "broker": pa.array(np.asarray(replicas).astype(np.int32)),
        }
    )
