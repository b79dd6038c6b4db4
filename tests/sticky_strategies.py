"""Hypothesis strategies for sticky rebalances (test support).

``equal_groups``: every member subscribes the same topics, with random previous
assignments (conflicting claims, stale and missing generations).
``rebalances``: a group that had an assignment (the sticky assignor's own
answer, at generation g) and then changed: members left, joined, changed their
subscription, topics were deleted, a zombie member reports an older
generation.
"""

from __future__ import annotations

from hypothesis import strategies as st

from problem_strategies import group_documents
from problems import load_problem

TOPICS = [f"t{i}" for i in range(4)]


@st.composite
def equal_group_documents(draw, max_members: int = 6, max_partitions: int = 8) -> dict:
    topics = {t: draw(st.integers(0, max_partitions)) for t in TOPICS[: draw(st.integers(1, len(TOPICS)))]}
    subscription = draw(st.lists(st.sampled_from(list(topics)), min_size=1, unique=True))
    members = []
    for m in range(draw(st.integers(1, max_members))):
        member = {"id": f"c{m}", "topics": subscription}
        if draw(st.booleans()):
            member["owned"] = {t: draw(st.lists(st.integers(0, n - 1), unique=True)) if n else []
                               for t, n in topics.items() if draw(st.booleans())}
            if draw(st.integers(0, 3)):
                member["generation"] = draw(st.integers(0, 2))
        members.append(member)
    return {"topics": topics, "members": members}


def equal_groups(**kwargs):
    """Random groups with equal subscriptions."""
    return equal_group_documents(**kwargs).map(load_problem)


@st.composite
def rebalance_documents(draw) -> dict:
    import heuristics.sticky as sticky

    before = draw(group_documents(max_members=6, max_partitions=8))
    problem = load_problem(before)
    assignment = sticky.assign(problem).assignment
    generation = draw(st.integers(0, 3))
    topics = dict(before["topics"])
    for t in draw(st.lists(st.sampled_from(sorted(topics)), unique=True, max_size=1)) if topics else []:
        del topics[t]  # deleted: claims on it are stale
    names = list(before["topics"]) + ["fresh-topic"]
    members = []
    for doc in before["members"]:
        if draw(st.integers(0, 4)) == 0:
            continue  # left the group
        member = {"id": doc["id"], "topics": doc["topics"], "owned": assignment[doc["id"]],
                  "generation": generation}
        if draw(st.integers(0, 4)) == 0:
            member["topics"] = draw(st.lists(st.sampled_from(names), unique=True))
        if draw(st.integers(0, 5)) == 0:
            member["generation"] = generation - 1  # a zombie's stale view
        members.append(member)
    for j in range(draw(st.integers(0, 2))):
        members.append({"id": f"new{j}", "topics": draw(st.lists(st.sampled_from(names), unique=True))})
    return {"topics": topics, "members": members}


def rebalances():
    """Random groups after churn, owning their previous sticky assignment."""
    return rebalance_documents().map(load_problem)
