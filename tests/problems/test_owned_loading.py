"""Tests that the bulk reading of owned claims (problems.io._parse_owned) gives exactly what a
straightforward reading gives: the same arrays, notes and errors, on valid and broken claims."""

from __future__ import annotations

from itertools import chain, repeat

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from problems import checks, load_problem, resolve_claims
from problems.arrays import frozen
from problems.errors import ProblemError
from problems.io import (
    _check_repeats,
    _index_values,
    _item_field,
    _offsets,
    _parse_owned,
    _stale_claims,
)
from support.problem_strategies import group_documents


def reference_parse_owned(owned_docs, counts, index, notes):
    """The reference reading: one pass per check over the flattened claims (the search for a repeat
    and the stale claims' notes are shared with the bulk reading)."""
    entry_start = _offsets(owned_docs)
    entry_member = np.repeat(np.arange(len(owned_docs)), np.diff(entry_start))
    names = list(chain.from_iterable(owned_docs))
    lists = list(chain.from_iterable(map(dict.values, owned_docs)))

    def entry_field(e):
        return f"members[{entry_member[e]}].owned.{names[e]}"

    try:
        checks.strings(list(set(names)), lambda _: "")
    except ProblemError:
        checks.strings(names, lambda e: f"members[{entry_member[e]}].owned")
    if lists and set(map(type, lists)) != {list}:
        e = next(e for e, v in enumerate(lists) if type(v) is not list)
        raise ProblemError(
            entry_field(e), f"must be a list of integers >= 0, got {checks.type_name(lists[e])}"
        )
    start = _offsets(lists)
    checks.at_most(int(start[-1]), checks.MAX_PARTITIONS, "members", "owned partitions in all")
    indices = checks.integers(list(chain.from_iterable(lists)), _item_field(start, entry_field))
    claim_entry = np.repeat(np.arange(len(lists)), np.diff(start))
    _check_repeats(lists, indices, claim_entry, entry_field)
    entry_topic = np.fromiter(map(index.get, names, repeat(-1)), dtype=np.int64, count=len(names))
    _stale_claims(
        lists, indices, claim_entry, entry_topic, counts, entry_member, entry_field, notes
    )
    return {
        "owned_topics": tuple(names),
        "owned_entry_start": frozen(entry_start),
        "owned_start": frozen(start),
        "owned_indices": frozen(indices),
    }


def outcome(parse, doc):
    """``(fields, notes, derived)`` of ``parse`` on the owned claims of ``doc``, or its error."""
    topics = doc["topics"]
    counts = np.array(list(topics.values()), dtype=np.int64)
    notes = []
    try:
        result = parse(
            [m.get("owned") or {} for m in doc["members"]],
            counts,
            dict(zip(topics, range(len(topics)))),
            notes,
        )
    except ProblemError as error:
        return ("error", error.field, error.message)
    return result, notes


def same(new, reference):
    if isinstance(reference, tuple) and reference[0] == "error":
        assert new == reference
        return
    (fields, derived), notes = new
    reference_fields, reference_notes = reference
    assert notes == reference_notes
    assert fields.keys() == reference_fields.keys()
    for key, value in reference_fields.items():
        if isinstance(value, np.ndarray):
            assert fields[key].dtype == value.dtype and np.array_equal(fields[key], value), key
        else:
            assert fields[key] == value, key


def check_problem(doc):
    """The cached arrays load_problem seeds equal what GroupProblem's properties compute from the fields."""
    problem = load_problem(doc)
    index = problem.topic_index
    entry_topic = np.fromiter(
        map(index.get, problem.owned_topics, repeat(-1)),
        dtype=np.int64,
        count=len(problem.owned_topics),
    )
    claim_topic = np.repeat(entry_topic, np.diff(problem.owned_start))
    entry_member = np.repeat(
        np.arange(problem.num_members, dtype=np.int32), np.diff(problem.owned_entry_start)
    )
    member = np.repeat(entry_member, np.diff(problem.owned_start))
    keep = problem.owned_indices < np.append(problem.partition_counts, 0)[claim_topic]
    partition = problem.topic_start[claim_topic[keep]] + problem.owned_indices[keep]
    for got, want in (
        (problem.owned_entry_topic, entry_topic),
        (problem.owned_claim_topic, claim_topic),
        (problem.owned_claims[0], member[keep]),
        (problem.owned_claims[1], partition),
    ):
        assert got.dtype == want.dtype and np.array_equal(got, want)
        assert not got.flags.writeable


