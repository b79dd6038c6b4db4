"""Exact ``rack-aware`` assignment on the class network (:mod:`models.common.class_network`):
balance, then rack mismatches, then moves, on classes of members and pools; proven by its
certificate."""

from __future__ import annotations

from models.common.class_network import solve as solve_aggregated
from models.options import SolveOptions
from problems import GroupProblem, Result


def solve(problem: GroupProblem, options: SolveOptions) -> Result:
    """The proven optimum (no option is used: polynomial, always proven); status ``optimal``."""
    return solve_aggregated(problem, "rack-aware")
