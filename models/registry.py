"""Every strategy, its heuristic and its exact solvers, in one table, and one way to run them.

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
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
from problems import OBJECTIVES, GroupProblem, PlacementProblem, Result, baseline_objective
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

    def __reduce__(self) -> tuple[Callable[..., Heuristic], tuple[str, tuple[str, ...]]]:
        """Pickled by its module's name (a registered strategy is sent to worker processes)."""
        return _heuristic_of, (self.module.__name__, self.keywords)

    def solve(self, problem: Any, options: SolveOptions, /) -> Result:
        """``module.assign(problem, [variant=...], **keywords)``."""
        passed: dict[str, Any] = {} if options.variant is None else {"variant": options.variant}
        passed.update({name: getattr(options, name) for name in self.keywords})
        result: Result = self.module.assign(problem, **passed)
        return result


def _heuristic_of(module: str, keywords: tuple[str, ...]) -> Heuristic:
    return Heuristic(importlib.import_module(module), keywords)


def _returns(value: Backend) -> Backend:
    return value


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
    return RunnerEntry(partial(_returns, adapter), variants, uses, takes)


@dataclass(frozen=True)
class Judging:
    """How the harness judges the scenarios built for a strategy (docs/harness.md).

    Attributes
    ----------
    problems
        ``"group"`` or ``"placement"``: the problems its scenarios are (a streams group counts
        as a group in an experiment file).
    trace_panel
        Whether traces are judged on it (the trace harness and its gate): ``None`` if not, else
        the rank of its panel in the report's trace figure (lowest first).
    moves_panel
        Whether the report's moves-per-churn figure has a panel for it.
    plugins
        Whether a researcher's plugin may be judged on it.
    """

    problems: str = "group"
    trace_panel: int | None = None
    moves_panel: bool = False
    plugins: bool = False


@dataclass(frozen=True)
class Strategy:
    """One strategy: every fact the product knows of it, read by every module that needs one.

    Attributes
    ----------
    name
        Its name (``--strategy``).
    family
        ``"group"`` (``rebalance-lab assign``), ``"streams"`` (``assign`` on a streams group) or
        ``"placement"`` (``reassign``).
    objective
        The objective its answers are judged on (a key of ``problems.OBJECTIVES``).
    display
        Its heuristic's name in the report.
    heuristic
        Its documented heuristic.
    exact
        Its exact backends by solver name (``cpsat``, ``mip``, ``flow``).
    baselines
        Other strategies whose heuristics are compared on the scenarios judged on it.
    compared_on
        The strategies on whose scenarios its heuristic is compared, beyond those that name it
        a baseline (a strategy registered later adds itself here).
    variant_display
        The report's names of its heuristic's variants (``variant -> name``).
    rack_judged
        Judged as a Kafka baseline: on ``rack-aware`` when the problem has racks
        (:func:`problems.baseline_objective`).
    judging
        How scenarios judged on it are built and shown; ``None``: no scenario is judged on it.
    client
        Whether the live-cluster client (``clients.kafka_python``) offers it as an assignor.
    """

    name: str
    family: str
    objective: str
    display: str
    heuristic: RunnerEntry
    exact: dict[str, RunnerEntry] = field(default_factory=dict)
    baselines: tuple[str, ...] = ()
    compared_on: tuple[str, ...] = ()
    variant_display: dict[str, str] = field(default_factory=dict)
    rack_judged: bool = False
    judging: Judging | None = None
    client: bool = False

    @property
    def solvers(self) -> tuple[str, ...]:
        """``heuristic`` and the names of its exact backends."""
        return ("heuristic", *self.exact)

    def runner(self, solver: str) -> RunnerEntry:
        return self.heuristic if solver == "heuristic" else self.exact[solver]

    def objective_on(self, problem: object) -> str:
        """The objective its answers to ``problem`` are judged on (a key of ``problems.OBJECTIVES``)."""
        return baseline_objective(problem) if self.rack_judged else self.objective

    def label_display(self, variant: str | None) -> str:
        """The report's name of its heuristic's ``variant`` (``None``: as documented)."""
        if variant is None:
            return self.display
        return self.variant_display.get(variant, f"{self.name}[{variant}]")


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
#: The Kafka baselines compared on the sticky and rack-aware scenarios.
KAFKA_BASELINES = ("range", "roundrobin", "uniform", "server-range", "cooperative-sticky")

