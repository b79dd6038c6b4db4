"""Interchangeable partitions of a rack-aware problem, shared by its flow, CP-SAT and MIP models.

For the ``rack-aware`` objective (docs/design/objectives.md) two partitions are interchangeable when they
are for ``sticky`` (same subscribers, same valid previous owner: :mod:`models.common.classes`) and
their replicas cover the same member racks: then every member is aligned with both or with neither.
So the classes and pools of :func:`models.common.classes.partition_classes` are refined by that rack
set, and a pool edge (pool, member) or a kept class (class, owner) is a *mismatch* when the member
has a rack outside the pool's set (Kafka's ``racksMismatch``: a member without a rack never counts;
a partition without replica racks counts for every member with one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from heuristics.sticky import rack_aware as heuristic
from models.common.classes import Classes, count_bounds, expand, partition_classes
from models.common.ranked_outcome import Ranked
from models.options import answer_of
from problems import GroupProblem, ProblemError, Result


@dataclass(frozen=True)
class RackClasses:
    """:class:`~models.common.classes.Classes` refined by replica racks, with the racks of each pool.

    Attributes
    ----------
    classes
        The refined classes and pools.
    pool_racks
        ``int32[pools, width]``: the member racks among each pool's replica racks, padded with -1.
    member_rack
        Each member's rack id, -1 without one (all -1 when nothing can be misaligned: the document
        has no ``partition_racks``).
    """

    classes: Classes
    pool_racks: np.ndarray
    member_rack: np.ndarray

    def mismatch(self, pools: ArrayLike, racks: ArrayLike) -> np.ndarray:
        """Whether a member on rack ``racks[i]`` (-1: none) is misaligned with pool ``pools[i]``."""
        pools, racks = np.asarray(pools, dtype=np.int64), np.asarray(racks, dtype=np.int64)
        aligned = (self.pool_racks[pools] == racks[:, None]).any(axis=1)
        mismatched: np.ndarray = (racks >= 0) & ~aligned
        return mismatched

    @property
    def edge_mismatch(self) -> np.ndarray:
        """Per pool edge (``classes.edge_set``, ``classes.edge_member``): a mismatch."""
        return self.mismatch(self.classes.edge_set, self.member_rack[self.classes.edge_member])

    @property
    def keep_mismatch(self) -> np.ndarray:
        """Per class: keeping it with its previous owner is a mismatch (False without an owner)."""
        owners = self.classes.keep
        racks = np.where(owners >= 0, self.member_rack[np.maximum(owners, 0)], -1)
        return self.mismatch(self.classes.set_of_class, racks)


def rack_classes(problem: GroupProblem) -> RackClasses:
    """The classes of ``problem`` for the ``rack-aware`` objective."""
    member_rack = (
        np.full(problem.num_members, -1, dtype=np.int64)
        if problem.member_rack is None
        else problem.member_rack.astype(np.int64)
    )
    if not problem.has_racks or not np.any(member_rack >= 0):
        # Nothing can be misaligned: the replicas' racks are unknown, or no member has a rack.
        classes = partition_classes(problem)
        pools = int(classes.set_of_class.max(initial=-1)) + 1
        unracked = np.full(problem.num_members, -1, dtype=np.int64)
        return RackClasses(classes, np.full((pools, 1), -1, dtype=np.int32), unracked)
    table = _member_rack_table(problem, member_rack)
    base = len(problem.rack_names) + 1
    if (
        base ** table.shape[1] < 2**62
    ):  # one integer per rack set (fast); else rows compared as they are
        key = np.unique(
            (table.astype(np.int64) + 1) @ base ** np.arange(table.shape[1], dtype=np.int64),
            return_inverse=True,
        )[1].reshape(-1)
    else:
        key = np.unique(table, axis=0, return_inverse=True)[1].reshape(-1)
    classes = partition_classes(problem, refine=key)
    pools = int(classes.set_of_class.max(initial=-1)) + 1
    pool_racks = np.full((pools, table.shape[1]), -1, dtype=np.int32)
    pool_racks[classes.set_of_class[classes.of_part]] = table[classes.parts]
    return RackClasses(classes, pool_racks, member_rack)


def _member_rack_table(problem: GroupProblem, member_rack: np.ndarray) -> np.ndarray:
    """``int32[P, width]``: each partition's distinct replica racks that some member has, sorted, padded -1."""
    partition = problem.replica_rack_partition
    racks = problem.replica_racks
    rack = (np.zeros(0, np.int64) if racks is None else racks).astype(np.int64)
    useful = np.isin(rack, member_rack[member_rack >= 0])
    racks_known = len(problem.rack_names) + 1
    pair = np.unique(partition[useful] * racks_known + rack[useful])
    partition, rack = pair // racks_known, pair % racks_known
    start = np.searchsorted(partition, np.arange(problem.num_partitions + 1))
    width = int(np.diff(start).max(initial=0)) or 1
    table = np.full((problem.num_partitions, width), -1, dtype=np.int32)
    table[partition, np.arange(len(pair)) - start[partition]] = rack
    return table


