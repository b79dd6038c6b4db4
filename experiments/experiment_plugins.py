"""A researcher's own assignors in the harness: found, called and judged like the built-in heuristics.

A plugin is a Python function over a problem object (:class:`problems.GroupProblem` or
:class:`problems.PlacementProblem`) returning its answer: a :class:`problems.Result`, an ``owner``
array (groups) or ``replicas`` array (placements), or the JSON of an answer (``{member: {topic:
[partitions]}}``; ``{"partitions": [{"topic", "partition", "replicas"}]}``).  Its attribute
``judged_on`` names the strategy whose constraints and objective judge it (``sticky``,
``rack-aware``, ``lag-aware``, ``stream-join``, ``sticky-replica``, or a tuple of them): it runs on
the scenarios judged on those.  Plugins are installed under the entry point group
``rebalance_lab.strategies`` (every one installed runs in ``compare``) or named by
``--plugin [NAME=]module:function`` and by an experiment file's ``plugins``.  An answer that breaks
a hard constraint, or that is no answer at all, is a row saying so (``valid`` false, the reason in
``error``); a plugin that raises is a row with status ``error``.  Details: docs/harness.md.
"""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from importlib import metadata
from typing import Any

import numpy as np

from models.registry import STRATEGIES, judged_strategies
from problems import (
    LEVELS,
    GroupProblem,
    PlacementProblem,
    ProblemError,
    Result,
    evaluate,
)

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


def load_function(target: str, where: str = "--plugin") -> Callable[..., Any]:
    """The function ``module:function`` names (a :class:`ProblemError` naming ``where`` if none)."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise ProblemError(where, f"must be module:function or an installed name, got {target!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ProblemError(where, f"cannot import {module_name!r}: {error}") from None
    function = module
    for part in attribute.split("."):
        function = getattr(function, part, None)
        if function is None:
            raise ProblemError(where, f"{module_name!r} has no {attribute!r}")
    if not callable(function):
        raise ProblemError(where, f"{target} is not a function")
    return function


def resolve(spec: str, where: str = "--plugin") -> Plugin:
    """A plugin from ``NAME`` (installed), ``module:function`` or ``NAME=module:function``."""
    name, equals, target = spec.partition("=")
    if not equals:
        name, target = "", spec
    if ":" not in target:
        found = installed()
        if target not in found:
            shown = ", ".join(sorted(found)) or "none installed"
            raise ProblemError(where, f"no plugin {target!r} ({ENTRY_POINT_GROUP}: {shown})")
        name, target = name or target, found[target]
    function = load_function(target, where)
    module_name, _, attribute = target.partition(":")
    default = module_name.rpartition(".")[2] if attribute == "assign" else attribute
    name = name or getattr(function, "name", None) or default.replace("_", "-")
    if name in STRATEGIES:
        raise ProblemError(where, f"{name!r} is a built-in strategy; give the plugin another name")
    judged = getattr(function, "judged_on", None)
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
    return tuple(
        record.name
        for record in judged_strategies()
        if record.judging is not None and record.judging.plugins
    )


def plugins_for(
    specs: Iterable[str], *, experiment=None, entry_points: bool = True
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


def with_plugins(scenarios, plugins: list[Plugin]):
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
def answer_of(problem: GroupProblem | PlacementProblem, returned: Any) -> np.ndarray | None:
    """The owner/replicas array of what a plugin returned (a :class:`ProblemError` if it is none)."""
    from problems.result import owner_from_assignment

    if isinstance(returned, Result):
        return None if returned.answer is None else np.asarray(returned.answer)
    if isinstance(returned, np.ndarray | list | tuple):
        return np.asarray(returned, dtype=np.int64)
    if isinstance(returned, dict) and isinstance(problem, GroupProblem):
        document = returned.get("assignment", returned)
        return owner_from_assignment(problem, document, "the plugin's answer").astype(np.int64)
    if isinstance(returned, dict) and isinstance(problem, PlacementProblem):
        entries = returned.get("partitions")
        if not isinstance(entries, list):
            raise ProblemError("partitions", "a placement answer lists partitions", "the answer")
        by_key = {(e.get("topic"), e.get("partition")): e.get("replicas") for e in entries}
        replicas: list[int] = []
        for topic, index in zip(problem.topics, problem.partitions.tolist()):
            brokers = by_key.get((topic, index))
            if not isinstance(brokers, list):
                raise ProblemError(f"{topic}-{index}", "has no replicas", "the plugin's answer")
            replicas.extend(brokers)
        return np.asarray(replicas, dtype=np.int64)
    raise ProblemError("", f"a plugin returns an answer, not {type(returned).__name__}", "plugin")


def plugin_rows(problem, judged_on: str, plugins: list[list[str]], base: dict) -> list[dict]:
    """One row per plugin: status, validity and levels as :func:`problems.evaluate` judges them."""
    rows = []
    for name, target in plugins:
        row = {**base, "strategy": name, "variant": "", "solver": "heuristic", "role": "heuristic"}
        try:
            function = load_function(target)
            started = time.perf_counter()
            returned = function(problem)
            row["runtime_s"] = time.perf_counter() - started
            row["status"] = str(returned.status) if isinstance(returned, Result) else "heuristic"
            row["valid"] = False
            answer = answer_of(problem, returned)
            if answer is None:
                row["error"] = "no answer"
            else:
                verdict = evaluate(problem, answer, STRATEGIES[judged_on].objective_on(problem))
                row["valid"] = verdict.valid
                if not verdict.valid:
                    row["error"] = f"invalid: {verdict.violations[0]}"
                for i, value in enumerate(verdict.objective[:LEVELS], start=1):
                    row[f"level{i}"] = value
        except ProblemError as error:  # not an answer at all: the row says so
            row.update(status="heuristic", valid=False, error=f"invalid: {error}")
        except Exception as error:  # a crashing plugin is a row, not a failed job
            row.update(status="error", valid=False, error=f"{type(error).__name__}: {error}")
        rows.append(row)
    return rows