BAD_ITEMS = [
    -1,
    2**31,
    2**31 - 1,
    2**63,
    2**64,
    2**70,
    1.0,
    0.5,
    True,
    None,
    "1",
    [1],
    (1,),
    {"a": 1},
    np.int64(1),
]
BAD_LISTS = [(1, 2), 3, None, "01", {"0": 1}, [], [0, 0], [2, 1, 2], [[0]], [0, [1]]]
BAD_KEYS = ["", "t\ud800", 7, None, "deleted-topic"]


@st.composite
def broken_documents(draw):
    """A random group whose owned claims may hold a value of the wrong kind, a repeat or a bad topic name."""
    doc = draw(group_documents())
    owners = [m for m in doc["members"] if m.get("owned")]
    for _ in range(draw(st.integers(0, 2)) if owners else 0):
        member = draw(st.sampled_from(owners))
        topic = draw(st.sampled_from(list(member["owned"])))
        kind = draw(st.integers(0, 2))
        if kind == 0:
            items = list(member["owned"][topic])
            items.insert(draw(st.integers(0, len(items))), draw(st.sampled_from(BAD_ITEMS)))
            member["owned"][topic] = items
        elif kind == 1:
            member["owned"][topic] = draw(st.sampled_from(BAD_LISTS))
        else:
            member["owned"][draw(st.sampled_from(BAD_KEYS))] = draw(
                st.lists(st.integers(0, 4), unique=True)
            )
    return doc


@given(broken_documents())
def test_claims_give_the_same_arrays_or_error(doc):
    """Tests random groups (stale claims, empty lists, deleted topics), some with a wrong value among the
    claims: the same arrays and notes, or the same error (field and message); the cached arrays as computed."""
    new = outcome(_parse_owned, doc)
    same(new, outcome(reference_parse_owned, doc))
    if new[0] != "error":
        check_problem(doc)


def test_many_claims_of_every_width():
    """Tests a large group: indexes of 1 to 10 digits, lists of 0 to 4 items, in bulk, as the reference."""
    rng = np.random.default_rng(5)
    topics = {f"t{t}": 2**31 - 1 for t in range(30)}
    members = []
    for m in range(200):
        owned = {}
        for t in rng.choice(30, size=rng.integers(0, 8), replace=False).tolist():
            digits = rng.integers(1, 11, size=rng.integers(0, 5))
            owned[f"t{t}"] = sorted(
                {int(rng.integers(0, min(10**d, 2**31 - 1))) for d in digits.tolist()}
            )
        members.append({"id": f"m{m}", "topics": list(topics), "owned": owned})
    doc = {"topics": topics, "members": members}
    same(outcome(_parse_owned, doc), outcome(reference_parse_owned, doc))
    check_problem({**doc, "topics": dict.fromkeys(topics, 10**6)})  # some claims beyond: stale


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 7), st.integers(-1, 2)), max_size=30))
def test_claims_resolve_to_the_unique_highest_generation(claims):
    """Tests problems.resolve_claims (the unclaimed-twice shortcut and the sort) against a loop over the keys."""
    members, keys, generations = (
        (np.array(c, dtype=np.int64).reshape(-1) for c in zip(*claims))
        if claims
        else (np.zeros(0, dtype=np.int64),) * 3
    )
    owner = np.full(8, -1, dtype=np.int64)
    resolve_claims(owner, members, keys, generations)
    expected = np.full(8, -1, dtype=np.int64)
    for key in set(keys.tolist()):
        top = max(g for k, g in zip(keys.tolist(), generations.tolist()) if k == key)
        winners = [
            m
            for m, k, g in zip(members.tolist(), keys.tolist(), generations.tolist())
            if k == key and g == top
        ]
        expected[key] = winners[0] if len(winners) == 1 else -1
    assert owner.tolist() == expected.tolist()


@given(
    st.lists(
        st.one_of(
            st.lists(st.integers(0, 2**31 - 1), max_size=4),
            st.just([]),
            st.lists(st.integers(0, 9), max_size=1),
        ),
        max_size=12,
    )
)
def test_bulk_indexes_and_lengths(lists):
    """Tests _index_values (lengths counted in the JSON text, one item per list counted at once) on random lists:
    empty lists, one item each, indexes of every width."""
    lengths, values = _index_values(lists)
    assert lengths.dtype == values.dtype == np.int64
    assert lengths.tolist() == [len(items) for items in lists]
    assert values.tolist() == list(chain.from_iterable(lists))
