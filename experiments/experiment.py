"""Experiment files: a named, described crossing of factors, read from TOML, expanded into scenarios.

An experiment file lists blocks (``[[scenarios]]``); each block crosses the levels of its factors
(the judged-on strategy, churn event, sizes, seeds, subscription pattern, lag distribution, rack
layout, time limit and solver options) in the order they are written, the last one varying
fastest, less the combinations an ``exclude`` rule names, with the factors of a ``zip`` rule
advancing together.  The shipped suites are such files (``experiments/suites/*.toml``).  A bad
file is a :class:`problems.ProblemError` naming the file, the field and the problem.

Everything ``compare`` would refuse is refused here, before any scenario is built: every level
within the limits the command line and the problem files hold (sizes within
:data:`problems.checks.MAX_PARTITIONS`, a replication factor within the brokers, solver options
within ``assign``'s ranges and taken by the runs they reach), and the size of the whole crossing
(:class:`Limits`: its scenarios, counted before any is expanded, and each trace's size as
``rebalance-lab trace`` measures it, counted from the sizes before the trace is built), each with
the option that raises it.
Details: docs/harness.md.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import os
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from experiments.kafka_grid import EVENTS as BENCHMARK_EVENTS
from experiments.options import MAX_SECONDS, MAX_WORKERS
from experiments.recorded_traces import TIME_LIMIT as RECORDED_TIME_LIMIT
from experiments.recorded_traces import recorded_scenarios
from experiments.scenarios import (
    GRID_ASSIGNORS,
    GRID_PATTERNS,
    GROUP_CHURN,
    KIP848_PATTERNS,
    LAGS,
    PATTERNS,
    PLACEMENT_CHURN,
    RACKS,
    SUITES,
    TOPOLOGIES,
    TWO_MOVE_LIMIT,
    Scenario,
)
from experiments.streams_scenarios import CHURN as STREAMS_CHURN
from experiments.streams_scenarios import JUDGED_ON as STREAMS_JUDGED_ON
from experiments.streams_scenarios import MAX_STANDBYS
from experiments.streams_scenarios import PATTERNS as STREAMS_PATTERNS
from experiments.trace_scenarios import (
    RECORDED,
    TRACE_FAMILIES,
    TraceScenario,
    trace_length,
    trace_size,
)
from experiments.trace_scenarios import check as check_trace
from models.registry import judged_strategies
from problems import ProblemError
from problems.checks import INT32_MAX, INT64_MAX, MAX_MEMBER_TOPICS, MAX_PARTITIONS
from problems.trace import MAX_TRACE_SIZE, size_refusal

if TYPE_CHECKING:
    import pandas as pd


def judged_on_problems() -> dict[str, str]:
    """Strategies a scenario can be judged on, and the problems their scenarios are
    (:attr:`models.registry.Judging.problems`; the streams groups listed last)."""
    records = sorted(judged_strategies(), key=lambda record: record.family == "streams")
    return {r.name: r.judging.problems for r in records if r.judging is not None}


#: Tiers of an experiment: where it is meant to run (the estimate of ``experiment show``).
TIERS = ("smoke", "gate", "default", "scale")
#: Scenario factors, in the order a block crosses those it leaves out (one level: the default).
#: A group's ``partitions``, ``members`` and ``topics`` may be factors of their own instead of ``size``.
SCENARIO_FACTORS = (
    "judged_on",
    "churn",
    "size",
    "partitions",
    "members",
    "topics",
    "seed",
    "pattern",
    "lags",
    "racks",
    "topology",
    "assignor",
    "standbys",
)
SIZE_PARTS = ("partitions", "members", "topics")
#: Trace factors: a block with ``trace`` makes trace scenarios (:mod:`experiments.trace_scenarios`),
#: each a trace family over ``steps`` rebalances, in place of single rebalances after a churn event.
TRACE_FACTORS = ("trace", "steps")
#: The runs of a trace: heuristics through the trace, the per-step optimum and the horizon optimum.
TRACE_SOLVERS = ("heuristic", "step", "horizon")
#: Run factors: how each scenario is solved.  Varied across an experiment, they are part of the
#: scenario id (``~time_limit=2``), so each level is a scenario of its own with its own reference.
RUN_FACTORS = ("time_limit", "options")
#: Selections (not crossed): which of the runs judged on a scenario's strategy are made.
SELECTIONS = ("strategies", "solvers")
RULES = ("exclude", "zip")
BLOCK_KEYS = ("family", *SCENARIO_FACTORS, *TRACE_FACTORS, *RUN_FACTORS, *SELECTIONS, *RULES)
TOP_KEYS = ("name", "description", "tier", "time_limit", "plugins", "scenarios")
#: Solver options an experiment may set, with their types (``time_limit`` is a factor of its own).
OPTION_TYPES: dict[str, type] = {
    "workers": int,
    "seed": int,
    "log": bool,
    "backend": str,
    "max_moves": int,
    "start_index": int,
}
#: The integer options' ranges: those of ``assign``'s and ``reassign``'s flags.
OPTION_RANGES: dict[str, tuple[int, int]] = {
    "workers": (1, MAX_WORKERS),
    "seed": (0, INT32_MAX),
    "max_moves": (0, INT32_MAX),
    "start_index": (0, INT32_MAX),
}
#: The MIP's solvers (``backend``).
BACKENDS = ("highs", "cbc")
#: The options only some runners take (``models.options.PARTICULAR``): checked against the runs.
PARTICULAR_OPTIONS = ("backend", "max_moves", "start_index")
#: Longest experiment name: it names the results folder (``suite=<name>``) and the report's.
MAX_NAME = 100
#: Scenarios (and traces) an experiment may make: the crossing of every block, before its
#: exclusions, counted before any scenario is expanded (``--max-scenarios`` raises it).
MAX_SCENARIOS = 1_000_000


@dataclass(frozen=True)
class Limits:
    """How large an experiment may be: :data:`MAX_SCENARIOS` scenarios and, for each trace,
    :data:`problems.trace.MAX_TRACE_SIZE` (its partitions, a placement's replicas, summed over its
    rebalances: the measure and the limit of ``rebalance-lab trace``) unless the command line
    raises them (``--max-scenarios``, ``--max-size``)."""

    scenarios: int = MAX_SCENARIOS
    trace_size: int = MAX_TRACE_SIZE


DEFAULTS: dict[str, Any] = {
    "pattern": "equal",
    "lags": "zero",
    "racks": 0,
    "topology": "equal",
    "assignor": "",
    "standbys": 0,
}
#: Where the shipped suites live (packaged with ``experiments``).
SUITES_PACKAGE = "experiments.suites"


@dataclass(frozen=True)
class Experiment:
    """An experiment file, read and expanded.

    Attributes
    ----------
    name, description, tier
        From the file (``tier``: one of :data:`TIERS`, the scale it is meant for).
    time_limit
        Seconds per exact solver and scenario where a block sets none.
    scenarios
        The expanded scenarios, in the file's order, each once.
    traces
        The expanded trace scenarios (blocks with a ``trace`` factor), in the file's order.
    factors
        Every factor's levels across the experiment, in first-seen order.
    plugins
        The researcher's strategies the file names (``module:function``, ``exec:COMMAND`` or
        entry point names).
    digest
        SHA-256 (first 16 hex digits) of the file's bytes: which version of the file made a row.
    source
        The file.
    """

    name: str
    description: str
    tier: str
    time_limit: float
    scenarios: list[Scenario]
    factors: dict[str, list[Any]]
    plugins: tuple[str, ...] = ()
    digest: str = ""
    source: str = ""
    blocks: int = field(default=0)
    traces: list[TraceScenario] = field(default_factory=list)

    def stamp(self, rows: pd.DataFrame) -> pd.DataFrame:
        """``rows`` (a result DataFrame) marked as this experiment's: its name and file digest."""
        return rows.assign(experiment=self.name, experiment_digest=self.digest)

    @property
    def varied(self) -> list[str]:
        """The factors with more than one level: what the report and the notebook facet by."""
        return [name for name, levels in self.factors.items() if len(levels) > 1]


