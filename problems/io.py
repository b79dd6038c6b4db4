"""Reading and writing the JSON problem formats of docs/formats.md.

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

import base64
import codecs
import gc
import json
import os
import re
from collections.abc import Callable, Hashable, Iterator, Sequence, Sized
from contextlib import contextmanager
from itertools import chain, repeat
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from problems import checks
from problems.arrays import frozen
from problems.errors import ProblemError
from problems.group import GroupProblem
from problems.placement import PlacementProblem
from problems.streams import KIND as STREAMS_KIND
from problems.streams import StreamsProblem, parse_streams, streams_problem_to_json

Problem = GroupProblem | PlacementProblem | StreamsProblem


# ------------------------------------------------------------------ helpers
def _optional_string(doc: dict[str, Any], key: str, field: str) -> str | None:
    value = doc.get(key)
    return None if value is None else checks.string(value, f"{field}.{key}")


def _offsets(items: Sequence[Sized]) -> np.ndarray:
    """``[0, l0, l0 + l1, ...]``: where each of consecutive runs of ``len(item)`` starts (length n + 1)."""
    start = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, items), dtype=np.int64, count=len(items)), out=start[1:])
    return start


def _item_field(start: np.ndarray, names: Callable[[int], str]) -> Callable[[int], str]:
    """Field name of item ``i`` of runs starting at ``start``: ``NAME[k]``."""

    def field(i: int) -> str:
        run = int(np.searchsorted(start, i, side="right")) - 1
        return f"{names(run)}[{i - int(start[run])}]"

    return field


def _first_repeat(items: Sequence[Hashable]) -> int:
    """The position of the first item of ``items`` equal to an item before it (there must be one)."""
    seen: set[Hashable] = set()
    for k, item in enumerate(items):
        if item in seen:
            return k
        seen.add(item)
    raise ValueError("no item repeats")


# ------------------------------------------------------------ consumer group
MEMBER_FIELDS = frozenset({"id", "topics", "owned", "generation", "rack", "instance_id"})


def _plain_members(members_doc: list[Any]) -> bool:
    """Whether every member is an object with a valid ``id`` (a non-empty string of valid Unicode), and a
    ``generation``, ``rack`` and ``instance_id`` each absent, null or valid: checked for all members
    at once, so that the loop of :func:`_parse_group` skips those checks one member at a time (when
    this is
    False, the loop checks every member and names the first problem)."""
    if not members_doc or set(map(type, members_doc)) != {dict}:
        return False
    get = dict.get
    names = list(map(get, members_doc, repeat("id")))
    for key in ("rack", "instance_id"):
        names += [value for value in map(get, members_doc, repeat(key)) if value is not None]
    try:
        checks.strings(names, str)
    except ProblemError:
        return False
    generations = [
        value for value in map(get, members_doc, repeat("generation")) if value is not None
    ]
    return not generations or (
        set(map(type, generations)) == {int}
        and -1 <= min(generations)
        and max(generations) <= checks.INT32_MAX
    )


def _parse_group(doc: dict[str, Any]) -> GroupProblem:
    topics, counts = _parse_topics(doc)
    members_doc = _members_list(doc, len(topics))
    # (member, 0 subscription / 1 owned, text): sorted at the end
    notes: list[tuple[int, int, str]] = []
    members = _parse_members(members_doc, topics, notes)
    index = dict(zip(topics, range(len(topics))))
    owned, derived = _parse_owned(members.owned_docs, counts, index, notes)
    lags = None if doc.get("lags") is None else _parse_lags(doc["lags"], topics, counts)
    rack_fields = _parse_racks(doc.get("partition_racks"), topics, counts, members.racks)
    topic_ids = None if doc.get("topic_ids") is None else _parse_topic_ids(doc["topic_ids"], topics)
    notes.sort(key=lambda note: note[:2])
    problem = GroupProblem(
        topics=topics,
        partition_counts=frozen(counts),
        members=tuple(members.ids),
        subscriptions=tuple(members.subscriptions),
        **owned,
        generations=frozen(np.array(members.generations, dtype=np.int64)),
        has_generation=tuple(members.has_generation),
        racks=tuple(members.racks),
        instance_ids=tuple(members.instances),
        lags=lags,
        notes=tuple(note[2] for note in notes),
        **rack_fields,
        topic_ids=topic_ids,
    )
    problem.__dict__.update(derived)  # cached properties the checks built (GroupProblem is frozen)
    return problem


def _parse_topics(doc: dict[str, Any]) -> tuple[tuple[str, ...], np.ndarray]:
    """The topic names, in document order, and their partition counts (``int64``)."""
    topics_doc = doc.get("topics")
    if topics_doc is None:
        raise ProblemError("topics", "missing (an object of topic name -> partition count)")
    checks.expect(topics_doc, dict, "topics", "an object of topic name -> partition count")
    topics = tuple(topics_doc)
    checks.strings(list(topics), lambda i: "topics")
    counts = checks.integers(list(topics_doc.values()), lambda i: f"topics.{topics[i]}")
    checks.at_most(int(counts.sum()), checks.MAX_PARTITIONS, "topics", "partitions in all")
    return topics, counts


def _members_list(doc: dict[str, Any], topics: int) -> list[Any]:
    """The document's ``members`` list, its size checked against the member-topic tables' limit."""
    if doc.get("members") is None:
        raise ProblemError("members", "missing (a list of members)")
    members_doc: list[Any] = checks.expect(doc["members"], list, "members", "a list of members")
    checks.at_most(
        len(members_doc) * topics,
        checks.MAX_MEMBER_TOPICS,
        "members",
        f"members x topics ({len(members_doc):,} x {topics:,})",
    )
    return members_doc


class _Members:
    """The members' fields as read (``owned`` still a document), one item per member in order."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.subscriptions: list[tuple[str, ...]] = []
        self.owned_docs: list[dict[str, Any]] = []
        self.generations: list[int] = []
        self.has_generation: list[bool] = []
        self.racks: list[str | None] = []
        self.instances: list[str | None] = []


