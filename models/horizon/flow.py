"""The sticky horizon of a consumer group with equal subscriptions, exactly, by min-cost flow.

When every member present at a step subscribes the same topics (members subscribing no topic with
partitions aside: they take none), the step's sum of squared counts is least exactly when every
other member holds ``floor(P/N)`` or ``ceil(P/N)`` partitions, and the
partitions of the step are interchangeable except for who held them one step before.  So the
horizon objective (every step balanced, then the fewest trace moves) is the count flow of
:mod:`models.horizon.counts` over (member, step) nodes, as long as no partition stops being
assignable inside the window (then partitions are no longer interchangeable: the members that
hold the disappearing ones matter, and :mod:`models.horizon.cpsat` answers).  Members and topics
fall into blocks joined by subscriptions (:func:`blocks`); it is enough that each block's members
subscribe the same topics, one flow per block.  Why the flow is
exact: docs/design/formulations.md, "Horizon".
"""

from __future__ import annotations

import numpy as np

from models.horizon.counts import solve_counts
from models.horizon.steps import GroupSteps
from problems import GroupProblem, join_partition_count


def equal_subscriptions(steps: GroupSteps, k: int) -> bool:
    """Whether every member of step ``k`` that may take a partition may take every assignable
    partition of it (members subscribing no topic with partitions take none: they stand aside)."""
    taking = _taking(steps.problems[k])
    problem = steps.problems[k]
    subscribes = problem.subscribes[np.ix_(taking, problem.partition_counts > 0)]
    return len(subscribes) == 0 or bool((subscribes == subscribes[:1]).all())


def _taking(problem: GroupProblem) -> np.ndarray:
    """The members (positions) subscribing a topic with partitions."""
    topics = problem.partition_counts > 0
    return np.flatnonzero(problem.subscribes[:, topics].any(axis=1))


def blocks(steps: GroupSteps) -> tuple[np.ndarray, np.ndarray]:
    """The window's independent blocks: the connected parts of the members and topics joined by a
    subscription at some step.  Returns the block of every trace-wide member (-1: it takes
    nothing in the window) and of every trace-wide partition (-1: never assignable)."""
    members = steps.num_members
    names: dict[str, int] = {}
    parent = list(range(members))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    part_topic = np.full(steps.num_parts, -1, dtype=np.int64)
    for k, problem in enumerate(steps.problems):
        nodes = []
        for name in problem.topics:
            if name not in names:
                names[name] = members + len(names)
                parent.append(names[name])
            nodes.append(names[name])
        topic_node = np.array(nodes, dtype=np.int64)
        part_topic[steps.part_of[k]] = topic_node[problem.partition_topic]
        with_partitions = problem.partition_counts > 0
        for m, t in zip(*np.nonzero(problem.subscribes & with_partitions[None, :])):
            a, b = find(int(steps.member_of[k][m])), find(int(topic_node[t]))
            if a != b:
                parent[a] = b
    roots = np.array([find(x) for x in range(len(parent))], dtype=np.int64)
    taking = np.zeros(members, dtype=bool)
    for k, problem in enumerate(steps.problems):
        taking[steps.member_of[k][_taking(problem)]] = True
    assignable = np.zeros(steps.num_parts, dtype=bool)
    for k in range(len(steps)):
        assignable |= steps.assignable(k)
    member_block = np.where(taking, roots[:members], -1)
    part_block = np.where(assignable & (part_topic >= 0), roots[np.maximum(part_topic, 0)], -1)
    return member_block, part_block


def refusal(steps: GroupSteps, previous: np.ndarray | None) -> str | None:
    """Why the flow is not exact on this window (``None``: it is): inside a block (see
    :func:`blocks`), the members taking partitions at a step subscribe different topics, or
    partitions stop being assignable."""
    member_block, _ = blocks(steps)
    for k, problem in enumerate(steps.problems):
        taking = _taking(problem)
        rows = problem.subscribes[np.ix_(taking, problem.partition_counts > 0)]
        block = member_block[steps.member_of[k][taking]]
        for b in np.unique(block).tolist():
            same = rows[block == b]
            if not (same == same[:1]).all():
                return f"step {k} of the window: members of one block subscribe different topics"
    before = previous >= 0 if previous is not None else None
    for k in range(len(steps)):
        now = steps.assignable(k)
        if before is not None and k > 0 and np.any(before & ~now):
            return f"step {k} of the window: partitions stop being assignable"
        before = now
    return None


