"""Tests that the constrained sticky path's shortcuts (``sticky_quotas.round_robin``, the
transposed partition order, the exactly-C_f queue from the deficits, claims kept as they are by
members that keep all they own, the no-partition-claimed-twice shortcut of ``resolve_claims``) give
exactly what the straightforward ``np.lexsort`` / ``np.maximum.at`` / counting code gives.  That
code is kept here as the reference."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import heuristics.sticky.sticky_kafka as kafka
from heuristics.kafka_orders import topics_in_name_order
from heuristics.sticky.sticky_quotas import (
    owned_in_order,
    partitions,
    phase_one,
    quotas,
    round_robin,
)
from heuristics.sticky.sticky_racks import rack_round_robin
from problems import load_problem
from support.problem_strategies import group_documents


def reference_partitions(problem, index_first):
    topics = [t for t in topics_in_name_order(problem) if problem.subscribes[0, t]]
    start, counts = problem.topic_start, problem.partition_counts
    blocks = [np.arange(start[t], start[t] + counts[t]) for t in topics]
    by_topic = np.concatenate(blocks) if blocks else np.zeros(0, dtype=np.int64)
    if not index_first:
        return by_topic
    index = problem.partition_index[by_topic]
    small = index.max(initial=0) < 2**16
    return by_topic[np.argsort(index.astype(np.uint16) if small else index, kind="stable")]


def reference_constrained(problem, kept, order, id_rank, racks=None):
    c_f, c_c, c_r = quotas(
        int(problem.partition_counts[problem.subscribes[0]].sum()), problem.num_members
    )
    grouped, owner_of, rank, owned = owned_in_order(
        kept, reference_partitions(problem, True), problem.num_members
    )
    keep, fill, exactly = phase_one(owned, order, c_f, c_c, c_r)
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    stays = rank < keep[owner_of]
    owner[grouped[stays]] = owner_of[stays]
    by_topic = reference_partitions(problem, False)
    unassigned = by_topic[owner[by_topic] < 0]
    fill = fill[np.argsort(id_rank[fill], kind="stable")]
    exactly = exactly[np.argsort(id_rank[exactly], kind="stable")]
    counts = keep.copy()
    if racks is not None:
        unassigned = unassigned[np.argsort(racks.rack_consumers(unassigned), kind="stable")]
        over = int((keep == c_c).sum()) if c_r else 0
        under, queue = fill.tolist(), exactly.tolist()
        left, _ = rack_round_robin(
            racks, unassigned.tolist(), counts, under, queue, over, c_r, c_f, c_c, owner
        )
        unassigned = np.array(left, dtype=np.int64)
        fill, exactly = np.array(under, dtype=np.int64), np.array(queue, dtype=np.int64)
    deficit = c_f - counts[fill]
    slot = np.repeat(np.arange(len(fill)), deficit)
    rounds = np.arange(len(slot)) - np.repeat(np.cumsum(deficit) - deficit, deficit)
    schedule = np.lexsort((slot, rounds))
    owner[unassigned[: len(slot)]] = fill[slot[schedule]]
    done_at = np.full(len(fill), -1, dtype=np.int64)
    np.maximum.at(done_at, slot[schedule], np.arange(len(schedule)))
    queue = np.concatenate((exactly, fill[np.argsort(done_at, kind="stable")]))
    left = unassigned[len(slot) :]
    owner[left] = queue[: len(left)]
    return owner


def reference_round_robin(lengths):
    run = np.repeat(np.arange(len(lengths)), lengths)
    item = np.arange(len(run)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.lexsort((run, item))


@given(
    st.one_of(
        st.lists(st.integers(0, 12), max_size=12),
        st.lists(st.integers(0, 300), min_size=60, max_size=120),
        st.tuples(st.integers(0, 20), st.integers(0, 30)).map(lambda nl: [nl[1]] * nl[0]),
    )
)
def test_round_robin_is_the_lexsort_by_item_then_run(lengths):
    """Tests round_robin on random run lengths (equal ones: one block; a few distinct: bands; more than 64
    distinct: the stable sort; zeros), dealing items (step 1) and the runs' values (step 0)."""
    lengths = np.array(lengths, dtype=np.int64)
    order = reference_round_robin(lengths)
    first = np.arange(len(lengths), dtype=np.int64) * 1000 + 7
    item = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    got = round_robin(lengths, first)
    assert got.dtype == np.int64 and np.array_equal(got, (np.repeat(first, lengths) + item)[order])
    members = np.arange(len(lengths), dtype=np.int32)[::-1].copy()
    got = round_robin(lengths, members, step=0)
    assert got.dtype == np.int32 and np.array_equal(got, np.repeat(members, lengths)[order])


