"""``--plugin`` on ``assign``, ``reassign`` and ``trace``: a plugin in place of ``--strategy``.

The plugin is resolved as ``compare`` resolves it (:func:`experiments.experiment_plugins.resolve`,
one line and exit 2 for a plugin that cannot start), its program kept running for the calls, and
judged on the first of its ``judged_on`` that fits the document (a consumer group, a share group, a
streams group or a placement).  An answer is a :class:`problems.Result` re-scored by the
evaluator, printed as a built-in strategy's would be; a plugin that fails is one line on stderr
naming it and what happened, and the command's status for no answer (3).  The program's stderr
is the command's.  Details: docs/plugins.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from models.options import DEFAULT_TIME_LIMIT
from models.registry import STRATEGIES
from problems import (
    GroupProblem,
    PlacementProblem,
    ProblemError,
    Result,
    StreamsProblem,
)
from problems.result import Status

if TYPE_CHECKING:
    from experiments.experiment_plugins import Plugin

#: The objective kinds a document of each kind is judged on.
_KINDS = {
    GroupProblem: ("sticky", "rack-aware", "lag-aware", "stream-join", "share"),
    StreamsProblem: ("streams",),
    PlacementProblem: ("replica",),
}


def add_argument(parser: argparse.ArgumentParser | Any, what: str = "--strategy") -> None:
    """Add ``--plugin SPEC`` (in place of ``what``)."""
    parser.add_argument(
        "--plugin",
        metavar="SPEC",
        help=f"a plugin instead of {what}: [NAME=]module:function, [NAME=]exec:COMMAND, "
        "[NAME=]java:CLASS or an installed or shipped name (docs/plugins.md)",
    )


def add_classpath(parser: argparse.ArgumentParser | Any) -> None:
    """Add ``--classpath JARS|DIR`` (for a ``java:`` plugin)."""
    parser.add_argument(
        "--classpath",
        metavar="JARS|DIR",
        help="the jars and class folders of a java:CLASS plugin (separated by ':'), before the "
        "Kafka release `make peers` built (docs/java-assignors.md)",
    )


def plugin(spec: str, classpath: str | None = None) -> Plugin:
    """The plugin ``spec`` names (a ``java:`` one with ``classpath`` when it has none), its program
    left running for the calls."""
    from experiments.experiment_plugins import resolve  # entry points: read only when asked
    from experiments.plugin_java import with_classpath

    try:
        return resolve(with_classpath(spec, classpath), "--plugin", keep=True)
    except ProblemError as error:
        raise error.with_source("command line") from None


def judged_on(found: Plugin, problem: Any, source: str) -> str:
    """The first of the plugin's ``judged_on`` that fits ``problem``'s kind of document."""
    kinds = next(k for cls, k in _KINDS.items() if isinstance(problem, cls))
    for strategy in found.judged_on:
        if STRATEGIES[strategy].objective in kinds:
            return strategy
    raise ProblemError(
        "--plugin",
        f"{found.name} is judged on {', '.join(found.judged_on)}: none takes this document",
        source,
    )


def document_of(path: Any) -> Any:
    """The problem document as the plugin gets it: the file's bytes, or the document read."""
    if isinstance(path, str | Path):
        try:
            return Path(path).read_bytes()
        except OSError as error:
            raise ProblemError("", f"cannot read: {error.strerror}", str(path)) from None
    return path


def answer(
    found: Plugin, problem: Any, document: Any, time_limit: float | None, source: str
) -> Result | None:
    """The plugin's answer to ``problem`` (``None``: none; the reason is on stderr)."""
    from experiments.plugin_runner import run

    judged = judged_on(found, problem, source)
    limit = DEFAULT_TIME_LIMIT if time_limit is None else time_limit
    call = run(found.name, found.target, problem, document, judged, limit)
    reply = call.answer
    if reply.error is not None:
        print(f"plugin {found.name}: {reply.error}", file=sys.stderr)
    if reply.result is None:
        return None
    runtime = "" if call.runtime_s is None else f", {call.runtime_s:.3f} s"
    print(
        f"{found.name} (plugin, judged on {judged}): {reply.result.status}, "
        f"objective {reply.result.objective}{runtime}",
        file=sys.stderr,
    )
    return reply.result


def failed(problem: Any, judged: str, error: str) -> Result:
    """A step's result without an answer (a plugin that failed), for traces."""
    return Result(
        problem,
        judged,
        None,
        status=Status.UNKNOWN,
        info={"error": error},
        objective_name=STRATEGIES[judged].objective_on(problem),
    )
