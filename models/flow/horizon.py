"""The sticky horizon of a consumer group with equal subscriptions, exactly, by min-cost flow.

When every member present at a step subscribes the same topics, the step's sum of squared counts
is least exactly when every member holds ``floor(P/N)`` or ``ceil(P/N)`` partitions, and the
partitions of the step are interchangeable except for who held them one step before.  So the
horizon objective (every step balanced, then the fewest trace moves) is the count flow of
:mod:`models.flow.horizon_counts` over (member, step) nodes, as long as no partition stops being
assignable inside the window (then partitions are no longer interchangeable: the members that
hold the disappearing ones matter, and :mod:`models.cpsat.horizon` answers).  Why the flow is
exact: docs/design/formulations.md, "Horizon".
"""

from __future__ import annotations

import numpy as np

from models.flow.horizon_counts import CountPlan, solve_counts
from models.horizon_steps import GroupSteps
from problems import GroupProblem, join_partition_count


def equal_subscriptions(steps: GroupSteps, k: int) -> bool:
    """Whether every member of step ``k`` may take every assignable partition of it."""
    problem = steps.problems[k]
    topics = np.flatnonzero(problem.partition_counts > 0)
    subscribes = problem.subscribes[:, topics]
    if problem.num_members == 0 or len(topics) == 0:
        return True
    return bool((subscribes == subscribes[:1]).all())


def refusal(steps: GroupSteps, previous: np.ndarray | None) -> str | None:
    """Why the flow is not exact on this window (``None``: it is)."""
    for k in range(len(steps)):
        if not equal_subscriptions(steps, k):
            return f"step {k} of the window: members subscribe different topics"
    before = previous >= 0 if previous is not None else None
    for k in range(len(steps)):
        now = steps.assignable(k)
        if before is not None and k > 0 and np.any(before & ~now):
            return f"step {k} of the window: partitions stop being assignable"
        before = now
    return None


def solve(steps: GroupSteps, previous: np.ndarray | None) -> tuple[list[np.ndarray], int]:
    """Every step's owner (trace-wide ids, :meth:`GroupSteps.to_wide`) and the fewest trace moves.

    ``previous`` is the trace-wide owner array before the window's first step (``None``: the
    window starts the trace and its first step is free).  Only on a window :func:`refusal`
    accepts.
    """
    present, low, high, births = [], [], [], []
    alive = np.zeros(steps.num_parts, dtype=bool)
    start: np.ndarray | None = None
    if previous is not None:
        first = steps.assignable(0)
        kept = (previous >= 0) & first
        start = np.bincount(previous[kept], minlength=steps.num_members).astype(np.int64)
        alive = kept
    for k in range(len(steps)):
        now = steps.assignable(k)
        members = steps.member_of[k]
        total, count = int(now.sum()), len(members)
        q, r = divmod(total, count) if count else (0, 0)
        present.append(members)
        low.append(np.full(count, q, np.int64))
        high.append(np.full(count, q + (r > 0), np.int64))
        births.append(int(np.count_nonzero(now & ~alive)))
        alive = now
    plan = solve_counts(present, low, high, births, start, [1] * len(steps), steps.num_members)
    return _realize(steps, previous, plan), plan.cost


def _realize(steps: GroupSteps, previous: np.ndarray | None, plan: CountPlan) -> list[np.ndarray]:
    """Owners that follow the plan: each member keeps its lowest-numbered partitions, the pool
    (the rest and the new ones, ascending) is dealt to the members in step order."""
    owner = np.full(steps.num_parts, -1, dtype=np.int64) if previous is None else previous.copy()
    answers = []
    for k in range(len(steps)):
        now = steps.assignable(k)
        owner[~now] = -1
        members = steps.member_of[k]
        keep_of = np.zeros(steps.num_members + 1, dtype=np.int64)
        keep_of[members] = plan.kept[k]
        held = np.flatnonzero(owner >= 0)
        by_owner = held[np.lexsort((held, owner[held]))]
        holder = owner[by_owner]
        first = np.searchsorted(holder, holder, side="left")
        rank = np.arange(len(by_owner)) - first
        stays = rank < keep_of[holder]
        pool = np.sort(np.concatenate((by_owner[~stays], np.flatnonzero(now & (owner < 0)))))
        takers = np.repeat(members, plan.taken[k])
        if len(takers) != len(pool):  # the flow conserves items: this would be a bug
            raise RuntimeError(f"step {k}: {len(pool)} partitions in the pool, {len(takers)} taken")
        owner[pool] = takers
        answers.append(owner.copy())
    return answers


# ------------------------------------------------------------------ stream-join
#: The stream-join state before a window: each partition number's owner (trace-wide member ids,
#: length K) and the topics the members subscribed.
Numbers = tuple[np.ndarray, list[str]]


