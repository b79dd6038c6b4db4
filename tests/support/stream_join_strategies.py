"""Hypothesis strategies for stream-join groups after churn (test support).

A group starts from a co-partitioned assignment of partition numbers over
topics of equal partition count, every member holding the same epoch (as a
KIP-315 assignment leaves it); then any of: members leave, members join with
nothing owned, zombies (members with a stale epoch) claim numbers that live
members own, two live members claim one number with the same epoch, a topic
is added to the join (subscribed by some members only, with any partition
count), one topic's partition count is raised, and a member subscribes a
topic that does not exist.  Member order is shuffled.  Also a seeded
mid-size join with skewed ownership (:func:`medium_join`); the exhaustive
optimum for tiny groups is :func:`support.exhaustive.optimum`.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from problems import load_problem


@st.composite
def join_documents(draw, max_members: int = 7, max_numbers: int = 12, max_topics: int = 3) -> dict:
    """A consumer-group document of a stream join after churn."""
    count = (
        draw(st.integers(0, max_numbers))
        if draw(st.integers(0, 9)) == 0
        else draw(st.integers(1, max_numbers))
    )
    topics = {f"j{i}": count for i in range(draw(st.integers(1, max_topics)))}
    joined = list(topics)
    epoch = draw(st.integers(1, 6))
    live = draw(st.integers(0, max_members))
    holder = [draw(st.integers(0, live - 1)) for _ in range(count)] if live else []
    members = []
    for i in range(live):
        numbers = [k for k, h in enumerate(holder) if h == i]
        member = {"id": f"m{i}", "topics": list(joined), "generation": epoch}
        if numbers:
            member["owned"] = {t: list(numbers) for t in joined}
        members.append(member)
    leaving = draw(st.lists(st.integers(0, max(live - 1, 0)), unique=True, max_size=live))
    members = [m for i, m in enumerate(members) if i not in leaving]
    for i in range(draw(st.integers(0, 3))):
        members.append({"id": f"new{i}", "topics": list(joined)})
    for i in range(draw(st.integers(0, 2))):
        stolen = draw(st.lists(st.integers(0, count + 1), unique=True, max_size=count + 2))
        members.append(
            {
                "id": f"zombie{i}",
                "topics": list(joined),
                "owned": {joined[0]: stolen},
                "generation": draw(st.integers(-1, epoch - 1)),
            }
        )
    owners = [m for m in members if m.get("owned") and m["generation"] == epoch]
    if len(owners) >= 2 and draw(st.booleans()):  # two live claims on one number, same epoch
        first, second = draw(st.permutations(owners))[:2]
        second["owned"] = {
            t: sorted(set(second["owned"].get(t, [])) | set(first["owned"][t][:1]))
            for t in first["owned"]
        }
    if members and draw(
        st.booleans()
    ):  # a topic added to the join, not everybody subscribes it yet
        topics["added"] = draw(st.integers(0 if draw(st.integers(0, 9)) == 0 else 1, count + 3))
        for m in draw(st.lists(st.sampled_from(members), min_size=1, unique_by=id)):
            m["topics"] = m["topics"] + ["added"]
    if draw(st.booleans()):  # partition count raised on one topic
        raised = draw(st.sampled_from(joined))
        topics[raised] += draw(st.integers(1, 4))
    if members and draw(st.integers(0, 4)) == 0:
        draw(st.sampled_from(members))["topics"] = ["not-created-yet"]
    return {"topics": topics, "members": draw(st.permutations(members))}


def joins(**kwargs):
    """Random stream-join :class:`problems.GroupProblem` objects after churn."""
    return join_documents(**kwargs).map(load_problem)


def medium_join(numbers: int = 600, members: int = 40, joiners: int = 7, seed: int = 0):
    """A seeded mid-size join after churn: skewed previous ownership, joiners, a zombie, an added topic.

    Previous owners are drawn with skewed weights (so some members hold far
    more than their share and steals have to choose), the epoch is 3, one
    zombie at epoch 1 claims a tenth of the numbers, and topic ``j2`` (one
    more partition than the rest) is subscribed by a third of the members.
    """
    rng = np.random.default_rng(seed)
    holder = rng.choice(members, size=numbers, p=rng.dirichlet(np.full(members, 0.7)))
    joined = ["j0", "j1"]
    docs = []
    for m in range(members):
        owned = np.flatnonzero(holder == m).tolist()
        docs.append(
            {
                "id": f"m{m:03d}",
                "topics": joined + (["j2"] if m % 3 == 0 else []),
                "owned": {t: owned for t in joined},
                "generation": 3,
            }
        )
    docs += [{"id": f"new{i}", "topics": joined} for i in range(joiners)]
    docs.append(
        {
            "id": "zombie",
            "topics": joined,
            "generation": 1,
            "owned": {"j0": sorted(rng.choice(numbers, numbers // 10, replace=False).tolist())},
        }
    )
    return load_problem(
        {
            "topics": {"j0": numbers, "j1": numbers, "j2": numbers + 1},
            "members": [docs[i] for i in rng.permutation(len(docs))],
        }
    )
