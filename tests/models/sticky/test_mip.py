"""Tests of models.sticky.mip (PuLP: HiGHS and CBC)."""

from __future__ import annotations

import pytest

import heuristics.sticky.sticky as heuristic
import models.sticky.flow as flow
import models.sticky.mip as mip
from models.options import SolveOptions
from problems import load_problem


def churned_group():
    """200 partitions x 20 members after one member left and one moved to a single topic."""
    names = [f"t{i}" for i in range(4)]
    doc = {
        "topics": {t: 50 for t in names},
        "members": [{"id": f"m{i:02d}", "topics": names} for i in range(21)],
    }
    first = heuristic.assign(load_problem(doc)).assignment
    members = [{**m, "owned": first[m["id"]], "generation": 1} for m in doc["members"][1:]]
    members[-1] = {**members[-1], "topics": names[:1]}
    return load_problem({"topics": doc["topics"], "members": members})


@pytest.mark.parametrize("backend", ["highs", "cbc"])
def test_backends_prove_the_flow_optimum(backend):
    """Tests HiGHS and CBC on a churned group: proven optimal, equal to the flow optimum and to their bound."""
    problem = churned_group()
    result = mip.solve(problem, SolveOptions.of(backend=backend, time_limit=60))
    assert result.status == "optimal" and result.valid
    assert (
        tuple(result.objective)
        == tuple(result.bound)
        == tuple(flow.solve(problem, SolveOptions()).objective)
    )


def test_unknown_backend_is_refused():
    """Tests that a misspelt backend raises instead of picking one."""
    with pytest.raises(ValueError, match="highs"):
        mip.solve(churned_group(), SolveOptions.of(backend="gurobi"))
