"""Interchangeable partitions of a sticky problem, shared by the flow, CP-SAT and MIP models.

Two partitions are interchangeable for the sticky objective (docs/design/objectives.md)
when their topics have the same subscribers and they have the same valid
previous owner (KIP-341, :func:`problems.previous_owners`): swapping them
changes neither validity, nor any member's count, nor the moves.  So every
exact model decides only *how many* partitions of each class each member gets,
and :func:`expand` turns those counts back into an ``owner`` array.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from problems import GroupProblem, previous_owners


@dataclass(frozen=True)
class Classes:
    """The classes of a problem's assignable partitions.

    Attributes
    ----------
    parts
        Global ids of the assignable partitions (a subscribed topic).
    of_part
        Class of each of ``parts``.
    sizes
        Partitions per class.
    keep
        The previous owner shared by the class's partitions, or -1.
    previous
        Valid previous owner of every partition (:func:`problems.previous_owners`).
    set_of_class
        The subscriber set (a *pool*) of each class.
    edge_set, edge_member
        Every (pool, member of the pool) pair, by pool then member.
    """

    parts: np.ndarray
    of_part: np.ndarray
    sizes: np.ndarray
    keep: np.ndarray
    previous: np.ndarray
    set_of_class: np.ndarray
    edge_set: np.ndarray
    edge_member: np.ndarray

    @cached_property
    def start(self) -> np.ndarray:
        """CSR offsets of :attr:`eligible` (computed on first use: classes x members can be large)."""
        pool_size = np.bincount(self.edge_set, minlength=int(self.set_of_class.max(initial=-1)) + 1)
        start = np.zeros(len(self.sizes) + 1, dtype=np.int64)
        np.cumsum(pool_size[self.set_of_class], out=start[1:])
        return start

    @cached_property
    def eligible(self) -> np.ndarray:
        """Class ``c`` may go to members ``eligible[start[c]:start[c + 1]]`` (ascending): its pool's."""
        pool_start = np.searchsorted(
            self.edge_set, np.arange(int(self.set_of_class.max(initial=-1)) + 2)
        )
        first = pool_start[self.set_of_class]
        length = np.diff(self.start)
        return self.edge_member[
            np.repeat(first - self.start[:-1], length) + np.arange(int(self.start[-1]))
        ]

    def members_of(self, c: int) -> np.ndarray:
        return self.eligible[self.start[c] : self.start[c + 1]]

    def rows(self, kept: ArrayLike, pooled: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(class, member, count) rows of a pooled answer.

        ``kept[c]`` partitions of class c stay with ``keep[c]`` (0 for classes
        without an owner); the rest of each class joins its pool, and pool edge
        ``e`` hands ``pooled[e]`` partitions to ``edge_member[e]``
        (:func:`split_pools`).
        """
        kept = np.asarray(kept, dtype=np.int64)
        direct = np.flatnonzero(kept > 0)
        cls, member, count = split_pools(
            self.set_of_class, self.sizes - kept, self.edge_member, pooled
        )
        return (
            np.concatenate((direct, cls)),
            np.concatenate((self.keep[direct], member)),
            np.concatenate((kept[direct], count)),
        )


def partition_classes(problem: GroupProblem, refine: np.ndarray | None = None) -> Classes:
    """Group the assignable partitions by (subscriber set of their topic, previous owner).

    ``refine`` (an ``int64`` key per partition, by global id) splits classes and pools further: a
    pool is then a (subscriber set, key) pair, its members the subscriber set (the rack-aware models
    key partitions by their replica racks).
    """
    members = problem.num_members
    previous = previous_owners(problem)
    parts = np.flatnonzero(problem.assignable)
    set_of_topic, sets = _subscriber_sets(problem)
    pool = set_of_topic[problem.partition_topic[parts]]
    pool_set = np.arange(len(sets))  # the subscriber set of each pool
    if refine is not None and len(parts):
        span = int(np.max(refine, initial=0)) + 1
        pairs, pool = np.unique(
            pool * span + np.asarray(refine, dtype=np.int64)[parts], return_inverse=True
        )
        pool, pool_set = pool.reshape(-1), pairs // span
    key = pool * (members + 1) + previous[parts] + 1
    sizes_by_key = np.bincount(key) if len(key) else np.zeros(0, dtype=np.int64)
    keys = np.flatnonzero(sizes_by_key)
    class_of_key = np.zeros(len(sizes_by_key), dtype=np.int64)
    class_of_key[keys] = np.arange(len(keys))
    used, set_of_class = np.unique(keys // (members + 1), return_inverse=True)
    pools = [sets[pool_set[s]] for s in used]
    return Classes(
        parts=parts,
        of_part=class_of_key[key],
        sizes=sizes_by_key[keys].astype(np.int64),
        keep=(keys % (members + 1) - 1).astype(np.int64),
        previous=previous,
        set_of_class=set_of_class.astype(np.int64),
        edge_set=np.repeat(np.arange(len(pools)), [len(p) for p in pools]).astype(np.int64),
        edge_member=np.concatenate(pools).astype(np.int64)
        if pools
        else np.zeros(0, dtype=np.int64),
    )


def expand(
    problem: GroupProblem, classes: Classes, cls: ArrayLike, member: ArrayLike, count: ArrayLike
) -> np.ndarray:
    """The ``owner`` array of per-class counts, deterministically.

    Inside a class (partitions by global id) the previous owner's share comes
    first, then the other members' shares by member position.
    """
    cls, member, count = (np.asarray(a, dtype=np.int64) for a in (cls, member, count))
    order = np.lexsort((member, member != classes.keep[cls], cls))
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    grouped = classes.parts[np.argsort(classes.of_part, kind="stable")]
    owner[grouped] = np.repeat(member[order], count[order])
    return owner


def solved_owner(
    problem: GroupProblem,
    classes: Classes,
    value: Callable[[Any], int],
    kept: Mapping[int, Any],
    pooled: Sequence[Any],
) -> np.ndarray:
    """The ``owner`` array of a solved pooled model (the CP-SAT and the MIP models alike): class
    ``c``'s ``kept[c]`` partitions stay with its owner, pool edge ``e`` hands ``pooled[e]`` to its
    member (:meth:`Classes.rows`, :func:`expand`), each variable read by ``value``."""
    final_kept = np.zeros(len(classes.sizes), dtype=np.int64)
    for c, var in kept.items():
        final_kept[c] = value(var)
    return expand(problem, classes, *classes.rows(final_kept, [value(var) for var in pooled]))


def _subscriber_sets(problem: GroupProblem) -> tuple[np.ndarray, list[np.ndarray]]:
    """Id of each topic's subscriber set, and the sets (member positions ascending)."""
    index: dict[bytes, int] = {}
    sets: list[np.ndarray] = []
    ids = np.empty(problem.num_topics, dtype=np.int64)
    for t, subscribers in enumerate(problem.topic_subscribers):
        key = subscribers.tobytes()
        if key not in index:
            index[key] = len(sets)
            sets.append(subscribers.astype(np.int64))
        ids[t] = index[key]
    return ids, sets


def count_bounds(
    problem: GroupProblem, classes: Classes, owner: np.ndarray
) -> tuple[int, np.ndarray]:
    """Bounds ``lo <= n_m <= hi[m]`` that every sum-of-squares optimum satisfies.

    The member count vectors of all valid assignments are the integer points
    of a base polyhedron (of the coverage function ``X -> number of partitions
    some member of X may take``), an M-convex set.  On an M-convex set the
    minimisers of ``sum n_m^2`` are exactly the decreasingly-minimal elements,
    which are also the increasingly-maximal ones (Frank and Murota, "Discrete
    decreasing minimization, Part I", Math. Oper. Res. 47, 2022).  So every
    optimum has the smallest possible largest count and the largest possible
    smallest count: any valid ``owner`` (e.g. the heuristic's) bounds them,
    ``min_m n_m(owner) <= n_m <= max_m n_m(owner)``, and ``n_m`` never
    exceeds the partitions member m may take.  These are valid cuts, not
    guesses: they keep every optimum of both levels.
    """
    counts = np.bincount(owner[owner >= 0], minlength=problem.num_members)
    reach = np.bincount(
        classes.eligible,
        weights=np.repeat(classes.sizes, np.diff(classes.start)),
        minlength=problem.num_members,
    ).astype(np.int64)
    return int(counts.min(initial=0)), np.minimum(reach, counts.max(initial=0))


def pooled_counts(
    problem: GroupProblem, classes: Classes, owner: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """An answer as ``(kept, pooled)`` (see :meth:`Classes.rows`), e.g. for hints."""
    cls, member = classes.of_part, owner[classes.parts].astype(np.int64)
    stays = member == classes.keep[cls]
    kept = np.bincount(cls[stays], minlength=len(classes.sizes))
    span = problem.num_members
    edge_key = classes.edge_set * span + classes.edge_member
    moved = classes.set_of_class[cls[~stays]] * span + member[~stays]
    pooled = np.bincount(np.searchsorted(edge_key, moved), minlength=len(edge_key))
    return kept, pooled


def split_pools(
    pool_of_class: np.ndarray, inflow: ArrayLike, edge_member: np.ndarray, outflow: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split pooled items back into (class, member, count) rows, deterministically.

    Classes pour ``inflow[c]`` items into pool ``pool_of_class[c]``; each pool
    hands out ``outflow[e]`` items to ``edge_member[e]``, the edges listed pool by
    pool in ascending pool order (each pool's inflow equals its outflow).  Inside
    a pool, classes in ascending order are matched with the edges in order.
    Returns rows with ``count > 0``.
    """
    inflow, outflow = np.asarray(inflow, dtype=np.int64), np.asarray(outflow, dtype=np.int64)
    order = np.lexsort((np.arange(len(inflow)), pool_of_class))  # by pool, then class
    a = np.cumsum(inflow[order])
    b = np.cumsum(outflow)
    cuts = np.union1d(a, b)
    cuts = cuts[cuts > 0]
    starts = np.concatenate(([0], cuts[:-1]))[: len(cuts)]
    cls = order[np.searchsorted(a, starts, side="right")]
    member = np.asarray(edge_member)[np.searchsorted(b, starts, side="right")]
    return cls.astype(np.int64), member.astype(np.int64), (cuts - starts).astype(np.int64)
