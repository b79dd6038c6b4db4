"""Tests of the ranked-objective solving written once per backend (models/common/cpsat_ranked.py,
models/common/mip_ranked.py).

One behaviour suite, run against CP-SAT and against PuLP with HiGHS and with CBC.
"""

from __future__ import annotations

import random

import pulp
import pytest
from ortools.sat.python import cp_model

from models.common.cpsat_ranked import solve_ranked as cpsat_ranked
from models.common.mip_ranked import solve_ranked as mip_ranked
from models.options import SolveOptions


class CpSat:
    name = "cpsat"

    def __init__(self):
        self.model = cp_model.CpModel()

    def int_var(self, low, high, name):
        return self.model.new_int_var(low, high, name)

    def add(self, constraint):
        self.model.add(constraint)

    def solve(self, objectives, time_limit):
        return cpsat_ranked(self.model, objectives, SolveOptions(time_limit=time_limit))


class Mip:
    def __init__(self, backend):
        self.name = f"mip-{backend}"
        self.backend = backend
        self.model = pulp.LpProblem("test", pulp.LpMinimize)

    def int_var(self, low, high, name):
        return pulp.LpVariable(name, low, high, cat="Integer")

    def add(self, constraint):
        self.model += constraint

    def solve(self, objectives, time_limit):
        options = SolveOptions.of(time_limit=time_limit, backend=self.backend)
        return mip_ranked(self.model, objectives, options)


BACKENDS = [CpSat, lambda: Mip("highs"), lambda: Mip("cbc")]
IDS = ["cpsat", "mip-highs", "mip-cbc"]


@pytest.mark.parametrize("make", BACKENDS, ids=IDS)
def test_second_level_only_breaks_ties_of_the_first(make):
    """Tests that level 2 is optimised only among level-1 optima."""
    backend = make()
    x, y = backend.int_var(0, 10, "x"), backend.int_var(0, 10, "y")
    backend.add(x + y >= 7)
    ranked = backend.solve([x + y, 3 * x - y + 2], time_limit=10)
    assert ranked.status == "optimal"
    assert ranked.levels == (7, -5) and ranked.bound == (7, -5)
    assert (ranked.value(x), ranked.value(y)) == (0, 7)
    assert ranked.value(2 * x + 3 * y + 1) == 22


@pytest.mark.parametrize("make", BACKENDS, ids=IDS)
def test_infeasible_is_reported(make):
    """Tests that an infeasible model gives status infeasible and no levels."""
    backend = make()
    x = backend.int_var(0, 3, "x")
    backend.add(x >= 5)
    ranked = backend.solve([x], time_limit=10)
    assert ranked.status == "infeasible" and ranked.levels == ()


@pytest.mark.parametrize("make", BACKENDS, ids=IDS)
def test_out_of_time_is_feasible_with_a_valid_bound(make):
    """Tests that a level cut short is 'feasible' with bound <= value, and 'optimal' only when it is.

    A number-partitioning instance with even numbers and an odd target: the
    optimum is 1 (by parity), hard to prove in a fraction of a second.
    """
    rng = random.Random(7)
    numbers = [rng.randrange(10**4, 2 * 10**4) * 2 for _ in range(60)]
    target = sum(numbers) // 2 + 1
    backend = make()
    picks = [backend.int_var(0, 1, f"x{i}") for i in range(len(numbers))]
    gap = backend.int_var(0, sum(numbers), "gap")
    total = sum(n * x for n, x in zip(numbers, picks))
    backend.add(total - target <= gap)
    backend.add(target - total <= gap)
    ranked = backend.solve([gap], time_limit=0.3)
    assert ranked.status in ("optimal", "feasible", "unknown")
    if ranked.status == "optimal":
        assert ranked.levels == (1,)
    if ranked.status == "feasible":
        assert ranked.levels[0] >= 1
        assert ranked.bound is None or ranked.bound == () or ranked.bound[0] <= ranked.levels[0]


def test_mip_runs_after_cp_sat_in_one_process():
    """Tests that HiGHS keeps its time limit after CP-SAT ran in the same process (it runs out of process)."""
    import time

    CpSat().solve([0], time_limit=1)
    rng = random.Random(3)
    numbers = [rng.randrange(10**4, 2 * 10**4) * 2 for _ in range(60)]
    backend = Mip("highs")
    picks = [backend.int_var(0, 1, f"x{i}") for i in range(len(numbers))]
    gap = backend.int_var(0, sum(numbers), "gap")
    total = sum(n * x for n, x in zip(numbers, picks))
    backend.add(total - (sum(numbers) // 2 + 1) <= gap)
    backend.add((sum(numbers) // 2 + 1) - total <= gap)
    started = time.perf_counter()
    backend.solve([gap], time_limit=0.5)
    assert time.perf_counter() - started < 10
