"""An evaluator's verdict on one answer, and the violation lines it gives.

Every objective's evaluator (:mod:`problems.evaluate`, :mod:`problems.share`,
:mod:`problems.streams.objective`) returns an :class:`Evaluation` and names at most a few
offending items of each kind (:func:`examples`), such as the keys an answer gives twice
(:func:`repeated`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class Evaluation:
    """The verdict on one answer.

    Attributes
    ----------
    valid
        Whether every hard constraint holds.
    violations
        One line per broken constraint (at most a few of each kind).
    objective
        The objective levels (``problems.objectives.OBJECTIVES[kind]``), lexicographic.
    names
        The names of those levels.
    """

    valid: bool
    violations: tuple[str, ...]
    objective: tuple[int, ...]
    names: tuple[str, ...]

    def as_dict(self) -> dict[str, int]:
        return dict(zip(self.names, self.objective))


def examples(hits: npt.NDArray[Any], describe: Callable[[int], str], limit: int = 3) -> list[str]:
    """``describe(i)`` of the first ``limit`` of ``hits`` (indices, or a boolean mask), then how many
    more there are."""
    if hits.dtype == np.bool_:
        hits = np.flatnonzero(hits)
    lines = [describe(int(i)) for i in hits[:limit]]
    if len(hits) > limit:
        lines.append(f"... and {len(hits) - limit} more")
    return lines


def repeated(keys: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """The distinct values of ``keys`` that occur more than once, ascending."""
    values, counts = np.unique(keys, return_counts=True)
    return np.asarray(values[counts > 1])