# ----------------------------------------------------------------- reading
def suite_path(name: str) -> Path:
    """The packaged file of suite ``name``."""
    return Path(str(resources.files(SUITES_PACKAGE).joinpath(f"{name}.toml")))


def suite_names() -> tuple[str, ...]:
    """The shipped suites, by name (``experiments/suites/*.toml``)."""
    folder = resources.files(SUITES_PACKAGE)
    return tuple(sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml")))


def load_suite(name: str, limits: Limits | None = None) -> Experiment:
    """The shipped suite ``name`` as an :class:`Experiment`."""
    path = suite_path(name)
    if not path.is_file():
        raise ProblemError("", f"no suite {name!r} (choose from {', '.join(suite_names())})")
    return load_experiment(path, limits)


def suite(name: str) -> list[Scenario]:
    """The scenarios of the shipped suite ``name`` (its experiment file)."""
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r} (choose from {', '.join(SUITES)})")
    return load_suite(name).scenarios


def load_experiment(path: str | os.PathLike[str], limits: Limits | None = None) -> Experiment:
    """Read, check and expand the experiment file ``path``, within ``limits`` (default:
    :class:`Limits`).

    Raises
    ------
    ProblemError
        One line: the file, the field and the problem (bad TOML, an unknown key or factor, a
        level of the wrong type or out of range, an empty crossing, a scenario given twice with
        different runs, a crossing or a trace beyond ``limits``).
    """
    source = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise ProblemError("", f"cannot read the file: {error.strerror or error}", source) from None
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ProblemError("", "is not UTF-8 text", source) from None
    except tomllib.TOMLDecodeError as error:
        raise ProblemError("", f"not valid TOML: {error}", source) from None
    except RecursionError:
        raise ProblemError(
            "", "not valid TOML: arrays or tables nested too deeply", source
        ) from None
    try:
        return expand(
            document,
            digest=hashlib.sha256(data).hexdigest()[:16],
            source=source,
            limits=limits,
        )
    except ProblemError as error:
        raise error.with_source(source) from None


