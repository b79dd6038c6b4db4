"""Ranked (lexicographic) objectives with PuLP models, written once.

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

import math
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pulp

from models.common import ranked_outcome
from models.common.mps import write_mps
from models.options import SolveOptions
from problems import Status

try:  # PuLP 3.3+ warns on every LpVariable of the 2.x API it plans to change in 4.0: 77,760 warnings
    from pulp.v4_migration import (
        set_v4_migration_warnings,
    )  # build a 2,000 x 40 model 3x slower under

    set_v4_migration_warnings(False)  # pytest's warning capture (6.2 s vs 2.0 s)
except ImportError:  # an older PuLP: no such warnings
    pass

BACKENDS = ("highs", "cbc")

#: Seconds a solver process may run past the deadline before it is killed.
GRACE_SECONDS = 1.0
#: The largest constraint coefficient or right-hand side of a level's model at which the solver's
#: ``optimal``, bound and ``infeasible`` are believed.  HiGHS 1.15 computes in doubles with
#: tolerances: measured on 12-partition, 3-member lag-aware groups (level 1 rows
#: ``z >= sum_p lag_p x[p, m]``), every ``optimal`` held with lags below 1e8, while with lags
#: near 1e9 CP-SAT beat 4 of 6 ``optimal`` answers and one group was called ``infeasible``.
#: Beyond it a level's answer is kept as ``feasible``, without bound.
TRUSTED_MAGNITUDE = 2**28
#: HiGHS's default ``mip_abs_gap``: with ``mip_rel_gap=0`` an ``Optimal`` status means the bound is
#: within this of the solution file's objective (written with every digit, unlike the log's bound).
_HIGHS_ABS_GAP = 1e-6
#: Below this many seconds left, a level is not started (its answer could not be read in time).
_MINIMUM_SECONDS = 0.05


@dataclass
class Ranked(ranked_outcome.Ranked):
    """The outcome of :func:`solve_ranked` (:class:`models.common.ranked_outcome.Ranked`), the
    solution by variable name."""

    _values: dict[str, float] = field(default_factory=dict, repr=False)

    def value(self, expression: pulp.LpAffineExpression | pulp.LpVariable | float) -> int:
        """Value of a variable or affine expression in the returned solution, rounded."""
        if isinstance(expression, (int, float)):
            return round(expression)
        if isinstance(expression, pulp.LpVariable):
            return round(self._values.get(str(expression.name), 0.0))
        return round(float(expression.constant)) + sum(
            int(c) * round(self._values.get(v.name, 0.0)) for v, c in expression.items()
        )


@dataclass
class _Level:
    """What one solver run says about one level."""

    status: str  # optimal | feasible | infeasible | unknown
    values: dict[str, float] | None = None
    dual: float | None = None  # proven lower bound of the level's objective (constant included)
    slack: float | None = (
        None  # how far ``dual`` may be above the true bound (None: the log's rounding)
    )


def _highs_binary() -> str:
    import highsbox

    # The binary links libhighs from the wheel's lib folder; children inherit this.
    libraries = highsbox.highs_lib_dir()
    current = os.environ.get("LD_LIBRARY_PATH", "")
    if libraries not in current.split(os.pathsep):
        os.environ["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (libraries, current) if p)
    return str(highsbox.highs_bin_path())


def _cbc_binary() -> str:
    return str(pulp.PULP_CBC_CMD().path)


def _logged_dual(log_file: Path, log: bool, pattern: str) -> float | None:
    """The last dual bound a solver's log gives (``pattern``'s group on a line), the log echoed on
    stderr when ``log``."""
    text = log_file.read_text(errors="replace").splitlines() if log_file.exists() else []
    if log:
        sys.stderr.write("\n".join(text) + "\n")
    dual = None
    for line in text:
        match = re.match(pattern, line)
        if match:
            dual = _number(match.group(1))
    return dual


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isinf(value) or math.isnan(value) else value


def _columns(lines: list[str], names: list[str]) -> dict[str, float] | None:
    """The last ``# Columns`` block of a HiGHS solution text, by model variable name."""
    starts = [i for i, line in enumerate(lines) if line.startswith("# Columns")]
    if not starts:
        return None
    begin = starts[-1] + 1
    count = int(lines[starts[-1]].split()[2])
    values: dict[str, float] = {}
    for line in lines[begin : begin + count]:
        parts = line.split()
        if len(parts) != 2 or not parts[0].startswith("c"):
            return None
        values[names[int(parts[0][1:])]] = float(parts[1])
    return values if len(values) == count else None


