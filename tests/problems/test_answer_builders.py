"""Tests of the answer a caller gets: ``Result.assignment`` (the output JSON as dicts and lists) and
``Result.assignment_table()`` (a pyarrow Table).

The JSON builders make their lists in C, in bulk; the reference here is the per-run Python builder
they replaced, kept verbatim: on random groups and clusters both give equal values, in the same
order, and the same bytes through ``json.dumps``.  The tables hold the same answer, one row per
partition (per replica for a placement).
"""

from __future__ import annotations

import gc
import json

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import heuristics.range as range_assignor
import heuristics.roundrobin as roundrobin
import heuristics.sticky.sticky as sticky
from heuristics import kafka_default
from problems import GroupProblem, PlacementProblem, Result, load_problem
from problems import result as result_module
from problems.result import (
    assignment_json,
    assignment_table,
    reassignment_json,
    reassignment_table,
)
from support.cluster_strategies import cluster_documents
from support.problem_strategies import group_documents


# ------------------------------------------------------------------ the reference builders
def reference_assignment_json(
    problem: GroupProblem, owner: np.ndarray
) -> dict[str, dict[str, list[int]]]:
    """The builder ``result.assignment`` used before: a Python loop over (member, topic) runs."""
    owner = np.asarray(owner)
    out: dict[str, dict[str, list[int]]] = {m: {} for m in problem.members}
    assigned = np.flatnonzero(owner >= 0)
    if len(assigned) == 0:
        return out
    # Sort by (member, global id); global ids already order topics and indices.
    order = assigned[np.argsort(owner[assigned], kind="stable")]
    members = owner[order]
    topics = problem.partition_topic[order]
    indices = problem.partition_index[order].tolist()
    keys = members.astype(np.int64) * max(problem.num_topics, 1) + topics
    cuts = np.flatnonzero(np.diff(keys)) + 1
    starts = [0, *cuts.tolist()]
    ends = [*cuts.tolist(), len(order)]
    for s, e in zip(starts, ends):
        out[problem.members[members[s]]][problem.topics[topics[s]]] = indices[s:e]
    return out


def reference_reassignment_json(problem: PlacementProblem, replicas: np.ndarray) -> dict:
    """The builder of the placement answer used before: one dict and two lists per partition."""
    replicas = np.asarray(replicas).tolist()
    start = problem.replica_start.tolist()
    entries = []
    for p, (topic, index) in enumerate(zip(problem.topics, problem.partitions.tolist())):
        brokers = replicas[start[p] : start[p + 1]]
        entries.append(
            {
                "topic": topic,
                "partition": index,
                "replicas": brokers,
                "log_dirs": ["any"] * len(brokers),
            }
        )
    return {"version": 1, "partitions": entries}


def same(built, reference) -> None:
    """Equal values, equal types (an int is an int, not a numpy integer), the same bytes."""
    assert built == reference
    assert json.dumps(built) == json.dumps(reference)  # the order of every dict, too
    assert type(built) is type(reference)


def flattened(assignment: dict[str, dict[str, list[int]]]) -> list[tuple[str, str, int]]:
    return [(m, t, i) for m, topics in assignment.items() for t, xs in topics.items() for i in xs]


def by_partition(problem: GroupProblem, owner: np.ndarray) -> list[tuple[str, str, int]]:
    """(member, topic, index) of every assigned partition, in partition order."""
    return [
        (problem.members[m], problem.topics[problem.partition_topic[g]], problem.partition_index[g])
        for g, m in enumerate(np.asarray(owner).tolist())
        if m >= 0
    ]


