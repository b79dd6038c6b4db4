"""A researcher's own assignors in the harness: found, called and judged like the built-in heuristics.

A plugin is a Python function over a problem object (:class:`problems.GroupProblem` or
:class:`problems.PlacementProblem`) returning its answer: a :class:`problems.Result`, an ``owner``
array (groups) or ``replicas`` array (placements) of integers, or the JSON of an answer (``{member:
{topic: [partitions]}}``; ``{"partitions": [{"topic", "partition", "replicas"}]}``); or a program
in any language that speaks the plugin protocol (``exec:COMMAND``, docs/plugins.md).  Its
``judged_on`` names the strategy whose constraints and objective judge it (``sticky``,
``rack-aware``, ...; a Python function's attribute, a program's describe answer): it runs on the
scenarios judged on those.  Plugins are installed under the entry point group
``rebalance_lab.strategies`` (every one installed runs in ``compare``) or named by ``--plugin
[NAME=]SPEC`` and by an experiment file's ``plugins``.  Every plugin runs in a child process
(:mod:`experiments.plugin_runner`), so that one that exits, aborts, hangs or allocates without
bound is a row saying so, like an answer that breaks a hard constraint or is no answer at all
(``valid`` false, the reason in ``error``) or a plugin that raises (status ``error``).  Details:
docs/harness.md, docs/plugins.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from experiments.plugin_runner import argv_for, describe, is_process_target, run
from experiments.plugin_shipped import names as shipped_names
from experiments.plugin_shipped import target as shipped_target
from experiments.scenarios import Scenario
from models.options import DEFAULT_TIME_LIMIT
from problems import (
    LEVELS,
    GroupProblem,
    PlacementProblem,
    ProblemError,
    StreamsProblem,
    problem_to_json,
)

if TYPE_CHECKING:  # experiments.experiment reaches this module through experiments.runs
    from experiments.experiment import Experiment

#: The entry point group plugins are installed under (``[project.entry-points."rebalance_lab.strategies"]``).
ENTRY_POINT_GROUP = "rebalance_lab.strategies"


@dataclass(frozen=True)
class Plugin:
    """A researcher's strategy: its name in the results, where it lives, what judges it."""

    name: str
    target: str
    judged_on: tuple[str, ...]


