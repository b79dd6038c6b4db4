"""Hypothesis strategies for rack-aware consumer groups.

Test support; the exhaustive optimum of these groups is :mod:`support.exhaustive`.

Most groups have ``partition_racks`` (0-3 replica racks per partition, repeats allowed, among
``r0``-``r3``; no member is on ``r3``; without it nothing counts as misaligned), members on
``r0``-``r2`` or without a rack, equal or mixed subscriptions, deleted topics, and previous
assignments with generations (conflicting and stale claims included).
"""

from __future__ import annotations

from hypothesis import strategies as st

from problems import load_problem

MEMBER_RACKS = ["r0", "r1", "r2"]
REPLICA_RACKS = ["r0", "r1", "r2", "r3"]


@st.composite
def rack_documents(
    draw, max_members: int = 4, max_topics: int = 3, max_partitions: int = 4
) -> dict:
    """A random consumer-group document with racks."""
    topics = {
        f"t{i}": draw(st.integers(0, max_partitions))
        for i in range(draw(st.integers(1, max_topics)))
    }
    names = list(topics) + ["deleted"]
    equal = draw(st.booleans())
    shared = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
    members = []
    for m in range(draw(st.integers(1, max_members))):
        member: dict = {
            "id": f"c{m}",
            "topics": shared
            if equal
            else draw(st.lists(st.sampled_from(names), min_size=1, unique=True)),
        }
        rack = draw(st.sampled_from([*MEMBER_RACKS, None]))
        if rack is not None:
            member["rack"] = rack
        if draw(st.integers(0, 2)):  # owns partitions of its topics, now and then a stale claim
            member["owned"] = {
                t: draw(st.lists(st.integers(0, topics.get(t, 1)), unique=True))
                for t in member["topics"]
            }
            member["generation"] = draw(st.integers(0, 2))
        members.append(member)
    doc = {"topics": topics, "members": members}
    if draw(st.integers(0, 5)):  # now and then none: nothing counts as misaligned
        replica_racks = st.lists(st.sampled_from(REPLICA_RACKS), max_size=3)
        doc["partition_racks"] = {
            t: draw(st.lists(replica_racks, min_size=n, max_size=n)) for t, n in topics.items()
        }
    return doc


def rack_groups(**kwargs):
    """Random :class:`problems.GroupProblem` objects with racks."""
    return rack_documents(**kwargs).map(load_problem)