def expand(
    document: dict[str, Any],
    *,
    digest: str = "",
    source: str = "<dict>",
    limits: Limits | None = None,
) -> Experiment:
    """An experiment from its parsed document (what :func:`load_experiment` reads)."""
    limits = limits or Limits()
    _known(document, TOP_KEYS, "")
    name = _text(document, "name", required=True)
    if not name.replace("-", "").replace("_", "").isalnum():
        raise ProblemError("name", f"letters, digits, '-' and '_' only, got {_shown(name)}")
    if len(name) > MAX_NAME:
        raise ProblemError("name", f"at most {MAX_NAME} characters (it names a folder)")
    description = _text(document, "description", required=True)
    tier = _text(document, "tier", default="default")
    if tier not in TIERS:
        raise ProblemError("tier", f"must be one of {', '.join(TIERS)}, got {tier!r}")
    time_limit = _seconds(document.get("time_limit", 10.0), "time_limit")
    plugins = document.get("plugins", [])
    if not isinstance(plugins, list) or not all(isinstance(p, str) and p for p in plugins):
        raise ProblemError(
            "plugins", "must be a list of 'module:function', 'exec:COMMAND' or entry point names"
        )
    blocks = document.get("scenarios")
    if not isinstance(blocks, list) or not blocks:
        raise ProblemError("scenarios", "at least one [[scenarios]] block is needed")
    expanded: list[tuple[Scenario | TraceScenario, dict[str, Any], str]] = []
    crossed = 0  # combinations of the blocks before, counted before their expansion
    for b, block in enumerate(blocks):
        where = f"scenarios[{b}]"
        if not isinstance(block, dict):
            raise ProblemError(where, "must be a table ([[scenarios]])")
        if RECORDED in block:
            recorded = _recorded_block(block, where, source)
            crossed += len(recorded)
            expanded.extend((s, run, where) for s, run in recorded)
            continue
        found, combinations = _block(block, where, limits, crossed)
        if not found:
            raise ProblemError(where, "the crossing is empty (every combination excluded)")
        crossed += combinations
        expanded.extend((s, run, where) for s, run in found)
    return _assemble(
        expanded,
        name=name,
        description=description,
        tier=tier,
        time_limit=time_limit,
        plugins=tuple(plugins),
        digest=digest,
        source=source,
        blocks=len(blocks),
    )


def _recorded_block(
    block: dict[str, Any], where: str, source: str
) -> list[tuple[TraceScenario, dict[str, Any]]]:
    """The recorded traces of a block ``recorded = "DIR"`` (a folder, relative to the experiment
    file's): each a trace scenario (:mod:`experiments.recorded_traces`), with the block's
    ``time_limit``, ``strategies`` and ``solvers`` (the observed row is always made)."""
    _known(block, (RECORDED, "time_limit", *SELECTIONS), where)
    folder = block[RECORDED]
    if not isinstance(folder, str) or not folder:
        raise ProblemError(f"{where}.{RECORDED}", f"must be a folder's path, got {_shown(folder)}")
    path = Path(folder)
    if not path.is_absolute() and source != "<dict>":
        path = Path(source).parent / path
    try:
        scenarios = recorded_scenarios(path)
    except ProblemError as error:
        raise ProblemError(f"{where}.{RECORDED}", str(error)) from None
    run: dict[str, Any] = {}
    if "time_limit" in block:
        run["time_limit"] = _seconds(block["time_limit"], f"{where}.time_limit")
    for key in SELECTIONS:
        if key in block:
            run[key] = _names(block[key], f"{where}.{key}", traced=True)
    return [(scenario, run) for scenario in scenarios]


def _assemble(
    expanded: list[tuple[Scenario | TraceScenario, dict[str, Any], str]], **fields: Any
) -> Experiment:
    """Scenarios with their run settings; run factors that vary become part of the ids."""
    # Blocks share one run-settings object per combination of run factors (:func:`_block`), so
    # each distinct object is written out once.
    distinct = {id(run): run for _, run, _ in expanded}.values()
    varied = {
        f
        for f in RUN_FACTORS
        if len({json.dumps(run.get(f), sort_keys=True) for run in distinct}) > 1
    }
    texts: dict[int, tuple[str, str]] = {
        id(run): (
            "".join(f"~{f}={_level_text(run.get(f))}" for f in RUN_FACTORS if f in varied),
            json.dumps(run, sort_keys=True, separators=(",", ":")) if run else "",
        )
        for run in distinct
    }
    scenarios: dict[Scenario, None] = {}
    traces: dict[TraceScenario, None] = {}
    seen: dict[str, tuple[str, str]] = {}
    factors: dict[str, list[Any]] = {}
    for scenario, run, where in expanded:
        tag, settings = texts[id(run)]
        final = dataclasses.replace(scenario, settings=settings, tag=tag)
        if final in scenarios or final in traces:
            continue
        earlier = seen.get(final.scenario_id)
        if earlier is not None:
            raise ProblemError(
                where,
                f"scenario {final.scenario_id} is also in {earlier[0]} with other "
                "strategies or solvers",
            )
        seen[final.scenario_id] = (where, settings)
        if isinstance(final, TraceScenario):
            traces[final] = None
        else:
            scenarios[final] = None
        for name, value in _factor_values(final, run, fields["time_limit"]).items():
            levels = factors.setdefault(name, [])
            if value not in levels:
                levels.append(value)
    return Experiment(scenarios=list(scenarios), factors=factors, traces=list(traces), **fields)