# fmt: off
_TABLE: tuple[Strategy, ...] = (
    Strategy("range", "group", "sticky", "range", heuristic(heuristics.range),
             rack_judged=True, client=True),
    Strategy("roundrobin", "group", "sticky", "round robin", heuristic(heuristics.roundrobin),
             rack_judged=True, client=True),
    Strategy(
        "sticky", "group", "sticky", "Kafka's StickyAssignor (4.x)",
        heuristic(heuristics.sticky.sticky, (None, "kafka-12464", "kafka-9987")),
        {"cpsat": RunnerEntry(cpsat_sticky, uses=CPSAT),
         "mip": RunnerEntry(mip_sticky, uses=MIP, takes=("backend",)),
         "flow": RunnerEntry(flow_sticky),
         "aggregate": RunnerEntry(aggregate_sticky)},
        baselines=KAFKA_BASELINES,
        variant_display={"kafka-12464": "KAFKA-12464 (KIP-54 when unequal)",
                         "kafka-9987": "KAFKA-9987"},
        judging=Judging(trace_panel=0, moves_panel=True, plugins=True), client=True),
    Strategy("cooperative-sticky", "group", "sticky",
             "Kafka's CooperativeStickyAssignor (completed)",
             heuristic(heuristics.sticky.cooperative_sticky), rack_judged=True, client=True),
    Strategy(
        "rack-aware", "group", "rack-aware", "Kafka's StickyAssignor, KIP-881 racks",
        heuristic(heuristics.sticky.rack_aware),
        {"cpsat": RunnerEntry(cpsat_rack_aware, uses=CPSAT),
         "mip": RunnerEntry(mip_rack_aware, uses=MIP, takes=("backend",)),
         "flow": RunnerEntry(flow_rack_aware),
         "aggregate": RunnerEntry(aggregate_rack_aware)},
        baselines=("range", "roundrobin", "cooperative-sticky", "uniform", "server-range"),
        judging=Judging(trace_panel=2, plugins=True)),
    Strategy(
        "lag-aware", "group", "lag-aware", "KIP-169",
        heuristic(heuristics.lag_aware, (None, "cumulative", "sticky", "differencing")),
        {"cpsat": RunnerEntry(cpsat_lag_aware, (None, "sticky"), CPSAT),
         "mip": RunnerEntry(mip_lag_aware, (None, "sticky"), (*MIP, "hint"), ("backend",))},
        baselines=("range",),
        variant_display={"cumulative": "KIP-169, cumulative totals",
                         "sticky": "KIP-169, sticky",
                         "differencing": "largest differencing (not Kafka's)"},
        judging=Judging(trace_panel=4, plugins=True), client=True),
    Strategy(
        "stream-join", "group", "stream-join", "KIP-315",
        heuristic(heuristics.stream_join),
        {"cpsat": RunnerEntry(cpsat_stream_join, uses=CPSAT),
         "mip": RunnerEntry(mip_stream_join, uses=MIP, takes=("backend",)),
         "flow": RunnerEntry(flow_stream_join)},
        baselines=("range",),
        judging=Judging(trace_panel=3, moves_panel=True, plugins=True), client=True),
    Strategy("uniform", "group", "sticky", "KIP-848 uniform (UniformAssignor)",
             heuristic(heuristics.uniform), rack_judged=True),
    Strategy("server-range", "group", "sticky", "KIP-848 server range",
             heuristic(heuristics.server_range), rack_judged=True),
    Strategy(
        "share", "group", "share", "Kafka's SimpleAssignor (KIP-932)", heuristic(heuristics.share),
        {"cpsat": RunnerEntry(cpsat_share, uses=CPSAT),
         "mip": RunnerEntry(mip_share, uses=MIP, takes=("backend",)),
         "flow": RunnerEntry(flow_share)},
        baselines=("uniform",), judging=Judging(moves_panel=True, plugins=True)),
    Strategy("streams-sticky", "streams", "streams",
             "Kafka's streams-group StickyTaskAssignor (KIP-1071)",
             heuristic(heuristics.streams.streams_sticky), STREAMS_EXACT,
             baselines=("streams-ha", "streams-kip924-sticky"),
             judging=Judging(moves_panel=True, plugins=True)),
    Strategy("streams-ha", "streams", "streams",
             "Kafka Streams' HighAvailabilityTaskAssignor (KIP-441)",
             heuristic(heuristics.streams.streams_ha), STREAMS_EXACT),
    Strategy("streams-kip924-sticky", "streams", "streams",
             "Kafka Streams' StickyTaskAssignor (KIP-924)",
             heuristic(heuristics.streams.streams_kip924_sticky), STREAMS_EXACT),
    Strategy(
        "kafka-default", "placement", "replica", "kafka-reassign-partitions (kafka-default)",
        heuristic(heuristics.kafka_default, uses=("seed",), takes=("start_index",))),
    Strategy(
        "sticky-replica", "placement", "replica", "PR 18903",
        heuristic(heuristics.sticky_replica),
        {"cpsat": RunnerEntry(cpsat_sticky_replica, uses=CPSAT, takes=("max_moves", "beat"),
                              frontier=cpsat_sticky_replica),
         "mip": RunnerEntry(mip_sticky_replica, uses=MIP, takes=("backend", "max_moves", "beat"),
                            frontier=mip_sticky_replica),
         "flow": RunnerEntry(flow_sticky_replica, uses=REPLICA_FLOW, takes=("max_moves", "beat"),
                             frontier=flow_sticky_replica)},
        baselines=("kafka-default",),
        judging=Judging("placement", trace_panel=1, moves_panel=True, plugins=True)),
)
# fmt: on
#: Every strategy by name: the records above, then those registered (:func:`register`).
STRATEGIES: dict[str, Strategy] = {record.name: record for record in _TABLE}
#: The names of the records above (the product's own strategies).
BUILT_IN = frozenset(STRATEGIES)