def solve(steps: GroupSteps, previous: np.ndarray | None) -> tuple[list[np.ndarray], int]:
    """Every step's owner (trace-wide ids, :meth:`GroupSteps.to_wide`) and the fewest trace moves:
    one count flow per block (the blocks share no member and no partition, and the objective adds
    up over them).

    ``previous`` is the trace-wide owner array before the window's first step (``None``: the
    window starts the trace and its first step is free).  Only on a window :func:`refusal`
    accepts.
    """
    member_block, part_block = blocks(steps)
    kept = [np.zeros(steps.num_members + 1, dtype=np.int64) for _ in range(len(steps))]
    taken = [np.zeros(steps.num_members + 1, dtype=np.int64) for _ in range(len(steps))]
    cost = 0
    for block in np.unique(part_block[part_block >= 0]).tolist():
        mine = part_block == block
        present, low, high, births = [], [], [], []
        alive = np.zeros(steps.num_parts, dtype=bool)
        start: np.ndarray | None = None
        if previous is not None:
            held = (previous >= 0) & steps.assignable(0) & mine
            start = np.bincount(previous[held], minlength=steps.num_members).astype(np.int64)
            alive = held
        for k in range(len(steps)):
            now = steps.assignable(k) & mine
            members = steps.member_of[k][_taking(steps.problems[k])]
            members = members[member_block[members] == block]
            total, count = int(now.sum()), len(members)
            q, r = divmod(total, count) if count else (0, 0)
            present.append(members)
            low.append(np.full(count, q, np.int64))
            high.append(np.full(count, q + (r > 0), np.int64))
            births.append(int(np.count_nonzero(now & ~alive)))
            alive = now
        plan = solve_counts(present, low, high, births, start, [1] * len(steps), steps.num_members)
        for k in range(len(steps)):
            kept[k][present[k]] = plan.kept[k]
            taken[k][present[k]] = plan.taken[k]
        cost += plan.cost
    return _realize(steps, previous, kept, taken, member_block, part_block), cost


def _realize(
    steps: GroupSteps,
    previous: np.ndarray | None,
    kept: list[np.ndarray],
    taken: list[np.ndarray],
    member_block: np.ndarray,
    part_block: np.ndarray,
) -> list[np.ndarray]:
    """Owners that follow the plans: each member keeps its lowest-numbered partitions, each
    block's pool (the rest and the new ones, ascending) is dealt to its members in step order."""
    owner = np.full(steps.num_parts, -1, dtype=np.int64) if previous is None else previous.copy()
    answers = []
    for k in range(len(steps)):
        now = steps.assignable(k)
        owner[~now] = -1
        held = np.flatnonzero(owner >= 0)
        # A member keeps partitions of its own block only (one held before the window may hold
        # others): those first, lowest-numbered first.
        foreign = part_block[held] != member_block[owner[held]]
        by_owner = held[np.lexsort((held, foreign, owner[held]))]
        holder = owner[by_owner]
        first = np.searchsorted(holder, holder, side="left")
        rank = np.arange(len(by_owner)) - first
        stays = (rank < kept[k][holder]) & (part_block[by_owner] == member_block[holder])
        pool = np.sort(np.concatenate((by_owner[~stays], np.flatnonzero(now & (owner < 0)))))
        members = steps.member_of[k][_taking(steps.problems[k])]
        for block in np.unique(part_block[pool]).tolist():
            tokens = pool[part_block[pool] == block]
            mine = members[member_block[members] == block]
            takers = np.repeat(mine, taken[k][mine])
            if len(takers) != len(tokens):  # the flow conserves items: this would be a bug
                raise RuntimeError(
                    f"step {k}: {len(tokens)} partitions in a pool, {len(takers)} taken"
                )
            owner[tokens] = takers
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
        members = steps.member_of[k][_taking(problem)]
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
