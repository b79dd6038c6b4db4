"""Timing shared by the benchmark scripts (run as ``python benchmarks/<name>.py``)."""

from __future__ import annotations

import time


def best_of(repeat: int, function, *args) -> tuple[float, object]:
    """The fastest of ``repeat`` calls of ``function(*args)`` in seconds, and the last result."""
    best, _, result = best_of_with_cpu(repeat, function, *args)
    return best, result


def best_of_with_cpu(repeat: int, function, *args) -> tuple[float, float, object]:
    """As :func:`best_of`, plus the CPU seconds (this process, all threads) of the fastest call.

    On a shared machine the wall time grows with the load; the CPU time much less, so
    the benchmarks print both.
    """
    best, cpu, result = float("inf"), float("inf"), None
    for _ in range(repeat):
        result = None  # the previous call's result is freed before the clock starts, not inside
        started, started_cpu = time.perf_counter(), time.process_time()
        result = function(*args)
        wall = time.perf_counter() - started
        if wall < best:
            best, cpu = wall, time.process_time() - started_cpu
    return best, cpu, result


def load_average() -> str:
    """The 1-minute load average and the core count, for the line next to a table."""
    import os

    return f"{os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)"


def target(label: str, met: bool, measured: str) -> str:
    """One line saying whether a target holds: ``target met: ...`` or ``target MISSED: ...``."""
    return f"target {'met' if met else 'MISSED'}: {label}: {measured}"


def grows_at_most_n_log_n(sizes: list[int], seconds: list[float]) -> tuple[bool, str]:
    """Whether time grew from the smallest to the largest size by at most the factor of n log2 n."""
    import math

    allowed = sizes[-1] * math.log2(sizes[-1]) / (sizes[0] * math.log2(sizes[0]))
    grew = seconds[-1] / seconds[0] if seconds[0] > 0 else float("inf")
    return (
        grew <= allowed,
        f"time x{grew:,.1f} from {sizes[0]:,} to {sizes[-1]:,} (n log2 n: x{allowed:,.1f})",
    )


def print_targets(lines: list[str], when: str | None = None) -> None:
    """The target lines after a table, then the load average ``when`` (e.g. "after part 1"), if given."""
    print()
    print("\n".join(lines))
    if when:
        print(f"\nload average {when}: {load_average()}")


def seconds_target(label: str, wall: float, cpu: float, limit: float) -> str:
    """A :func:`target` line on a time limit: the verdict on the wall time, and what the CPU time says."""
    verdict = "met" if cpu <= limit else "MISSED"
    return target(
        f"{label} <= {limit:g} s",
        wall <= limit,
        f"{wall:.3f} s wall, {cpu:.3f} s CPU ({verdict} on CPU time)",
    )


def growth_target(label: str, sizes: list[int], wall: list[float], cpu: list[float]) -> str:
    """A :func:`target` line on growth at most n log n: the verdict on the wall times, and on the CPU times."""
    met, measured = grows_at_most_n_log_n(sizes, wall)
    cpu_met, cpu_measured = grows_at_most_n_log_n(sizes, cpu)
    return target(
        f"{label} grows at most as n log n",
        met,
        f"wall {measured}; CPU {cpu_measured.split(' from ')[0]} ({'met' if cpu_met else 'MISSED'} on CPU time)",
    )