def stream_join_refusal(steps: GroupSteps, previous: Numbers | None) -> str | None:
    """Why the number flow is not exact on this window (``None``: it is).

    Every partition number below K may go to every member subscribing an existing topic, so the
    counts of a stream-join optimum are ``floor`` and ``ceil`` of ``K / E`` whatever the
    subscriptions; but a number moving from ``a`` to ``b`` moves the partitions of the topics
    both subscribe, so the move cost is one per step only when the members subscribe the same
    topics; and numbers must not disappear inside the window (K never falls).
    """
    for k in range(len(steps)):
        if not equal_subscriptions(steps, k):
            return f"step {k} of the window: members subscribe different topics"
    counts = [join_partition_count(problem) for problem in steps.problems]
    if previous is not None:
        counts.insert(0, len(previous[0]))
    if any(later < earlier for earlier, later in zip(counts, counts[1:])):
        return "the window's partition numbers fall (a topic deleted or unsubscribed)"
    return None


def solve_stream_join(steps: GroupSteps, previous: Numbers | None) -> tuple[list[np.ndarray], int]:
    """Every step's owner (trace-wide) and the fewest trace moves, numbers moved as a whole: a
    number that changes member moves its partitions of the topics subscribed at both steps, so
    the count flow's move cost at step ``k`` is that many.

    ``previous``: the numbers before the window (``None``: none, its first step is free).  Only
    on a window :func:`stream_join_refusal` accepts.
    """
    counts = [join_partition_count(problem) for problem in steps.problems]
    width = max([*counts, 0 if previous is None else len(previous[0])])
    topics = [_common_topics(problem) for problem in steps.problems]
    present, low, high, births, costs = [], [], [], [], []
    start: np.ndarray | None = None
    alive = 0
    before_topics: set[str] = set()
    if previous is not None:
        held = previous[0][: counts[0]]
        held = held[held >= 0]
        start = np.bincount(held, minlength=steps.num_members).astype(np.int64)
        alive = min(len(previous[0]), counts[0])
        before_topics = set(previous[1])
    for k, problem in enumerate(steps.problems):
        members = steps.member_of[k][problem.subscribes.any(axis=1)]
        q, r = divmod(counts[k], len(members)) if len(members) else (0, 0)
        present.append(members)
        low.append(np.full(len(members), q, np.int64))
        high.append(np.full(len(members), q + (r > 0), np.int64))
        births.append(counts[k] - alive)
        costs.append(len(before_topics & set(topics[k])) if k or previous is not None else 0)
        alive, before_topics = counts[k], set(topics[k])
    plan = solve_counts(present, low, high, births, start, costs, steps.num_members)
    number_owner = np.full(width, -1, dtype=np.int64)
    if previous is not None:
        number_owner[: len(previous[0])] = previous[0]
    answers = []
    for k in range(len(steps)):
        number_owner[counts[k] :] = -1
        number_owner = _deal(number_owner, counts[k], present[k], plan.kept[k], plan.taken[k])
        answers.append(_partitions_of(steps, k, number_owner))
    return answers, plan.cost


def _common_topics(problem: GroupProblem) -> list[str]:
    """The existing topics the members subscribe (the same for all: equal subscriptions)."""
    subscribed = problem.subscribes.any(axis=0) & (problem.partition_counts > 0)
    return [problem.topics[t] for t in np.flatnonzero(subscribed)]


def _deal(
    owner: np.ndarray, count: int, members: np.ndarray, kept: np.ndarray, taken: np.ndarray
) -> np.ndarray:
    """Numbers ``0 .. count - 1`` after one step of the plan: each member keeps its lowest
    ``kept`` numbers, the pool (ascending) is dealt in member order."""
    owner = owner.copy()
    keep_of = dict(zip(members.tolist(), kept.tolist()))
    kept_so_far: dict[int, int] = {}
    pool = []
    for j in range(count):
        m = int(owner[j])
        if m >= 0 and kept_so_far.get(m, 0) < keep_of.get(m, 0):
            kept_so_far[m] = kept_so_far.get(m, 0) + 1
        else:
            pool.append(j)
    takers = np.repeat(members, taken)
    if len(takers) != len(pool):  # the flow conserves numbers: this would be a bug
        raise RuntimeError(f"{len(pool)} numbers in the pool, {len(takers)} taken")
    owner[pool] = takers
    return owner


def _partitions_of(steps: GroupSteps, k: int, number_owner: np.ndarray) -> np.ndarray:
    """The trace-wide owner of every partition at step ``k``: ``(t, j)`` goes with number ``j``
    for every subscribed topic ``t`` (co-partitioning), ``j >= K`` to nobody."""
    problem = steps.problems[k]
    count = join_partition_count(problem)
    owner = np.full(problem.num_partitions, -1, dtype=np.int64)
    numbers = problem.partition_index
    topic_subscribed = np.any(problem.subscribes, axis=0)
    take = topic_subscribed[problem.partition_topic] & (numbers < count)
    local = steps.local_members(k)
    owner[take] = local[number_owner[numbers[take]]]
    return steps.to_wide(k, owner)
