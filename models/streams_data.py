"""A streams group (KIP-1071) as the arrays every exact model of the ``streams`` objective reads.

The exact backends (:mod:`models.cpsat.streams`, :mod:`models.mip.streams`,
:mod:`models.flow.streams`) never read a :class:`problems.streams.StreamsProblem` directly: they
read a :class:`StreamsData`, the cost of every decision per objective level, built once here by
:func:`streams_data`.  The decisions are

* ``active[t]``: the member that runs task ``t`` (exactly one per task);
* standby pairs ``(t, m)``: member ``m`` keeps a standby copy of stateful task ``t``
  (``standbys[t]`` of them per task, each on a process that holds no other copy of ``t``).

Warm-up replicas carry no cost at any level and are optional, so an exact answer has none.  The
levels, in lexicographic order (:data:`LEVELS`), are those of the ``streams`` objective:

1. restore cost: ``restore[process of active[t], t]`` summed over the tasks;
2. active balance: ``sum_g active_cost(g, n_g)`` over the balance groups ``g`` (the tasks of the
   members of ``g``), a convex function of the count;
3. standby balance: ``sum_p n_p^2`` over processes (standbys per process);
4. cross-rack traffic: ``traffic[t, active[t]]`` plus ``standby_traffic[t, m]`` per standby pair;
5. active moves: tasks whose previous active member is not ``active[t]``;
6. standby moves: previous standby pairs that are not kept.

Every level is a sum of per-decision costs (1, 4, 5, 6) or of a convex function of a count
(2, 3): a min-cost flow writes the first as arc costs and the second as unit arcs of nondecreasing
marginal cost, a CP-SAT or MIP model as linear terms and ordered unit increments.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: The levels of the ``streams`` objective, in lexicographic order.
LEVELS = (
    "restore_cost",
    "active_balance",
    "standby_balance",
    "cross_rack_traffic",
    "active_moves",
    "standby_moves",
)


@dataclass(frozen=True)
class StreamsData:
    """The costs of a streams group's decisions, per level (module docstring).

    Attributes
    ----------
    member_process
        ``int64[M]``: each member's process.
    num_processes
        Processes (``0 .. num_processes - 1``).
    standbys
        ``int64[T]``: standby copies each task must have (0 for stateless tasks).
    restore
        ``int64[P, T]``: level 1, the restore cost of task ``t`` active on process ``p``.
    balance_group
        ``int64[M]``: the group whose count level 2 scores a member's actives in.
    balance_weight
        ``int64[G]``: level 2 of a group with ``n`` actives is ``balance_weight[g] * n^2``.
    traffic
        ``int64[T, M]``: level 4, the cross-rack cost of task ``t`` active on member ``m``.
    standby_traffic
        ``int64[T, M]``: level 4, the cross-rack cost of a standby of ``t`` on member ``m``.
    prev_active
        ``int64[T]``: each task's previous active member, -1 for none (level 5).
    prev_standby
        ``bool[T, M]``: the previous standby pairs (level 6).
    """

    member_process: IntArray
    num_processes: int
    standbys: IntArray
    restore: IntArray
    balance_group: IntArray
    balance_weight: IntArray
    traffic: IntArray
    standby_traffic: IntArray
    prev_active: IntArray
    prev_standby: BoolArray

    @property
    def num_tasks(self) -> int:
        return int(len(self.standbys))

    @property
    def num_members(self) -> int:
        return int(len(self.member_process))

    @property
    def num_groups(self) -> int:
        return int(len(self.balance_weight))

    @property
    def has_standbys(self) -> bool:
        return bool(self.standbys.sum() > 0)

    def process_members(self) -> list[list[int]]:
        """The members of each process, in member order."""
        members: list[list[int]] = [[] for _ in range(self.num_processes)]
        for m, p in enumerate(self.member_process.tolist()):
            members[p].append(m)
        return members

    def active_cost(self, group: int, count: int) -> int:
        """Level 2's term of ``group`` holding ``count`` actives."""
        return int(self.balance_weight[group]) * count * count

    def active_marginals(self, group: int, top: int) -> list[int]:
        """Level 2's marginal cost of the ``k``-th active of ``group``, ``k = 1 .. top``
        (nondecreasing: the term is convex)."""
        w = int(self.balance_weight[group])
        return [w * (2 * k - 1) for k in range(1, top + 1)]

    def levels(self, active: npt.ArrayLike, standby: npt.ArrayLike) -> tuple[int, ...]:
        """The six levels of an answer (``active``: member per task; ``standby``: ``(t, m)`` rows),
        as the models compute them (answers are re-scored by the evaluator)."""
        act = np.asarray(active, dtype=np.int64)
        pairs = np.asarray(standby, dtype=np.int64).reshape(-1, 2)
        tasks = np.arange(self.num_tasks)
        restore = int(self.restore[self.member_process[act], tasks].sum())
        counts = np.bincount(self.balance_group[act], minlength=self.num_groups)
        balance = int((self.balance_weight * counts * counts).sum())
        per_process = np.bincount(
            self.member_process[pairs[:, 1]], minlength=self.num_processes
        ).astype(np.int64)
        traffic = int(self.traffic[tasks, act].sum())
        traffic += int(self.standby_traffic[pairs[:, 0], pairs[:, 1]].sum())
        moved = int(((self.prev_active >= 0) & (self.prev_active != act)).sum())
        kept = int(self.prev_standby[pairs[:, 0], pairs[:, 1]].sum())
        standby_moves = int(self.prev_standby.sum()) - kept
        return (
            restore,
            balance,
            int(per_process @ per_process),
            traffic,
            moved,
            standby_moves,
        )


def streams_data(problem: Any) -> StreamsData:
    """The :class:`StreamsData` of a :class:`problems.streams.StreamsProblem`."""
    raise NotImplementedError


def streams_result(
    problem: Any,
    status: Any,
    bound: tuple[int, ...] | None,
    active: IntArray | None,
    standby: IntArray | None,
    info: dict[str, Any] | None = None,
) -> Any:
    """The :class:`problems.Result` of an exact answer (``None`` arrays: no answer)."""
    raise NotImplementedError


def streams_hint(problem: Any, data: StreamsData, options: Any) -> tuple[IntArray, IntArray] | None:
    """The answer a CP-SAT model starts from."""
    return None