def register(*records: Strategy) -> None:
    """Add strategies to :data:`STRATEGIES` (a strategy registered again under its name is replaced).

    Every module reads a strategy's facts from its record, so a registered strategy runs in
    ``assign``, ``trace``, ``compare`` (its records are sent to the Spark executors), ``report``
    and ``gate`` as the product's own do (docs/design/adding-a-strategy.md).

    Raises
    ------
    UsageError
        The name of one of the product's own strategies, or an objective that is not one.
    """
    for record in records:
        if record.name in BUILT_IN:
            raise UsageError(f"strategy {record.name!r} is one of the product's own")
        if record.objective not in OBJECTIVES:
            raise UsageError(
                f"strategy {record.name!r}: {record.objective!r} is not an objective "
                f"(objectives: {', '.join(OBJECTIVES)})"
            )
        STRATEGIES[record.name] = record


def unregister(name: str) -> None:
    """Remove a registered strategy (the product's own stay: :class:`UsageError`)."""
    if name in BUILT_IN:
        raise UsageError(f"strategy {name!r} is one of the product's own")
    STRATEGIES.pop(name, None)


def registered() -> list[Strategy]:
    """The strategies registered beyond the product's own, in registration order."""
    return [record for name, record in STRATEGIES.items() if name not in BUILT_IN]


