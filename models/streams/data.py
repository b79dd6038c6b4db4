"""A streams group (KIP-1071) as the arrays every exact model of the ``streams`` objective reads.

The exact backends (:mod:`models.streams.cpsat`, :mod:`models.streams.mip`,
:mod:`models.streams.flow`) never read a :class:`problems.streams.StreamsProblem` directly: they
read a :class:`StreamsData`, the cost of every decision per objective level, built once here by
:func:`streams_data`.  The decisions are

* ``active[t]``: the member that runs task ``t`` (exactly one per task);
* standby pairs ``(t, m)``: member ``m`` keeps a standby copy of stateful task ``t``
  (``standbys[t]`` of them per task, each on a process that holds no other copy of ``t``).

Warm-up replicas carry no cost at any level and are optional, so an exact answer has none.  A
task's standbys beyond those the hard constraints require are never worth placing (each one
raises level 3, above which nothing depends on standbys), so the models place exactly the
required count, :func:`required_standbys`.  The levels, in lexicographic order
(:data:`LEVELS`), are those of the ``streams`` objective:

1. restore cost: ``restore[process of active[t], t]`` summed over the tasks;
2. active balance: ``sum_g balance_weight[g] * n_g^2`` over the balance groups ``g`` (``n_g``:
   the actives of the members of ``g``);
3. standby balance: the same over ``standby_group`` / ``standby_weight`` (standbys);
4. cross-rack traffic: ``traffic[t, active[t]]`` plus ``standby_traffic[t, m]`` per standby pair;
5. active moves: tasks whose previous active member is not ``active[t]``;
6. standby moves: standby pairs ``(t, m)`` with ``standby_new[t, m]`` (``m`` held ``t`` in no
   role before).

Every level is a sum of per-decision costs (1, 4, 5, 6) or of a convex function of a count
(2, 3): a min-cost flow writes the first as arc costs and the second as unit arcs of nondecreasing
marginal cost, a CP-SAT or MIP model as linear terms and ordered unit increments.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt

from problems import Result, Status

if TYPE_CHECKING:
    from models.common.ranked_outcome import Deadline, Ranked
    from models.options import SolveOptions
    from problems.streams import StreamsProblem

IntArray = npt.NDArray[np.int64]
#: A model's variable (CP-SAT's or PuLP's), and its ranked outcome (:mod:`models.common`).
V = TypeVar("V")
R = TypeVar("R", bound="Ranked")
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
    standby_group, standby_weight
        The same for level 3 and standbys (``standby_group`` ``int64[M]``).
    traffic
        ``int64[T, M]``: level 4, the cross-rack cost of task ``t`` active on member ``m``.
    standby_traffic
        ``int64[T, M]``: level 4, the cross-rack cost of a standby of ``t`` on member ``m``.
    prev_active
        ``int64[T]``: each task's previous active member, -1 for none (level 5).
    standby_new
        ``bool[T, M]``: a standby of ``t`` on ``m`` is a new copy (level 6).
    """

    member_process: IntArray
    num_processes: int
    standbys: IntArray
    restore: IntArray
    balance_group: IntArray
    balance_weight: IntArray
    standby_group: IntArray
    standby_weight: IntArray
    traffic: IntArray
    standby_traffic: IntArray
    prev_active: IntArray
    standby_new: BoolArray

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
    def num_standby_groups(self) -> int:
        return int(len(self.standby_weight))

    @property
    def has_standbys(self) -> bool:
        return bool(self.standbys.sum() > 0)

    def process_members(self) -> list[list[int]]:
        """The members of each process, in member order."""
        members: list[list[int]] = [[] for _ in range(self.num_processes)]
        for m, p in enumerate(self.member_process.tolist()):
            members[p].append(m)
        return members

    def levels(self, active: npt.ArrayLike, standby: npt.ArrayLike) -> tuple[int, ...]:
        """The six levels of an answer (``active``: member per task; ``standby``: ``(t, m)`` rows),
        as the models compute them (answers are re-scored by the evaluator)."""
        act = np.asarray(active, dtype=np.int64)
        pairs = np.asarray(standby, dtype=np.int64).reshape(-1, 2)
        tasks = np.arange(self.num_tasks)
        restore = int(self.restore[self.member_process[act], tasks].sum())
        counts = np.bincount(self.balance_group[act], minlength=self.num_groups)
        balance = int((self.balance_weight * counts * counts).sum())
        held = np.bincount(
            self.standby_group[pairs[:, 1]], minlength=self.num_standby_groups
        ).astype(np.int64)
        traffic = int(self.traffic[tasks, act].sum())
        traffic += int(self.standby_traffic[pairs[:, 0], pairs[:, 1]].sum())
        moved = int(((self.prev_active >= 0) & (self.prev_active != act)).sum())
        return (
            restore,
            balance,
            int((self.standby_weight * held * held).sum()),
            traffic,
            moved,
            int(self.standby_new[pairs[:, 0], pairs[:, 1]].sum()),
        )


