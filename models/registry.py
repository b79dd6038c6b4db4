"""Every strategy, its heuristic and its exact solvers, in one table, and one way to run them.

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from problems import Result

#: Options with a default that every runner honours trivially: the values
#: :func:`solve` takes by default.  Anything else must be listed in a runner's
#: ``options`` to be accepted.
DEFAULTS: dict[str, Any] = {"time_limit": None, "workers": 1, "seed": 0, "log": False}
#: The options every CP-SAT model takes, and every PuLP model (``backend``: highs or cbc).
CPSAT = ("time_limit", "workers", "seed", "log")
MIP = ("time_limit", "seed", "log", "backend")


class UsageError(ValueError):
    """A request the registry refuses: unknown strategy or solver, a variant or an option it does not take.

    The command line turns it into a one-line usage error with exit status 2.
    """


@dataclass(frozen=True)
class Runner:
    """One way to answer a strategy: a heuristic or an exact backend.

    Attributes
    ----------
    function
        ``"module:function"``, called as ``function(problem, **options)``.
    variants
        The values of ``variant`` it takes (``None``: the strategy as documented).
    options
        The keyword options it honours (see :data:`DEFAULTS` for the shared ones).
    frontier
        ``"module:function"`` of its moves/quality frontier, if it has one.
    aliases
        Other names of its variants (``name -> variant``), accepted and passed on.
    """

    function: str
    variants: tuple[str | None, ...] = (None,)
    options: tuple[str, ...] = ()
    frontier: str | None = None
    aliases: dict[str, str | None] = field(default_factory=dict)

    def takes(self, option: str) -> bool:
        """Whether ``option`` is honoured (passed on) by this runner."""
        return option in self.options


@dataclass(frozen=True)
class Strategy:
    """One line of the catalogue.

    Attributes
    ----------
    family
        ``"group"`` (``rebalance-lab assign``) or ``"placement"`` (``reassign``).
    objective
        The objective its answers are judged on (a key of ``problems.OBJECTIVES``).
    heuristic
        Its documented heuristic.
    exact
        Its exact backends by solver name (``cpsat``, ``mip``, ``flow``).
    baselines
        Other strategies whose heuristics are compared on its objective.
    """

    family: str
    objective: str
    heuristic: Runner
    exact: dict[str, Runner] = field(default_factory=dict)
    baselines: tuple[str, ...] = ()

    @property
    def solvers(self) -> tuple[str, ...]:
        """``heuristic`` and the names of its exact backends."""
        return ("heuristic", *self.exact)

    def runner(self, solver: str) -> Runner:
        return self.heuristic if solver == "heuristic" else self.exact[solver]


# fmt: off
STRATEGIES: dict[str, Strategy] = {
    "range": Strategy("group", "sticky", Runner("heuristics.range:assign")),
    "roundrobin": Strategy("group", "sticky", Runner("heuristics.roundrobin:assign")),
    "sticky": Strategy(
        "group", "sticky",
        Runner("heuristics.sticky:assign", (None, "kafka-12464", "kafka-9987")),
        {"cpsat": Runner("models.cpsat.sticky:solve", options=CPSAT),
         "mip": Runner("models.mip.sticky:solve", options=MIP),
         "flow": Runner("models.flow.sticky:solve")},
        baselines=("range", "roundrobin", "uniform", "server-range", "cooperative-sticky")),
    "cooperative-sticky": Strategy("group", "sticky", Runner("heuristics.cooperative_sticky:assign")),
    "rack-aware": Strategy(
        "group", "rack-aware", Runner("heuristics.rack_aware:assign"),
        {"cpsat": Runner("models.cpsat.rack_aware:solve", options=CPSAT),
         "mip": Runner("models.mip.rack_aware:solve", options=MIP),
         "flow": Runner("models.flow.rack_aware:solve")},
        baselines=("range", "roundrobin", "cooperative-sticky", "uniform", "server-range")),
    "lag-aware": Strategy(
        "group", "lag-aware",
        Runner("heuristics.lag_aware:assign", (None, "cumulative", "sticky", "differencing")),
        {"cpsat": Runner("models.cpsat.lag_aware:solve", (None, "sticky"), CPSAT),
         "mip": Runner("models.mip.lag_aware:solve", (None, "sticky"), MIP)},
        baselines=("range",)),
    "stream-join": Strategy(
        "group", "stream-join",
        Runner("heuristics.stream_join:assign"),
        {"cpsat": Runner("models.cpsat.stream_join:solve", options=("time_limit", "workers", "seed")),
         "mip": Runner("models.mip.stream_join:solve", options=("time_limit", "seed", "backend")),
         "flow": Runner("models.flow.stream_join:solve")},
        baselines=("range",)),
    "uniform": Strategy("group", "sticky", Runner("heuristics.uniform:assign")),
    "server-range": Strategy("group", "sticky", Runner("heuristics.server_range:assign")),
    "share": Strategy(
        "group", "share", Runner("heuristics.share:assign"),
        {"cpsat": Runner("models.cpsat.share:solve_keywords", options=CPSAT),
         "mip": Runner("models.mip.share:solve_keywords", options=MIP),
         "flow": Runner("models.flow.share:solve_keywords")}),
    "kafka-default": Strategy(
        "placement", "replica", Runner("heuristics.kafka_default:assign", options=("seed", "start_index"))),
    "sticky-replica": Strategy(
        "placement", "replica",
        Runner("heuristics.sticky_replica:assign"),
        {"cpsat": Runner("models.cpsat.sticky_replica:solve", options=(*CPSAT, "max_moves", "beat"),
                         frontier="models.cpsat.sticky_replica:frontier"),
         "mip": Runner("models.mip.sticky_replica:solve", options=(*MIP, "max_moves", "beat"),
                       frontier="models.mip.sticky_replica:frontier"),
         "flow": Runner("models.flow.sticky_replica:solve", options=(*CPSAT, "max_moves", "beat"),
                        frontier="models.flow.sticky_replica:frontier")},
        baselines=("kafka-default",)),
}
# fmt: on

#: ``heuristic`` and every exact backend of some strategy.
SOLVERS: tuple[str, ...] = (
    "heuristic",
    *dict.fromkeys(b for entry in STRATEGIES.values() for b in entry.exact),
)


def strategies(family: str) -> list[str]:
    """The strategies of a family (``group`` or ``placement``), in table order."""
    return [name for name, entry in STRATEGIES.items() if entry.family == family]


def lookup(strategy: str, solver: str = "heuristic") -> Runner:
    """The runner of ``strategy`` on ``solver``, or a :class:`UsageError` naming what there is."""
    entry = STRATEGIES.get(strategy)
    if entry is None:
        raise UsageError(
            f"--strategy {strategy} is not a strategy (strategies: {', '.join(STRATEGIES)})"
        )
    if solver not in entry.solvers:
        raise UsageError(
            f"--solver {solver} is not available for --strategy {strategy} "
            f"(available: {', '.join(entry.solvers)})"
        )
    return entry.runner(solver)


def runner_function(name: str) -> Callable[..., Any]:
    """The function named ``"module:function"`` (imported now, looked up at each call)."""
    module, _, function = name.partition(":")
    return getattr(importlib.import_module(module), function)


def _flag(option: str) -> str:
    return "--" + option.replace("_", "-")


def _arguments(
    strategy: str, solver: str, variant: str | None, options: dict[str, Any]
) -> tuple[Runner, dict]:
    """Check a request against the table; the keyword arguments to pass on."""
    runner = lookup(strategy, solver)
    if variant is not None and variant not in runner.variants and variant not in runner.aliases:
        known = [v for v in (*runner.variants, *runner.aliases) if v is not None]
        raise UsageError(
            f"--variant {variant} is not a variant of --strategy {strategy} --solver {solver} "
            f"(variants: {', '.join(known) or 'none'})"
        )
    passed: dict[str, Any] = {} if variant is None else {"variant": variant}
    for option, value in options.items():
        if value is None:
            continue  # not given: the runner's own default
        if runner.takes(option):
            passed[option] = value
        elif option not in DEFAULTS or value != DEFAULTS[option]:
            raise UsageError(
                f"{_flag(option)} is not an option of --strategy {strategy} --solver {solver}"
                + (f" (options: {', '.join(map(_flag, runner.options))})" if runner.options else "")
            )
    return runner, passed


def solve(
    problem,
    strategy: str,
    solver: str = "heuristic",
    *,
    variant: str | None = None,
    time_limit: float | None = None,
    workers: int = 1,
    seed: int | None = 0,
    log: bool = False,
    **options,
) -> Result:
    """Answer ``problem`` with ``strategy``'s heuristic or one of its exact backends.

    Parameters
    ----------
    problem
        A :class:`problems.GroupProblem` or :class:`problems.PlacementProblem`.
    strategy, solver
        A key of :data:`STRATEGIES`; ``heuristic`` or one of its ``exact`` backends.
    variant
        One of the runner's variants (``None``: as documented).
    time_limit
        Seconds for an exact solver (``None``: its default).
    workers, seed, log
        Search workers, random seed (``None``: a randomised heuristic draws one)
        and the solver's log.
    **options
        Runner-specific options (``max_moves``, ``beat``, ``start_index``, ``backend``).
        ``None`` means not given.

    Returns
    -------
    Result
        The runner's answer, re-scored by the evaluator.

    Raises
    ------
    UsageError
        An unknown strategy or solver, a variant the runner lacks, or an option
        it cannot honour (any value other than the default above).
    """
    runner, passed = _arguments(
        strategy,
        solver,
        variant,
        {"time_limit": time_limit, "workers": workers, "seed": seed, "log": log, **options},
    )
    return runner_function(runner.function)(problem, **passed)


def frontier(
    problem,
    strategy: str,
    solver: str,
    max_moves: int,
    *,
    variant: str | None = None,
    time_limit: float | None = None,
    workers: int = 1,
    seed: int | None = 0,
    log: bool = False,
    **options,
) -> list[Result]:
    """The moves/quality frontier: :func:`solve` with ``max_moves=k`` for ``k = 0 .. max_moves``.

    ``time_limit`` bounds the whole frontier (``None``: the runner's default):
    each point gets the time left and reports what its solver proved in it
    (``optimal`` only when proven, else ``feasible`` with its bound, or no
    answer); a point reached after the deadline is not solved (no answer,
    ``unknown``, ``info["not_solved"]``).  A runner without a frontier is a
    :class:`UsageError`.
    """
    runner, passed = _arguments(
        strategy,
        solver,
        variant,
        {"time_limit": time_limit, "workers": workers, "seed": seed, "log": log, **options},
    )
    if runner.frontier is None:
        raise UsageError(f"--strategy {strategy} --solver {solver} has no moves/quality frontier")
    passed.pop("max_moves", None)
    return runner_function(runner.frontier)(problem, max_moves, **passed)
