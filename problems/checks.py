"""The input limits and the checks every reader shares (problem files, in-memory documents, snapshots).

Kafka's own types bound every number: partition counts, partition indexes,
broker ids, replica ids and generations are ``int32`` (``0 .. 2**31 - 1``;
a generation may also be -1, Kafka's "none"), lags and offsets ``int64``
(``0 .. 2**63 - 1``).  Totals are bounded before any array is sized: at most
:data:`MAX_PARTITIONS` partitions in a group (or partitions and replicas in a
placement) and at most :data:`MAX_MEMBER_TOPICS` cells in the members x topics
tables.  Strings must be valid Unicode (no lone surrogates).  Every check
raises :class:`~problems.errors.ProblemError` naming the field; the checks of
long lists are vectorised (one pass in C over a list, the slow search for the
offending item only when there is one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from problems.errors import ProblemError

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
#: Partitions of a group, partitions or replicas of a placement (about 5 GB of arrays at the limit).
MAX_PARTITIONS = 100_000_000
#: Members x topics of a group (the member-topic tables the strategies build).
MAX_MEMBER_TOPICS = 100_000_000

_KINDS = {INT32_MAX: "an int32, as in Kafka", INT64_MAX: "an int64, as in Kafka"}


def type_name(value: Any) -> str:
    """``a string``, ``an integer``, ``null``... : how an error names a JSON value's type."""
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def expect(value: Any, kind: type, field: str, what: str) -> Any:
    """``value`` if its type is exactly ``kind``, else a :class:`ProblemError` (``must be WHAT``)."""
    if type(value) is not kind:
        raise ProblemError(field, f"must be {what}, got {type_name(value)}")
    return value


def _range_error(value: Any, field: str, low: int, high: int) -> ProblemError:
    if type(value) is not int:
        return ProblemError(field, f"must be an integer >= {low}, got {type_name(value)}")
    if value < low:
        return ProblemError(field, f"must be an integer >= {low}, got {value}")
    return ProblemError(
        field, f"must be at most {high} ({_KINDS.get(high, 'the limit')}), got {value}"
    )


def items(field: str) -> Callable[[int], str]:
    """Names item ``i`` of the list at ``field``: ``field[i]`` (the ``field_of`` of the checks below)."""
    return lambda i: f"{field}[{i}]"


def integer(value: Any, field: str, low: int = 0, high: int = INT32_MAX) -> int:
    """``value`` if it is an integer (not a boolean) in ``low .. high``."""
    if type(value) is not int or not low <= value <= high:
        raise _range_error(value, field, low, high)
    return value


def integers(
    values: list[Any], field_of: Callable[[int], str], low: int = 0, high: int = INT32_MAX
) -> np.ndarray:
    """``values`` (a list) as an ``int64`` array, every item an integer in ``low .. high``.

    ``field_of(i)`` names item ``i`` in an error.
    """
    if values and set(map(type, values)) != {int}:
        i = next(i for i, v in enumerate(values) if type(v) is not int)
        raise _range_error(values[i], field_of(i), low, high)
    try:
        array = np.fromiter(values, dtype=np.int64, count=len(values))
    except OverflowError:
        array = None
    if array is None or (len(array) and (int(array.min()) < low or int(array.max()) > high)):
        i = next(i for i, v in enumerate(values) if not low <= v <= high)
        raise _range_error(values[i], field_of(i), low, high)
    return array


def strings(values: list[Any], field_of: Callable[[int], str]) -> None:
    """Every item of ``values`` is a non-empty string of valid Unicode."""
    if values and set(map(type, values)) != {str}:
        i = next(i for i, v in enumerate(values) if type(v) is not str)
        raise ProblemError(field_of(i), f"must be a string, got {type_name(values[i])}")
    if "" in values:
        raise ProblemError(field_of(values.index("")), "must be a non-empty string")
    try:
        "".join(values).encode("utf-8")
    except UnicodeEncodeError:
        i = next(i for i, v in enumerate(values) if not _encodable(v))
        raise ProblemError(field_of(i), f"is not valid Unicode: {values[i]!a}") from None


def string(value: Any, field: str) -> str:
    """``value`` if it is a non-empty string of valid Unicode."""
    strings([value], lambda _: field)
    return cast(str, value)


def _encodable(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def known_fields(doc: dict[Any, Any], allowed: frozenset[str], field: str) -> None:
    """Refuse (on ``field.<name>``) the first field of ``doc``, by name, that is not ``allowed``."""
    if not doc.keys() <= allowed:
        raise ProblemError(f"{field}.{sorted(map(str, doc.keys() - allowed))[0]}", "unknown field")


def at_most(total: int, limit: int, field: str, what: str) -> None:
    """A total (``what``, e.g. ``partitions in all``) within its limit, checked before sizing arrays."""
    if total > limit:
        raise ProblemError(field, f"{total:,} {what}; at most {limit:,} are supported")
