"""Hypothesis strategies for lag-aware groups (test support; their exhaustive optimum: :mod:`support.exhaustive`).

Lags come in the shapes that break greedy assignors: all zero, all equal, a few
distinct values (many ties), skewed (powers of ten up to a million, Zipf-like), large (up to 10**12)
and huge (near
2**62, where member totals overflow 64 bits).  Groups reuse
:func:`problem_strategies.group_documents` (mixed subscriptions, deleted topics,
stale and conflicting ownership).
"""

from __future__ import annotations

from hypothesis import strategies as st

from problems import load_problem
from support.problem_strategies import group_documents

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
        subscription = (
            names if uniform else draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
        )
        member = {"id": f"c{m}", "topics": subscription}
        owned = {
            t: draw(st.lists(st.integers(0, topics[t] - 1), unique=True, max_size=2))
            for t in subscription
        }
        if any(owned.values()):
            member["owned"] = owned
            member["generation"] = draw(st.integers(0, 1))
        members.append(member)
    return {"topics": topics, "members": members}


@st.composite
def lag_documents(
    draw, max_members: int = 5, max_partitions: int = 6, shapes=tuple(LAG_SHAPES)
) -> dict:
    """A random consumer-group document with lags of one random shape.

    Half busy groups (:func:`busy_documents`), half the adversarial documents
    of :func:`problem_strategies.group_documents` (empty groups, deleted topics, ...).
    """
    doc = draw(
        st.one_of(
            busy_documents(max_members, max_partitions),
            group_documents(max_members=max_members, max_partitions=max_partitions),
        )
    )
    values = LAG_SHAPES[draw(st.sampled_from(shapes))]
    doc["lags"] = {
        t: draw(st.lists(values, min_size=n, max_size=n)) for t, n in doc["topics"].items()
    }
    return doc


def lag_groups(**kwargs):
    """Random :class:`problems.GroupProblem` objects with lags."""
    return lag_documents(**kwargs).map(load_problem)