def installed() -> dict[str, str]:
    """The plugins installed under :data:`ENTRY_POINT_GROUP`: name -> ``module:function``."""
    return {e.name: e.value for e in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def _split(spec: str) -> tuple[str, str]:
    """``(NAME, target)`` of ``NAME=target`` (``NAME`` empty when not given)."""
    head, equals, tail = spec.partition("=")
    if equals and head and not any(c in head for c in ": "):
        return head, tail
    return "", spec


def _default_name(target: str) -> str:
    """A plugin's name when neither ``NAME=`` nor the plugin gives one."""
    if is_process_target(target):
        words = [w for w in argv_for(target) if not w.startswith("-")]
        return PurePath(words[-1] if words else "plugin").stem.replace("_", "-")
    module_name, _, attribute = target.partition(":")
    default = module_name.rpartition(".")[2] if attribute == "assign" else attribute
    return default.replace("_", "-")


def resolve(spec: str, where: str = "--plugin", keep: bool = False) -> Plugin:
    """A plugin from ``NAME`` (installed), ``module:function``, ``exec:COMMAND`` or ``NAME=`` one
    of them.  The plugin is loaded in its own process (:mod:`experiments.plugin_runner`), which
    answers with its ``name`` and ``judged_on``: one that cannot be imported or started, exits or
    hangs is a :class:`ProblemError` naming ``where``, never this process's end.  ``keep``: the
    process stays running for calls from this process (:func:`experiments.plugin_runner.run`)."""
    from models.registry import STRATEGIES

    name, target = _split(spec)
    if ":" not in target:
        found = installed()
        try:  # a foreign strategy shipped with the lab (experiments/plugin_shipped.py)
            foreign = shipped_target(target)
        except ProblemError as error:
            raise ProblemError(where, f"{target}: {error.message}") from None
        if target not in found and foreign is None:
            shown = ", ".join(sorted(found)) or "none installed"
            raise ProblemError(
                where,
                f"no plugin {target!r} ({ENTRY_POINT_GROUP}: {shown}; shipped: "
                f"{', '.join(shipped_names())})",
            )
        name, target = name or target, found.get(target) or str(foreign)
    if not is_process_target(target):
        module_name, _, attribute = target.partition(":")
        if not module_name or not attribute:
            raise ProblemError(
                where, f"must be module:function or an installed name, got {target!r}"
            )
    try:
        argv_for(target)
    except ProblemError as error:
        raise ProblemError(where, error.message) from None
    if name in STRATEGIES:
        raise ProblemError(where, f"{name!r} is a built-in strategy; give the plugin another name")
    described = describe(name or target, target, where, keep)
    given = described.get("name")
    name = name or (given if isinstance(given, str) and given else _default_name(target))
    if name in STRATEGIES:
        raise ProblemError(where, f"{name!r} is a built-in strategy; give the plugin another name")
    judged = described.get("judged_on")
    judged_on = (judged,) if isinstance(judged, str) else tuple(judged or ())
    allowed = plugin_judged_on()
    if not judged_on or any(j not in allowed for j in judged_on):
        raise ProblemError(
            where,
            f"{target} needs an attribute judged_on: one or more of {', '.join(allowed)}, "
            f"got {judged!r}",
        )
    return Plugin(name, target, judged_on)


def plugin_judged_on() -> tuple[str, ...]:
    """What a plugin may be judged on: the strategies whose record lets a plugin be judged on
    their scenarios (:attr:`models.registry.Judging.plugins`)."""
    from models.registry import judged_strategies

    return tuple(
        record.name
        for record in judged_strategies()
        if record.judging is not None and record.judging.plugins
    )


def plugins_for(
    specs: Iterable[str], *, experiment: Experiment | None = None, entry_points: bool = True
) -> list[Plugin]:
    """The installed plugins (with ``entry_points``), the ``experiment`` file's and ``specs``
    (``--plugin``), each once by name; a bad one is a :class:`ProblemError` naming where it is."""
    named: list[tuple[str, str, str]] = []
    if entry_points:
        named += [(name, name, ENTRY_POINT_GROUP) for name in installed()]
    if experiment is not None:
        named += [
            (spec, f"plugins[{i}]", experiment.source) for i, spec in enumerate(experiment.plugins)
        ]
    named += [(spec, "--plugin", "command line") for spec in specs]
    chosen: dict[str, Plugin] = {}
    for spec, where, source in named:
        try:
            plugin = resolve(spec, where)
            if chosen.get(plugin.name, plugin) != plugin:
                raise ProblemError(where, f"two plugins are named {plugin.name!r}")
        except ProblemError as error:
            raise error.with_source(source) from None
        chosen[plugin.name] = plugin
    return list(chosen.values())


def with_plugins(scenarios: Iterable[Scenario], plugins: list[Plugin]) -> list[Scenario]:
    """``scenarios`` with the plugins judged on each added to its settings (ids unchanged)."""
    if not plugins:
        return list(scenarios)
    out = []
    for scenario in scenarios:
        mine = [[p.name, p.target] for p in plugins if scenario.judged_on in p.judged_on]
        if not mine:
            out.append(scenario)
            continue
        settings = json.loads(scenario.settings) if scenario.settings else {}
        settings["plugins"] = mine
        text = json.dumps(settings, sort_keys=True, separators=(",", ":"))
        out.append(replace(scenario, settings=text))
    return out


# ------------------------------------------------------------ on the executors
def plugin_rows(
    problem: GroupProblem | PlacementProblem | StreamsProblem,
    judged_on: str,
    plugins: list[list[str]],
    base: dict[str, Any],
    *,
    document: Any = None,
    logs: str | None = None,
) -> list[dict[str, Any]]:
    """One row per plugin, each called in its own process (:func:`experiments.plugin_runner.run`)
    under the scenario's time limit: status, validity and levels as :func:`problems.evaluate`
    judges them, or the reason there are none (``error``).  ``document``: the problem's JSON
    (built from ``problem`` when not given); ``logs``: the folder the plugins' stderr goes to."""
    if document is None:
        document = problem_to_json(problem)
    time_limit = base.get("time_limit_s") or DEFAULT_TIME_LIMIT
    rows = []
    for name, target in plugins:
        row = {**base, "strategy": name, "variant": "", "solver": "heuristic", "role": "heuristic"}
        try:
            call = run(name, target, problem, document, judged_on, time_limit, logs)
        except Exception as error:  # the harness's own failure on this call: a row, not a stop
            from experiments.plugin_protocol import Answer
            from experiments.plugin_runner import Call

            call = Call(Answer("error", error=f"{type(error).__name__}: {error}"), None)
        answer = call.answer
        row.update(status=answer.status, valid=answer.valid, runtime_s=call.runtime_s)
        if answer.error is not None:
            row["error"] = answer.error
        if answer.result is not None:
            for i, value in enumerate(answer.result.objective[:LEVELS], start=1):
                row[f"level{i}"] = value
        rows.append(row)
    return rows