def _factor_values(
    s: Scenario | TraceScenario, run: dict[str, Any], time_limit: float
) -> dict[str, Any]:
    size = [s.partitions, s.members, s.topics] + (
        [s.replication] if s.family == "placement" else []
    )
    streams = s.judged_on == STREAMS_JUDGED_ON
    events = (
        {"trace": s.trace, "steps": s.steps} if isinstance(s, TraceScenario) else {"churn": s.churn}
    )
    values = {
        "family": s.family,
        "judged_on": s.judged_on,
        **events,
        "size": "x".join(map(str, size)),
        "seed": s.seed,
        "pattern": s.pattern,
        "lags": s.lags,
        "racks": s.replication if s.family == "group" and not streams else 0,
        "topology": getattr(s, "topology", "equal"),
        "assignor": getattr(s, "assignor", ""),
        "time_limit": run.get("time_limit", time_limit),
        "options": _level_text(run.get("options", {})),
    }
    if streams:  # streams groups only: other experiments' factors stay as they were
        values["standbys"] = s.replication
    return values


def _level_text(value: Any) -> str:
    if isinstance(value, dict):
        parts = []
        for key, inner in sorted(value.items()):
            if isinstance(inner, dict):
                parts += [f"{key}.{k}:{_level_text(v)}" for k, v in sorted(inner.items())]
            else:
                parts.append(f"{key}:{_level_text(inner)}")
        return ",".join(parts) or "none"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).lower() if isinstance(value, bool) else str(value)


# ------------------------------------------------------------------ blocks
def _block(
    block: dict[str, Any], where: str, limits: Limits, crossed: int = 0
) -> tuple[list[tuple[Scenario | TraceScenario, dict[str, Any]]], int]:
    """The scenarios of one block, with the run settings each is solved with, and the number of
    combinations its crossing has before exclusions (``crossed``: those of the blocks before; their
    sum is held to ``limits.scenarios`` before any combination is expanded)."""
    _known(block, BLOCK_KEYS, where)
    traced = "trace" in block or "steps" in block
    if traced and "topology" in block:
        raise ProblemError(
            f"{where}.topology", "a trace starts from equal topic sizes (topology is not a factor)"
        )
    if traced and "churn" in block:
        raise ProblemError(
            f"{where}.churn", "a trace block has no churn event (its trace family is its events)"
        )
    for required in ("judged_on", *(TRACE_FACTORS if traced else ("churn",)), "seed"):
        if required not in block:
            raise ProblemError(f"{where}.{required}", "is required")
    parts = [k for k in SIZE_PARTS if k in block]
    if "size" in block and parts:
        raise ProblemError(f"{where}.{parts[0]}", "give size, or partitions, members and topics")
    if "size" not in block and len(parts) < len(SIZE_PARTS):
        missing = next(k for k in ("size", *SIZE_PARTS) if k not in block)
        raise ProblemError(f"{where}.{missing}", "is required")
    levels = {
        key: _levels(key, block[key], f"{where}.{key}")
        for key in block
        if key in SCENARIO_FACTORS or key in RUN_FACTORS or key in TRACE_FACTORS
    }
    families = {judged_on_problems()[j] for j in levels["judged_on"]}
    family = block.get("family", next(iter(families)) if len(families) == 1 else None)
    if family not in ("group", "placement") or families != {family}:
        raise ProblemError(
            f"{where}.judged_on",
            "a block is one family: sticky-replica (placement) or the group strategies, not both"
            if len(families) > 1
            else f"judged on {'/'.join(levels['judged_on'])}, the family is {families.pop()}, "
            f"not {family!r}",
        )
    _check_levels(levels, family, where)
    selections = {
        key: _names(block[key], f"{where}.{key}", traced) for key in SELECTIONS if key in block
    }
    groups = _groups(list(levels), block.get("zip", []), levels, where)
    combinations = math.prod(len(levels[group[0]]) for group in groups)
    if crossed + combinations > limits.scenarios:
        before = f" ({crossed:,} more in the blocks before)" if crossed else ""
        raise ProblemError(
            where,
            f"crosses {combinations:,} combinations{before}, more than the limit of "
            f"{limits.scenarios:,} scenarios (--max-scenarios raises it)",
        )
    excluded = _exclusions(block.get("exclude", []), levels, where)
    _check_options(levels.get("options", []), levels["judged_on"], selections, where, traced)
    runs: dict[tuple[str, ...], dict[str, Any]] = {}  # one settings object per run-factor levels
    found: list[tuple[Scenario | TraceScenario, dict[str, Any]]] = []
    for combination in itertools.product(*(_rows(g, levels) for g in groups)):
        point = {k: v for part in combination for k, v in part.items()}
        if any(all(point[k] in allowed for k, allowed in rule.items()) for rule in excluded):
            continue
        if "size" not in point:
            point["size"] = [point[k] for k in SIZE_PARTS]
            if point["topics"] > point["partitions"]:
                raise ProblemError(
                    where,
                    f"more topics ({point['topics']}) than partitions ({point['partitions']})",
                )
            problem = _size_problem(point["size"], family)
            if problem is not None:
                raise ProblemError(where, problem)
        scenario = _scenario(family, point)
        if isinstance(scenario, TraceScenario):
            problem = check_trace(scenario)
            if problem is not None:
                raise ProblemError(where, f"{scenario.scenario_id}: {problem}")
            size, exact = trace_size(scenario, limits.trace_size)
            if size > limits.trace_size:
                refusal = size_refusal(
                    size,
                    trace_length(scenario),
                    family == "placement",
                    limits.trace_size,
                    at_least=not exact,
                )
                raise ProblemError(where, f"{scenario.scenario_id}: {refusal}")
        key = tuple(repr(point[k]) for k in RUN_FACTORS if k in point)
        run = runs.get(key)
        if run is None:
            run = runs[key] = _run(point, selections)
        found.append((scenario, run))
    return found, combinations


