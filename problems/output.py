"""The output JSON of ``rebalance-lab assign``, written from the arrays in one pass.

:func:`result_bytes` gives exactly the bytes ``json.dumps(result.to_json())``
gives (the standard library's default separators ``", "`` and ``": "``, non-ASCII
escaped), without building the ``{member: {topic: [indexes]}}`` dicts and lists
first: a million-partition assignment is a million small lists that cost more to
build and to walk than the assignment itself.

How: the answer is sorted by (member, global id) once; the partition indexes
become their decimal text in one ``orjson.dumps`` call; every piece of the
output (a member's ``"id": {``, a topic's ``"name": [``, a separator, an index,
a closing bracket) is then a slice of one source buffer, and the output is one
numpy gather of those slices in order.
"""

from __future__ import annotations

import json

import numpy as np
import orjson

from problems.group import GroupProblem

_SEPARATOR, _CLOSE_LIST, _CLOSE_OBJECT = b", ", b"]", b"}"
_CONSTANTS = _SEPARATOR + _CLOSE_LIST + _CLOSE_OBJECT
_AT_SEPARATOR, _AT_CLOSE_LIST, _AT_CLOSE_OBJECT = 0, 2, 3


def _blob(texts: list[bytes], base: int) -> tuple[bytes, np.ndarray, np.ndarray]:
    """``texts`` joined, with each text's offset (from ``base``) and length."""
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    offsets = base + np.cumsum(lengths) - lengths
    return b"".join(texts), offsets, lengths


def assignment_bytes(problem: GroupProblem, owner: np.ndarray) -> bytes:
    """``json.dumps(assignment_json(problem, owner)).encode()``, built from the arrays."""
    if problem.num_members == 0:
        return b"{}"
    owner = np.asarray(owner)
    assigned = np.flatnonzero(owner >= 0)
    order = assigned[np.argsort(owner[assigned], kind="stable")]  # by member, then global id
    members = owner[order].astype(np.int64)
    topics = problem.partition_topic[order].astype(np.int64)
    count = len(order)

    # The source buffer: constants, member openings, topic openings (first in a member, later), indexes.
    names = [json.dumps(m).encode() for m in problem.members]
    member_blob, member_at, member_len = _blob(
        [name + b": {" if m == 0 else _SEPARATOR + name + b": {" for m, name in enumerate(names)], len(_CONSTANTS))
    topic_names = [json.dumps(t).encode() + b": [" for t in problem.topics]
    base = len(_CONSTANTS) + len(member_blob)
    first_blob, first_at, first_len = _blob(topic_names, base)
    base += len(first_blob)
    later_blob, later_at, later_len = _blob([_SEPARATOR + name for name in topic_names], base)
    base += len(later_blob)
    numbers = orjson.dumps(problem.partition_index[order], option=orjson.OPT_SERIALIZE_NUMPY)  # b"[0,1,...]"
    digits = np.frombuffer(numbers, dtype=np.uint8)
    commas = np.flatnonzero(digits == ord(","))
    number_at = base + np.concatenate(([1], commas + 1))[:count]
    number_len = np.concatenate((commas, [len(numbers) - 1]))[:count] - (number_at - base)
    source = _CONSTANTS + member_blob + first_blob + later_blob + numbers

    # Events in output order: member m opens, its claims follow, it closes; three slices each.
    new_member = np.ones(count, dtype=bool)
    new_member[1:] = members[1:] != members[:-1]
    new_group = new_member.copy()
    new_group[1:] |= topics[1:] != topics[:-1]
    group_ends = np.append(new_group[1:], True) if count else new_group
    claims_before = np.zeros(problem.num_members + 1, dtype=np.int64)
    np.cumsum(np.bincount(members, minlength=problem.num_members), out=claims_before[1:])
    rows = count + 2 * problem.num_members
    at = np.zeros((rows, 3), dtype=np.int64)
    length = np.zeros((rows, 3), dtype=np.int64)
    m = np.arange(problem.num_members)
    opening, closing = claims_before[:-1] + 2 * m, claims_before[1:] + 2 * m + 1
    at[opening, 0], length[opening, 0] = member_at, member_len
    at[closing, 0], length[closing, 0] = _AT_CLOSE_OBJECT, 1
    claim = np.arange(count) + 2 * members + 1
    at[claim, 0] = np.where(new_group, np.where(new_member, first_at[topics], later_at[topics]), _AT_SEPARATOR)
    length[claim, 0] = np.where(new_group, np.where(new_member, first_len[topics], later_len[topics]), 2)
    at[claim, 1], length[claim, 1] = number_at, number_len
    at[claim, 2], length[claim, 2] = _AT_CLOSE_LIST, group_ends
    return b"{" + _gather(source, at.ravel(), length.ravel()) + b"}"


def _gather(source: bytes, offsets: np.ndarray, lengths: np.ndarray) -> bytes:
    """The slices ``source[offsets[i]:offsets[i] + lengths[i]]`` concatenated, in one numpy gather."""
    ends = np.cumsum(lengths)
    total = int(ends[-1]) if len(ends) else 0
    kind = np.int32 if max(total, len(source)) < 2**31 else np.int64  # half the memory traffic
    positions = np.arange(total, dtype=kind)
    positions += np.repeat((offsets - (ends - lengths)).astype(kind), lengths)
    return np.frombuffer(source, dtype=np.uint8)[positions].tobytes()


def result_bytes(result) -> bytes:
    """``json.dumps(result.to_json()).encode()``: what ``rebalance-lab assign`` prints (one line)."""
    if result.answer is None or not isinstance(result.problem, GroupProblem):
        return json.dumps(result.to_json()).encode()
    rest = json.dumps(result.json_fields()).encode()  # b'{"status": ...}'
    shown = result.answer if result.shown is None else result.shown
    return b'{"assignment": ' + assignment_bytes(result.problem, shown) + b", " + rest[1:]
