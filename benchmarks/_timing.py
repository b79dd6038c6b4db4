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


def load_average() -> str:
    """The 1-minute load average and the core count, for the line next to a table."""
    import os

    return f"{os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)"


def target(label: str, met: bool, measured: str) -> str:
    """One line saying whether an issue's target holds: ``target met: ...`` or ``target MISSED: ...``."""
    return f"target {'met' if met else 'MISSED'}: {label}: {measured}"


def grows_at_most_n_log_n(sizes: list[int], seconds: list[float]) -> tuple[bool, str]:
    """Whether time grew from the smallest to the largest size by at most the factor of n log2 n."""
    import math

    allowed = sizes[-1] * math.log2(sizes[-1]) / (sizes[0] * math.log2(sizes[0]))
    grew = seconds[-1] / seconds[0] if seconds[0] > 0 else float("inf")
    return grew <= allowed, f"time x{grew:,.1f} from {sizes[0]:,} to {sizes[-1]:,} (n log2 n: x{allowed:,.1f})"


def print_targets(lines: list[str], when: str | None = None) -> None:
    """The target lines after a table, then the load average ``when`` (e.g. "after part 1"), if given."""
    print()
    print("\n".join(lines))
    if when:
        print(f"\nload average {when}: {load_average()}")
