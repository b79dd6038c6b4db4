"""The Python host: a ``module:function`` plugin as a program that speaks the plugin protocol.

``python -m experiments.plugin_host module:function`` imports the function when the describe
request comes (an import that fails, raises or exits is the describe answer's ``error``, or the
program's exit), answers it with the function's ``name`` and ``judged_on``, then answers each
request: the problem document loaded (:func:`problems.load_problem`), the function called, what
it returned written back as an answer line (an array as ``owner``/``replicas``, exactly as
returned, so the harness can refuse what is not integers; a :class:`problems.Result` with its
status; a JSON answer as it is).  The plugin's own output on stdout goes to stderr: the
protocol's stdout is a private copy of the original descriptor, and descriptor 1 is stderr.
Details: docs/plugins.md.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from collections.abc import Callable
from typing import IO, Any

import orjson

_OPTIONS = orjson.OPT_SERIALIZE_NUMPY


class LoadError(LookupError):
    """A plugin target that names no function: ``message`` says why."""

    def __init__(self, message: str):
        self.message = message
        super().__init__(message)


def load_function(target: str) -> Callable[..., Any]:
    """The function ``module:function`` names (:class:`LoadError` if none; what importing the
    module raises propagates)."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise LoadError(f"must be module:function or an installed name, got {target!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise LoadError(f"cannot import {module_name!r}: {error}") from None
    function: object = module
    for part in attribute.split("."):
        function = getattr(function, part, None)
        if function is None:
            raise LoadError(f"{module_name!r} has no {attribute!r}")
    if not callable(function):
        raise LoadError(f"{target} is not a function")
    return function


def _protocol_stdout() -> IO[bytes]:
    """The original stdout for answers; descriptor 1 (``print``, C code) goes to stderr from now on."""
    answers = os.fdopen(os.dup(1), "wb", buffering=0)
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr  # line-buffered: a print is in the log before a crash, not lost with it
    return answers


def describe(target: str) -> dict[str, Any]:
    """The describe answer: the function's ``name`` and ``judged_on``, or why it cannot be loaded."""
    try:
        function = load_function(target)
    except LoadError as error:
        return {"error": error.message}
    except SystemExit as stop:
        return {"error": f"importing {target} called sys.exit({stop.code!r})"}
    except MemoryError:
        return {"error": f"importing {target} ran out of memory{_limit()}"}
    except Exception as error:  # a module that raises while it is imported
        traceback.print_exc()
        return {"error": f"importing {target} raised {type(error).__name__}: {error}"}
    judged = getattr(function, "judged_on", None)
    if isinstance(judged, tuple | list):
        judged = list(judged)
    name = getattr(function, "name", None)
    return {
        "name": name if isinstance(name, str) else None,
        "judged_on": judged,
        "_function": function,
    }


def answer(returned: Any, problem: Any) -> dict[str, Any]:
    """The answer object of what a plugin function returned (arrays as they are)."""
    import numpy as np

    from problems import PlacementProblem, Result
    from problems.result import Status

    if isinstance(returned, Result):
        status = str(returned.status)
        if returned.answer is None:
            return {"assignment": None, "status": status}
        if isinstance(returned.answer, np.ndarray) and returned.answer.ndim == 1:
            returned = returned.answer
        else:
            return {"assignment": returned.assignment, "status": status}
    else:
        status = Status.HEURISTIC
    if isinstance(returned, np.ndarray | list | tuple):
        key = "replicas" if isinstance(problem, PlacementProblem) else "owner"
        values = returned.tolist() if isinstance(returned, np.ndarray) else list(returned)
        return {key: values, "status": status}
    if isinstance(returned, dict):
        if isinstance(problem, PlacementProblem) or "assignment" in returned:
            return {"status": status, **returned}  # a status of its own stands
        return {"assignment": returned, "status": status}
    return {"assignment": returned, "status": status}


def serve(target: str) -> int:
    """Answer requests on stdin until it closes."""
    answers = _protocol_stdout()
    function = None
    read = sys.stdin.buffer.readline
    while line := read():
        try:
            request = orjson.loads(line)
        except orjson.JSONDecodeError:
            request = None
        if not isinstance(request, dict):
            reply: dict[str, Any] = {"status": "error", "error": "the request is not a JSON object"}
        elif request.get("describe"):
            reply = describe(target)
            function = reply.pop("_function", None)
        elif function is None:
            reply = {"status": "error", "error": "a request before a successful describe"}
        else:
            reply = call(function, request)
        try:
            text = orjson.dumps(reply, option=_OPTIONS)
        except TypeError as error:
            text = orjson.dumps(
                {"error": f"invalid: the answer cannot be written as JSON ({error})"}
            )
        try:
            answers.write(text + b"\n")
        except BrokenPipeError:
            return 0
    return 0


def call(function: Any, request: dict[str, Any]) -> dict[str, Any]:
    """One request answered by ``function`` (what it raises is the answer's ``error``)."""
    from problems import ProblemError, load_problem

    try:
        document: Any = request.get("problem")  # a JSON value, checked by load_problem
        problem = load_problem(document)
    except ProblemError as error:
        return {"status": "error", "error": f"the host could not read the problem: {error}"}
    try:
        returned = function(problem)
    except SystemExit as stop:
        return {"status": "error", "error": f"the plugin called sys.exit({stop.code!r})"}
    except MemoryError:
        return {"status": "error", "error": f"MemoryError: the plugin ran out of memory{_limit()}"}
    except Exception as error:  # a plugin that raises is a row saying so
        traceback.print_exc()
        return {"status": "error", "error": f"{type(error).__name__}: {error}"}
    try:
        return answer(returned, problem)
    except Exception as error:  # a Result whose JSON cannot be built, and the like
        return {"error": f"invalid: {type(error).__name__}: {error}"}


def _limit() -> str:
    """`` (limit N MiB)``: this process's address-space limit, if it has one."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    return "" if soft == resource.RLIM_INFINITY else f" (limit {soft >> 20} MiB)"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m experiments.plugin_host module:function", file=sys.stderr)
        return 2
    return serve(argv[0])


if __name__ == "__main__":
    sys.exit(main())
