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
