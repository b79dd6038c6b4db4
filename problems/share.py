"""Share groups (KIP-932): an answer where a partition may go to several members.

A share answer is a *pairs array*: ``int64`` of shape ``(K, 2)``, column 0 the member position,
column 1 the partition's global id, rows sorted and distinct (:func:`pairs_array`); its JSON is the
assignment JSON of DESIGN.md section 2 with a partition allowed under several members.  The
``share`` objective's hard constraints (:func:`share_validity`) and levels (:func:`share_levels`,
:data:`SHARE_LEVELS`), and why: docs/strategies/share.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from problems.arrays import sum_squares
from problems.errors import ProblemError
from problems.group import GroupProblem
from problems.verdict import examples, repeated

IntArray = npt.NDArray[np.int64]

#: The levels of the ``share`` objective, in lexicographic order.
SHARE_LEVELS = ("sum_sq_counts", "sum_sq_readers", "moves")


def pairs_array(members: npt.ArrayLike, partitions: npt.ArrayLike) -> IntArray:
    """The ``(member, partition)`` pairs as a share answer: shape ``(K, 2)``, sorted, distinct."""
    m = np.asarray(members, dtype=np.int64).ravel()
    p = np.asarray(partitions, dtype=np.int64).ravel()
    if len(m) == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if m.min() >= 0 and p.min() >= 0 and int(m.max()) * (int(p.max()) + 1) < 2**62:
        width = int(p.max()) + 1  # one int64 key per pair: a flat sort, not a row sort
        keys = np.unique(m * width + p)
        return np.stack([keys // width, keys % width], axis=1).astype(np.int64)
    return np.unique(np.stack([m, p], axis=1), axis=0).astype(np.int64)


def owner_pairs(owner: npt.ArrayLike) -> IntArray:
    """A consumer-group answer (an ``owner`` array, ``-1`` unassigned) as a share answer: one
    ``(owner, partition)`` pair per assigned partition."""
    owners = np.asarray(owner, dtype=np.int64).ravel()
    assigned = np.flatnonzero(owners >= 0)
    return pairs_array(owners[assigned], assigned)


def previous_claims(problem: GroupProblem) -> tuple[IntArray, IntArray]:
    """Every member's ``owned`` claims on existing partitions, ``(member, partition)`` arrays in the
    document's order; a partition claimed by several members is kept for each of them."""
    members, partitions = problem.owned_claims
    return members.astype(np.int64), partitions.astype(np.int64)


def previous_pairs(problem: GroupProblem) -> IntArray:
    """The previous assignment as a share answer (:func:`previous_claims`, distinct)."""
    return pairs_array(*previous_claims(problem))


def is_pairs(answer: npt.ArrayLike) -> bool:
    """Whether ``answer`` has the shape of a share answer (``(K, 2)``)."""
    shape = np.shape(answer)
    return len(shape) == 2 and shape[1] == 2


def share_assignment_json(
    problem: GroupProblem, pairs: IntArray
) -> dict[str, dict[str, list[int]]]:
    """``pairs`` as ``{member: {topic: [indices ascending]}}``, every member present, members and
    topics in the problem's order (a partition may appear under several members)."""
    out: dict[str, dict[str, list[int]]] = {m: {} for m in problem.members}
    ordered = pairs_array(pairs[:, 0], pairs[:, 1]) if len(pairs) else pairs
    topic_of = problem.partition_topic
    index_of = problem.partition_index
    for member, g in ordered.tolist():
        topic = problem.topics[int(topic_of[g])]
        out[problem.members[member]].setdefault(topic, []).append(int(index_of[g]))
    return out


def assignment_items(
    problem: GroupProblem, doc: Any, source: str = "<assignment>"
) -> Iterator[tuple[str, int, int, int]]:
    """Walk an assignment JSON (``{member: {topic: [partitions]}}``) in document order, checking it
    as it goes: ``(field, member, index, partition)`` for every partition listed (``field``:
    ``member.topic``; ``member``: its position; ``partition``: the global id of ``index``).
    Whether a partition may appear twice is the caller's to check.

    Raises
    ------
    ProblemError
        Not an object, an unknown member or topic, or a partition out of range (when the walk
        reaches it).
    """
    if not isinstance(doc, dict):
        raise ProblemError(
            "", "an assignment must be an object of member -> {topic: [partitions]}", source
        )
    for member, topics in doc.items():
        m = problem.member_index.get(member)
        if m is None:
            raise ProblemError(member, "not a member of the group", source)
        if not isinstance(topics, dict):
            raise ProblemError(member, "must be an object of topic -> partition list", source)
        for topic, indices in topics.items():
            field = f"{member}.{topic}"
            if topic not in problem.topic_index:
                raise ProblemError(field, "topic does not exist", source)
            if not isinstance(indices, list):
                raise ProblemError(field, "must be a list of partition indices", source)
            for index in indices:
                try:
                    g = problem.global_id(topic, index) if type(index) is int else None
                except IndexError:
                    g = None
                if g is None:
                    raise ProblemError(field, f"partition {index!r} does not exist", source)
                yield field, m, index, g


