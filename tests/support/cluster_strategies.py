"""Hypothesis strategies for random replica-placement clusters (test support).

A cluster has 2-20 live brokers (shuffled ids), no racks or 1-10 racks, 1-50
topics of 1-16 partitions, one replication factor 1-4 per topic (at most the
live broker count), and some brokers removed: replicas still on ids that are no
longer live.  Current placements are uniform, or skewed onto a few brokers (the
cluster after brokers were added), or packed rack by rack (the PR 18903 case).
"""

from __future__ import annotations

from hypothesis import strategies as st

from problems import load_problem

REMOVED_BASE = 1000


@st.composite
def cluster_documents(
    draw,
    max_brokers: int = 20,
    max_racks: int = 10,
    max_topics: int = 50,
    max_partitions: int = 16,
    max_factor: int = 4,
    max_removed: int = 3,
    racks: bool | None = None,
    min_topics: int = 1,
    min_partitions: int = 1,
) -> dict:
    """A random, valid replica-placement document (docs/formats.md).

    ``racks`` forces a rack-aware (True) or rack-unaware (False) cluster; ``min_topics`` and
    ``min_partitions`` (per topic) set the least size drawn.
    """
    live = draw(st.integers(2, max_brokers))
    ids = draw(st.permutations(range(live))) if draw(st.booleans()) else list(range(live))
    aware = draw(st.booleans()) if racks is None else racks
    rack_count = draw(st.integers(1, min(max_racks, live))) if aware else 0
    brokers = []
    for i in ids:
        entry = {"id": i}
        if aware:
            entry["rack"] = f"r{draw(st.integers(0, rack_count - 1))}"
        brokers.append(entry)
    removed = [REMOVED_BASE + k for k in range(draw(st.integers(0, max_removed)))]
    # A true Random seeded by Hypothesis: its calls are not drawn one by one (5 ms each, most of
    # these tests' time); the document still shrinks by its sizes, not by the random choices.
    rng = draw(st.randoms(use_true_random=True))
    shape = draw(st.sampled_from(["uniform", "skewed", "rack-packed"]))
    pool = list(ids) + removed
    if shape == "skewed":
        pool = rng.sample(pool, k=max(min(len(pool), max_factor), len(pool) // 3))
    elif shape == "rack-packed" and aware:
        by_rack: dict[str, list[int]] = {}
        for broker in brokers:
            by_rack.setdefault(broker["rack"], []).append(broker["id"])
    partitions = []
    for t in range(draw(st.integers(min_topics, max_topics))):
        factor = draw(st.integers(1, min(max_factor, live)))
        for index in range(draw(st.integers(min_partitions, max_partitions))):
            choices = pool
            if shape == "rack-packed" and aware:
                choices = rng.choice(list(by_rack.values()))
                if len(choices) < factor:
                    choices = pool
            if len(choices) < factor:
                choices = list(ids) + removed
            partitions.append(
                {"topic": f"t{t}", "partition": index, "replicas": rng.sample(choices, factor)}
            )
    return {"brokers": brokers, "partitions": partitions}


def clusters(**kwargs):
    """Random :class:`problems.PlacementProblem` objects."""
    return cluster_documents(**kwargs).map(load_problem)