def _parse_members(
    members_doc: list[Any], topics: tuple[str, ...], notes: list[tuple[int, int, str]]
) -> _Members:
    """Every member checked and read, in order; notes on subscriptions to missing topics."""
    members = _Members()
    seen_ids: dict[str, int] = {}
    subscriptions = _Subscriptions(topics, notes)
    plain = _plain_members(members_doc)
    for i, member in enumerate(members_doc):
        field = f"members[{i}]"
        checks.expect(member, dict, field, "an object")
        checks.known_fields(member, MEMBER_FIELDS, field)
        if plain:
            member_id = member["id"]
        else:
            if "id" not in member:
                raise ProblemError(f"{field}.id", "missing")
            member_id = checks.string(member["id"], f"{field}.id")
        _first_seen(member_id, i, seen_ids, "member")
        members.ids.append(member_id)
        members.subscriptions.append(subscriptions.read(member, i, field))

        owned_doc = {} if member.get("owned") is None else member["owned"]
        members.owned_docs.append(
            checks.expect(owned_doc, dict, f"{field}.owned", "an object of topic -> partition list")
        )
        generation = member.get("generation")
        if generation is not None and not plain:
            checks.integer(generation, f"{field}.generation", low=-1)
        members.has_generation.append(generation is not None)
        members.generations.append(-1 if generation is None else generation)
        members.racks.append(
            member.get("rack") if plain else _optional_string(member, "rack", field)
        )
        members.instances.append(
            member.get("instance_id") if plain else _optional_string(member, "instance_id", field)
        )
    _check_instance_ids(members.instances)
    return members


class _Subscriptions:
    """Each member's subscription as a tuple of topic names, checked once per distinct list.

    Members mostly share a few subscriptions: each distinct one is checked once and stored once
    (one tuple shared by its members, not one copy per member).  ``by_list`` finds the tuple of a
    list object already seen (documents built in Python share one list among many members);
    ``shared`` the tuple of an equal list; ``checked`` (by the shared tuple's id) whether every
    topic exists.
    """

    def __init__(self, topics: tuple[str, ...], notes: list[tuple[int, int, str]]) -> None:
        self.known = set(topics)
        self.notes = notes
        self.by_list: dict[int, tuple[str, ...]] = {}
        self.shared: dict[tuple[str, ...], tuple[str, ...]] = {}
        self.checked: dict[int, bool] = {}
        self.last_list: list[str] | None = None
        self.last_key: tuple[str, ...] | None = None

    def read(self, member: dict[str, Any], i: int, field: str) -> tuple[str, ...]:
        """Member ``i``'s ``topics`` (``field`` names the member), with a note per missing topic."""
        if "topics" not in member:
            raise ProblemError(f"{field}.topics", "missing (the member's subscription)")
        subscription = checks.expect(
            member["topics"], list, f"{field}.topics", "a list of topic names"
        )
        key = self.by_list.get(id(subscription))
        # The previous member's, checked (a file has one list per member).
        if key is None and subscription == self.last_list:
            key = self.last_key
        if key is None:
            # Not hashable, perhaps: the check names the item.
            if set(map(type, subscription)) - {str}:
                checks.strings(subscription, checks.items(f"{field}.topics"))
            key = tuple(subscription)
            key = self.shared.setdefault(key, key)
            self.by_list[id(subscription)] = key
        if id(key) not in self.checked:
            checks.strings(subscription, checks.items(f"{field}.topics"))
            distinct = set(subscription)
            if len(distinct) != len(subscription):
                dup = subscription[_first_repeat(subscription)]
                raise ProblemError(f"{field}.topics", f"duplicate topic {dup!r}")
            self.checked[id(key)] = distinct <= self.known
        self.last_list, self.last_key = subscription, key
        if not self.checked[id(key)]:
            for j, name in enumerate(subscription):
                if name not in self.known:
                    text = f"{field}.topics[{j}]: topic {name!r} does not exist"
                    self.notes.append((i, 0, text + " (contributes no partitions)"))
        return key


