"""Every strategy, its heuristic and its exact solvers, in one table, and one way to run them.

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any, Protocol

import heuristics.kafka_default
import heuristics.lag_aware
import heuristics.range
import heuristics.roundrobin
import heuristics.server_range
import heuristics.share
import heuristics.sticky.cooperative_sticky
import heuristics.sticky.rack_aware
import heuristics.sticky.sticky
import heuristics.sticky_replica
import heuristics.stream_join
import heuristics.streams.streams_ha
import heuristics.streams.streams_kip924_sticky
import heuristics.streams.streams_sticky
import heuristics.uniform
from models.options import COMMON, SolveOptions, ignoring
from problems import GroupProblem, PlacementProblem, Result
from problems.streams import StreamsProblem

#: The common options CP-SAT models use, and those the PuLP models use (no search workers).
CPSAT = ("time_limit", "workers", "seed", "log", "hint")
MIP = ("time_limit", "seed", "log")
#: The sticky-replica flow uses CP-SAT (its options, no hint) where the flows alone do not prove it.
REPLICA_FLOW = ("time_limit", "workers", "seed", "log")


class UsageError(ValueError):
    """A request the registry refuses: unknown strategy or solver, a variant or an option it does not take.

    The command line turns it into a one-line usage error with exit status 2.
    """


class Backend(Protocol):
    """What the registry calls: a module (or a :class:`Heuristic`) with the one runner signature."""

    def solve(self, problem: Any, options: SolveOptions, /) -> Result: ...


class FrontierBackend(Backend, Protocol):
    """A backend that also answers the moves/quality frontier (``k = 0 .. max_k`` moves)."""

    def frontier(self, problem: Any, max_k: int, options: SolveOptions, /) -> list[Result]: ...


@dataclass(frozen=True)
class Heuristic:
    """A heuristic module's ``assign(problem, ...)`` reached through the one runner signature.

    ``assign`` (looked up at each call) gets ``variant`` when one is asked for, and each option
    named in ``keywords`` (e.g. ``kafka-default``'s ``seed`` and ``start_index``) by name; the
    heuristics keep their own direct-call signatures, documented where they are written.
    """

    module: ModuleType
    keywords: tuple[str, ...] = ()

    def solve(self, problem: Any, options: SolveOptions, /) -> Result:
        """``module.assign(problem, [variant=...], **keywords)``."""
        passed: dict[str, Any] = {} if options.variant is None else {"variant": options.variant}
        passed.update({name: getattr(options, name) for name in self.keywords})
        result: Result = self.module.assign(problem, **passed)
        return result


@dataclass(frozen=True)
class RunnerEntry:
    """One way to answer a strategy: a heuristic or an exact backend.

    Attributes
    ----------
    load
        Returns what runs it (``load().solve(problem, options)``): an exact backend's module,
        imported on first use, or a :class:`Heuristic`.
    variants
        The values of ``variant`` it takes (``None``: the strategy as documented).
    uses
        The common options (:data:`models.options.COMMON`) it uses; it accepts the others and
        names them in ``info["ignored_options"]`` when they are asked for.
    takes
        The particular options (``SolveOptions.extra``) it takes; any other is refused.
    frontier
        Returns the module of its moves/quality frontier, if it has one.
    aliases
        Other names of its variants (``name -> variant``), accepted and passed on.
    """

    load: Callable[[], Backend]
    variants: tuple[str | None, ...] = (None,)
    uses: tuple[str, ...] = ()
    takes: tuple[str, ...] = ()
    frontier: Callable[[], FrontierBackend] | None = None
    aliases: dict[str, str | None] = field(default_factory=dict)

    def accepts(self, option: str) -> bool:
        """Whether ``option`` is accepted (a common option, or a particular one it takes)."""
        return option in COMMON or option in self.takes


def heuristic(
    module: ModuleType,
    variants: tuple[str | None, ...] = (None,),
    uses: tuple[str, ...] = (),
    takes: tuple[str, ...] = (),
) -> RunnerEntry:
    """The entry of a heuristic module: ``uses`` and ``takes`` are passed to its ``assign`` by name."""
    adapter = Heuristic(module, (*uses, *takes))
    return RunnerEntry(lambda: adapter, variants, uses, takes)


@dataclass(frozen=True)
class Strategy:
    """One line of the catalogue.

    Attributes
    ----------
    family
        ``"group"`` (``rebalance-lab assign``), ``"streams"`` (``assign`` on a streams group) or
        ``"placement"`` (``reassign``).
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
    heuristic: RunnerEntry
    exact: dict[str, RunnerEntry] = field(default_factory=dict)
    baselines: tuple[str, ...] = ()

    @property
    def solvers(self) -> tuple[str, ...]:
        """``heuristic`` and the names of its exact backends."""
        return ("heuristic", *self.exact)

    def runner(self, solver: str) -> RunnerEntry:
        return self.heuristic if solver == "heuristic" else self.exact[solver]


# ------------------------------------------------------------------ exact backends
# OR-Tools and PuLP take about a second to import: each backend module is imported by the function
# that returns it, when a request first needs it, so `import models` and the heuristics load neither.
def cpsat_sticky() -> Backend:
    from models.sticky import cpsat

    return cpsat


def mip_sticky() -> Backend:
    from models.sticky import mip

    return mip


def flow_sticky() -> Backend:
    from models.sticky import flow

    return flow


def aggregate_sticky() -> Backend:
    from models.sticky import aggregate

    return aggregate


def aggregate_rack_aware() -> Backend:
    from models.rack_aware import aggregate

    return aggregate


def cpsat_rack_aware() -> Backend:
    from models.rack_aware import cpsat

    return cpsat


def mip_rack_aware() -> Backend:
    from models.rack_aware import mip

    return mip


def flow_rack_aware() -> Backend:
    from models.rack_aware import flow

    return flow


def cpsat_lag_aware() -> Backend:
    from models.lag_aware import cpsat

    return cpsat


def mip_lag_aware() -> Backend:
    from models.lag_aware import mip

    return mip


def cpsat_stream_join() -> Backend:
    from models.stream_join import cpsat

    return cpsat


def mip_stream_join() -> Backend:
    from models.stream_join import mip

    return mip


def flow_stream_join() -> Backend:
    from models.stream_join import flow

    return flow


def cpsat_sticky_replica() -> FrontierBackend:
    from models.sticky_replica import cpsat

    return cpsat


def mip_sticky_replica() -> FrontierBackend:
    from models.sticky_replica import mip

    return mip


def flow_sticky_replica() -> FrontierBackend:
    from models.sticky_replica import flow

    return flow


def cpsat_share() -> Backend:
    from models.share import cpsat

    return cpsat


def mip_share() -> Backend:
    from models.share import mip

    return mip


def flow_share() -> Backend:
    from models.share import flow

    return flow


def cpsat_streams() -> Backend:
    from models.streams import cpsat

    return cpsat


def mip_streams() -> Backend:
    from models.streams import mip

    return mip


def flow_streams() -> Backend:
    from models.streams import flow

    return flow


#: The exact backends of every streams strategy (all judged on the ``streams`` objective).
STREAMS_EXACT: dict[str, RunnerEntry] = {
    "cpsat": RunnerEntry(cpsat_streams, uses=CPSAT, takes=("max_size",)),
    "mip": RunnerEntry(mip_streams, uses=MIP, takes=("backend", "max_size")),
    "flow": RunnerEntry(flow_streams, uses=("time_limit",), takes=("max_size",)),
}
#: The streams strategies (the harness compares their heuristics on the first one's scenarios).
STREAMS_STRATEGIES = ("streams-sticky", "streams-ha", "streams-kip924-sticky")


# fmt: off
STRATEGIES: dict[str, Strategy] = {
    "range": Strategy("group", "sticky", heuristic(heuristics.range)),
    "roundrobin": Strategy("group", "sticky", heuristic(heuristics.roundrobin)),
    "sticky": Strategy(
        "group", "sticky",
        heuristic(heuristics.sticky.sticky, (None, "kafka-12464", "kafka-9987")),
        {"cpsat": RunnerEntry(cpsat_sticky, uses=CPSAT),
         "mip": RunnerEntry(mip_sticky, uses=MIP, takes=("backend",)),
         "flow": RunnerEntry(flow_sticky),
         "aggregate": RunnerEntry(aggregate_sticky)},
        baselines=("range", "roundrobin", "uniform", "server-range", "cooperative-sticky")),
    "cooperative-sticky": Strategy(
        "group", "sticky", heuristic(heuristics.sticky.cooperative_sticky)),
    "rack-aware": Strategy(
        "group", "rack-aware", heuristic(heuristics.sticky.rack_aware),
        {"cpsat": RunnerEntry(cpsat_rack_aware, uses=CPSAT),
         "mip": RunnerEntry(mip_rack_aware, uses=MIP, takes=("backend",)),
         "flow": RunnerEntry(flow_rack_aware),
         "aggregate": RunnerEntry(aggregate_rack_aware)},
        baselines=("range", "roundrobin", "cooperative-sticky", "uniform", "server-range")),
    "lag-aware": Strategy(
        "group", "lag-aware",
        heuristic(heuristics.lag_aware, (None, "cumulative", "sticky", "differencing")),
        {"cpsat": RunnerEntry(cpsat_lag_aware, (None, "sticky"), CPSAT),
         "mip": RunnerEntry(mip_lag_aware, (None, "sticky"), (*MIP, "hint"), ("backend",))},
        baselines=("range",)),
    "stream-join": Strategy(
        "group", "stream-join",
        heuristic(heuristics.stream_join),
        {"cpsat": RunnerEntry(cpsat_stream_join, uses=CPSAT),
         "mip": RunnerEntry(mip_stream_join, uses=MIP, takes=("backend",)),
         "flow": RunnerEntry(flow_stream_join)},
        baselines=("range",)),
    "uniform": Strategy("group", "sticky", heuristic(heuristics.uniform)),
    "server-range": Strategy("group", "sticky", heuristic(heuristics.server_range)),
    "share": Strategy(
        "group", "share", heuristic(heuristics.share),
        {"cpsat": RunnerEntry(cpsat_share, uses=CPSAT),
         "mip": RunnerEntry(mip_share, uses=MIP, takes=("backend",)),
         "flow": RunnerEntry(flow_share)},
        baselines=("uniform",)),
    "streams-sticky": Strategy("streams", "streams", heuristic(heuristics.streams.streams_sticky)),
    "streams-ha": Strategy("streams", "streams", heuristic(heuristics.streams.streams_ha)),
    "streams-kip924-sticky": Strategy(
        "streams", "streams", heuristic(heuristics.streams.streams_kip924_sticky)),
    "kafka-default": Strategy(
        "placement", "replica",
        heuristic(heuristics.kafka_default, uses=("seed",), takes=("start_index",))),
    "sticky-replica": Strategy(
        "placement", "replica",
        heuristic(heuristics.sticky_replica),
        {"cpsat": RunnerEntry(cpsat_sticky_replica, uses=CPSAT, takes=("max_moves", "beat"),
                              frontier=cpsat_sticky_replica),
         "mip": RunnerEntry(mip_sticky_replica, uses=MIP, takes=("backend", "max_moves", "beat"),
                            frontier=mip_sticky_replica),
         "flow": RunnerEntry(flow_sticky_replica, uses=REPLICA_FLOW, takes=("max_moves", "beat"),
                             frontier=flow_sticky_replica)},
        baselines=("kafka-default",)),
}
# fmt: on
# Every streams strategy registered above is answered exactly by the streams models.
for _name in STREAMS_STRATEGIES:
    if _name in STRATEGIES:
        STRATEGIES[_name] = replace(
            STRATEGIES[_name], exact={**STREAMS_EXACT, **STRATEGIES[_name].exact}
        )

#: ``heuristic`` and every exact backend of some strategy.
SOLVERS: tuple[str, ...] = (
    "heuristic",
    *dict.fromkeys(b for entry in STRATEGIES.values() for b in entry.exact),
)


def strategies(family: str) -> list[str]:
    """The strategies of a family (``group``, ``streams`` or ``placement``), in table order."""
    return [name for name, entry in STRATEGIES.items() if entry.family == family]


def lookup(strategy: str, solver: str = "heuristic") -> RunnerEntry:
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


def _flag(option: str) -> str:
    return "--" + option.replace("_", "-")


def check(strategy: str, solver: str, options: SolveOptions) -> RunnerEntry:
    """The runner of a request, checked against the table (:class:`UsageError` naming the problem)."""
    runner = lookup(strategy, solver)
    variant = options.variant
    if variant is not None and variant not in runner.variants and variant not in runner.aliases:
        known = [v for v in (*runner.variants, *runner.aliases) if v is not None]
        raise UsageError(
            f"--variant {variant} is not a variant of --strategy {strategy} --solver {solver} "
            f"(variants: {', '.join(known) or 'none'})"
        )
    for option, value in options.extra.items():
        if value is not None and option not in runner.takes:
            raise UsageError(
                f"{_flag(option)} is not an option of --strategy {strategy} --solver {solver}"
                + (f" (its options: {', '.join(map(_flag, runner.takes))})" if runner.takes else "")
            )
    return runner


def _passed(
    runner: RunnerEntry,
    problem: GroupProblem | PlacementProblem,
    strategy: str,
    options: SolveOptions,
) -> tuple[SolveOptions, list[str]]:
    """The options handed to ``runner`` (an alias resolved, an unusable hint left out) and the
    requested options it ignores."""
    ignored = [name for name in options.requested() if name not in runner.uses]
    if options.variant in runner.aliases:
        options = replace(options, variant=runner.aliases[options.variant])
    if "hint" in runner.uses and options.hint is not None:
        hinted = (
            options.hint_streams(problem, strategy)
            if isinstance(problem, StreamsProblem)
            else options.hint_answer(problem, strategy)
        )
        if hinted is None:  # no answer, or not a valid one
            options, ignored = replace(options, hint=None), [*ignored, "hint"]
    return options, ignored


def run(
    problem: GroupProblem | PlacementProblem, strategy: str, solver: str, options: SolveOptions
) -> Result:
    """Answer ``problem`` with ``strategy``'s runner on ``solver`` (:func:`solve`, typed options)."""
    runner = check(strategy, solver, options)
    passed, ignored = _passed(runner, problem, strategy, options)
    return ignoring(runner.load().solve(problem, passed), ignored)


def solve(
    problem: GroupProblem | PlacementProblem,
    strategy: str,
    solver: str = "heuristic",
    **options: Any,
) -> Result:
    """Answer ``problem`` with ``strategy``'s heuristic or one of its exact backends.

    Parameters
    ----------
    problem
        A :class:`problems.GroupProblem` or :class:`problems.PlacementProblem`.
    strategy, solver
        A key of :data:`STRATEGIES`; ``heuristic`` or one of its ``exact`` backends.
    **options
        The fields of :class:`models.options.SolveOptions` (``variant``, ``time_limit``,
        ``workers``, ``seed``, ``log``, ``hint``) and its particular options (``backend``,
        ``max_moves``, ``beat``, ``start_index``), by name; ``None`` means not given.

    Returns
    -------
    Result
        The runner's answer, re-scored by the evaluator; ``info["ignored_options"]`` names the
        common options asked for that the runner does not use.

    Raises
    ------
    UsageError
        An unknown strategy or solver, a variant the runner lacks, or a particular option it
        does not take.
    """
    return run(problem, strategy, solver, SolveOptions.of(**options))


def frontier(
    problem: PlacementProblem,
    strategy: str,
    solver: str,
    max_moves: int,
    **options: Any,
) -> list[Result]:
    """The moves/quality frontier: :func:`solve` with ``max_moves=k`` for ``k = 0 .. max_moves``.

    ``time_limit`` bounds the whole frontier: each point gets the time left and reports what
    its solver proved in it (``optimal`` only when proven, else ``feasible`` with its bound, or
    no answer); a point reached after the deadline is not solved (no answer, ``unknown``,
    ``info["not_solved"]``).  A runner without a frontier is a :class:`UsageError`.
    """
    given = SolveOptions.of(**options)
    runner = check(strategy, solver, given)
    if runner.frontier is None:
        raise UsageError(f"--strategy {strategy} --solver {solver} has no moves/quality frontier")
    passed, ignored = _passed(runner, problem, strategy, given)
    passed = replace(passed, extra={k: v for k, v in passed.extra.items() if k != "max_moves"})
    points = runner.frontier().frontier(problem, max_moves, passed)
    return [ignoring(point, ignored) for point in points]


def preload(strategy: str, solver: str) -> None:
    """Import the modules ``strategy`` on ``solver`` runs (so that timing it leaves imports out)."""
    lookup(strategy, solver).load()