#: The most task-member pairs (tasks x members) an exact model takes by default: every model holds
#: a decision per pair (``--max-size`` raises it).
MAX_EXACT_PAIRS = 2_000_000


def check_size(problem: StreamsProblem, options: SolveOptions) -> None:
    """A :class:`problems.ProblemError` (one line naming the limit and the option that raises it)
    when ``problem`` has more task-member pairs than ``options``' ``max_size`` (default
    :data:`MAX_EXACT_PAIRS`): refused before any work."""
    from problems import ProblemError

    limit = options.extra.get("max_size")
    limit = MAX_EXACT_PAIRS if limit is None else int(limit)
    pairs = problem.n_tasks * problem.num_members
    if pairs > limit:
        raise ProblemError(
            "members",
            f"{problem.n_tasks:,} tasks x {problem.num_members:,} members = {pairs:,} "
            f"task-member pairs is above the exact models' limit of {limit:,} "
            "(--max-size raises it)",
        )


#: The strategy an exact answer is judged as (every streams strategy is judged on ``streams``).
STRATEGY = "streams-sticky"


def required_standbys(problem: StreamsProblem) -> IntArray:
    """The standbys each task must have under the ``streams`` objective's hard constraints:
    :func:`problems.streams.required_standbys` where the objective requires some, else none (at
    most ``num_standby_replicas`` per task: more only raise level 3)."""
    from problems import streams

    rule = getattr(streams, "required_standbys", None)
    if rule is None:
        return np.zeros(problem.n_tasks, dtype=np.int64)
    return np.asarray(rule(problem), dtype=np.int64)