def _check_instance_ids(instances: list[str | None]) -> None:
    """No two members share a ``group.instance.id`` (static membership)."""
    seen: dict[str, int] = {}
    for i, instance in enumerate(instances):
        if instance is None:
            continue
        if instance in seen:
            raise ProblemError(
                f"members[{i}].instance_id",
                f"duplicate instance id {instance!r} (also members[{seen[instance]}])",
            )
        seen[instance] = i


def _parse_owned(
    owned_docs: list[dict[str, Any]],
    counts: np.ndarray,
    index: dict[str, int],
    notes: list[tuple[int, int, str]],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every member's ``owned`` flattened into the arrays of :class:`GroupProblem`, checked in bulk.

    Returns the fields and the arrays the checks derive on the way (``owned_entry_topic``,
    ``owned_claim_topic``, ``owned_claims``: the problem's cached properties, not built twice).
    A million claims cost a few passes in C over the document's objects (each member's topic
    names as a tuple, looked up once per distinct tuple: :func:`_entry_topics`; the lists' types;
    one ``orjson.dumps`` of all the lists, whose text gives the lists' lengths and the indexes:
    :func:`_index_values`), no Python loop over entries or claims; the item-by-item search runs
    only to name a problem.
    """
    entry_start = _offsets(owned_docs)
    entry_member = np.repeat(np.arange(len(owned_docs), dtype=np.int32), np.diff(entry_start))
    keys = list(map(tuple, owned_docs))
    names = tuple(chain.from_iterable(keys))
    lists = list(chain.from_iterable(map(dict.values, owned_docs)))

    def entry_field(e: int) -> str:
        return f"members[{entry_member[e]}].owned.{names[e]}"

    # Topics first (names of existing topics are valid strings): only the others are checked as
    # names.
    entry_topic = _entry_topics(keys, index, len(names))
    unknown = np.flatnonzero(entry_topic < 0)
    if len(unknown):
        checks.strings(
            [names[e] for e in unknown.tolist()],
            lambda i: f"members[{entry_member[unknown[i]]}].owned",
        )
    start, lengths, indices = _owned_indices(lists, entry_field)
    # One item per list: claims are entries.
    single = len(indices) == len(lists) and not (lengths != 1).any()
    if single:
        claim_topic, claim_member = entry_topic, entry_member  # read-only once loaded: shared
    else:
        claim_topic, claim_member = (
            np.repeat(entry_topic, lengths),
            np.repeat(entry_member, lengths),
        )
        _check_repeats(lists, indices, np.repeat(np.arange(len(lists)), lengths), entry_field)
    limits = np.append(counts, 0)  # a missing topic (-1) has no partitions
    stale = None
    # Some claims stale: notes.
    if entry_topic.min(initial=0) < 0 or not (indices < limits[claim_topic]).all():
        claim_entry = np.repeat(np.arange(len(lists)), lengths)
        stale = _stale_claims(
            lists, indices, claim_entry, entry_topic, counts, entry_member, entry_field, notes
        )
    topic_start = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=topic_start[1:])
    if stale is not None:
        keep = ~stale
        claims = claim_member[keep], topic_start[claim_topic[keep]] + indices[keep]
    else:
        claims = claim_member, topic_start[claim_topic] + indices
    fields = {
        "owned_topics": names,
        "owned_entry_start": frozen(entry_start),
        "owned_start": frozen(start),
        "owned_indices": frozen(indices),
    }
    derived = {
        "owned_entry_topic": frozen(entry_topic),
        "owned_claim_topic": frozen(claim_topic),
        "owned_claims": (frozen(claims[0]), frozen(claims[1])),
    }
    return fields, derived


def _owned_indices(
    lists: list[Any], entry_field: Callable[[int], str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where each owned list starts among the claims, its length and every claim's index, checked.

    ``entry_field(e)`` names list ``e`` in an error.
    """
    if lists and set(map(type, lists)) != {list}:
        e = next(e for e, v in enumerate(lists) if type(v) is not list)
        raise ProblemError(
            entry_field(e), f"must be a list of integers >= 0, got {checks.type_name(lists[e])}"
        )
    parsed = _index_values(lists)
    if parsed is None:  # an item that is not an integer in range: the checks name it
        start = _offsets(lists)
        checks.at_most(int(start[-1]), checks.MAX_PARTITIONS, "members", "owned partitions in all")
        indices = checks.integers(list(chain.from_iterable(lists)), _item_field(start, entry_field))
        return start, np.diff(start), indices
    lengths, indices = parsed
    start = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(lengths, out=start[1:])
    checks.at_most(int(start[-1]), checks.MAX_PARTITIONS, "members", "owned partitions in all")
    return start, lengths, indices


def _entry_topics(keys: list[tuple[str, ...]], index: dict[str, int], total: int) -> np.ndarray:
    """The topic position of every owned entry (-1: no such topic), from each member's tuple of topic
    names (``keys``): members mostly own partitions of the same topics in the same order, so each
    distinct tuple is looked up once (a member whose tuple equals the previous member's is not even
    hashed) and its positions copied for the members that share it."""
    if not total:
        return np.zeros(0, dtype=np.int64)
    known: dict[tuple[str, ...], np.ndarray] = {}
    arrays: list[np.ndarray] = []
    previous: tuple[str, ...] | None = None
    positions = np.zeros(0, dtype=np.int64)
    for key in keys:
        if key != previous:
            found = known.get(key)
            if found is None:
                found = known[key] = np.fromiter(
                    map(index.get, key, repeat(-1)), dtype=np.int64, count=len(key)
                )
            positions, previous = found, key
        arrays.append(positions)
    return np.concatenate(arrays)


def _check_repeats(
    lists: list[list[int]],
    indices: np.ndarray,
    claim_entry: np.ndarray,
    entry_field: Callable[[int], str],
) -> None:
    """An error naming the first partition given twice in one owned list (``claim_entry``: each claim's list)."""
    same_entry = claim_entry[1:] == claim_entry[:-1]
    # Not strictly ascending: look for a repeat.
    if np.any(same_entry & (indices[1:] <= indices[:-1])):
        order = np.lexsort((indices, claim_entry))
        twice = np.flatnonzero(
            (claim_entry[order][1:] == claim_entry[order][:-1])
            & (indices[order][1:] == indices[order][:-1])
        )
        if len(twice):
            e = int(claim_entry[order][twice].min())
            items = lists[e]
            k = _first_repeat(items)
            raise ProblemError(f"{entry_field(e)}[{k}]", f"duplicate partition {items[k]}")


def _stale_claims(
    lists: list[list[int]],
    indices: np.ndarray,
    claim_entry: np.ndarray,
    entry_topic: np.ndarray,
    counts: np.ndarray,
    entry_member: np.ndarray,
    entry_field: Callable[[int], str],
    notes: list[tuple[int, int, str]],
) -> np.ndarray:
    """Whether each claim is stale (its topic, -1, does not exist, or the index is beyond it), with one
    note per owned list holding any."""
    limit = np.append(counts, 0)[entry_topic]  # a missing topic (-1) has no partitions
    stale: np.ndarray = indices >= limit[claim_entry]
    for e in np.unique(
        np.concatenate([np.flatnonzero(entry_topic < 0), claim_entry[stale]])
    ).tolist():
        m = int(entry_member[e])
        if entry_topic[e] < 0:
            notes.append((m, 1, f"{entry_field(e)}: topic does not exist (stale claim dropped)"))
        else:
            beyond = [k for k in lists[e] if k >= limit[e]]
            notes.append(
                (
                    m,
                    1,
                    f"{entry_field(e)}: partitions {beyond} do not exist "
                    f"(topic has {limit[e]}; stale claims dropped)",
                )
            )
    return stale


def _index_values(lists: list[list[Any]]) -> tuple[np.ndarray, np.ndarray] | None:
    """The length of each of ``lists`` (lists) and their items, flat, as ``int64`` arrays, when every
    item is an integer in 0 .. INT32_MAX; else None (the item-by-item checks then name the first
    other).

    Read from the JSON text of all the lists (one ``orjson.dumps``): when it holds only digits,
    brackets and commas, and one ``[`` per list (none nested), the numbers alone, comma-separated,
    are parsed by numpy in one call.  A comma inside a list separates two of its numbers, so
    without such commas and without empty lists every list holds one number; otherwise the lengths
    are counted in the text (:func:`_list_lengths`).
    """
    try:
        text = orjson.dumps(lists)
    except TypeError:
        # orjson.JSONEncodeError: a value JSON has no text for, or an integer beyond 64 bits.
        return None
    if text.translate(None, b"0123456789[],") or text.count(b"[") != len(lists) + 1:
        return None  # a sign, a letter, a quote, a dot; or a list in a list
    empty = _EMPTY_LIST.search(text, 1, len(text) - 1) is not None  # an empty list among the lists
    inner = text.count(b",") - max(len(lists) - 1, 0)  # the commas between the lists left out
    body = text
    if empty:  # empty lists dropped
        body = text[1:-1].replace(b",[]", b"").removeprefix(b"[]").removeprefix(b",")
    try:
        values = np.fromstring(body.translate(None, b"[]"), dtype=np.uint64, sep=",")
    except ValueError:
        return None
    lengths = _list_lengths(text) if inner or empty else np.ones(len(lists), dtype=np.int64)
    total = int(lengths.sum())
    if len(values) != total or (total and int(values.max()) > checks.INT32_MAX):
        return None
    return lengths, values.view(np.int64)  # all below 2**31: the same bits


_EMPTY_LIST = re.compile(rb"\[\]")


def _list_lengths(text: bytes) -> np.ndarray:
    """How many numbers each list of the JSON text ``text`` (``[[1,2],[3],[]]``: only digits, brackets and
    commas, no list in a list) holds: its commas plus one, none when empty."""
    chars = np.frombuffer(text, dtype=np.uint8)
    opens = np.flatnonzero(chars == ord("["))[1:]
    closes = np.flatnonzero(chars == ord("]"))[:-1]
    counter: type[np.signedinteger[Any]] = np.int64 if len(chars) >= 2**31 else np.int32
    commas = np.cumsum(chars == ord(","), dtype=counter)
    lengths: np.ndarray = (commas[closes] - commas[opens] + (closes - opens > 1)).astype(np.int64)
    return lengths


def _per_topic_lists(
    doc: Any, topics: tuple[str, ...], counts: np.ndarray, field: str, items: str, listed: str
) -> list[list[Any]]:
    """The lists of ``doc`` (``field``: an object keyed by every topic and no other), one per topic
    in topic order, each ``listed`` with one of the ``items`` per partition."""
    checks.expect(doc, dict, field, f"an object of topic -> list of {items}")
    known = set(topics)
    for name in doc:
        if name not in known:
            raise ProblemError(f"{field}.{name}", "topic is not in topics")
    per_topic = []
    for name, count in zip(topics, counts.tolist()):
        if name not in doc:
            raise ProblemError(f"{field}.{name}", f"missing ({count} {items} expected)")
        values = checks.expect(doc[name], list, f"{field}.{name}", listed)
        if len(values) != count:
            raise ProblemError(
                f"{field}.{name}",
                f"has {len(values)} {items} but the topic has {count} partitions",
            )
        per_topic.append(values)
    return per_topic


def _parse_lags(lags_doc: Any, topics: tuple[str, ...], counts: np.ndarray) -> np.ndarray:
    lists = _per_topic_lists(lags_doc, topics, counts, "lags", "lags", "a list of integers >= 0")
    start = np.concatenate(([0], np.cumsum(counts)))
    flat = list(chain.from_iterable(lists))
    return frozen(
        checks.integers(
            flat, _item_field(start, lambda t: f"lags.{topics[t]}"), high=checks.INT64_MAX
        )
    )


def _parse_racks(
    racks_doc: Any, topics: tuple[str, ...], counts: np.ndarray, member_racks: list[str | None]
) -> dict[str, Any]:
    """``partition_racks`` (optional) and the members' racks as the integer rack ids of :class:`GroupProblem`.

    When given, ``partition_racks`` lists every topic of ``topics`` (and no other), one list of
    replica racks (non-empty strings; a rack may repeat, a list may be empty) per partition.
    """
    lists = [] if racks_doc is None else _replica_rack_lists(racks_doc, topics, counts)
    start = _offsets(lists)
    checks.at_most(int(start[-1]), checks.MAX_PARTITIONS, "partition_racks", "replica racks in all")
    flat = list(chain.from_iterable(lists))
    try:
        checks.strings(list(set(flat)) if set(map(type, flat)) <= {str} else flat, lambda _: "")
    except ProblemError:
        checks.strings(flat, _item_field(start, lambda p: _rack_field(topics, counts, p)))
    names = dict.fromkeys(flat)
    names.update(dict.fromkeys(r for r in member_racks if r is not None))
    ids = {name: r for r, name in enumerate(names)}
    member_rack = np.fromiter(
        (-1 if r is None else ids[r] for r in member_racks), dtype=np.int32, count=len(member_racks)
    )
    fields: dict[str, Any] = {"rack_names": tuple(names), "member_rack": frozen(member_rack)}
    if racks_doc is not None:
        fields["replica_rack_start"] = frozen(start)
        fields["replica_racks"] = frozen(
            np.fromiter(map(ids.__getitem__, flat), dtype=np.int32, count=len(flat))
        )
    return fields


def _replica_rack_lists(
    racks_doc: Any, topics: tuple[str, ...], counts: np.ndarray
) -> list[list[Any]]:
    """The replica rack lists of ``partition_racks``, one per partition by global id (the lists'
    items not checked yet)."""
    per_topic = _per_topic_lists(
        racks_doc,
        topics,
        counts,
        "partition_racks",
        "replica rack lists",
        "a list of replica rack lists, one per partition",
    )
    lists = list(chain.from_iterable(per_topic))
    if lists and set(map(type, lists)) != {list}:
        p = next(p for p, v in enumerate(lists) if type(v) is not list)
        raise ProblemError(
            _rack_field(topics, counts, p),
            f"must be a list of rack names, got {checks.type_name(lists[p])}",
        )
    return lists


def _rack_field(topics: tuple[str, ...], counts: np.ndarray, p: int) -> str:
    """``partition_racks.TOPIC[INDEX]`` of global partition ``p``."""
    start = np.concatenate(([0], np.cumsum(counts)))
    t = int(np.searchsorted(start, p, side="right")) - 1
    return f"partition_racks.{topics[t]}[{p - int(start[t])}]"


def _parse_topic_ids(ids_doc: Any, topics: tuple[str, ...]) -> tuple[str, ...]:
    """KIP-848 topic ids: Kafka's ``Uuid.toString`` (URL-safe base64 of 16 bytes, no padding), one per topic."""
    checks.expect(ids_doc, dict, "topic_ids", "an object of topic -> Kafka topic id (base64 Uuid)")
    known = set(topics)
    for name in ids_doc:
        if name not in known:
            raise ProblemError(f"topic_ids.{name}", "topic is not in topics")
    seen: dict[bytes, str] = {}
    for name in topics:
        if name not in ids_doc:
            raise ProblemError(f"topic_ids.{name}", "missing (give every topic an id, or none)")
        text = checks.string(ids_doc[name], f"topic_ids.{name}")
        try:
            raw = base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
        except ValueError:
            raw = b""
        if len(text) not in (22, 24) or len(raw) != 16:
            raise ProblemError(
                f"topic_ids.{name}",
                f"{text!r} is not a Kafka Uuid (22 characters of URL-safe base64)",
            )
        if raw == bytes(16):
            raise ProblemError(f"topic_ids.{name}", "the zero Uuid is not a topic id")
        if raw in seen:
            raise ProblemError(
                f"topic_ids.{name}", f"duplicate topic id {text!r} (also topic {seen[raw]!r})"
            )
        seen[raw] = name
    return tuple(ids_doc[name] for name in topics)


# --------------------------------------------------------- replica placement
def _placement_lists(
    partitions_doc: list[Any], live: int
) -> tuple[list[str], list[int], list[int], list[int]] | None:
    """``(topics, indices, starts, flat replicas)`` when every partition passes the loop's checks, else None.

    The loop's checks of :func:`_parse_placement`, done in bulk (the int32 range of replicas is
    checked once after either); on any failure the loop runs and names the first problem, so errors
    are unchanged.
    """
    if not partitions_doc or set(map(type, partitions_doc)) != {dict}:
        return None
    try:
        topics = [part["topic"] for part in partitions_doc]
        indices = [part["partition"] for part in partitions_doc]
        replicas = [part["replicas"] for part in partitions_doc]
    except KeyError:
        return None
    if (
        set(map(type, topics)) != {str}
        or set(map(type, indices)) != {int}
        or set(map(type, replicas)) != {list}
    ):
        return None
    lengths = np.fromiter(map(len, replicas), dtype=np.int64, count=len(replicas))
    if (
        int(lengths.min()) < 1
        or int(lengths.max()) > live
        or int(lengths.sum()) > checks.MAX_PARTITIONS
    ):
        return None
    flat = list(chain.from_iterable(replicas))
    if set(map(type, flat)) != {int} or len(set(zip(topics, indices))) != len(topics):
        return None
    try:
        checks.strings(topics, str)
        checks.integers(indices, str)
        flat_array = checks.integers(flat, str, high=checks.INT64_MAX)
    except ProblemError:
        return None
    # A broker twice in one partition: equal neighbours once each partition's replicas are sorted.
    owner = np.repeat(np.arange(len(replicas)), lengths)
    order = np.lexsort((flat_array, owner))
    if np.any(
        (owner[order][1:] == owner[order][:-1]) & (flat_array[order][1:] == flat_array[order][:-1])
    ):
        return None
    starts = np.zeros(len(replicas) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    return topics, indices, starts.tolist(), flat


def _parse_placement(doc: dict[str, Any]) -> PlacementProblem:
    ids, racks = _parse_brokers(doc)
    partitions_doc = checks.expect(
        doc.get("partitions"), list, "partitions", "a list of partitions"
    )
    checks.at_most(len(partitions_doc), checks.MAX_PARTITIONS, "partitions", "partitions")
    # Every check passed in bulk, or the partitions are read one by one (naming the first problem).
    bulk = _placement_lists(partitions_doc, len(ids))
    topics, indices, starts, flat = bulk or _partitions_one_by_one(partitions_doc, len(ids))
    replica_start = np.array(starts, dtype=np.int64)
    replica_brokers = checks.integers(
        flat, _item_field(replica_start, lambda p: f"partitions[{p}].replicas")
    )
    return PlacementProblem(
        broker_ids=frozen(np.array(ids, dtype=np.int64)),
        broker_racks=tuple(racks),
        topics=tuple(topics),
        partitions=frozen(np.array(indices, dtype=np.int64)),
        replica_start=frozen(replica_start),
        replica_brokers=frozen(replica_brokers),
    )


def _first_seen(item_id: Any, i: int, seen: dict[Any, int], what: str) -> None:
    """Note that ``{what}s[i]`` has ``item_id``, refused when an earlier one has it too."""
    if item_id in seen:
        raise ProblemError(
            f"{what}s[{i}].id",
            f"duplicate {what} id {item_id!r} (also {what}s[{seen[item_id]}])",
        )
    seen[item_id] = i


def _parse_brokers(doc: dict[str, Any]) -> tuple[list[int], list[str | None]]:
    """The live brokers' ids and racks, in document order."""
    brokers_doc = checks.expect(doc.get("brokers"), list, "brokers", "a list of brokers")
    ids: list[int] = []
    racks: list[str | None] = []
    position: dict[int, int] = {}
    for i, broker in enumerate(brokers_doc):
        field = f"brokers[{i}]"
        checks.expect(broker, dict, field, "an object")
        if "id" not in broker:
            raise ProblemError(f"{field}.id", "missing")
        broker_id = checks.integer(broker["id"], f"{field}.id")
        _first_seen(broker_id, i, position, "broker")
        ids.append(broker_id)
        racks.append(_optional_string(broker, "rack", field))
    if racks and any(r is None for r in racks) and any(r is not None for r in racks):
        missing = racks.index(None)
        raise ProblemError(
            f"brokers[{missing}].rack",
            "missing while other brokers have racks (as in Kafka, either every broker has a rack or none does)",
        )
    if not ids:
        raise ProblemError("brokers", "must list at least one live broker")
    return ids, racks


def _partitions_one_by_one(
    partitions_doc: list[Any], live: int
) -> tuple[list[str], list[int], list[int], list[int]]:
    """As :func:`_placement_lists`, partition by partition: the first problem is named."""
    topics: list[str] = []
    indices: list[int] = []
    starts, flat = [0], []
    seen: dict[tuple[str, int], int] = {}
    for i, part in enumerate(partitions_doc):
        field = f"partitions[{i}]"
        checks.expect(part, dict, field, "an object")
        for key in ("topic", "partition", "replicas"):
            if key not in part:
                raise ProblemError(f"{field}.{key}", "missing")
        topic = checks.string(part["topic"], f"{field}.topic")
        index = checks.integer(part["partition"], f"{field}.partition")
        if (topic, index) in seen:
            raise ProblemError(
                f"{field}",
                f"duplicate partition {topic}-{index} (also partitions[{seen[topic, index]}])",
            )
        seen[topic, index] = i
        replicas = checks.expect(
            part["replicas"], list, f"{field}.replicas", "a list of broker ids"
        )
        if not replicas:
            raise ProblemError(f"{field}.replicas", "must have at least one replica")
        checks.integers(replicas, checks.items(f"{field}.replicas"))
        if len(set(replicas)) != len(replicas):
            dup = next(b for j, b in enumerate(replicas) if b in replicas[:j])
            raise ProblemError(f"{field}.replicas", f"broker {dup} appears twice")
        if len(replicas) > live:
            raise ProblemError(
                f"{field}.replicas",
                f"replication factor {len(replicas)} is larger than the {live} live brokers",
            )
        topics.append(topic)
        indices.append(index)
        flat.extend(replicas)
        starts.append(len(flat))
        if len(flat) > checks.MAX_PARTITIONS:
            checks.at_most(len(flat), checks.MAX_PARTITIONS, "partitions", "replicas in all")
    return topics, indices, starts, flat


# ------------------------------------------------------------------- public
def parse_problem(doc: Any) -> GroupProblem | PlacementProblem | StreamsProblem:
    """Build a problem from a parsed JSON document (errors name no file)."""
    checks.expect(doc, dict, "", "a JSON object")
    if doc.get("kind") == STREAMS_KIND:  # problems/streams/format.py
        return parse_streams(doc)
    if "subtopologies" in doc:
        raise ProblemError("kind", f"must be {STREAMS_KIND!r} in a streams group (subtopologies)")
    if "brokers" in doc or "partitions" in doc:
        unknown = doc.keys() - {"brokers", "partitions"}
        if unknown:
            raise ProblemError(sorted(map(str, unknown))[0], "unknown field in a replica placement")
        return _parse_placement(doc)
    if "topics" in doc or "members" in doc:
        unknown = doc.keys() - {"topics", "members", "lags", "partition_racks", "topic_ids"}
        if unknown:
            raise ProblemError(sorted(map(str, unknown))[0], "unknown field in a consumer group")
        return _parse_group(doc)  # owned claims resolved here, not inside the first assign
    raise ProblemError(
        "",
        "neither a consumer group (topics, members) nor a replica placement (brokers, partitions)",
    )


def read_json(data: bytes, name: str) -> Any:
    """Parse a JSON document (UTF-8, an optional byte order mark) with ``orjson``, strictly.

    Beyond JSON's grammar and valid UTF-8, ``orjson`` refuses nesting deeper
    than 1,024 levels (an error, not a ``RecursionError``).  Keys given twice
    are looked for by :func:`_check_keys` once the document is known.

    Raises
    ------
    ProblemError
        Naming ``name``.
    """
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise ProblemError(
            "", f"not JSON: {error.msg} at line {error.lineno} column {error.colno}", name
        ) from None


def _check_keys(data: bytes, doc: Any, name: str) -> None:
    """An error naming the path of the first object key given twice in ``data``, if any.

    JSON allows a key twice (``orjson`` and Python's ``json`` keep the last value
    silently); a problem file must not.  Every member of every object puts one
    ``:`` in the text outside strings, so when the text has no more ``:`` than the
    objects of the format hold keys (:func:`_format_keys`, an undercount at
    worst), no key was given twice: the common case costs one ``bytes.count``.
    Otherwise (a ``:`` inside a string, or a repeated key) the exact search runs.
    """
    if data.count(b":") != _format_keys(doc):
        _find_duplicate_key(data, name)


def _format_keys(doc: Any) -> int:
    """Keys of the objects the two formats have (the document, topics, lags, partition_racks, topic_ids, members, owned,
    brokers, partitions); objects elsewhere are not counted."""
    if type(doc) is not dict:
        return 0
    total = len(doc) + sum(
        len(doc[k])
        for k in ("topics", "lags", "partition_racks", "topic_ids")
        if type(doc.get(k)) is dict
    )
    for key in ("members", "brokers", "partitions"):
        items = doc.get(key)
        if type(items) is list:
            for item in items:
                if type(item) is dict:
                    total += len(item)
                    if type(item.get("owned")) is dict:
                        total += len(item["owned"])
    return total


_CONTAINERS = {dict, list}


class _Repeated(dict[str, Any]):
    """An object parsed by :func:`_find_duplicate_key` whose ``key`` was given twice."""

    key: str


def _find_duplicate_key(data: bytes, name: str) -> None:
    """Raise the first key given twice in an object of ``data`` (with its path), if there is one."""

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(pairs)
        if len(result) == len(pairs):
            return result
        repeated = _Repeated(result)
        repeated.key = pairs[_first_repeat([key for key, _ in pairs])][0]
        return repeated

    try:
        doc = json.loads(data.removeprefix(codecs.BOM_UTF8), object_pairs_hook=pairs_hook)
    except RecursionError:  # deeper than Python's json goes (orjson took it): no search
        return
    stack: list[tuple[Any, str]] = [(doc, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, _Repeated):
            raise ProblemError(path, f"key {node.key!r} given twice in the same object", name)
        if type(node) is list:
            stack.extend(
                (item, f"{path}[{i}]")
                for i, item in reversed(list(enumerate(node)))
                if type(item) in _CONTAINERS or isinstance(item, dict)
            )
        elif isinstance(node, dict):
            stack.extend(
                (item, f"{path}.{key}" if path else str(key))
                for key, item in reversed(node.items())
                if type(item) in _CONTAINERS or isinstance(item, dict)
            )


def read_problem_source(
    source: str | os.PathLike[str] | dict[str, Any],
) -> tuple[str, bytes | None, Any]:
    """``(name, text, document)`` of a path, JSON text or an in-memory ``dict`` (text ``None``).

    A string is a path when a file of that name exists or when it does not
    start with ``{`` or ``[``; otherwise it is JSON text (named ``<text>``).
    """
    if not isinstance(source, (str, os.PathLike)):
        return "<dict>", None, source
    if (
        isinstance(source, str)
        and source.lstrip().startswith(("{", "["))
        and not os.path.exists(source)
    ):
        data = source.encode("utf-8", "surrogatepass")
        return "<text>", data, read_json(data, "<text>")
    name = os.fspath(source)
    try:
        data = Path(source).read_bytes()
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise ProblemError("", f"cannot read: {reason}", name) from None
    return name, data, read_json(data, name)


def load_problem(
    source: str | os.PathLike[str] | dict[str, Any],
) -> GroupProblem | PlacementProblem | StreamsProblem:
    """Load a problem from a path, JSON text or a parsed ``dict``.

    Every entry point goes through the same checks (:mod:`problems.checks`):
    Kafka's integer types, totals before any array is sized, valid Unicode;
    files and text also reject keys given twice (with their path) and nesting
    deeper than 1,024 levels.

    Raises
    ------
    ProblemError
        The document is malformed; the message names the file, field and problem.
    """
    with _no_gc():
        name, data, doc = read_problem_source(source)
        try:
            problem = parse_problem(doc)
        except ProblemError as error:
            if data is not None:  # a key given twice may be the cause: say so first
                _check_keys(data, doc, name)
            raise error.with_source(name) from None
        if data is not None:
            _check_keys(data, doc, name)
        del doc  # a document read here is freed before the collector resumes: it would walk every list of it
        return problem


@contextmanager
def _no_gc() -> Iterator[None]:
    """The cyclic garbage collector paused: a document of millions of lists and
    strings (none of them in a cycle) otherwise triggers repeated full collections
    while it is parsed and checked (half the reading time at Kafka's large shape)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def problem_to_json(problem: GroupProblem | PlacementProblem | StreamsProblem) -> dict[str, Any]:
    """The JSON document of ``problem`` (the inverse of :func:`parse_problem`)."""
    if isinstance(problem, StreamsProblem):
        return streams_problem_to_json(problem)
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
    if problem.topic_ids is not None:
        doc["topic_ids"] = dict(zip(problem.topics, problem.topic_ids))
    if problem.lags is not None:
        doc["lags"] = {
            t: problem.lags[problem.topic_start[i] : problem.topic_start[i + 1]].tolist()
            for i, t in enumerate(problem.topics)
        }
    racks = problem.partition_rack_lists
    if problem.has_racks and racks is not None:
        doc["partition_racks"] = {
            t: [list(r) for r in racks[problem.topic_start[i] : problem.topic_start[i + 1]]]
            for i, t in enumerate(problem.topics)
        }
    return doc


def load_streams_problem(source: Any) -> StreamsProblem:
    """:func:`problems.load_problem` for a streams-group document (a path, JSON text or dict).

    Raises
    ------
    ProblemError
        The document is malformed, or is not a streams group.
    """
    problem = load_problem(source)
    if not isinstance(problem, StreamsProblem):
        raise ProblemError("kind", f"must be {STREAMS_KIND!r} (this is another kind of problem)")
    return problem