def pairs_from_assignment(
    problem: GroupProblem, doc: Any, source: str = "<assignment>"
) -> IntArray:
    """Parse a share assignment JSON (``{member: {topic: [partitions]}}``) into pairs.

    Raises
    ------
    ProblemError
        Unknown member or topic, a partition out of range, or one given twice to a member.
    """
    members: list[int] = []
    partitions: list[int] = []
    listed = ""
    seen: set[int] = set()  # the partitions of the member's current list
    for field, m, index, g in assignment_items(problem, doc, source):
        if field is not listed:  # one field object per list
            listed, seen = field, set()
        if g in seen:
            raise ProblemError(field, f"partition {index} is given twice", source)
        seen.add(g)
        members.append(m)
        partitions.append(g)
    return pairs_array(members, partitions)


def member_counts(problem: GroupProblem, pairs: IntArray) -> IntArray:
    """Partitions each member gets."""
    return np.bincount(pairs[:, 0], minlength=problem.num_members).astype(np.int64)


def reader_counts(problem: GroupProblem, pairs: IntArray) -> IntArray:
    """Members each partition goes to."""
    return np.bincount(pairs[:, 1], minlength=problem.num_partitions).astype(np.int64)


def share_shape_problem(problem: GroupProblem, pairs: IntArray) -> str | None:
    """Why ``pairs`` is not a share answer to ``problem`` at all (``None``: it is one)."""
    if not is_pairs(pairs):
        return f"a share answer is (member, partition) pairs of shape (K, 2), got {np.shape(pairs)}"
    if len(pairs) == 0:
        return None
    if pairs[:, 0].min() < 0 or pairs[:, 0].max() >= problem.num_members:
        return "pairs hold member positions that are not members"
    if pairs[:, 1].min() < 0 or pairs[:, 1].max() >= problem.num_partitions:
        return "pairs hold partitions that do not exist"
    return None


def share_validity(problem: GroupProblem, pairs: IntArray) -> list[str]:
    """The hard constraints of the ``share`` objective (one line per broken kind, a few examples)."""
    violations: list[str] = []
    if len(pairs) > 1:
        key = pairs[:, 0] * max(problem.num_partitions, 1) + pairs[:, 1]
        violations += examples(
            repeated(key),
            lambda k: (
                f"{problem.partition_name(k % max(problem.num_partitions, 1))} goes to "
                f"{problem.members[k // max(problem.num_partitions, 1)]} twice"
            ),
        )
    subscribes = problem.subscribes
    if len(pairs):
        wrong = np.flatnonzero(~subscribes[pairs[:, 0], problem.partition_topic[pairs[:, 1]]])
        violations += examples(
            wrong,
            lambda i: (
                f"{problem.partition_name(int(pairs[i, 1]))} goes to "
                f"{problem.members[int(pairs[i, 0])]}, who does not subscribe its topic"
            ),
        )
    readers = reader_counts(problem, pairs)
    unread = np.flatnonzero(problem.assignable & (readers == 0))
    violations += examples(unread, lambda g: f"{problem.partition_name(g)} is not assigned")
    # members subscribing a topic with partitions
    wants = (subscribes & (problem.partition_counts > 0)[None, :]).any(axis=1)
    idle = np.flatnonzero(wants & (member_counts(problem, pairs) == 0))
    violations += examples(
        idle,
        lambda m: f"{problem.members[m]} subscribes a topic with partitions but gets none",
    )
    return violations


def share_levels(problem: GroupProblem, pairs: IntArray) -> tuple[int, int, int]:
    """The ``share`` objective's levels of ``pairs``: ``(sum_sq_counts, sum_sq_readers, moves)``."""
    previous = previous_pairs(problem)
    n = max(problem.num_partitions, 1)
    kept = np.isin(previous[:, 0] * n + previous[:, 1], pairs[:, 0] * n + pairs[:, 1])
    return (
        sum_squares(member_counts(problem, pairs)),
        sum_squares(reader_counts(problem, pairs)),
        int(len(previous) - np.count_nonzero(kept)),
    )
