"""The toy strategy's record (tests/models/test_toy_strategy.py): every fact the product reads of
it, in one :class:`models.registry.Strategy`.  A product strategy's record is one entry of the table
in ``models/registry.py``; a strategy kept elsewhere registers its record with
:func:`models.registry.register`, as :func:`toy_record` is registered by the test."""

from __future__ import annotations

from models.registry import CPSAT, Backend, RunnerEntry, Strategy, heuristic
from support import toy_cpsat, toy_heuristic

NAME = "toy-least-loaded"


def _cpsat() -> Backend:
    return toy_cpsat


def toy_record() -> Strategy:
    """The toy: a group strategy judged on the sticky objective, its heuristic compared on the
    scenarios judged on ``sticky``, one exact backend (CP-SAT)."""
    return Strategy(
        NAME,
        "group",
        "sticky",
        "least loaded (a toy)",
        heuristic(toy_heuristic),
        {"cpsat": RunnerEntry(_cpsat, uses=CPSAT)},
        compared_on=("sticky",),
    )
