"""Array helpers every problem shares: read-only arrays and exact sums of squares."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt


def frozen(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """``array`` made read-only (the problems' arrays are shared by every reader), returned."""
    array.setflags(write=False)
    return array


def sum_squares(values: npt.ArrayLike) -> int:
    """Exact sum of squares (Python integers, no overflow)."""
    array = np.asarray(values)
    if array.size and int(np.abs(array).max()) < 3_000_000_000:
        return int(np.dot(array.astype(np.int64), array.astype(np.int64)))
    return sum(int(v) * int(v) for v in array.tolist())