def _scenario(family: str, point: dict[str, Any]) -> Scenario | TraceScenario:
    judged_on = point["judged_on"]
    if "trace" in point:
        start = _scenario(
            family, {k: v for k, v in point.items() if k != "trace"} | {"churn": "fresh"}
        )
        assert isinstance(start, Scenario)
        return TraceScenario(
            family,
            judged_on,
            point["trace"],
            start.partitions,
            start.members,
            start.topics,
            point["steps"],
            start.seed,
            start.pattern,
            start.lags,
            start.replication,
        )
    if family == "placement":
        p, b, r, rf = point["size"]
        return Scenario(family, judged_on, point["churn"], p, b, r, point["seed"], replication=rf)
    p, m, t = point["size"]
    if judged_on == STREAMS_JUDGED_ON:  # tasks, clients, subtopologies; standbys as replication
        return Scenario(
            family,
            judged_on,
            point["churn"],
            p,
            m,
            t,
            point["seed"],
            point.get("pattern", "mixed"),
            point.get("lags", "zero"),
            point.get("standbys", 0),
        )
    # Levels that do not apply collapse (the same scenario, kept once): lags are drawn for
    # lag-aware only, stream joins subscribe every member to every topic, racks are rack-aware's;
    # with one topic, skewed sizes and the grid's heterogeneous subscriptions are the equal ones.
    pattern = point.get("pattern", "equal")
    if judged_on == "stream-join" or (t == 1 and pattern in GRID_PATTERNS):
        pattern = "equal"
    topology = point.get("topology", "equal")
    if judged_on == "stream-join" or t == 1:
        topology = "equal"
    return Scenario(
        family,
        judged_on,
        point["churn"],
        p,
        m,
        t,
        point["seed"],
        pattern,
        point.get("lags", "zero") if judged_on == "lag-aware" else "zero",
        point.get("racks", 0) if judged_on == "rack-aware" else 0,
        topology,
        point.get("assignor", ""),
    )


def _run(point: dict[str, Any], selections: dict[str, list[str]]) -> dict[str, Any]:
    run: dict[str, Any] = {k: point[k] for k in RUN_FACTORS if k in point}
    run.update(selections)
    return run


