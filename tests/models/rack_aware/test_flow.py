"""Tests of the rack-aware flow model beyond the backend suite (tests/models/rack_aware/test_backends.py)."""

from __future__ import annotations

import numpy as np
import pytest

import models
from models.common.min_cost_flow import check_cost_range
from models.options import SolveOptions
from models.rack_aware import flow
from problems import ProblemError, load_problem


def test_without_partition_racks_it_is_the_sticky_flow():
    """Tests that without partition_racks level 2 is 0 and levels 1, 3 are the sticky flow's."""
    doc = {
        "topics": {"t": 5},
        "members": [
            {"id": "c0", "topics": ["t"], "rack": "a", "owned": {"t": [0, 1, 2, 3]}},
            {"id": "c1", "topics": ["t"], "rack": "b"},
        ],
    }
    result = flow.solve(load_problem(doc), SolveOptions())
    sticky = models.solve(load_problem(doc), "sticky", "flow")
    assert (
        result.status == "optimal"
        and result.objective == [13, 0, 1]
        and sticky.objective == [13, 1]
    )
    assert result.bound == (13, 0, 1)


def test_cost_range_is_checked():
    """Tests that weights beyond the exact 64-bit range are refused, not solved inexactly."""
    with pytest.raises(ProblemError, match="64-bit"):
        check_cost_range(2**40, 2**30, 10, "members", "partitions")


def test_one_member_joins_a_racked_group():
    """Tests a mid-size incremental case (300 members x 5 partitions, 3 racks, RF 2): proven, level 1 the
    sticky flow's, moves at least the sticky flow's (alignment ranks above them), mismatches as Kafka counts."""
    members, topics, per = 300, 30, 50
    racks = ["a", "b", "c"]
    owned: dict[int, dict[str, list[int]]] = {}
    for i in range(topics * per):
        owned.setdefault(i % (members - 1), {}).setdefault(f"t{i // per}", []).append(i % per)
    doc = {
        "topics": {f"t{t}": per for t in range(topics)},
        "members": [
            {
                "id": f"m{m:03d}",
                "topics": [f"t{t}" for t in range(topics)],
                "rack": racks[m % 3],
                **({"owned": owned[m], "generation": 1} if m in owned else {}),
            }
            for m in range(members)
        ],
        "partition_racks": {
            f"t{t}": [[racks[(p + t) % 3], racks[(p + t + 1) % 3]] for p in range(per)]
            for t in range(topics)
        },
    }
    problem = load_problem(doc)
    result = flow.solve(problem, SolveOptions())
    assert result.status == "optimal" and result.valid and result.bound == tuple(result.objective)
    assert result.objective[0] == members * 5**2  # 1,500 partitions, 5 each
    sticky = models.solve(problem, "sticky", "flow")
    assert result.objective[0] == sticky.objective[0] and result.objective[2] >= sticky.objective[1]
    assert np.count_nonzero(problem.rack_mismatches(result.answer)) == result.objective[1]


def test_one_member_with_many_partitions_stays_in_range():
    """Tests that the unit costs are shifted: a member owning 100,000 partitions (weights about 10^10, counts
    about 10^5) is solved, not refused as beyond 64 bits."""
    problem = load_problem(
        {
            "topics": {"t": 100_000, "u": 1},
            "members": [
                {
                    "id": "c0",
                    "topics": ["t", "u"],
                    "rack": "a",
                    "owned": {"t": list(range(100_000))},
                    "generation": 1,
                },
                {"id": "c1", "topics": ["u"], "rack": "b"},
            ],
            "partition_racks": {"t": [["a"]] * 100_000, "u": [["a"]]},
        }
    )
    result = flow.solve(problem, SolveOptions())
    assert result.status == "optimal" and result.objective == [100_000**2 + 1, 1, 0]