# ------------------------------------------------------------------ owners worth testing
@st.composite
def owners(draw, problem: GroupProblem) -> np.ndarray:
    """An owner array: unassigned partitions, members holding nothing, and runs of every length
    (a member's whole topic, single partitions spread over members, or anything)."""
    count, members = problem.num_partitions, problem.num_members
    if members == 0:
        return np.full(count, -1, dtype=np.int32)
    rng = draw(st.randoms(use_true_random=True))
    shape = draw(st.sampled_from(["random", "spread", "blocks", "one-member", "none"]))
    if shape == "random":  # anything, about a third unassigned
        values = [rng.randrange(-1, members) for _ in range(count)]
    elif shape == "spread":  # round robin: one partition of each topic per member, mostly
        values = [g % members for g in range(count)]
    elif shape == "blocks":  # contiguous ranges: long runs
        size = rng.randint(1, max(count, 1))
        values = [min(g // size, members - 1) for g in range(count)]
    elif shape == "one-member":
        values = [members - 1] * count
    else:
        values = [-1] * count
    return np.array(values, dtype=draw(st.sampled_from([np.int32, np.int64])))


@given(data=st.data(), doc=group_documents(max_members=9, max_partitions=12))
def test_random_owners_give_the_reference_json(data, doc):
    """Tests random groups (members without partitions, topics with none, subscriptions to missing
    topics) and owner arrays of every shape: the same dicts and lists, in the same order."""
    problem = load_problem(doc)
    owner = data.draw(owners(problem))
    same(assignment_json(problem, owner), reference_assignment_json(problem, owner))


@given(
    group_documents(max_members=6, max_partitions=9),
    st.sampled_from([range_assignor, roundrobin, sticky]),
)
def test_heuristic_answers_give_the_reference_json(doc, assignor):
    """Tests the assignors' own answers through ``Result.assignment``."""
    result = assignor.assign(load_problem(doc))
    same(result.assignment, reference_assignment_json(result.problem, result.answer))


@pytest.mark.parametrize(
    "shape", ["singles", "singles-some-longer", "mostly-longer", "one-run-each", "sparse-big-index"]
)
def test_each_way_of_cutting_runs(shape):
    """Tests every path of the run cutting on a larger group (2,000 partitions, 40 members): all
    single-partition lists, single ones with some longer, mostly longer ones, one list per member,
    and indexes far above the number of claims (no shared int objects)."""
    problem = load_problem(
        {
            "topics": {"big": 200_000, **{f"t{k}": 50 for k in range(40)}},
            "members": [{"id": f"m{m:02}", "topics": ["big", "t0"]} for m in range(40)],
        }
    )
    rng = np.random.default_rng(7)
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    small = np.arange(200_000, problem.num_partitions)
    if shape == "singles":
        owner[small] = np.arange(len(small)) % 40
    elif shape == "singles-some-longer":
        owner[small] = np.arange(len(small)) % 40
        owner[small[:300]] = 3  # 300 partitions of t0 .. t5 in a row: six longer lists
    elif shape == "mostly-longer":
        owner[small] = (np.arange(len(small)) // 5) % 40
    elif shape == "one-run-each":
        owner[small] = np.arange(len(small)) * 40 // len(small)
    else:
        owner[rng.choice(200_000, 30, replace=False)] = rng.integers(0, 40, 30)
    same(assignment_json(problem, owner), reference_assignment_json(problem, owner))


def test_more_members_than_16_bit_keys():
    """Tests a group of 70,000 members (the sort on the owners is not on 16-bit keys)."""
    members = 70_000
    problem = load_problem(
        {
            "topics": {"a": 3_000, "b": 2_000},
            "members": [{"id": f"c{m}", "topics": ["a", "b"]} for m in range(members)],
        }
    )
    rng = np.random.default_rng(3)
    owner = rng.integers(-1, members, problem.num_partitions).astype(np.int32)
    owner[:10] = members - 1
    same(assignment_json(problem, owner), reference_assignment_json(problem, owner))
    table = assignment_table(problem, owner)
    assert list(zip(*table.to_pydict().values())) == by_partition(problem, owner)


def test_any_negative_owner_is_unassigned():
    """Tests owners below -1: unassigned, as before (the 16-bit sort keys need -1 at least)."""
    problem = load_problem(
        {
            "topics": {"t": 4, "u": 2},
            "members": [{"id": "a", "topics": ["t", "u"]}, {"id": "b", "topics": ["t"]}],
        }
    )
    owner = np.array([1, -2, 0, -1, -7, 0])
    same(assignment_json(problem, owner), reference_assignment_json(problem, owner))
    assert assignment_table(problem, owner).to_pydict()["partition"] == [0, 2, 1]


def test_an_owner_beyond_the_members_is_an_error():
    """Tests that an owner array naming a member the group lacks raises, as before."""
    problem = load_problem({"topics": {"t": 2}, "members": [{"id": "a", "topics": ["t"]}]})
    with pytest.raises(IndexError):
        reference_assignment_json(problem, np.array([0, 1]))
    with pytest.raises(IndexError, match="not a member"):
        assignment_json(problem, np.array([0, 1]))


@pytest.mark.parametrize("enabled", [True, False])
def test_the_garbage_collector_is_left_as_it_was(monkeypatch, enabled):
    """Tests that building the JSON leaves the collector on or off, as the caller had it, with
    nothing frozen; with it on, the new lists are in its oldest generation (no young collection
    will scan them)."""
    monkeypatch.setattr(result_module, "_TENURE_AT", 0)  # the large answers' way, on small ones
    problem = load_problem({"topics": {"t": 3}, "members": [{"id": "a", "topics": ["t"]}]})
    placement = load_problem(
        {"brokers": [{"id": 1}], "partitions": [{"topic": "t", "partition": 0, "replicas": [1]}]}
    )
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        built = assignment_json(problem, np.array([0, -1, 0]))
        moved = reassignment_json(placement, placement.replica_brokers)
        assert gc.isenabled() is enabled
        assert gc.get_freeze_count() == 0
        if enabled:
            young = {id(x) for x in gc.get_objects(0) + gc.get_objects(1)}
            assert id(built["a"]["t"]) not in young and id(built) not in young
            assert id(moved["partitions"][0]["replicas"]) not in young
    finally:
        gc.enable() if was else gc.disable()
    assert built == {"a": {"t": [0, 2]}}


def test_a_callers_frozen_objects_stay_frozen(monkeypatch):
    """Tests that objects a caller froze (``gc.freeze()``, as before a ``fork``) stay frozen."""
    monkeypatch.setattr(result_module, "_TENURE_AT", 0)
    problem = load_problem({"topics": {"t": 3}, "members": [{"id": "a", "topics": ["t"]}]})
    gc.freeze()
    try:
        assert gc.get_freeze_count() > 0
        assert assignment_json(problem, np.array([0, -1, 0])) == {"a": {"t": [0, 2]}}
        assert gc.get_freeze_count() > 0 and gc.isenabled()  # gc.unfreeze() would leave none
    finally:
        gc.unfreeze()


def test_only_large_answers_change_generations(monkeypatch):
    """Tests that a small answer is built without touching the collector, and that one of
    ``_TENURE_AT`` lists and dicts collects the young generations once and moves the new objects
    to the oldest (freeze, unfreeze)."""
    calls = []
    for name in ("collect", "freeze", "unfreeze", "disable"):
        real = getattr(gc, name)
        monkeypatch.setattr(
            gc, name, lambda *a, _name=name, _real=real: (calls.append(_name), _real(*a))[1]
        )
    members = 10
    topics = [f"t{t}" for t in range(500)]
    problem = load_problem(
        {
            "topics": dict.fromkeys(topics, members),
            "members": [{"id": f"m{m}", "topics": topics} for m in range(members)],
        }
    )
    owner = np.arange(problem.num_partitions) % members  # one partition of each topic: 5,000 lists
    was = gc.isenabled()
    gc.enable()
    try:
        monkeypatch.setattr(result_module, "_TENURE_AT", 5_000 + members + 1)
        calls.clear()  # loading the problem may pause the collector
        small = assignment_json(problem, owner)
        assert calls == []
        monkeypatch.setattr(result_module, "_TENURE_AT", 5_000 + members)
        large = assignment_json(problem, owner)
        assert calls == ["collect", "disable", "freeze", "unfreeze"]
    finally:
        gc.enable() if was else gc.disable()
    same(small, reference_assignment_json(problem, owner))
    assert large == small


# ------------------------------------------------------------------ placements
@given(data=st.data(), doc=cluster_documents(max_topics=6, max_partitions=6))
def test_random_placements_give_the_reference_json(data, doc):
    """Tests random clusters (one replication factor, or several; replicas on removed brokers)
    with their current replicas and a random answer of the same shape."""
    problem = load_problem(doc)
    same(
        reassignment_json(problem, problem.replica_brokers),
        reference_reassignment_json(problem, problem.replica_brokers),
    )
    rng = data.draw(st.randoms(use_true_random=True))
    answer = np.array(
        [rng.choice(problem.broker_ids.tolist()) for _ in problem.replica_brokers], dtype=np.int64
    )
    same(reassignment_json(problem, answer), reference_reassignment_json(problem, answer))
    table = reassignment_table(problem, answer)
    expected = [
        (e["topic"], e["partition"], r, b)
        for e in reference_reassignment_json(problem, answer)["partitions"]
        for r, b in enumerate(e["replicas"])
    ]
    assert list(zip(*table.to_pydict().values())) == expected


def test_placement_answers_through_the_result():
    """Tests kafka-default's answer through ``Result.assignment`` and ``assignment_table()``."""
    problem = load_problem(
        {
            "brokers": [{"id": b, "rack": f"r{b % 2}"} for b in range(4)],
            "partitions": [
                {"topic": t, "partition": p, "replicas": [p % 4, (p + 1) % 4][: 1 + p % 2]}
                for t in ("x", "y")
                for p in range(5)
            ],
        }
    )
    result = kafka_default.assign(problem, start_index=0)
    same(result.assignment, reference_reassignment_json(problem, result.answer))
    table = result.assignment_table()
    assert table.column_names == ["topic", "partition", "replica", "broker"]
    assert table.schema.field("topic").type == pa.dictionary(pa.int32(), pa.string())
    assert [table.schema.field(c).type for c in ("partition", "replica", "broker")] == [
        pa.int32()
    ] * 3
    assert table.num_rows == len(result.answer)


# ------------------------------------------------------------------ the table
@given(data=st.data(), doc=group_documents(max_members=9, max_partitions=12))
def test_table_rows_are_the_json_in_partition_order(data, doc):
    """Tests that the table is the JSON's (member, topic, partition) triples, in partition order:
    each member's rows in the JSON's order."""
    problem = load_problem(doc)
    owner = data.draw(owners(problem))
    table = assignment_table(problem, owner)
    assert table.column_names == ["member", "topic", "partition"]
    rows = list(zip(*table.to_pydict().values()))
    assert rows == by_partition(problem, owner)
    triples = flattened(reference_assignment_json(problem, owner))
    assert sorted(rows) == sorted(triples)
    for member in problem.members:
        assert [r for r in rows if r[0] == member] == [t for t in triples if t[0] == member]
    assert table.schema.field("partition").type == pa.int32()
    assert table.column("member").type == pa.dictionary(pa.int32(), pa.string())


def test_result_table_follows_shown_and_answer():
    """Tests ``Result.assignment_table()``: the printed assignment when it differs from the judged
    one (``shown``), pandas categoricals, and ``None`` without an answer."""
    problem = load_problem(
        {
            "topics": {"t": 3, "empty": 0, "u": 1},
            "members": [
                {"id": "a", "topics": ["t", "u"]},
                {"id": "b", "topics": ["t"]},
                {"id": "idle", "topics": []},
            ],
        }
    )
    result = Result(problem, "sticky", np.array([1, 0, 1, 0]), shown=np.array([1, -1, 1, 0]))
    frame = result.assignment_table().to_pandas()
    assert frame.values.tolist() == [["b", "t", 0], ["b", "t", 2], ["a", "u", 0]]
    assert list(frame["member"].cat.categories) == ["a", "b", "idle"]
    assert result.assignment == {"a": {"u": [0]}, "b": {"t": [0, 2]}, "idle": {}}
    assert Result(problem, "sticky", None, status="unknown").assignment_table() is None


def test_table_does_not_change_with_the_answer():
    """Tests that a table keeps its rows when the owner array it came from changes afterwards."""
    problem = load_problem(
        {
            "topics": {"t": 3},
            "members": [{"id": "a", "topics": ["t"]}, {"id": "b", "topics": ["t"]}],
        }
    )
    owner = np.array([0, 1, 0], dtype=np.int32)
    table = assignment_table(problem, owner)
    owner[:] = 1
    assert table.to_pydict() == {
        "member": ["a", "b", "a"],
        "topic": ["t"] * 3,
        "partition": [0, 1, 2],
    }
