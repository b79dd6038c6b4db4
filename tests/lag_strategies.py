"""Hypothesis strategies for lag-aware groups, and a brute-force reference (test support).

Lags come in the shapes that break greedy assignors: all zero, all equal, a few
distinct values (many ties), skewed (powers of ten up to a million, Zipf-like), large (up to 10**12)
and huge (near
2**62, where member totals overflow 64 bits).  Groups reuse
:func:`problem_strategies.group_documents` (mixed subscriptions, deleted topics,
stale and conflicting ownership).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from problem_strategies import group_documents
from problems import evaluate, load_problem, previous_owners

LAG_SHAPES = {  # the first is what hypothesis draws most and shrinks towards
    "uniform": st.integers(0, 1000),
    "skewed": st.integers(0, 6).map(lambda k: 10**k),
    "ties": st.sampled_from([0, 5, 10]),
    "large": st.integers(0, 10**12),
    "equal": st.just(7),
    "zero": st.just(0),
    "huge": st.integers(2**61, 2**62),
}


@st.composite
def busy_documents(draw, max_members: int, max_partitions: int) -> dict:
    """A group of 2+ members on 1-3 topics (uniform or mixed subscriptions), some partitions owned."""
    topics = {f"t{i}": draw(st.integers(1, max_partitions)) for i in range(draw(st.integers(1, 3)))}
    names = list(topics)
    uniform = draw(st.booleans())
    members = []
    for m in range(draw(st.integers(2, max_members))):
        subscription = names if uniform else draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
        member = {"id": f"c{m}", "topics": subscription}
        owned = {t: draw(st.lists(st.integers(0, topics[t] - 1), unique=True, max_size=2)) for t in subscription}
        if any(owned.values()):
            member["owned"] = owned
            member["generation"] = draw(st.integers(0, 1))
        members.append(member)
    return {"topics": topics, "members": members}


@st.composite
def lag_documents(draw, max_members: int = 5, max_partitions: int = 6, shapes=tuple(LAG_SHAPES)) -> dict:
    """A random consumer-group document with lags of one random shape.

    Half busy groups (:func:`busy_documents`), half the adversarial documents
    of :func:`problem_strategies.group_documents` (empty groups, deleted topics, ...).
    """
    doc = draw(st.one_of(busy_documents(max_members, max_partitions),
                         group_documents(max_members=max_members, max_partitions=max_partitions)))
    values = LAG_SHAPES[draw(st.sampled_from(shapes))]
    doc["lags"] = {t: draw(st.lists(values, min_size=n, max_size=n)) for t, n in doc["topics"].items()}
    return doc


def lag_groups(**kwargs):
    """Random :class:`problems.GroupProblem` objects with lags."""
    return lag_documents(**kwargs).map(load_problem)


def brute_force(problem, sticky: bool = False) -> tuple[int, int]:
    """The lexicographic optimum over every valid answer (tiny problems only).

    Every answer is enumerated at once with numpy (the search); the best one is
    then scored by :func:`problems.evaluate` (the one truth).  Level 2 is the
    sum of squared lags, or the moves when ``sticky``.
    """
    partitions = np.flatnonzero(problem.assignable)
    choices = [problem.topic_subscribers[problem.partition_topic[p]] for p in partitions]
    if not choices:  # nothing to assign: the one answer is empty
        owners = np.zeros((1, 0), dtype=np.int64)
    else:
        picks = np.indices([len(c) for c in choices]).reshape(len(choices), -1).T
        owners = np.stack([c[picks[:, i]] for i, c in enumerate(choices)], axis=1)
    valid = np.ones(len(owners), dtype=bool)
    for t, subscribers in enumerate(problem.topic_subscribers):
        columns = problem.partition_topic[partitions] == t
        floor, extra = divmod(int(columns.sum()), max(len(subscribers), 1))
        for m in subscribers:
            count = (owners[:, columns] == m).sum(axis=1)
            valid &= (count >= floor) & (count <= floor + (extra > 0))
    lags = problem.lags[partitions]
    totals = np.stack([(owners == m) @ lags for m in range(problem.num_members)], axis=1) \
        if problem.num_members else np.zeros((len(owners), 1), dtype=np.int64)
    if sticky:
        previous = previous_owners(problem)[partitions]
        second = ((owners != previous) & (previous >= 0)).sum(axis=1)
    else:
        second = (totals**2).sum(axis=1)
    candidates = np.flatnonzero(valid)
    best = candidates[np.lexsort((second[candidates], totals.max(axis=1)[candidates]))[0]]
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    owner[partitions] = owners[best]
    verdict = evaluate(problem, owner, "lag-aware")
    assert verdict.valid, verdict.violations
    return verdict.objective[0], evaluate(problem, owner, "sticky").objective[1] if sticky else verdict.objective[1]
