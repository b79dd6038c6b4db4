"""Reading and writing the JSON problem formats of DESIGN.md section 2.

``load_problem`` accepts a path, JSON text or an already-parsed ``dict`` and
returns a :class:`~problems.group.GroupProblem` (a document with ``topics`` and
``members``) or a :class:`~problems.placement.PlacementProblem` (``brokers`` and
``partitions``).  Every malformed document raises :class:`ProblemError` naming
the file, the field and the problem.  What Kafka itself treats as normal is not
an error: a subscription to a topic that does not exist contributes no
partitions, and owned partitions that do not exist are stale claims, dropped
(both are listed in ``GroupProblem.notes``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from problems.errors import ProblemError
from problems.group import GroupProblem, _frozen
from problems.placement import PlacementProblem

Problem = GroupProblem | PlacementProblem


# ------------------------------------------------------------------ helpers
def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)


def _expect(value: Any, kind: type, field: str, what: str) -> Any:
    if type(value) is not kind:
        raise ProblemError(field, f"must be {what}, got {_type_name(value)}")
    return value


def _count(value: Any, field: str) -> int:
    if type(value) is not int:
        raise ProblemError(field, f"must be an integer >= 0, got {_type_name(value)}")
    if value < 0:
        raise ProblemError(field, f"must be an integer >= 0, got {value}")
    return value


def _string(value: Any, field: str) -> str:
    _expect(value, str, field, "a string")
    if not value:
        raise ProblemError(field, "must be a non-empty string")
    return value


def _optional_string(doc: dict, key: str, field: str) -> str | None:
    value = doc.get(key)
    return None if value is None else _string(value, f"{field}.{key}")


def _int_list(value: Any, field: str, *, unique: bool) -> list[int]:
    _expect(value, list, field, "a list of integers >= 0")
    for i, item in enumerate(value):
        if type(item) is not int or item < 0:
            shown = item if type(item) is int else _type_name(item)
            raise ProblemError(f"{field}[{i}]", f"must be an integer >= 0, got {shown}")
    if unique and len(set(value)) != len(value):
        seen: set[int] = set()
        for i, item in enumerate(value):
            if item in seen:
                raise ProblemError(f"{field}[{i}]", f"duplicate partition {item}")
            seen.add(item)
    return value


# ------------------------------------------------------------ consumer group
def _parse_group(doc: dict) -> GroupProblem:
    topics_doc = doc.get("topics")
    if topics_doc is None:
        raise ProblemError("topics", "missing (an object of topic name -> partition count)")
    _expect(topics_doc, dict, "topics", "an object of topic name -> partition count")
    topics = tuple(topics_doc)
    for name in topics:
        if not name:
            raise ProblemError("topics", "topic names must be non-empty")
    counts = np.array(
        [_count(topics_doc[name], f"topics.{name}") for name in topics], dtype=np.int64
    )

    members_doc = doc.get("members")
    if members_doc is None:
        raise ProblemError("members", "missing (a list of members)")
    _expect(members_doc, list, "members", "a list of members")

    ids: list[str] = []
    seen_ids: dict[str, int] = {}
    subscriptions, owned, generations, has_generation, racks, instances = [], [], [], [], [], []
    notes: list[str] = []
    count_of = dict(zip(topics, counts.tolist()))
    for i, member in enumerate(members_doc):
        field = f"members[{i}]"
        _expect(member, dict, field, "an object")
        unknown = set(member) - {"id", "topics", "owned", "generation", "rack", "instance_id"}
        if unknown:
            raise ProblemError(f"{field}.{sorted(unknown)[0]}", "unknown field")
        if "id" not in member:
            raise ProblemError(f"{field}.id", "missing")
        member_id = _string(member["id"], f"{field}.id")
        if member_id in seen_ids:
            raise ProblemError(
                f"{field}.id", f"duplicate member id {member_id!r} (also members[{seen_ids[member_id]}])"
            )
        seen_ids[member_id] = i
        ids.append(member_id)

        if "topics" not in member:
            raise ProblemError(f"{field}.topics", "missing (the member's subscription)")
        subscription = _expect(member["topics"], list, f"{field}.topics", "a list of topic names")
        for j, name in enumerate(subscription):
            _string(name, f"{field}.topics[{j}]")
        if len(set(subscription)) != len(subscription):
            dup = next(n for j, n in enumerate(subscription) if n in subscription[:j])
            raise ProblemError(f"{field}.topics", f"duplicate topic {dup!r}")
        subscriptions.append(tuple(subscription))
        for j, name in enumerate(subscription):
            if name not in count_of:
                notes.append(f"{field}.topics[{j}]: topic {name!r} does not exist (contributes no partitions)")

        owned_doc = member.get("owned") or {}
        _expect(owned_doc, dict, f"{field}.owned", "an object of topic -> partition list")
        member_owned: dict[str, tuple[int, ...]] = {}
        for topic, indices in owned_doc.items():
            indices = _int_list(indices, f"{field}.owned.{topic}", unique=True)
            member_owned[topic] = tuple(indices)
            if topic not in count_of:
                notes.append(f"{field}.owned.{topic}: topic does not exist (stale claim dropped)")
            else:
                beyond = [k for k in indices if k >= count_of[topic]]
                if beyond:
                    notes.append(
                        f"{field}.owned.{topic}: partitions {beyond} do not exist "
                        f"(topic has {count_of[topic]}; stale claims dropped)"
                    )
        owned.append(member_owned)

        generation = member.get("generation")
        if generation is not None:
            _expect(generation, int, f"{field}.generation", "an integer")
        has_generation.append(generation is not None)
        generations.append(-1 if generation is None else generation)
        racks.append(_optional_string(member, "rack", field))
        instances.append(_optional_string(member, "instance_id", field))

    seen_instances: dict[str, int] = {}
    for i, instance in enumerate(instances):
        if instance is None:
            continue
        if instance in seen_instances:
            raise ProblemError(
                f"members[{i}].instance_id",
                f"duplicate instance id {instance!r} (also members[{seen_instances[instance]}])",
            )
        seen_instances[instance] = i

    lags = None
    if doc.get("lags") is not None:
        lags_doc = _expect(doc["lags"], dict, "lags", "an object of topic -> list of lags")
        for name in lags_doc:
            if name not in count_of:
                raise ProblemError(f"lags.{name}", "topic is not in topics")
        parts = []
        for name, count in zip(topics, counts.tolist()):
            if name not in lags_doc:
                raise ProblemError(f"lags.{name}", f"missing ({count} lags expected)")
            values = lags_doc[name]
            _expect(values, list, f"lags.{name}", "a list of integers >= 0")
            if len(values) != count:
                raise ProblemError(
                    f"lags.{name}", f"has {len(values)} lags but the topic has {count} partitions"
                )
            for k, value in enumerate(values):
                if type(value) is not int or value < 0:
                    shown = value if type(value) is int else _type_name(value)
                    raise ProblemError(f"lags.{name}[{k}]", f"must be an integer >= 0, got {shown}")
            parts.append(np.asarray(values, dtype=np.int64))
        lags = _frozen(np.concatenate(parts) if parts else np.zeros(0, np.int64))

    return GroupProblem(
        topics=topics,
        partition_counts=_frozen(counts),
        members=tuple(ids),
        subscriptions=tuple(subscriptions),
        owned=tuple(owned),
        generations=_frozen(np.array(generations, dtype=np.int64)),
        has_generation=tuple(has_generation),
        racks=tuple(racks),
        instance_ids=tuple(instances),
        lags=lags,
        notes=tuple(notes),
    )


# --------------------------------------------------------- replica placement
def _parse_placement(doc: dict) -> PlacementProblem:
    brokers_doc = _expect(doc.get("brokers"), list, "brokers", "a list of brokers")
    ids: list[int] = []
    racks: list[str | None] = []
    position: dict[int, int] = {}
    for i, broker in enumerate(brokers_doc):
        field = f"brokers[{i}]"
        _expect(broker, dict, field, "an object")
        if "id" not in broker:
            raise ProblemError(f"{field}.id", "missing")
        broker_id = _expect(broker["id"], int, f"{field}.id", "an integer")
        if broker_id in position:
            raise ProblemError(f"{field}.id", f"duplicate broker id {broker_id} (also brokers[{position[broker_id]}])")
        position[broker_id] = i
        ids.append(broker_id)
        racks.append(_optional_string(broker, "rack", field))
    if racks and any(r is None for r in racks) and any(r is not None for r in racks):
        missing = racks.index(None)
        raise ProblemError(
            f"brokers[{missing}].rack",
            "missing while other brokers have racks (as in Kafka, either every broker has a rack or none does)",
        )

    partitions_doc = _expect(doc.get("partitions"), list, "partitions", "a list of partitions")
    topics: list[str] = []
    indices: list[int] = []
    starts = [0]
    flat: list[int] = []
    seen: dict[tuple[str, int], int] = {}
    for i, part in enumerate(partitions_doc):
        field = f"partitions[{i}]"
        _expect(part, dict, field, "an object")
        for key in ("topic", "partition", "replicas"):
            if key not in part:
                raise ProblemError(f"{field}.{key}", "missing")
        topic = _string(part["topic"], f"{field}.topic")
        index = _count(part["partition"], f"{field}.partition")
        if (topic, index) in seen:
            raise ProblemError(f"{field}", f"duplicate partition {topic}-{index} (also partitions[{seen[topic, index]}])")
        seen[topic, index] = i
        replicas = _expect(part["replicas"], list, f"{field}.replicas", "a list of broker ids")
        if not replicas:
            raise ProblemError(f"{field}.replicas", "must have at least one replica")
        for j, broker in enumerate(replicas):
            _expect(broker, int, f"{field}.replicas[{j}]", "a broker id (an integer)")
        if len(set(replicas)) != len(replicas):
            dup = next(b for j, b in enumerate(replicas) if b in replicas[:j])
            raise ProblemError(f"{field}.replicas", f"broker {dup} appears twice")
        if len(replicas) > len(ids):
            raise ProblemError(
                f"{field}.replicas",
                f"replication factor {len(replicas)} is larger than the {len(ids)} live brokers",
            )
        topics.append(topic)
        indices.append(index)
        flat.extend(replicas)
        starts.append(len(flat))

    return PlacementProblem(
        broker_ids=_frozen(np.array(ids, dtype=np.int64)),
        broker_racks=tuple(racks),
        topics=tuple(topics),
        partitions=_frozen(np.array(indices, dtype=np.int64)),
        replica_start=_frozen(np.array(starts, dtype=np.int64)),
        replica_brokers=_frozen(np.array(flat, dtype=np.int64)),
    )


# ------------------------------------------------------------------- public
def parse_problem(doc: Any) -> GroupProblem | PlacementProblem:
    """Build a problem from a parsed JSON document (errors name no file)."""
    _expect(doc, dict, "", "a JSON object")
    if "brokers" in doc or "partitions" in doc:
        unknown = set(doc) - {"brokers", "partitions"}
        if unknown:
            raise ProblemError(sorted(unknown)[0], "unknown field in a replica placement")
        return _parse_placement(doc)
    if "topics" in doc or "members" in doc:
        unknown = set(doc) - {"topics", "members", "lags"}
        if unknown:
            raise ProblemError(sorted(unknown)[0], "unknown field in a consumer group")
        return _parse_group(doc)
    raise ProblemError(
        "", "neither a consumer group (topics, members) nor a replica placement (brokers, partitions)"
    )


def load_problem(source: str | os.PathLike | dict) -> GroupProblem | PlacementProblem:
    """Load a problem from a path, JSON text or a parsed ``dict``.

    Raises
    ------
    ProblemError
        The document is malformed; the message names the file, field and problem.
    """
    if not isinstance(source, (str, os.PathLike)):
        name, doc = "<dict>", source
    else:
        text_given = isinstance(source, str) and source.lstrip().startswith(("{", "["))
        name = "<text>" if text_given else os.fspath(source)
        try:
            text = source if text_given else Path(source).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            reason = getattr(error, "strerror", None) or str(error)
            raise ProblemError("", f"cannot read: {reason}", name) from None
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as error:
            raise ProblemError(
                "", f"not JSON: {error.msg} at line {error.lineno} column {error.colno}", name
            ) from None
    try:
        return parse_problem(doc)
    except ProblemError as error:
        raise error.with_source(name) from None


def problem_to_json(problem: GroupProblem | PlacementProblem) -> dict:
    """The JSON document of ``problem`` (the inverse of :func:`parse_problem`)."""
    if isinstance(problem, PlacementProblem):
        brokers = []
        for broker_id, rack in zip(problem.broker_ids.tolist(), problem.broker_racks):
            brokers.append({"id": broker_id} if rack is None else {"id": broker_id, "rack": rack})
        partitions = [
            {"topic": topic, "partition": int(index), "replicas": problem.replicas(p).tolist()}
            for p, (topic, index) in enumerate(zip(problem.topics, problem.partitions))
        ]
        return {"brokers": brokers, "partitions": partitions}

    members = []
    for m, member_id in enumerate(problem.members):
        member: dict[str, Any] = {"id": member_id, "topics": list(problem.subscriptions[m])}
        if problem.owned[m]:
            member["owned"] = {t: list(ix) for t, ix in problem.owned[m].items()}
        if problem.has_generation[m]:
            member["generation"] = int(problem.generations[m])
        if problem.racks[m] is not None:
            member["rack"] = problem.racks[m]
        if problem.instance_ids[m] is not None:
            member["instance_id"] = problem.instance_ids[m]
        members.append(member)
    doc: dict[str, Any] = {
        "topics": dict(zip(problem.topics, problem.partition_counts.tolist())),
        "members": members,
    }
    if problem.lags is not None:
        doc["lags"] = {
            t: problem.lags[problem.topic_start[i] : problem.topic_start[i + 1]].tolist()
            for i, t in enumerate(problem.topics)
        }
    return doc
