"""Plugins run as child processes: which program a plugin is, and one call judged as a row.

A plugin's target names its program: ``exec:COMMAND`` is ``COMMAND`` split as a shell splits
words (no shell runs it); ``module:function`` is the Python host (:mod:`experiments.plugin_host`)
serving that function, with this process's ``sys.path``; other prefixes register their program
in :data:`PROGRAMS`.  Every process (a Spark worker, the command line) keeps one child per plugin
(:func:`process_for`), started on its first call, reused across calls, restarted after a failure
and killed when the process exits.  :func:`run` makes one call and judges its answer
(:mod:`experiments.plugin_protocol`): a :class:`Call` with the re-scored result or the reason
there is none (a crash, a hang past the time limit, garbage, an invalid answer), never an
exception.  Details: docs/plugins.md.
"""

from __future__ import annotations

import atexit
import os
import re
import shlex
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from experiments.plugin_java import java_argv
from experiments.plugin_process import MEMORY_LIMIT_MB, PluginFailure, PluginProcess
from experiments.plugin_protocol import Answer, Garbage, read_answer, request
from problems import GroupProblem, PlacementProblem, ProblemError, StreamsProblem


def _exec_argv(command: str) -> list[str]:
    try:
        argv = shlex.split(command)
    except ValueError as error:
        raise ProblemError("", f"exec:{command}: {error}") from None
    if not argv:
        raise ProblemError("", "exec: needs a command, e.g. exec:node my-assignor.js")
    return argv


#: Program of a target ``PREFIX:REST`` by prefix: a function of ``REST`` returning the argv
#: (``java:CLASS``: the lab's JVM assignor program, :mod:`experiments.plugin_java`).
PROGRAMS: dict[str, Callable[[str], list[str]]] = {"exec": _exec_argv, "java": java_argv}


def is_process_target(target: str) -> bool:
    """Whether ``target`` names a program by a prefix of :data:`PROGRAMS` (else ``module:function``)."""
    prefix, colon, _ = target.partition(":")
    return bool(colon) and prefix in PROGRAMS


def argv_for(target: str) -> list[str]:
    """The program and arguments that serve the plugin ``target``."""
    prefix, _, rest = target.partition(":")
    if prefix in PROGRAMS:
        return PROGRAMS[prefix](rest)
    return [sys.executable, "-m", "experiments.plugin_host", target]


def environment(target: str) -> dict[str, str] | None:
    """The program's environment: for the Python host, this process's ``sys.path`` as
    ``PYTHONPATH`` (the module imports where the caller's would) and one BLAS thread."""
    if is_process_target(target):
        return None
    paths = [path or os.getcwd() for path in sys.path]
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths)),
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


def log_path(folder: Path | str | None, name: str) -> Path | None:
    """Where a plugin's stderr goes in ``folder``: one file per plugin and process."""
    if folder is None:
        return None
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "plugin"
    return Path(folder) / f"{safe}.{socket.gethostname()}-{os.getpid()}.log"


#: Starts in a row that fail (the program exits, hangs or errs before it describes itself) after
#: which a process stops starting the program: its further calls fail at once, saying why.
START_ATTEMPTS = 2
#: The address-space limit (MiB) of a prefix's programs where it is not
#: :data:`experiments.plugin_process.MEMORY_LIMIT_MB` (``None``: no limit).
MEMORY_MB: dict[str, int | None] = {}


def program(name: str, target: str, log: Path | None = None) -> PluginProcess:
    """A (not yet started) process for the plugin ``target``."""
    prefix = target.partition(":")[0] if is_process_target(target) else ""
    memory = MEMORY_MB.get(prefix, MEMORY_LIMIT_MB)
    return PluginProcess(name, argv_for(target), log, memory, environment(target))


_PROCESSES: dict[tuple[str, str], PluginProcess] = {}


def process_for(name: str, target: str, logs: Path | str | None = None) -> PluginProcess:
    """This process's child for the plugin (started on its first call, kept for the next ones)."""
    key = (target, str(logs))
    found = _PROCESSES.get(key)
    if found is None:
        found = _PROCESSES[key] = program(name, target, log_path(logs, name))
    return found


@atexit.register
def stop_all() -> None:
    """Stop every plugin process this process started."""
    while _PROCESSES:
        _, process = _PROCESSES.popitem()
        process.kill()


def describe(name: str, target: str, where: str = "--plugin", keep: bool = False) -> dict[str, Any]:
    """Start the plugin's program, read its describe answer and stop it (``keep``: keep it
    running as this process's child for the plugin, whose stderr is this process's).

    Raises
    ------
    ProblemError
        The program cannot start, exits, hangs or cannot describe itself (its ``error``), named
        with ``where`` and the plugin.
    """
    process = process_for(name, target) if keep else program(name, target)
    try:
        described = process.start()
    except PluginFailure as failure:
        raise ProblemError(where, f"{target}: {failure}") from None
    finally:
        if not keep or not process.running or process.description.get("error") is not None:
            process.stop()
    if described.get("error") is not None:
        raise ProblemError(where, str(described["error"]))
    return described


@dataclass(frozen=True)
class Call:
    """One plugin call: the judged answer and the seconds from request to answer."""

    answer: Answer
    runtime_s: float | None


def run(
    name: str,
    target: str,
    problem: GroupProblem | PlacementProblem | StreamsProblem,
    document: Any,
    judged_on: str,
    time_limit: float,
    logs: Path | str | None = None,
) -> Call:
    """Ask the plugin for an answer to ``problem`` (``document``: its JSON, as read) and judge it
    on ``judged_on``; a failure is the answer's ``error``, with status ``error``."""
    process = process_for(name, target, logs)
    if process.start_failures >= START_ATTEMPTS:  # a program that cannot start is not retried
        failure = f"start: {process.stopped_because}; not started again"
        return Call(Answer("error", error=_with_log(failure, process)), None)
    line = request(document, judged_on, time_limit)
    started = None
    try:
        if not process.running:
            described = process.start(process.stopped_because)
            if described.get("error") is not None:
                process.kill()
                process.start_failures += 1
                process.stopped_because = f"{described['error']}"
                failure = f"start: {described['error']}"
                return Call(Answer("error", error=_with_log(failure, process)), None)
            process.start_failures = 0
        started = time.perf_counter()
        reply = process.exchange(line, time_limit)
    except PluginFailure as failure:
        if started is None:
            process.start_failures += 1
            process.stopped_because = f"{failure}"
        else:
            process.stopped_because = f"after {failure.kind}"
        runtime = None if started is None else time.perf_counter() - started
        return Call(Answer("error", error=_with_log(str(failure), process)), runtime)
    runtime = time.perf_counter() - started
    try:
        return Call(read_answer(problem, judged_on, reply), runtime)
    except Garbage as garbage:
        process.kill()
        process.stopped_because = "after garbage"
        return Call(Answer("error", error=_with_log(f"garbage: {garbage}", process)), runtime)


def _with_log(text: str, process: PluginProcess) -> str:
    return text if process.log is None else f"{text} (stderr: {process.log.name})"
