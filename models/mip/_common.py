"""Ranked (lexicographic) objectives with PuLP, written once.

The same bound-and-resolve scheme as :mod:`models.cpsat._common`: minimise
level 1; if proven optimal, constrain it to its optimum and minimise level 2;
one deadline for all levels; a level that runs out of time ends the search
with status ``feasible`` and the proven bound ``(v_1, ..., v_{i-1},
ceil(bound_i))``.  Objectives are integer, so an absolute gap below 1 proves
optimality; the relative gap is set to 0 (HiGHS's default 1e-4 would call a
non-optimal answer optimal).

Backends: ``highs`` (default; the HiGHS binary that the ``highsbox`` wheel
ships, through PuLP's ``HiGHS_CMD``) and ``cbc`` (PuLP's bundled CBC).  Both run
as child processes, single-threaded with a fixed seed for determinism, and the
proven dual bound of a timed-out level is read from the solver's own log.  Not
``highspy`` in-process: ortools' ``libortools`` exports the HiGHS symbols it
bundles, and in one process with a different highspy the two interpose each
other (seen here: import errors, or HiGHS ignoring its time limit after CP-SAT
ran).
"""

from __future__ import annotations

import math
import os
import re
import tempfile
import time
from pathlib import Path
from dataclasses import dataclass, field
from typing import Sequence

import pulp

from models import _ranked

BACKENDS = ("highs", "cbc")


@dataclass
class Ranked(_ranked.Ranked):
    """The outcome of :func:`solve_ranked` (:class:`models._ranked.Ranked`), the solution by variable name."""

    _values: dict[str, float] = field(default_factory=dict, repr=False)

    def value(self, expression) -> int:
        """Value of a variable or affine expression in the returned solution, rounded."""
        if isinstance(expression, (int, float)):
            return round(expression)
        if isinstance(expression, pulp.LpVariable):
            return round(self._values.get(expression.name, 0.0))
        total = expression.constant + sum(c * self._values.get(v.name, 0.0) for v, c in expression.items())
        return round(total)


def _highs_binary() -> str:
    import highsbox

    # The binary links libhighs from the wheel's lib folder; children inherit this.
    libraries = highsbox.highs_lib_dir()
    current = os.environ.get("LD_LIBRARY_PATH", "")
    if libraries not in current.split(os.pathsep):
        os.environ["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (libraries, current) if p)
    return highsbox.highs_bin_path()


def _solver(backend: str, seconds: float, seed: int, log: bool, log_path: str):
    if backend == "highs":
        return pulp.HiGHS_CMD(path=_highs_binary(), msg=log, timeLimit=seconds, threads=1, gapRel=0.0,
                              logPath=log_path, options=[f"random_seed={seed}"])
    if backend == "cbc":
        return pulp.PULP_CBC_CMD(msg=log, timeLimit=seconds, threads=1, gapRel=0.0, logPath=log_path,
                                 options=[f"randomSeed {seed}", f"randomCbcSeed {seed + 1}"])
    raise ValueError(f"unknown MIP backend {backend!r} (choose from {', '.join(BACKENDS)})")


#: The line of each backend's log that carries the proven lower bound.
_BOUND_LINE = {"highs": re.compile(r"^\s*Dual bound\s+(\S+)"), "cbc": re.compile(r"^Lower bound:\s+(\S+)")}


def _dual_bound(backend: str, log_path: str) -> float | None:
    try:
        text = Path(log_path).read_text(errors="replace")
    except OSError:
        return None
    for line in reversed(text.splitlines()):
        match = _BOUND_LINE[backend].match(line)
        if match:
            try:
                value = float(match.group(1))
            except ValueError:
                return None
            return None if math.isinf(value) or math.isnan(value) else value
    return None


def _outcome(problem: pulp.LpProblem) -> str:
    """``optimal`` | ``feasible`` | ``infeasible`` | ``unknown`` from PuLP's statuses."""
    if problem.status == pulp.LpStatusInfeasible or problem.sol_status == pulp.LpSolutionInfeasible:
        return "infeasible"
    if problem.sol_status == pulp.LpSolutionOptimal:
        return "optimal"
    if problem.sol_status == pulp.LpSolutionIntegerFeasible:
        return "feasible"
    return "unknown"


def solve_ranked(
    problem: pulp.LpProblem,
    objectives: Sequence[pulp.LpAffineExpression],
    *,
    time_limit: float = 10.0,
    backend: str = "highs",
    seed: int = 0,
    log: bool = False,
) -> Ranked:
    """Minimise ``objectives`` lexicographically on ``problem`` (which it modifies).

    Parameters
    ----------
    problem
        A PuLP minimisation problem holding the hard constraints.
    objectives
        Integer-valued affine expressions, most important first.
    time_limit
        Seconds for all levels together.
    backend
        ``highs`` or ``cbc``.
    seed
        The solver's random seed.
    log
        Print the solver's log.
    """
    started = time.perf_counter()
    deadline = started + time_limit
    log_path = tempfile.mktemp(prefix="rebalance-lab-mip-", suffix=".log")
    try:
        return _solve_levels(problem, objectives, deadline, started, backend, seed, log, log_path)
    finally:
        if os.path.exists(log_path):
            os.remove(log_path)


def _solve_levels(problem, objectives, deadline, started, backend, seed, log, log_path) -> Ranked:
    levels: list[int] = []
    values: dict[str, float] = {}
    for i, objective in enumerate(objectives):
        problem.setObjective(objective)
        remaining = max(0.01, deadline - time.perf_counter())
        try:
            problem.solve(_solver(backend, remaining, seed, log, log_path))
            status = _outcome(problem)
        except pulp.PulpSolverError:
            # PuLP 3.3 cannot parse the solution file HiGHS writes when its time limit
            # stops it with an incumbent: no solution we can read, so "unknown" for this level.
            status = "unknown"
        dual = _dual_bound(backend, log_path) if status in ("feasible", "unknown") else None
        if status == "infeasible" or (status == "unknown" and i == 0):
            return Ranked(status, seconds=time.perf_counter() - started)
        if status == "unknown":  # out of time on a later level: keep the previous solution
            bound = (*levels, *([] if dual is None else [math.ceil(dual - 1e-6)]))
            return Ranked("feasible", _levels(objectives, values), bound, time.perf_counter() - started, values)
        values = {v.name: v.varValue or 0.0 for v in problem.variables()}
        if status == "feasible":
            bound = (*levels, *([] if dual is None else [math.ceil(dual - 1e-6)]))
            return Ranked("feasible", _levels(objectives, values), bound, time.perf_counter() - started, values)
        value = _levels([objective], values)[0]  # pulp.value() is None for an objective without variables
        levels.append(value)
        problem += (objective <= value, f"_ranked_level_{i + 1}")
    return Ranked("optimal", tuple(levels), tuple(levels), time.perf_counter() - started, values)


def _levels(objectives, values: dict[str, float]) -> tuple[int, ...]:
    probe = Ranked("feasible", _values=values)
    return tuple(probe.value(objective) for objective in objectives)
