"""heuristics/share.py's vectorized homogeneous builder for members that hold partitions, against
the same builder step by step (``share._assign(problem, vectorized=False)``, hash table by hash
table as Kafka's ``SimpleHomogeneousAssignmentBuilder`` runs): the pairs must be the same.

Random groups large enough for the vectorized path (a partition map of 64 buckets and more):
fewer members than partitions and more (several members per partition), current assignments that
are a previous answer with members gone and come, random, crowded (members over their share,
partitions over the sharing), stale (topics no longer subscribed, partitions beyond the count),
random topic ids or none.
"""

from __future__ import annotations

import base64

import numpy as np
import pytest

from heuristics import java, share
from problems import load_problem
from problems.share import share_assignment_json


def _document(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    topic_count = int(rng.integers(1, 5))
    topics = {f"topic-{t}": int(rng.integers(6, 80)) for t in range(topic_count)}
    total = sum(topics.values())
    shape = ["fewer", "more", "as many"][seed % 3]
    members = {
        "fewer": int(rng.integers(2, max(3, total // 2))),
        "more": int(rng.integers(total, 3 * total)),
        "as many": total + int(rng.integers(-3, 4)),
    }[shape]
    names = list(topics)
    subscription = names[: max(1, len(names) - int(rng.integers(0, 2)))]
    heterogeneous = (seed // 12) % 2 == 1
    buckets = [
        [name for name in [*names, "gone"] if rng.random() < 0.6] for _ in range(3)
    ]  # some maybe empty

    def subscribed() -> list[str]:
        if heterogeneous:
            return buckets[int(rng.integers(len(buckets)))]
        return subscription

    claims = ["previous", "random", "crowded", "few"][(seed // 3) % 4]
    doc: dict = {"topics": topics, "members": []}
    if claims == "previous":  # the answer to a group of other members, as a rolling restart gives
        before = load_problem(
            {
                "topics": topics,
                "members": [
                    {"id": f"m{i:04d}", "topics": subscribed()}
                    for i in rng.permutation(members + 3)[: members + int(rng.integers(-3, 4))]
                ],
            }
        )
        previous = share_assignment_json(before, share.assign(before).answer)
    for i in range(members):
        member: dict = {"id": f"m{i:04d}", "topics": subscribed()}
        if claims == "previous":
            if f"m{i:04d}" in previous and rng.random() < 0.95:
                member["owned"] = previous[f"m{i:04d}"]
        elif rng.random() < {"random": 0.5, "crowded": 0.9, "few": 0.1}[claims]:
            owned = {}
            for topic in [*names, "gone"]:
                if rng.random() < 0.6:
                    limit = topics.get(topic, 3) + (2 if claims == "random" else 0)
                    share_of = 0.6 if claims == "crowded" else 2 / max(members, 1) * limit
                    picked = rng.permutation(limit)[rng.random(limit) < max(share_of, 0.05)]
                    owned[topic] = picked.tolist()
            member["owned"] = owned
        doc["members"].append(member)
    if rng.random() < 0.5:
        doc["topic_ids"] = {
            t: base64.urlsafe_b64encode(rng.bytes(16)).decode().rstrip("=") for t in topics
        }
    return doc


@pytest.mark.parametrize("seed", range(240))
def test_vectorized_equals_step_by_step_with_claims(seed, monkeypatch):
    """Tests that the vectorized builders give the pairs of the step-by-step builders on random
    groups whose members hold partitions (homogeneous: the path taken where the partition map is
    large enough)."""
    taken = []
    vectorized = share._claims_homogeneous

    def spy(*args):
        taken.append(vectorized(*args))
        return taken[-1]

    monkeypatch.setattr(share, "_claims_homogeneous", spy)
    problem = load_problem(_document(seed))
    fast = share._assign(problem).answer
    slow = share._assign(problem, vectorized=False).answer
    assert np.array_equal(fast, slow)
    subscribed = problem.subscribes[0]
    targets = int(problem.partition_counts[subscribed].sum())
    if problem.owned_claims[0].size and targets and share.homogeneous(problem):
        # the partition map of 64 buckets or more: the vectorized path, else step by step
        big = java.table_size_for(share.new_hash_map_capacity(targets)) >= 64
        assert taken == [big]


def test_vectorized_equals_step_by_step_on_a_rolling_restart():
    """Tests a larger group through a rolling restart: 300 members on 4 topics of 500 partitions,
    each step a member leaving and coming back, every member holding the previous answer."""
    names = [f"topic-{t}" for t in range(4)]
    ids = [f"member-{m:03d}" for m in range(300)]
    topics = {name: 500 for name in names}
    answer: dict = {}
    for step in range(4):
        present = [m for k, m in enumerate(ids) if k != 7 * step] if step % 2 else ids
        doc = {
            "topics": topics,
            "members": [
                {"id": m, "topics": names, **({"owned": answer[m]} if answer.get(m) else {})}
                for m in present
            ],
        }
        problem = load_problem(doc)
        fast = share._assign(problem).answer
        assert np.array_equal(fast, share._assign(problem, vectorized=False).answer)
        answer = share_assignment_json(problem, fast)


class _Keys:
    """The partition map as :func:`share._fill` reads it: only its order."""

    def __init__(self, keys: list[int]) -> None:
        self.keys = keys

    def order(self) -> list[int]:
        return self.keys


class _Final:
    def __init__(self, count: int) -> None:
        self.final: list[set[int]] = [set() for _ in range(count)]


@pytest.mark.parametrize("seed", range(300))
def test_dealer_equals_fill(seed):
    """Tests the vectorized round robin (``share._Dealer``) against the step-by-step one
    (``share._fill``) on small random rounds where dealt members already hold the partition,
    meet one partition twice, and passes deal nothing, with windows and steps of every size."""
    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, 10))
    sharing = int(rng.integers(1, 6))
    keys = rng.permutation(40)[: int(rng.integers(1, 16))].tolist()
    readers = {k: {i for i in range(count) if rng.random() < 0.3} for k in keys}
    for k in keys:
        while len(readers[k]) > sharing:
            readers[k].pop()
    holds = {i: {k for k in keys if i in readers[k]} for i in range(count)}
    unfilled = [i for i in range(count) if rng.random() < 0.7]
    demand = sum(sharing - len(readers[k]) for k in keys)
    room = {i: int(rng.integers(1, 5)) for i in unfilled}
    while unfilled and sum(room.values()) < demand:  # the builders' rooms cover the demand
        room[unfilled[int(rng.integers(len(unfilled)))]] += 1
    wants = [len(holds[i]) + room.get(i, 0) for i in range(count)]
    # the reference: Kafka's loop on hash sets
    state = _Final(count)
    members = java.JavaHashSet(share.new_hash_map_capacity(count))
    for i in unfilled:
        members.add(i, i)
    held = {}
    for i, mine in holds.items():
        held[i] = java.JavaHashSet()
        for k in mine:
            held[i].add(k, k)
    share._fill(state, _Keys(keys), readers, held, members, sharing, wants, int)
    expected = sorted((i, k) for i in range(count) for k in state.final[i])
    # the dealer: the short partitions, the round in the set's order
    short = [k for k in keys if len(readers[k]) < sharing]
    ring = np.array(sorted(unfilled), dtype=np.int64)
    codes = sorted(i * 40 + k for k in keys for i in readers[k])
    dealer = share._Dealer(
        ring,
        np.array([room[i] for i in ring.tolist()], dtype=np.int64),
        np.array(short, dtype=np.int64),
        np.array([sharing - len(readers[k]) for k in short], dtype=np.int64),
        np.array(codes, dtype=np.int64),
        40,
    )
    dealt = dealer.run(size=int(rng.integers(1, 6)), steps=int(rng.integers(1, 4)))
    assert sorted(zip(*(d.tolist() for d in dealt))) == expected