def _run(command: list[str], deadline: float, log_path: str | None) -> bool:
    """Run a solver; kill it :data:`GRACE_SECONDS` after ``deadline``.  Whether it finished."""
    with open(log_path, "w") if log_path else open(os.devnull, "w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        if _ended_within(process, max(0.0, deadline + GRACE_SECONDS - time.perf_counter())):
            return True
        process.kill()
        process.wait()
        return False


def _ended_within(process: subprocess.Popen[bytes], seconds: float) -> bool:
    """Whether ``process`` ends within ``seconds``, woken the moment it exits by a Linux pidfd
    (``Popen.wait(timeout=)`` polls in sleeps of up to 50 ms: 40 ms late per solve on average)."""
    if not hasattr(os, "pidfd_open"):  # not Linux: Python's polling wait
        try:
            process.wait(timeout=seconds)
            return True
        except subprocess.TimeoutExpired:
            return False
    fd = os.pidfd_open(
        process.pid
    )  # the child is not reaped before process.wait(): the pid is its own
    try:
        ended, _, _ = select.select([fd], [], [], seconds)
    finally:
        os.close(fd)
    if ended:
        process.wait()
    return bool(ended)


def _solve_highs(
    mps: str, folder: Path, names: list[str], seconds: float, deadline: float, seed: int, log: bool
) -> _Level:
    solution, improving, log_file = folder / "solution", folder / "improving", folder / "log"
    options = folder / "options"
    options.write_text(
        "\n".join(
            [
                f"solution_file={solution}",
                "write_solution_to_file=true",
                "write_solution_style=0",
                f"log_file={log_file}",
                f"log_to_console={'true' if log else 'false'}",
                "threads=1",
                "mip_rel_gap=0",
                f"random_seed={seed}",
                "mip_improving_solution_save=true",
                f"mip_improving_solution_file={improving}",
            ]
        )
        + "\n"
    )
    command = [_highs_binary(), mps, f"--options_file={options}", f"--time_limit={seconds:.3f}"]
    finished = _run(command, deadline, None)
    dual = _logged_dual(log_file, log, r"^\s*Dual bound\s+(\S+)")
    if finished and solution.exists():
        lines = solution.read_text(errors="replace").splitlines()
        model_status = lines[1].strip() if len(lines) > 1 else ""
        values = (
            _columns(lines, names)
            if "# Primal solution values" in lines
            and any(line.strip() == "Feasible" for line in lines[:6])
            else None
        )
        if model_status == "Infeasible":
            return _Level("infeasible")
        if values is not None:
            if model_status == "Optimal":
                objective = next(
                    (_number(line.split()[1]) for line in lines if line.startswith("Objective ")),
                    None,
                )
                if (
                    objective is not None
                ):  # HiGHS proved |objective - bound| <= mip_abs_gap at full precision
                    return _Level("optimal", values, objective, _HIGHS_ABS_GAP)
                return _Level("optimal", values, dual)
            return _Level("feasible", values, dual)
    # Killed, or no solution file: HiGHS's last improving solution, if any.
    values = (
        _columns(improving.read_text(errors="replace").splitlines(), names)
        if improving.exists()
        else None
    )
    return _Level("unknown" if values is None else "feasible", values, dual)


def _solve_cbc(
    mps: str, folder: Path, names: list[str], seconds: float, deadline: float, seed: int, log: bool
) -> _Level:
    solution, log_file = folder / "solution", folder / "log"
    command = [
        _cbc_binary(),
        mps,
        "-sec",
        f"{seconds:.3f}",
        "-timeMode",
        "elapsed",
        "-threads",
        "1",
        "-ratioGap",
        "0",
        "-randomSeed",
        str(seed + 1),
        "-randomCbcSeed",
        str(seed + 1),  # 0: time of day
        "-solve",
        "-solution",
        str(solution),
    ]
    finished = _run(command, deadline, str(log_file))
    dual = _logged_dual(log_file, log, r"^Lower bound:\s+(\S+)")
    if not finished or not solution.exists():
        return _Level("unknown", None, dual)
    lines = solution.read_text(errors="replace").splitlines()
    head = lines[0].split() if lines else []
    if not head or head[0] in ("Infeasible", "Integer"):
        return _Level("infeasible" if head else "unknown")
    if (
        head[0] == "Stopped"
        and "objective" not in head[:5]
        or head[0] not in ("Optimal", "Stopped")
    ):
        return _Level("unknown", None, dual)
    values: dict[str, float] = {}
    for line in lines[1:]:
        parts = line.split()
        if parts and parts[0] == "**":
            parts = parts[1:]
        if len(parts) >= 3 and parts[1].startswith("c") and parts[1][1:].isdigit():
            values[names[int(parts[1][1:])]] = float(parts[2])
    if head[0] == "Optimal":
        objective = _number(head[-1])
        return _Level("optimal", values, dual if dual is not None else objective)
    return _Level("feasible", values, dual)


_SOLVE = {"highs": _solve_highs, "cbc": _solve_cbc}


def solve_ranked(
    problem: pulp.LpProblem,
    objectives: Sequence[pulp.LpAffineExpression],
    options: SolveOptions,
    *,
    started: float | None = None,
) -> Ranked:
    """Minimise ``objectives`` lexicographically on ``problem`` (which it modifies).

    Parameters
    ----------
    problem
        A PuLP minimisation problem holding the hard constraints.
    objectives
        Integer-valued affine expressions, most important first.
    options
        ``time_limit`` (all levels together, counted from ``started``), ``backend`` (``highs`` or
        ``cbc``), ``seed`` (the solver's random seed) and ``log`` (the solver's log, on stderr).
    started
        ``time.perf_counter()`` when the caller began (model building counts
        against the limit); default now.
    """
    backend, seed, log = options.backend, options.solver_seed, options.log
    if backend not in _SOLVE:
        raise ValueError(f"unknown MIP backend {backend!r} (choose from {', '.join(BACKENDS)})")
    started = time.perf_counter() if started is None else started
    folder = Path(tempfile.mkdtemp(prefix="rebalance-lab-mip-"))
    try:
        return _solve_levels(
            problem,
            list(objectives),
            started + options.time_limit,
            started,
            backend,
            seed,
            log,
            folder,
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _solve_levels(
    problem: pulp.LpProblem,
    objectives: list[pulp.LpAffineExpression],
    deadline: float,
    started: float,
    backend: str,
    seed: int,
    log: bool,
    folder: Path,
) -> Ranked:
    levels: list[int] = []
    values: dict[str, float] = {}
    for i, objective in enumerate(objectives):
        objective = pulp.LpAffineExpression(objective)
        level = _Level("unknown")
        if deadline - time.perf_counter() >= _MINIMUM_SECONDS:
            here = folder / f"level{i + 1}"
            here.mkdir()
            mps = str(here / "model.mps")
            written = write_mps(
                problem, objective, mps, deadline
            )  # None: the deadline passed while writing
            if written is not None:
                variables, constant, magnitude = written
                level = _solve_level(
                    variables, constant, magnitude, mps, here, deadline, backend, seed, log
                )
        if level.status == "infeasible" or level.values is None:
            if i == 0:
                return Ranked(Status(level.status), seconds=time.perf_counter() - started)
            # A later level failed (time, solver error): keep the previous level's answer.
            return _feasible(objectives, values, levels, level, started)
        values = level.values
        value = Ranked(Status.FEASIBLE, _values=values).value(objective)
        if (
            level.status != "optimal"
            or level.dual is None
            or math.ceil(level.dual - (level.slack or 0.0)) < value
        ):
            return _feasible(objectives, values, levels, level, started)
        levels.append(value)
        if i + 1 < len(objectives):
            problem += (objective <= value, f"_ranked_level_{i + 1}")
    return Ranked(
        Status.OPTIMAL, tuple(levels), tuple(levels), time.perf_counter() - started, values
    )


def _solve_level(
    variables: list[pulp.LpVariable],
    constant: float,
    magnitude: float,
    mps: str,
    here: Path,
    deadline: float,
    backend: str,
    seed: int,
    log: bool,
) -> _Level:
    """One level's solver run on its written model file (the objective's constant added to its bound)."""
    seconds = deadline - time.perf_counter()
    if not variables:  # nothing to decide (e.g. no members): the constant is the optimum
        return _Level("optimal", {}, constant, 0.0)
    if seconds < _MINIMUM_SECONDS:
        return _Level("unknown")
    level = _SOLVE[backend](mps, here, [v.name for v in variables], seconds, deadline, seed, log)
    if level.dual is not None:
        if level.slack is None:
            level.slack = _slack(level.dual)
        level.dual += constant
    if magnitude > TRUSTED_MAGNITUDE:  # numbers beyond the solver's reliable range
        return _Level("unknown" if level.values is None else "feasible", level.values)
    return level


def _feasible(
    objectives: list[pulp.LpAffineExpression],
    values: dict[str, float],
    proven: list[int],
    level: _Level,
    started: float,
) -> Ranked:
    """``feasible``: the answer's levels; the bound = proven levels, then the dual bound (never above the answer)."""
    found = _levels(objectives, values)
    bound = list(proven)
    if level.dual is not None:
        bound.append(min(math.ceil(level.dual - (level.slack or 0.0)), found[len(proven)]))
    return Ranked(
        Status.FEASIBLE, found, tuple(bound) or None, time.perf_counter() - started, values
    )


def _slack(bound: float) -> float:
    """How far a bound read from a log may be above the solver's own (HiGHS prints 12 significant digits)."""
    return 1e-6 + abs(bound) * 1e-11


def _levels(objectives: list[pulp.LpAffineExpression], values: dict[str, float]) -> tuple[int, ...]:
    probe = Ranked(Status.FEASIBLE, _values=values)
    return tuple(probe.value(objective) for objective in objectives)
