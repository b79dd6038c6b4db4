"""Exact ``sticky`` assignment on the class network (:mod:`models.class_flow`): balance, then moves."""

from __future__ import annotations

from models.class_flow import solve as solve_classes
from models.options import SolveOptions
from problems import GroupProblem, Result


def solve(problem: GroupProblem, options: SolveOptions) -> Result:
    """The proven optimum (no option is used: polynomial, always proven); status ``optimal``."""
    return solve_classes(problem, "sticky")