def thread_weights(threads: IntArray) -> IntArray:
    """``L // threads`` per member (``L``: the lcm of the thread counts): levels 2 and 3 weigh a
    member's squared count by them, the evaluator's exact integer form of ``n^2 / threads``."""
    if len(threads) == 0:
        return np.zeros(0, dtype=np.int64)
    scale = math.lcm(*{int(t) for t in threads.tolist()})
    return np.array([scale // int(t) for t in threads.tolist()], dtype=np.int64)


def cross_rack_costs(problem: StreamsProblem) -> IntArray:
    """``int64[T, M]``: KIP-925's cross-rack traffic of task ``t`` active on member ``m``: its
    source partitions (with known replica racks: a partition listed with none never counts) none
    of whose replicas is on ``m``'s rack (0 for a member without a rack)."""
    out = np.zeros((problem.n_tasks, problem.num_members), dtype=np.int64)
    if not problem.has_racks:
        return out
    racks = sorted({r for r in problem.racks if r is not None})
    member_rack = np.array(
        [-1 if r is None else racks.index(r) for r in problem.racks], dtype=np.int64
    )
    misses = np.zeros((problem.n_tasks, len(racks) + 1), dtype=np.int64)
    for t, held in zip(problem.source_task.tolist(), problem.source_racks):
        if not held:
            continue
        for r, rack in enumerate(racks):
            if rack not in held:
                misses[t, r] += 1
    return misses[:, member_rack]  # column -1 (no rack) is the zero column


def streams_data(problem: StreamsProblem) -> StreamsData:
    """The :class:`StreamsData` of a :class:`problems.streams.StreamsProblem`, as its evaluator
    scores answers (:func:`problems.streams.streams_levels`)."""
    tasks, members = problem.n_tasks, problem.num_members
    weights = thread_weights(np.asarray(problem.threads, dtype=np.int64))
    known = np.zeros((tasks, members), dtype=bool)
    had = np.flatnonzero(problem.prev_active >= 0)
    known[had, problem.prev_active[had]] = True
    for held in (problem.prev_standby, problem.prev_warmup):
        known[held[:, 0], held[:, 1]] = True
    required = required_standbys(problem)
    return StreamsData(
        member_process=np.asarray(problem.member_process, dtype=np.int64),
        num_processes=problem.num_processes,
        standbys=np.where(problem.task_stateful, required, 0).astype(np.int64),
        restore=np.asarray(problem.restore_cost, dtype=np.int64),
        balance_group=np.arange(members, dtype=np.int64),
        balance_weight=weights,
        standby_group=np.arange(members, dtype=np.int64),
        standby_weight=weights,
        traffic=cross_rack_costs(problem),
        standby_traffic=np.zeros((tasks, members), dtype=np.int64),
        prev_active=np.asarray(problem.prev_active, dtype=np.int64),
        standby_new=~known,
    )


def level_one(data: StreamsData) -> tuple[BoolArray, int]:
    """Level 1 solved outright: ``allowed[t, m]``, whether ``m``'s process has task ``t``'s least
    restore cost, and that least cost summed over the tasks (a Python integer).

    Level 1 is a sum over the tasks of a cost of the task's own process, and nothing else binds
    the actives together (a task's standbys fit on the other processes whichever one runs it), so
    its optimum is every task on a process of least restore cost, and the answers at that optimum
    are exactly those.  The CP-SAT and MIP models keep only those ``x[t, m]`` and put no restore
    cost in the model: its values (up to the lags' range) never meet the solvers' 64-bit or
    floating-point arithmetic.
    """
    restore = data.restore[data.member_process].T  # [T, M]
    least = restore.min(axis=1, initial=np.iinfo(np.int64).max) if data.num_members else None
    if least is None:
        return np.zeros((data.num_tasks, 0), dtype=bool), 0
    return restore == least[:, None], sum(int(v) for v in least.tolist())


def with_level_one(bound: tuple[int, ...] | None, offset: int) -> tuple[int, ...] | None:
    """A model's bound (its level 1 without the restore costs: 0) with level 1's optimum in."""
    if not bound:
        return bound
    return (bound[0] + offset, *bound[1:])


def streams_result(
    problem: StreamsProblem,
    status: Status | str,
    bound: tuple[int, ...] | None,
    active: IntArray | None,
    standby: IntArray | None,
    info: dict[str, Any] | None = None,
) -> Result:
    """The :class:`problems.Result` of an exact answer (``active`` ``None``: no answer)."""
    from problems.streams import StreamsAssignment

    answer = None if active is None else StreamsAssignment.of(active, standby)
    return Result(
        problem, STRATEGY, answer, Status(status), bound, info or {}, objective_name="streams"
    )


def task_variables(
    data: StreamsData, deadline: Deadline, boolean: Callable[[str, int, int], V]
) -> tuple[list[list[V]], dict[int, list[V]]]:
    """The models' booleans, each made by ``boolean(name, t, m)`` (the CP-SAT and the MIP models
    alike): ``x[t][m]``, task ``t`` active on member ``m``, for every task, then ``y[t][m]``, a
    standby of ``t`` on ``m``, for the tasks with standbys (:class:`OutOfTime` past ``deadline``)."""
    x: list[list[V]] = []
    for t in range(data.num_tasks):
        deadline.check()
        x.append([boolean("x", t, m) for m in range(data.num_members)])
    y: dict[int, list[V]] = {}
    for t in np.flatnonzero(data.standbys > 0).tolist():
        deadline.check()
        y[t] = [boolean("y", t, m) for m in range(data.num_members)]
    return x, y


def group_rows(
    data: StreamsData, x: list[list[V]], y: dict[int, list[V]], deadline: Deadline
) -> tuple[list[list[V]], list[list[V]]]:
    """What each balance group gets (the ``x`` of its members) and each standby group holds (the
    ``y`` of its members): the terms of the models' two balance ladders."""
    gets: list[list[V]] = [[] for _ in range(data.num_groups)]
    for m, g in enumerate(data.balance_group.tolist()):
        deadline.check()
        gets[g].extend(x[t][m] for t in range(data.num_tasks))
    holds: list[list[V]] = [[] for _ in range(data.num_standby_groups)]
    for row in y.values():
        deadline.check()
        for m, var in enumerate(row):
            holds[int(data.standby_group[m])].append(var)
    return gets, holds


def ranked_answer(
    ranked: R, data: StreamsData, x: list[list[Any]], y: dict[int, list[Any]]
) -> tuple[R, IntArray | None, IntArray | None]:
    """The outcome of a ranked solve of ``data``'s model (the CP-SAT and the MIP models alike):
    ``ranked``, its bound and levels taking in level 1 (solved outright, not in the model); the
    active member of each task and the ``(task, member)`` standby rows, read from its ``x[t][m]``
    (task ``t`` active on ``m``) and ``y[t][m]`` (a standby), ``None`` without a solution."""
    offset = level_one(data)[1]
    ranked.bound = with_level_one(ranked.bound, offset)
    ranked.levels = with_level_one(ranked.levels, offset) or ()
    if not ranked.has_solution:
        return ranked, None, None
    value = ranked.value
    members = range(len(x[0])) if x else range(0)
    active = np.array([next(m for m in members if value(row[m])) for row in x], dtype=np.int64)
    rows = [(t, m) for t, row in y.items() for m in members if value(row[m])]
    return ranked, active, np.array(rows, dtype=np.int64).reshape(-1, 2)
