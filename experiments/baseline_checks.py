"""The checks a gate baseline's parts share: strict JSON, and statistics in their ranges.

A baseline (``baselines/gate.json``, :mod:`experiments.gate`) is read as JSON whose objects may not
repeat a key (:func:`read_object`: a repeated key would let the last copy silently replace the
first, so a file could hold two answers and be judged on either), and each of its statistics
sections (``heuristics``, ``traces``) is checked by :func:`statistics`: every statistic present, a
number within its range (shares 0 to 1, gaps and excess moves 0 to 2**63, a mean at most its
maximum), and the counts beside them non-negative integers.  Each problem is a
:class:`problems.ProblemError` naming the file and the field.
"""

from __future__ import annotations

import json
import math
from typing import Any

from problems import ProblemError

#: The largest gap a baseline may record: the levels and moves are 64-bit integers.
MAX_GAP = float(2**63)
#: A share's range, and a gap's.
SHARE = (0.0, 1.0)
GAP = (0.0, MAX_GAP)
#: The counts an entry may hold beside its statistics (non-negative integers).
COUNTS = ("scenarios", "compared", "traces", "tied")
#: How far a mean may exceed its maximum (floating-point summation), relative to the maximum.
SLACK = 1e-9


def type_name(value: object) -> str:
    """How an error names a JSON value's type."""
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


class _Repeated(dict[str, Any]):
    """A JSON object that repeated a key (:attr:`key`, the first one repeated)."""

    key: str = ""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) == len(pairs):
        return found
    repeated = _Repeated(found)
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            repeated.key = key
            break
        seen.add(key)
    return repeated


def _repeated_path(value: Any, path: str) -> str | None:
    """The field of the first repeated key in ``value`` (depth first), or None."""
    if isinstance(value, _Repeated):
        return f"{path}.{value.key}" if path else value.key
    children = value.items() if isinstance(value, dict) else enumerate(value)
    for key, child in children:
        if isinstance(child, dict | list):
            inner = _repeated_path(child, f"{path}.{key}" if path else str(key))
            if inner is not None:
                return inner
    return None


def read_object(text: str, source: str) -> Any:
    """The JSON value of ``text``; a :class:`ProblemError` when an object repeats a key.

    Raises ``ValueError`` or ``RecursionError`` as :func:`json.loads` does on malformed JSON.
    """
    document = json.loads(text, object_pairs_hook=_object)
    if isinstance(document, dict | list):
        path = _repeated_path(document, "")
        if path is not None:
            raise ProblemError(
                path,
                "given twice (a key repeated in one JSON object); re-create it with --update",
                source,
            )
    return document


def _number(value: Any, field: str, low: float, high: float, source: str) -> float:
    if type(value) not in (int, float) or not math.isfinite(value):
        shown = repr(value) if type(value) in (int, float, str) else type_name(value)
        raise ProblemError(field, f"must be a finite number, got {shown}", source)
    if not low <= value <= high:
        raise ProblemError(field, f"must be a number {low:g} to {high:g}, got {value!r}", source)
    return float(value)


def statistics(
    entries: dict[str, Any],
    section: str,
    ranges: dict[str, tuple[float, float]],
    source: str,
    mean_max: tuple[str, str] | None = None,
) -> dict[str, dict[str, float]]:
    """The entries of a statistics section, checked: each an object holding every statistic of
    ``ranges`` as a finite number in its range (``mean_max``: a mean and its maximum, the mean at
    most the maximum), and any count of :data:`COUNTS` a non-negative integer."""
    checked: dict[str, dict[str, float]] = {}
    for name, entry in entries.items():
        where = f"{section}.{name}"
        if type(entry) is not dict:
            raise ProblemError(where, f"must be an object, got {type_name(entry)}", source)
        values = {}
        for statistic, (low, high) in ranges.items():
            field = f"{where}.{statistic}"
            if statistic not in entry:
                raise ProblemError(field, "missing; re-create the baseline with --update", source)
            values[statistic] = _number(entry[statistic], field, low, high, source)
        for count in COUNTS:
            value = entry.get(count, 0)
            if type(value) is not int or not 0 <= value < 2**63:
                shown = repr(value) if type(value) in (int, float, str) else type_name(value)
                raise ProblemError(
                    f"{where}.{count}", f"must be an integer >= 0, got {shown}", source
                )
        if mean_max is not None:
            mean, most = values[mean_max[0]], values[mean_max[1]]
            if mean > most + SLACK * max(1.0, abs(most)):
                raise ProblemError(
                    f"{where}.{mean_max[0]}",
                    f"a mean of {mean!r} above the maximum {mean_max[1]} {most!r}",
                    source,
                )
        checked[name] = {**entry, **values}
    return checked
