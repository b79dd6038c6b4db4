"""Benchmark: the exact class network against Kafka 4.4.0's UniformAssignor on Kafka's benchmark grid.

One run, the same inputs on both sides: each cell of ``ConsumerAssignorBenchmark``'s grid (the groups
the UNIFORM assignor is benchmarked on: its own previous output as the members' current assignment)
is built twice -- with Kafka's group-coordinator classes (:mod:`peers.kafka_benchmark`, as the
benchmark's ``setup`` builds it) and as the lab's document (:mod:`experiments.kafka_grid`, the same
group: ``tests/peers/test_benchmark_grid.py``).  Kafka's ``UniformAssignor.assign`` is timed in the
JVM as the benchmark's ``doAssignment`` (resolver cleared, ``System.nanoTime`` around the call,
``--warmups`` untimed calls first); the class network (:mod:`models.common.class_network`, judged on sticky
without racks and on rack-aware with them) from the loaded problem in memory to the answer object,
each run on a fresh copy of the problem (nothing cached from a previous run).  The median of
``--runs`` calls each.  Cells: every ``--every``-th cell of the grid, the 5,000 members x 20,000
partitions cells (``--largest``, every ``--largest-every``-th of them), and 10,000 members x 100,000
partitions with racks (``--huge``).  Targets, each printed ``met`` or ``MISSED``:

* the class network's median over the sampled cells at most twice Kafka's median;
* at most 50 ms on every cell measured (the largest, 5,000 x 20,000, included);
* at most 50 ms at 10,000 members x 100,000 partitions with racks;
* status ``optimal`` on every cell.

    .venv/bin/python benchmarks/kafka_grid.py [--every 24] [--largest] [--huge] [--csv FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

import pandas as pd

from experiments.kafka_grid import benchmark_document
from experiments.tables import to_markdown
from models.common import class_network
from problems import load_problem

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the test-and-benchmark-only peers

from peers import kafka_benchmark  # noqa: E402
from timing import load_average, target  # noqa: E402

EVENTS = ("fresh", "stable", "member-joins", "join-many", "member-leaves", "leave-many")
EVENTS += ("partitions-grow",)
GRID = [
    (event, members, topics, partitions, distribution, pattern, racks)
    for members in (5, 50, 500, 5000)
    for topics in (5, 50, 500, 5000)
    for partitions in (5000, 10000, 20000)
    for distribution in ("equal", "skewed")
    for pattern in ("equal", "disjoint", "nested")
    for racks in (False, True)
    for event in EVENTS
]
#: 10,000 members x 100,000 partitions with racks: 500 topics, every subscription and event.
HUGE = [
    (event, 10_000, 500, 100_000, "equal", pattern, True)
    for pattern in ("equal", "disjoint", "nested")
    for event in EVENTS
]
BUDGET_S = 0.050


def measure(cell, warmups: int, runs: int) -> dict:
    """Kafka's and the class network's median seconds on one cell (the uniform assignor's group)."""
    event, members, topics, partitions, distribution, pattern, racks = cell
    shape = dict(distribution=distribution, pattern=pattern, racks=racks)
    group, uniform = kafka_benchmark.benchmark_input(
        event, members, topics, partitions, assignor_name="uniform", **shape
    )
    _, kafka_wall, kafka_cpu = kafka_benchmark.time_assign(group, uniform, warmups, runs)
    del group
    problem = load_problem(
        benchmark_document(event, members, topics, partitions, assignor="uniform", **shape)
    )
    strategy = "rack-aware" if racks else "sticky"
    ours, ours_cpu, status, method = [], [], set(), set()
    for _ in range(runs):
        fresh = dataclasses.replace(problem)  # no cached property from the previous run
        began, began_cpu = time.perf_counter(), time.thread_time()
        result = class_network.solve(fresh, strategy)
        ours_cpu.append(time.thread_time() - began_cpu)
        ours.append(time.perf_counter() - began)
        status.add(str(result.status))
        method.add(result.info.get("method", ""))
    return {
        "event": event,
        "members": members,
        "topics": topics,
        "partitions": partitions,
        "distribution": distribution,
        "subscription": pattern,
        "racks": racks,
        "kafka_ms": 1e3 * statistics.median(kafka_wall),
        "exact_ms": 1e3 * statistics.median(ours),
        "kafka_cpu_ms": 1e3 * statistics.median(kafka_cpu),
        "exact_cpu_ms": 1e3 * statistics.median(ours_cpu),
        "status": "/".join(sorted(status)),
        "method": "/".join(sorted(method)),
    }


def run(cells, warmups: int, runs: int, label: str) -> pd.DataFrame:
    rows = []
    began = time.perf_counter()
    for i, cell in enumerate(cells):
        rows.append(measure(cell, warmups, runs))
        if (i + 1) % 25 == 0:
            print(
                f"  {label}: {i + 1}/{len(cells)} cells, {time.perf_counter() - began:,.0f} s",
                file=sys.stderr,
                flush=True,
            )
    frame = pd.DataFrame(rows)
    frame["set"] = label
    return frame


def report(frame: pd.DataFrame) -> None:
    """The timing tables and the target lines, on wall time and on CPU time (the calling thread's,
    both sides): on a shared machine the wall time grows with the load, the CPU time much less."""
    print()
    for label, part in frame.groupby("set", sort=False):
        table = (
            part.assign(racks=part["racks"].map({True: "PROVIDED", False: "NONE"}))
            .groupby(["subscription", "racks"])
            .agg(
                cells=("exact_ms", "size"),
                kafka_ms=("kafka_ms", "median"),
                exact_ms=("exact_ms", "median"),
                exact_max_ms=("exact_ms", "max"),
                kafka_cpu_ms=("kafka_cpu_ms", "median"),
                exact_cpu_ms=("exact_cpu_ms", "median"),
                exact_max_cpu_ms=("exact_cpu_ms", "max"),
            )
            .reset_index()
        )
        print(f"{label} (medians over the cells, each cell the median of its runs):")
        print(to_markdown(table.round(2)))
        print()
    print(f"load average {load_average()}")
    for clock, kafka_column, exact_column in (
        ("wall", "kafka_ms", "exact_ms"),
        ("CPU", "kafka_cpu_ms", "exact_cpu_ms"),
    ):
        for line in _targets(frame, clock, kafka_column, exact_column):
            print(line)
    print(
        target(
            "every answer proven optimal by the class network itself",
            bool((frame["status"] == "optimal").all() and (frame["method"] == "class-flow").all()),
            f"{int((frame['status'] == 'optimal').sum())} of {len(frame)} optimal, "
            f"{int((frame['method'] == 'class-flow').sum())} by the class network",
        )
    )


def _targets(frame: pd.DataFrame, clock: str, kafka_column: str, exact_column: str) -> list[str]:
    lines = []
    grid = frame[frame["set"] != "huge"]
    if len(grid):
        kafka, ours = grid[kafka_column].median(), grid[exact_column].median()
        ratio = (grid[exact_column] / grid[kafka_column]).median()
        lines.append(
            target(
                f"{clock}: exact median at most 2x Kafka's UniformAssignor median over the cells",
                ours <= 2 * kafka,
                f"{ours:.2f} ms against {kafka:.2f} ms (x{ours / kafka:.2f}; median of the "
                f"per-cell ratios x{ratio:.2f}) over {len(grid):,} cells",
            )
        )
        worst = grid.loc[grid[exact_column].idxmax()]
        lines.append(
            target(
                f"{clock}: at most 50 ms on every cell measured",
                bool((grid[exact_column] <= 1e3 * BUDGET_S).all()),
                f"largest {worst[exact_column]:.1f} ms ({worst['event']}, {worst['members']:,} x "
                f"{worst['topics']:,} x {worst['partitions']:,}, {worst['distribution']}, "
                f"{worst['subscription']}, racks {worst['racks']}); "
                f"{int((grid[exact_column] > 1e3 * BUDGET_S).sum())} cells above",
            )
        )
    huge = frame[frame["set"] == "huge"]
    if len(huge):
        lines.append(
            target(
                f"{clock}: at most 50 ms at 10,000 members x 100,000 partitions with racks",
                bool((huge[exact_column] <= 1e3 * BUDGET_S).all()),
                f"median {huge[exact_column].median():.1f} ms, largest "
                f"{huge[exact_column].max():.1f} ms over {len(huge)} cells (Kafka's median "
                f"{huge[kafka_column].median():.1f} ms)",
            )
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--every", type=int, default=24, help="every k-th cell of the grid (0: none)"
    )
    parser.add_argument("--largest", action="store_true", help="the 5,000 x 20,000 cells")
    parser.add_argument("--largest-every", type=int, default=1, help="every k-th of those")
    parser.add_argument("--huge", action="store_true", help="10,000 x 100,000 with racks")
    parser.add_argument("--huge-every", type=int, default=1, help="every k-th of those")
    parser.add_argument("--warmups", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--csv", type=Path, help="write every measured cell here")
    args = parser.parse_args()
    frames = []
    if args.every:
        frames.append(run(GRID[:: args.every], args.warmups, args.runs, "grid sample"))
    if args.largest:
        largest = [c for c in GRID if c[1] == 5000 and c[3] == 20000][:: args.largest_every]
        frames.append(run(largest, args.warmups, args.runs, "5,000 x 20,000"))
    if args.huge:
        frames.append(run(HUGE[:: args.huge_every], args.warmups, args.runs, "huge"))
    frame = pd.concat(frames, ignore_index=True)
    if args.csv:
        frame.to_csv(args.csv, index=False)
    report(frame)


if __name__ == "__main__":
    main()
