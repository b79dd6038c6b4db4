"""The output JSON of ``rebalance-lab assign``, written from the arrays in one pass.

Details: docs/formats.md.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np

from problems.group import GroupProblem

if TYPE_CHECKING:
    from problems.result import Result

_CHUNK_BYTES = 1 << 25  # rows built at a time: at most 32 MB of table, whatever the names' lengths


def assignment_bytes(problem: GroupProblem, owner: np.ndarray) -> bytes:
    """``json.dumps(assignment_json(problem, owner)).encode()``, built from the arrays."""
    if problem.num_members == 0:
        return b"{}"
    owner = np.asarray(owner)
    assigned = np.flatnonzero(owner >= 0)
    order = assigned[np.argsort(owner[assigned], kind="stable")]  # by member, then global id
    members = owner[order].astype(np.int64)
    topics = problem.partition_topic[order].astype(np.int64)

    # The text before each index: 0 ", ", 1 + t a later topic t of the member, 1 + T + t its first
    # topic t.
    names = [json.dumps(t).encode() for t in problem.topics]
    texts = [b", "] + [b"], " + name + b": [" for name in names] + [name + b": [" for name in names]
    new_member = np.ones(len(order), dtype=bool)
    new_member[1:] = members[1:] != members[:-1]
    new_topic = new_member.copy()
    new_topic[1:] |= topics[1:] != topics[:-1]
    kind = np.where(new_topic, np.where(new_member, 1 + problem.num_topics + topics, 1 + topics), 0)
    body, row_length = _rows(texts, kind, problem.partition_index[order])

    # Each member: its opening, its rows, "]}" (or "}" without claims); members joined by ", ".
    claims_before = np.zeros(problem.num_members + 1, dtype=np.int64)
    np.cumsum(np.bincount(members, minlength=problem.num_members), out=claims_before[1:])
    at = np.zeros(len(order) + 1, dtype=np.int64)
    np.cumsum(row_length, out=at[1:])
    bounds = at[claims_before].tolist()
    claimed = (claims_before[1:] > claims_before[:-1]).tolist()
    view = memoryview(body)
    parts: list[bytes | memoryview] = []
    for m, member in enumerate(problem.members):
        parts += (
            b", " if m else b"{",
            json.dumps(member).encode(),
            b": {",
            view[bounds[m] : bounds[m + 1]],
            b"]}" if claimed[m] else b"}",
        )
    parts.append(b"}")
    return b"".join(parts)


def _rows(texts: list[bytes], kind: np.ndarray, values: np.ndarray) -> tuple[bytes, np.ndarray]:
    """Each row ``texts[kind[i]]`` then ``values[i]`` (integers 0 .. INT32_MAX) in decimal, concatenated;
    with each row's length.

    A row is a fixed-width line of a byte table, its unused bytes NUL (a byte JSON text never
    holds: ``json.dumps`` escapes it), so the rows' text is every non-NUL byte in order.
    """
    text_length = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    text_width = int(text_length.max())
    top = int(values.max()) if len(values) else 0
    digit_width = len(str(top))
    shared = top < 4 * len(values) + 1024  # then the digits of 0 .. top, once each
    numbers = _decimal(np.arange(top + 1) if shared else values, digit_width)
    digits = np.count_nonzero(numbers, axis=1)
    if shared:
        digits = digits[values]
    width = text_width + digit_width
    table = np.frombuffer(b"".join(t.ljust(width, b"\0") for t in texts), dtype=np.uint8).reshape(
        len(texts), width
    )
    chunks = []
    step = max(1, _CHUNK_BYTES // width)
    for start in range(0, len(kind), step):
        rows = np.take(table, kind[start : start + step], axis=0)
        part = values[start : start + step] if shared else np.arange(start, start + len(rows))
        rows[:, text_width:] = np.take(numbers, part, axis=0)
        chunks.append(rows[rows != 0].tobytes())
    return b"".join(chunks), text_length[kind] + digits


def _decimal(values: np.ndarray, width: int) -> np.ndarray:
    """Each of ``values`` (integers >= 0) in decimal, right-aligned in ``width`` bytes, NUL before."""
    powers = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    digits = values[:, None] // powers
    return np.where((digits > 0) | (powers == 1), digits % 10 + 48, 0).astype(np.uint8)


def result_bytes(result: Result) -> bytes:
    """``json.dumps(result.to_json()).encode()``: what ``rebalance-lab assign`` prints (one line)."""
    answer = result.answer
    if (
        not isinstance(answer, np.ndarray)  # none, or a streams group's answer
        or not isinstance(result.problem, GroupProblem)
        or answer.ndim != 1  # a share group's (member, partition) pairs
    ):
        return json.dumps(result.to_json()).encode()
    rest = json.dumps(result.json_fields()).encode()  # b'{"status": ...}'
    shown = answer if result.shown is None else result.shown
    return b'{"assignment": ' + assignment_bytes(result.problem, shown) + b", " + rest[1:]