def _rows(group: list[str], levels: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """The level combinations of one crossing step: one factor, or zipped factors together."""
    return [dict(zip(group, values)) for values in zip(*(levels[f] for f in group))]


def _groups(
    order: list[str], rules: Any, levels: dict[str, list[Any]], where: str
) -> list[list[str]]:
    """Factors in crossing order, zipped ones as one step (where the first of them is written)."""
    if not isinstance(rules, list) or not all(isinstance(r, list) for r in rules):
        raise ProblemError(f"{where}.zip", "must be a list of lists of factor names")
    step: dict[str, list[str]] = {f: [f] for f in order}
    for i, rule in enumerate(rules):
        field_ = f"{where}.zip[{i}]"
        if len(rule) < 2:
            raise ProblemError(field_, "names at least two factors")
        for name in rule:
            if name not in levels:
                raise ProblemError(field_, f"{name!r} is not a factor of this block")
            if len(step[name]) != 1 or step[name][0] != name:
                raise ProblemError(field_, f"{name!r} is in two zip rules")
        counts = {len(levels[name]) for name in rule}
        if len(counts) > 1:
            shown = ", ".join(f"{n} {len(levels[n])}" for n in rule)
            raise ProblemError(field_, f"zipped factors need as many levels each ({shown})")
        first = min(rule, key=order.index)
        for name in rule:
            step[name] = []
        step[first] = sorted(rule, key=order.index)
    return [group for f in order if (group := step[f])]


def _exclusions(rules: Any, levels: dict[str, list[Any]], where: str) -> list[dict[str, list[Any]]]:
    if not isinstance(rules, list) or not all(isinstance(r, dict) and r for r in rules):
        raise ProblemError(f"{where}.exclude", "must be a list of tables of factor = level(s)")
    out = []
    for i, rule in enumerate(rules):
        checked = {}
        for name, value in rule.items():
            field_ = f"{where}.exclude[{i}].{name}"
            if name not in levels:
                raise ProblemError(field_, "is not a factor of this block")
            given = _levels(name, value, field_)
            unknown = [v for v in given if v not in levels[name]]
            if unknown:
                raise ProblemError(field_, f"{unknown[0]!r} is not one of the block's levels")
            checked[name] = given
        out.append(checked)
    return out


# ------------------------------------------------------------------ levels
def _levels(name: str, value: Any, where: str) -> list[Any]:
    """A factor's levels: a list, or one value as one level; each checked for its type."""
    one = name == "size" and isinstance(value, list) and value and not isinstance(value[0], list)
    if name == "options":
        values = value if isinstance(value, list) else [value]
    else:
        values = [value] if one or not isinstance(value, list) else value
    if not values:
        raise ProblemError(where, "has no levels (an empty list)")
    checked = [_level(name, v, f"{where}[{i}]") for i, v in enumerate(values)]
    seen: set[str] = set()
    for value in checked:  # one pass: a factor may have tens of thousands of levels
        key = json.dumps(value, sort_keys=True)
        if key in seen:
            raise ProblemError(where, f"level {value!r} is given twice")
        seen.add(key)
    return checked


def _level(name: str, value: Any, where: str) -> Any:
    if name in ("judged_on", "churn", "pattern", "lags", "trace", "topology", "assignor"):
        if not isinstance(value, str):
            raise ProblemError(where, f"must be a string, got {_shown(value)}")
        if name == "judged_on" and value not in (judged := judged_on_problems()):
            raise ProblemError(where, f"must be one of {', '.join(judged)}, got {value!r}")
        if name == "assignor" and value not in GRID_ASSIGNORS:
            raise ProblemError(where, f"must be one of {', '.join(GRID_ASSIGNORS)}, got {value!r}")
        if name == "trace" and value not in TRACE_FAMILIES:
            raise ProblemError(where, f"must be one of {', '.join(TRACE_FAMILIES)}, got {value!r}")
        return value
    if name == "steps":
        if type(value) is not int or value <= 0:
            raise ProblemError(where, f"must be an integer > 0, got {_shown(value)}")
        return value
    if name in SIZE_PARTS:
        if type(value) is not int or value <= 0:
            raise ProblemError(where, f"must be an integer > 0, got {_shown(value)}")
        return value
    if name == "standbys":
        if type(value) is not int or not 0 <= value <= MAX_STANDBYS:
            raise ProblemError(
                where, f"must be an integer 0 to {MAX_STANDBYS}, got {_shown(value)}"
            )
        return value
    if name in ("seed", "racks"):
        if type(value) is not int or value < 0:
            raise ProblemError(where, f"must be an integer >= 0, got {_shown(value)}")
        if value > INT64_MAX:  # the rows hold a seed as a 64-bit integer
            raise ProblemError(where, f"must be at most 2**63-1 (an int64), got {value}")
        if name == "racks" and value > RACKS:
            raise ProblemError(where, f"replicas per partition must be 0 to {RACKS}, got {value}")
        return value
    if name == "size":
        if not isinstance(value, list) or not all(type(v) is int and v > 0 for v in value):
            raise ProblemError(
                where, f"must be [partitions, members, topics] of integers > 0, got {_shown(value)}"
            )
        if len(value) not in (3, 4):
            raise ProblemError(
                where,
                "must be [partitions, members, topics] (groups) or "
                f"[partitions, brokers, racks, replication] (placements), got {len(value)} numbers",
            )
        return value
    if name == "time_limit":
        return _seconds(value, where)
    if name == "options":
        return _options(value, where)
    raise AssertionError(name)


def _check_levels(levels: dict[str, list[Any]], family: str, where: str) -> None:
    """Levels against the block's family: churn events, patterns, lag distributions, sizes."""
    churns = GROUP_CHURN if family == "group" else (*PLACEMENT_CHURN, TWO_MOVE_LIMIT)
    allowed = {
        "churn": churns,
        "pattern": tuple(dict.fromkeys((*PATTERNS, *KIP848_PATTERNS, *GRID_PATTERNS))),
        "lags": LAGS,
        "topology": TOPOLOGIES,
    }
    streams = [j == STREAMS_JUDGED_ON for j in levels["judged_on"]]
    if any(streams) and not all(streams):
        raise ProblemError(
            f"{where}.judged_on",
            f"a block of streams groups is judged on {STREAMS_JUDGED_ON} alone",
        )
    if all(streams):
        allowed = {"churn": STREAMS_CHURN, "pattern": STREAMS_PATTERNS, "lags": LAGS}
    elif "standbys" in levels:
        raise ProblemError(
            f"{where}.standbys", f"standbys apply to scenarios judged on {STREAMS_JUDGED_ON}"
        )
    if family == "placement":
        for name in ("pattern", "lags", "racks", "topology", *SIZE_PARTS):
            if name in levels:
                raise ProblemError(
                    f"{where}.{name}", "is a consumer-group factor; this block is placements"
                )
    for i, value in enumerate(levels.get("trace", [])):
        if TRACE_FAMILIES[value] != family:
            raise ProblemError(
                f"{where}.trace[{i}]",
                f"{value!r} is a {TRACE_FAMILIES[value]} trace; this block is {family}s",
            )
    for name, choices in allowed.items():
        for i, value in enumerate(levels.get(name, [])):
            if value not in choices:
                raise ProblemError(
                    f"{where}.{name}[{i}]", f"must be one of {', '.join(choices)}, got {value!r}"
                )
    numbers = 3 if family == "group" else 4
    for i, size in enumerate(levels.get("size", [])):
        if len(size) != numbers:
            shape = (
                "[partitions, members, topics]"
                if family == "group"
                else "[partitions, brokers, racks, replication]"
            )
            raise ProblemError(f"{where}.size[{i}]", f"a {family} size is {shape}, got {size}")
        if family == "group" and size[2] > size[0]:
            raise ProblemError(f"{where}.size[{i}]", "more topics than partitions")
        problem = _size_problem(size, family)
        if problem is not None:
            raise ProblemError(f"{where}.size[{i}]", problem)
    if "assignor" in levels:
        _check_benchmark(levels, where)
    for i, pattern in enumerate(levels.get("pattern", [])):
        if pattern in GRID_PATTERNS and pattern != "equal" and "assignor" not in levels:
            raise ProblemError(
                f"{where}.pattern[{i}]",
                f"{pattern} is a subscription of Kafka's benchmark grid, built after a KIP-848 "
                f"assignor's own output: give the block an assignor ({', '.join(GRID_ASSIGNORS)})",
            )
    if "racks" in levels and "rack-aware" not in levels["judged_on"]:
        raise ProblemError(f"{where}.racks", "rack layouts apply to scenarios judged on rack-aware")


def _check_benchmark(levels: dict[str, list[Any]], where: str) -> None:
    """A block of Kafka benchmark groups (``assignor``): the benchmark's events, subscriptions and
    rack layout (2 replicas of each partition on 3 racks, or none), judged on sticky or rack-aware."""
    allowed: dict[str, tuple[Any, ...]] = {
        "judged_on": ("sticky", "rack-aware"),
        "churn": tuple(BENCHMARK_EVENTS),
        "pattern": GRID_PATTERNS,
        "racks": (0, 2),
        "lags": ("zero",),
    }
    for name, choices in allowed.items():
        for i, value in enumerate(levels.get(name, [])):
            if value not in choices:
                raise ProblemError(
                    f"{where}.{name}[{i}]",
                    f"a Kafka benchmark group (assignor) takes {', '.join(map(str, choices))}, "
                    f"got {value!r}",
                )
    if "trace" in levels:
        raise ProblemError(f"{where}.assignor", "a trace block has no benchmark assignor")


def _size_problem(size: list[int], family: str) -> str | None:
    """Why a scenario of ``size`` is beyond what a problem file may hold (the limits of
    :mod:`problems.checks`, as ``assign`` and ``reassign`` apply them), or None."""
    if family == "group":
        partitions, members, topics = size
        if partitions > MAX_PARTITIONS:
            return f"{partitions:,} partitions, more than the limit of {MAX_PARTITIONS:,}"
        if members * topics > MAX_MEMBER_TOPICS:
            return (
                f"{members:,} members x {topics:,} topics, more than the limit of "
                f"{MAX_MEMBER_TOPICS:,}"
            )
        return None
    partitions, brokers, _racks, replication = size
    if partitions * replication > MAX_PARTITIONS:
        return (
            f"{partitions:,} partitions x {replication:,} replicas, more than the limit of "
            f"{MAX_PARTITIONS:,} replicas"
        )
    if brokers > INT32_MAX - 2:  # broker ids run to brokers + 2 (the brokers an event adds)
        return f"{brokers:,} brokers, more than the {INT32_MAX - 2:,} broker ids can name"
    if replication > brokers:
        return f"replication factor {replication} is above the {brokers} brokers"
    return None


def _check_options(
    levels: list[dict[str, dict[str, Any]]],
    judged_on: list[str],
    selections: dict[str, list[str]],
    where: str,
    traced: bool,
) -> None:
    """Options only some runners take (:data:`PARTICULAR_OPTIONS`) are refused where a run of the
    block that gets them does not take them (``compare`` would fail that run)."""
    wanted = [
        (i, solver, option)
        for i, level in enumerate(levels)
        for solver, options in level.items()
        for option in options
        if option in PARTICULAR_OPTIONS
    ]
    if not wanted:
        return
    from experiments.runs import selected_runs  # pandas: imported when an option needs it
    from experiments.trace_runs import trace_runs_for
    from models.registry import STRATEGIES

    runs_of = trace_runs_for if traced else selected_runs
    for i, solver, option in wanted:
        for judged in judged_on:
            for strategy, _variant, run_solver in runs_of(judged, selections):
                if run_solver != solver:
                    continue
                takes = STRATEGIES[strategy].runner(solver).takes
                if option not in takes:
                    raise ProblemError(
                        f"{where}.options[{i}].{solver}.{option}",
                        f"not an option of {strategy} on {solver} "
                        f"(its options: {', '.join(takes) or 'none'}); choose the runs with "
                        "strategies or solvers",
                    )


def _options(value: Any, where: str) -> dict[str, dict[str, Any]]:
    from models.registry import SOLVERS

    if not isinstance(value, dict):
        raise ProblemError(
            where, f"must be a table of solver = {{option = value}}, got {_shown(value)}"
        )
    for solver, options in value.items():
        if solver not in SOLVERS:
            raise ProblemError(f"{where}.{solver}", f"not a solver ({', '.join(SOLVERS)})")
        if not isinstance(options, dict):
            raise ProblemError(f"{where}.{solver}", "must be a table of option = value")
        for option, setting in options.items():
            kind = OPTION_TYPES.get(option)
            if kind is None:
                hint = " (time_limit is a factor of its own)" if option == "time_limit" else ""
                raise ProblemError(
                    f"{where}.{solver}.{option}",
                    f"not a solver option ({', '.join(OPTION_TYPES)}){hint}",
                )
            low, high = OPTION_RANGES.get(option, (0, 0))
            if type(setting) is not kind or (
                isinstance(setting, int) and kind is int and not low <= setting <= high
            ):
                raise ProblemError(
                    f"{where}.{solver}.{option}",
                    f"must be {f'an integer {low} to {high}' if kind is int else 'a ' + kind.__name__}, "
                    f"got {_shown(setting)}",
                )
            if option == "backend" and setting not in BACKENDS:
                raise ProblemError(
                    f"{where}.{solver}.{option}",
                    f"must be one of {', '.join(BACKENDS)}, got {_shown(setting)}",
                )
    return value


def _names(value: Any, where: str, traced: bool = False) -> list[str]:
    from models.registry import SOLVERS, STRATEGIES

    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ProblemError(where, f"must be a non-empty list of names, got {_shown(value)}")
    solvers = TRACE_SOLVERS if traced else SOLVERS
    known, kind = (solvers, "solver") if where.endswith("solvers") else (STRATEGIES, "strategy")
    for i, name in enumerate(value):
        if name not in known:
            raise ProblemError(f"{where}[{i}]", f"not a {kind} ({', '.join(known)}), got {name!r}")
    return value


def _seconds(value: Any, where: str) -> float:
    if type(value) not in (int, float) or not 0 < value <= MAX_SECONDS:
        raise ProblemError(
            where, f"must be a number of seconds in (0, {MAX_SECONDS:g}], got {_shown(value)}"
        )
    return float(value)


def _text(document: dict[str, Any], key: str, *, required: bool = False, default: str = "") -> str:
    if key not in document:
        if required:
            raise ProblemError(key, "is required")
        return default
    value = document[key]
    if not isinstance(value, str) or not value.strip():
        raise ProblemError(key, f"must be a non-empty string, got {_shown(value)}")
    return value


def _known(table: dict[str, Any], keys: tuple[str, ...], where: str) -> None:
    for key in table:
        if key not in keys:
            place = f"{where}.{key}" if where else key
            raise ProblemError(place, f"unknown key (known: {', '.join(keys)})")


def _shown(value: Any) -> str:
    kind = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}.get(
        type(value), "a list" if isinstance(value, list) else "a table"
    )
    text = json.dumps(value, default=str)
    return f"{kind} {text if len(text) <= 40 else text[:37] + '...'}"


def recorded_experiment(
    folder: str | os.PathLike[str], time_limit: float | None = None
) -> Experiment:
    """The experiment of a folder of recorded traces (``compare --recorded DIR``): its name the
    folder's, its digest that of every file's name and bytes (a resumed run of a changed folder is
    refused, as a changed experiment file is)."""
    traces = recorded_scenarios(folder)
    digest = hashlib.sha256()
    for scenario in traces:
        digest.update(scenario.source.encode() + b"\0" + scenario.document.encode() + b"\0")
    return Experiment(
        name=f"recorded-{Path(folder).resolve().name}",
        description=f"the recorded traces of {folder}",
        tier="smoke",
        time_limit=RECORDED_TIME_LIMIT if time_limit is None else time_limit,
        scenarios=[],
        factors={"trace": [RECORDED]},
        digest=digest.hexdigest()[:16],
        source=str(folder),
        traces=traces,
    )
