"""Timing shared by the benchmark scripts (run as ``python benchmarks/<name>.py``)."""

from __future__ import annotations

import time


def best_of(repeat: int, function, *args) -> tuple[float, object]:
    """The fastest of ``repeat`` calls of ``function(*args)`` in seconds, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = function(*args)
        best = min(best, time.perf_counter() - started)
    return best, result