@st.composite
def equal_groups(draw):
    """Random groups with equal subscriptions (the constrained path), sometimes with racks, owned claims,
    generations, stale and doubly claimed partitions, unequal partition counts."""
    doc = draw(group_documents(max_members=9, max_partitions=14, racks=True))
    topics = (
        draw(st.lists(st.sampled_from(list(doc["topics"]) or ["t0"]), unique=True))
        if doc["topics"]
        else []
    )
    if not doc["members"]:
        doc["members"].append({"id": "solo"})  # not an id the strategy draws
    for member in doc["members"]:
        member["topics"] = list(topics)
    return doc


@given(equal_groups())
def test_constrained_gives_what_the_sorting_code_gave(doc):
    """Tests Kafka's constrained path (and its transfers) against the reference code on random equal groups."""
    problem = load_problem(doc)
    owner, path, transfers = kafka.assign_with_transfers(problem)
    with mock.patch.object(kafka, "constrained", reference_constrained):
        reference_owner, reference_path, reference_transfers = kafka.assign_with_transfers(
            load_problem(doc)
        )
    assert path == reference_path
    assert owner.dtype == reference_owner.dtype and np.array_equal(owner, reference_owner)
    assert np.array_equal(transfers, reference_transfers)
    if path == "constrained":
        for index_first in (False, True):
            assert np.array_equal(
                partitions(problem, index_first), reference_partitions(problem, index_first)
            )


def test_constrained_at_a_larger_shape():
    """Tests a group of unequal partition counts (many distinct), some members owning, one left: as the reference."""
    rng = np.random.default_rng(3)
    topics = {f"t{t:02d}": int(rng.integers(0, 200)) for t in range(80)}
    members = [{"id": f"m{m:03d}", "topics": list(topics)} for m in range(37)]
    first = load_problem({"topics": topics, "members": members})
    owner, _ = kafka.assign(first)
    owned = [{} for _ in members]
    for p in np.flatnonzero(owner >= 0).tolist():
        t = int(first.partition_topic[p])
        owned[owner[p]].setdefault(first.topics[t], []).append(int(first.partition_index[p]))
    doc = {
        "topics": topics,
        "members": [{**m, "owned": o, "generation": 1} for m, o in zip(members, owned)][1:],
    }
    for case in ({"topics": topics, "members": members}, doc):
        problem = load_problem(case)
        got = kafka.assign(problem)
        with mock.patch.object(kafka, "constrained", reference_constrained):
            want = kafka.assign(load_problem(case))
        assert got[1] == want[1] == "constrained" and np.array_equal(got[0], want[0])


def reference_resolve_claims(problem, position):
    """``resolve_claims`` without the no-partition-claimed-twice shortcut: the contested claims counted first."""
    kept = np.full(problem.num_partitions, -1, dtype=np.int32)
    doubly = np.zeros(problem.num_partitions, dtype=bool)
    members, partitions = problem.owned_claims
    live = kafka.live_topics(problem)[problem.partition_topic[partitions]]
    members, partitions = members[live], partitions[live]
    contested = np.bincount(partitions, minlength=problem.num_partitions)[partitions] > 1
    kept[partitions[~contested]] = members[~contested]
    members, partitions = members[contested], partitions[contested]
    generation = problem.generations
    for p in np.unique(partitions).tolist():  # Kafka's loop, claimants in map order
        last, holder, twice = -1, -1, False
        for x in sorted(members[partitions == p].tolist(), key=position.__getitem__):
            if last < 0 or generation[x] > generation[last]:
                holder = last = x
            elif generation[x] == generation[last]:
                holder, last, twice = -1, x, True
        kept[p], doubly[p] = holder, twice
    return kept, doubly


@given(group_documents(max_members=9, max_partitions=6))
def test_resolve_claims_gives_what_the_counting_code_gave(doc):
    """Tests resolve_claims on random groups (conflicting claims, generations, deleted and unsubscribed topics)."""
    problem = load_problem(doc)
    position = np.random.default_rng(len(doc["members"])).permutation(problem.num_members)
    kept, doubly = kafka.resolve_claims(problem, position)
    reference_kept, reference_doubly = reference_resolve_claims(problem, position)
    assert (
        kept.dtype == reference_kept.dtype
        and np.array_equal(kept, reference_kept)
        and np.array_equal(doubly, reference_doubly)
    )