@dataclass(frozen=True)
class Pairs:
    """Every (class, eligible member) pair of a :class:`RackClasses`, class by class (the CP-SAT and MIP
    variables).

    Attributes
    ----------
    cls, member
        The pairs, by class then member.
    start
        Class ``c``'s pairs are ``start[c]:start[c + 1]``.
    mismatch
        Giving the pair's member a partition of its class is a rack mismatch.
    kept
        The member is the class's previous owner (those partitions do not move).
    hint
        How many partitions of the class the member gets in the hint answer.
    """

    cls: np.ndarray
    member: np.ndarray
    start: np.ndarray
    mismatch: np.ndarray
    kept: np.ndarray
    hint: np.ndarray


def pair_table(data: RackClasses, owner: np.ndarray) -> Pairs:
    """The pairs of ``data``, with the hint counts of the valid answer ``owner``."""
    classes = data.classes
    start = classes.start
    cls = np.repeat(np.arange(len(classes.sizes)), np.diff(start))
    member = classes.eligible.astype(np.int64)
    span = max(int(member.max(initial=0)) + 1, 1)
    key = cls * span + member  # ascending: members ascend inside each class
    given = owner[classes.parts].astype(np.int64)
    hint = np.bincount(np.searchsorted(key, classes.of_part * span + given), minlength=len(key))
    return Pairs(
        cls,
        member,
        start,
        data.mismatch(classes.set_of_class[cls], data.member_rack[member]),
        member == classes.keep[cls],
        hint[: len(key)],
    )


#: The CP-SAT and MIP models build one integer per (class, eligible member) pair; beyond this many
#: they refuse the group (``--solver flow`` answers any size).
MODEL_PAIRS = {"CP-SAT": 200_000, "MIP": 20_000}


def model_inputs(
    problem: GroupProblem, backend: str, start: np.ndarray | None = None
) -> tuple[Classes, np.ndarray, int, np.ndarray, Pairs]:
    """What the CP-SAT and MIP models start from: the classes, a valid answer (the hint: ``start``,
    or the heuristic's answer), the count bounds ``lo``/``hi`` of
    :func:`models.common.classes.count_bounds` (valid from any valid answer), and the pairs.

    Raises
    ------
    ProblemError
        Beyond ``MODEL_PAIRS[backend]`` pairs.
    """
    data = rack_classes(problem)
    pairs = int(data.classes.start[-1])
    if pairs > MODEL_PAIRS[backend]:
        raise ProblemError(
            "members",
            f"{pairs:,} (partition class, member) pairs is beyond the {backend} "
            f"rack-aware model ({MODEL_PAIRS[backend]:,}); use --solver flow",
        )
    if start is None:
        start = answer_of(heuristic.assign(problem))
    lo, hi = count_bounds(problem, data.classes, start)
    return data.classes, start, lo, hi, pair_table(data, start)


def ranked_result(
    problem: GroupProblem, classes: Classes, pairs: Pairs, ranked: Ranked, x: Sequence[Any]
) -> Result:
    """The :class:`problems.Result` of a ranked CP-SAT or MIP solve over the pair variables ``x``."""
    if ranked.status not in ("optimal", "feasible"):
        return Result(
            problem,
            "rack-aware",
            None,
            status=ranked.status,
            bound=ranked.bound,
            objective_name="rack-aware",
        )
    count = np.array([ranked.value(var) for var in x], dtype=np.int64)
    answer = expand(problem, classes, pairs.cls, pairs.member, count)
    return Result(
        problem,
        "rack-aware",
        answer,
        status=ranked.status,
        bound=ranked.bound,
        objective_name="rack-aware",
    )