def judged_strategies() -> list[Strategy]:
    """The strategies scenarios are judged on, in table order."""
    return [record for record in STRATEGIES.values() if record.judging is not None]


def compared_on(strategy: str) -> list[str]:
    """The strategies that ask for their heuristic to be compared on ``strategy``'s scenarios."""
    return [name for name, record in STRATEGIES.items() if strategy in record.compared_on]


def exact_strategy(objective: str) -> str | None:
    """The first strategy judged on ``objective`` with exact backends (its optimum), if any."""
    for record in STRATEGIES.values():
        if record.objective == objective and record.exact:
            return record.name
    return None


#: The exact backends that answer an objective's optimum step by step, best first.
BEST_BACKENDS = ("flow", "cpsat", "mip")


def best_exact(objective: str) -> tuple[str, str]:
    """The ``(strategy, solver)`` that answers ``objective`` exactly: :func:`exact_strategy`, its
    best backend (:data:`BEST_BACKENDS`); a ``KeyError`` naming the objective if none does."""
    exact = exact_strategy(objective)
    if exact is None:
        raise KeyError(objective)
    backends = STRATEGIES[exact].exact
    return exact, next(b for b in BEST_BACKENDS if b in backends)


def solvers() -> tuple[str, ...]:
    """``heuristic`` and every exact backend of some strategy, registered ones included."""
    return ("heuristic", *dict.fromkeys(b for entry in STRATEGIES.values() for b in entry.exact))


#: ``heuristic`` and every exact backend of the product's own strategies.
SOLVERS: tuple[str, ...] = solvers()


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
    problem: GroupProblem | PlacementProblem | StreamsProblem,
    strategy: str,
    options: SolveOptions,
) -> tuple[SolveOptions, list[str]]:
    """The options handed to ``runner`` (an alias resolved, an unusable hint left out) and the
    requested options it ignores."""
    ignored = [name for name in options.requested() if name not in runner.uses]
    if options.variant in runner.aliases:
        options = replace(options, variant=runner.aliases[options.variant])
    if "hint" in runner.uses and options.hint is not None:
        objective = STRATEGIES[strategy].objective_on(problem)
        hinted = (
            options.hint_streams(problem, objective)
            if isinstance(problem, StreamsProblem)
            else options.hint_answer(problem, objective)
        )
        if hinted is None:  # no answer, or not a valid one
            options, ignored = replace(options, hint=None), [*ignored, "hint"]
    return options, ignored


def run(
    problem: GroupProblem | PlacementProblem | StreamsProblem,
    strategy: str,
    solver: str,
    options: SolveOptions,
) -> Result:
    """Answer ``problem`` with ``strategy``'s runner on ``solver`` (:func:`solve`, typed options)."""
    runner = check(strategy, solver, options)
    passed, ignored = _passed(runner, problem, strategy, options)
    return judged(ignoring(runner.load().solve(problem, passed), ignored), strategy)


def judged(result: Result, strategy: str) -> Result:
    """``result`` judged on ``strategy``'s objective for its problem (:meth:`Strategy.objective_on`)."""
    objective = STRATEGIES[strategy].objective_on(result.problem)
    if result.objective_name != objective:
        result = replace(result, objective_name=objective)
    return result


def solve(
    problem: GroupProblem | PlacementProblem | StreamsProblem,
    strategy: str,
    solver: str = "heuristic",
    **options: Any,
) -> Result:
    """Answer ``problem`` with ``strategy``'s heuristic or one of its exact backends.

    Parameters
    ----------
    problem
        A :class:`problems.GroupProblem`, :class:`problems.PlacementProblem` or
        :class:`problems.StreamsProblem`.
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
    return [judged(ignoring(point, ignored), strategy) for point in points]


def preload(strategy: str, solver: str) -> None:
    """Import the modules ``strategy`` on ``solver`` runs (so that timing it leaves imports out)."""
    lookup(strategy, solver).load()
