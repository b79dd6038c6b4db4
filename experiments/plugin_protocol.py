"""The plugin protocol's lines: the request the harness writes and the answer it reads.

A request is one line of JSON, ``{"problem": DOC, "judged_on": S, "time_limit": SEC}``, where
``DOC`` is the problem document exactly as ``rebalance-lab assign``/``reassign`` reads it.  An
answer is one line of JSON: what ``assign`` prints (``{"assignment": ...}``; a streams group's
``{"assignment": {member: {active, standby, warmup}}}``), what ``reassign`` prints for a placement
(``{"version": 1, "partitions": [...]}``), or the raw arrays (``{"owner": [...]}`` for a group,
``{"replicas": [...]}`` for a placement), with an optional ``status`` and, for a program that
cannot answer, ``error``.  :func:`read_answer` turns an answer line into an :class:`Answer`: a
:class:`problems.Result` judged and re-scored by :func:`problems.evaluate`, or the reason there is
none.  Only integers are integers: a float, a boolean or a string where an owner, a partition or a
broker is expected makes the answer invalid, never silently converted.  Details: docs/plugins.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from problems import (
    GroupProblem,
    PlacementProblem,
    ProblemError,
    Result,
    StreamsProblem,
    owner_from_assignment,
    streams_answer_from_json,
)
from problems.result import STATUSES
from problems.share import pairs_from_assignment

#: Statuses an answer may give (``error``: the program could not answer, ``error`` says why).
ANSWER_STATUSES = (*STATUSES, "error")
_SOURCE = "the plugin's answer"


@dataclass(frozen=True)
class Answer:
    """What an answer line amounts to: a re-scored ``result``, or ``None`` and the ``error``."""

    status: str
    result: Result | None = None
    error: str | None = None

    @property
    def valid(self) -> bool:
        return self.result is not None and self.result.valid


def request(document: Any, judged_on: str, time_limit: float | None) -> bytes:
    """One request line for ``document`` (a parsed JSON document, or its JSON text or bytes as read
    from a file: its line breaks, which JSON allows only between tokens, become spaces)."""
    limit = None if time_limit is None or math.isinf(time_limit) else float(time_limit)
    if isinstance(document, str):
        document = document.encode("utf-8")
    if isinstance(document, bytes | bytearray):
        text = bytes(document).replace(b"\r", b" ").replace(b"\n", b" ").strip()
        if text.startswith(b"\xef\xbb\xbf"):  # a byte order mark, which load_problem allows
            text = text[3:]
        tail = orjson.dumps({"judged_on": judged_on, "time_limit": limit})
        return b'{"problem":' + text + b"," + tail[1:]
    return orjson.dumps(
        {"problem": document, "judged_on": judged_on, "time_limit": limit},
        option=orjson.OPT_SERIALIZE_NUMPY,
    )


class Garbage(ValueError):
    """An answer line that is not a JSON object."""


def parse_line(line: bytes) -> dict[str, Any]:
    """The JSON object of an answer line (:class:`Garbage` if it is not one)."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        text = line.decode("utf-8", errors="replace")
        shown = text[:80] + ("..." if len(text) > 80 else "")
        raise Garbage(f"the answer is not a JSON object: {shown!r}")
    return value


def read_answer(
    problem: GroupProblem | PlacementProblem | StreamsProblem,
    judged_on: str,
    answer: bytes | dict[str, Any],
) -> Answer:
    """Judge an answer (a line, or its parsed object) to ``problem`` on ``judged_on``'s objective.

    Raises
    ------
    Garbage
        The line is not a JSON object (a protocol failure, not an answer).
    """
    doc = parse_line(answer) if isinstance(answer, bytes | bytearray) else answer
    status = doc.get("status", "heuristic")
    if status not in ANSWER_STATUSES:
        shown = ", ".join(ANSWER_STATUSES)
        return Answer("heuristic", error=f"invalid: status must be one of {shown}, got {status!r}")
    error = doc.get("error")
    if error is not None:
        text = error if isinstance(error, str) else orjson.dumps(error).decode()
        return Answer("error" if status in ("heuristic", "error") else status, error=text)
    if status == "error":
        return Answer("error", error="the plugin answered status error without a reason")
    try:
        array = answer_array(problem, doc, judged_on)
    except ProblemError as problem_error:
        return Answer(status, error=f"invalid: {problem_error}")
    if array is None:
        if status in ("infeasible", "unknown"):
            return Answer(status, error="no answer")
        return Answer(status, error="invalid: the answer has no assignment")
    from models.registry import STRATEGIES  # the parent's side: the Python host never judges

    objective = STRATEGIES[judged_on].objective_on(problem)
    result = Result(problem, judged_on, array, status=status, objective_name=objective)
    verdict = result.evaluation
    assert verdict is not None
    if not verdict.valid:
        return Answer(status, result, f"invalid: {verdict.violations[0]}")
    return Answer(status, result)


def answer_array(
    problem: GroupProblem | PlacementProblem | StreamsProblem, doc: dict[str, Any], judged_on: str
) -> Any:
    """The answer of ``doc`` as the evaluator takes it (``None``: the answer gives none); a share
    group's assignment may list a partition under several members."""
    if isinstance(problem, StreamsProblem):
        found = doc.get("assignment")
        return None if found is None else streams_answer_from_json(problem, found, _SOURCE)
    if isinstance(problem, PlacementProblem):
        if doc.get("replicas") is not None:
            return integers(doc["replicas"], "replicas")
        entries = doc.get("partitions")
        return None if entries is None else _placement(problem, entries)
    if doc.get("owner") is not None:
        return integers(doc["owner"], "owner")
    found = doc.get("assignment")
    if found is None:
        return None
    if judged_on == "share":
        return pairs_from_assignment(problem, found, _SOURCE)
    return owner_from_assignment(problem, found, _SOURCE).astype(np.int64)


def integers(values: Any, field: str) -> np.ndarray:
    """A JSON list of integers as ``int64`` (floats, booleans and the like are an error)."""
    if not isinstance(values, list):
        raise ProblemError(field, "must be a list of integers", _SOURCE)
    kinds = set(map(type, values))
    if not kinds <= {int}:
        odd = next(v for v in values if type(v) is not int)
        raise ProblemError(
            field, f"must be a list of integers, holds {orjson.dumps(odd).decode()}", _SOURCE
        )
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:
        raise ProblemError(field, "holds an integer beyond 64 bits", _SOURCE) from None


def _placement(problem: PlacementProblem, entries: Any) -> np.ndarray:
    """The ``replicas`` array of a reassignment's ``partitions`` (every input partition, in any order)."""
    if not isinstance(entries, list):
        raise ProblemError("partitions", "must be a list", _SOURCE)
    by_key: dict[tuple[Any, Any], Any] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ProblemError(f"partitions[{i}]", "must be an object", _SOURCE)
        by_key[(entry.get("topic"), entry.get("partition"))] = entry.get("replicas")
    replicas: list[Any] = []
    factors = np.diff(problem.replica_start).tolist()
    for topic, index, factor in zip(problem.topics, problem.partitions.tolist(), factors):
        brokers = by_key.get((topic, index))
        if not isinstance(brokers, list):
            raise ProblemError(f"{topic}-{index}", "has no replicas", _SOURCE)
        if len(brokers) != factor:
            raise ProblemError(
                f"{topic}-{index}",
                f"has {len(brokers)} replicas, the partition has {factor}",
                _SOURCE,
            )
        replicas.extend(brokers)
    return integers(replicas, "partitions")
