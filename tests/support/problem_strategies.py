"""Hypothesis strategies for random consumer groups and clusters (test support).

Groups cover uniform and mixed subscriptions, subscriptions to topics that do
not exist, previous assignments with conflicting and stale claims, missing and
equal generations, static members and lags; clusters cover racks or none and
replicas on removed brokers.
"""

from __future__ import annotations

from hypothesis import strategies as st

from problems import load_problem

TOPIC_NAMES = [f"t{i}" for i in range(6)]


@st.composite
def group_documents(
    draw, max_members: int = 7, max_partitions: int = 9, lags: bool = False, racks: bool = False
) -> dict:
    """A random, valid consumer-group document (docs/formats.md); with ``racks``, sometimes
    ``partition_racks`` (0-3 replica racks per partition, repeats allowed)."""
    topic_count = draw(st.integers(0, len(TOPIC_NAMES)))
    topics = {name: draw(st.integers(0, max_partitions)) for name in TOPIC_NAMES[:topic_count]}
    uniform = draw(st.booleans())
    everything = list(topics) + ["deleted-topic"]
    shared = draw(st.lists(st.sampled_from(everything), unique=True)) if everything else []
    member_count = draw(st.integers(0, max_members))
    ids = draw(
        st.lists(
            st.text("abcC0123-_", min_size=1, max_size=4),
            min_size=member_count,
            max_size=member_count,
            unique=True,
        )
    )
    members = []
    for member_id in ids:
        subscription = (
            shared if uniform else draw(st.lists(st.sampled_from(everything), unique=True))
        )
        member: dict = {"id": member_id, "topics": list(subscription)}
        if draw(st.booleans()):
            owned = {}
            for topic in draw(st.lists(st.sampled_from(everything), unique=True, max_size=3)):
                limit = topics.get(topic, 3) + 2  # sometimes beyond the partition count: stale
                owned[topic] = draw(st.lists(st.integers(0, limit), unique=True, max_size=limit))
            member["owned"] = owned
            if draw(st.integers(0, 3)):
                member["generation"] = draw(st.integers(0, 3))
        if draw(st.integers(0, 4)) == 0:
            member["instance_id"] = f"i-{member_id}"
        if draw(st.booleans()):
            member["rack"] = draw(st.sampled_from(["r0", "r1"]))
        members.append(member)
    doc = {"topics": topics, "members": members}
    if lags:
        values = st.one_of(st.just(0), st.integers(0, 10**6), st.integers(0, 10**12))
        doc["lags"] = {t: draw(st.lists(values, min_size=n, max_size=n)) for t, n in topics.items()}
    if racks and draw(st.booleans()):
        replica_racks = st.lists(st.sampled_from(["r0", "r1", "r2"]), max_size=3)
        doc["partition_racks"] = {
            t: draw(st.lists(replica_racks, min_size=n, max_size=n)) for t, n in topics.items()
        }
    return doc


def groups(**kwargs):
    """Random :class:`problems.GroupProblem` objects."""
    return group_documents(**kwargs).map(load_problem)
