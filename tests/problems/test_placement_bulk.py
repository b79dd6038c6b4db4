"""Tests that checking a placement's partitions in bulk changes no answer and no error.

``problems.io._placement_lists`` checks every partition at once and hands the
lists over when all pass; otherwise the per-partition loop runs and names the
first problem.  Each damaged document must give the same problem, or the same
error, with the bulk path as with the loop alone.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from problems import io, parse_problem
from problems.errors import ProblemError
from support.cluster_strategies import cluster_documents

DAMAGE = [1, -1, True, 2**40, 2**70, "", [], None, [1, 1], list(range(40)), "\ud800", 1.0, {}]


def outcome(doc):
    try:
        problem = parse_problem(copy.deepcopy(doc))
    except ProblemError as error:
        return "error", str(error)
    return (
        "ok",
        problem.topics,
        problem.partitions.tolist(),
        problem.replica_start.tolist(),
        problem.replica_brokers.tolist(),
    )


@st.composite
def damaged(draw):
    doc = draw(cluster_documents(max_topics=6, max_partitions=5))
    for _ in range(draw(st.integers(0, 2))):
        p = draw(st.integers(0, len(doc["partitions"]) - 1))
        part, value = doc["partitions"][p], draw(st.sampled_from(DAMAGE))
        what = draw(
            st.sampled_from(["topic", "partition", "replicas", "replica", "drop", "whole", "copy"])
        )
        if what == "replica" and isinstance(part, dict) and isinstance(part.get("replicas"), list):
            part["replicas"][draw(st.integers(0, len(part["replicas"]) - 1))] = value
        elif what == "drop" and isinstance(part, dict):
            part.pop(
                draw(st.sampled_from(["topic", "partition", "replicas"])), None
            )  # dropped twice: once
        elif what == "whole":
            doc["partitions"][p] = value
        elif what == "copy":
            doc["partitions"][p] = copy.deepcopy(
                doc["partitions"][draw(st.integers(0, len(doc["partitions"]) - 1))]
            )
        elif isinstance(part, dict) and what in part:
            part[what] = value
    return doc


@settings(max_examples=300)
@given(damaged())
def test_bulk_checks_agree_with_the_loop(doc):
    """Tests the same problem or the same error with and without the bulk path."""
    with_bulk = outcome(doc)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(io, "_placement_lists", lambda *args: None)
        assert outcome(doc) == with_bulk
