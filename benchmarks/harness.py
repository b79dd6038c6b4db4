"""Benchmark: the comparison pipeline on local[1] against local[2].

Runs a suite (default: ``default``) twice from scratch, once per master, and
prints wall time, rows per second and the speed-up, then the largest scenario
(by size) that each exact solver proved optimal within its time limit.

    .venv/bin/python benchmarks/harness.py [--suite default] [--time-limit SEC]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from experiments.pipeline import run_suite
from experiments.results import load_results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--suite", default="default")
    parser.add_argument("--time-limit", type=float)
    parser.add_argument("--masters", nargs="+", default=["local[1]", "local[2]"])
    args = parser.parse_args()
    walls, frames = {}, {}
    for master in args.masters:
        with tempfile.TemporaryDirectory() as out:
            started = time.perf_counter()
            info = run_suite(
                args.suite,
                Path(out),
                run_id="bench",
                master=master,
                time_limit=args.time_limit,
                progress=True,
            )
            walls[master] = time.perf_counter() - started
            frames[master] = load_results(info.folder)
        # A new master needs a new Spark session.
        from pyspark.sql import SparkSession

        SparkSession.builder.getOrCreate().stop()
    print("| master | scenarios | rows | wall s | rows/s |")
    print("| --- | --- | --- | --- | --- |")
    for master in args.masters:
        rows = frames[master]
        print(
            f"| {master} | {rows['scenario_id'].nunique()} | {len(rows)} | {walls[master]:.1f} | "
            f"{len(rows) / walls[master]:.1f} |"
        )
    if len(args.masters) == 2:
        first, second = args.masters
        print(f"\nspeed-up {first} -> {second}: {walls[first] / walls[second]:.2f}x")
    rows = frames[args.masters[-1]]
    proven = rows[(rows["role"] == "exact") & (rows["status"] == "optimal")]
    print("\n| objective | solver | largest proven optimal (size) | scenario | runtime s |")
    print("| --- | --- | --- | --- | --- |")
    for (objective, solver), group in proven.groupby(["judged_on", "solver"]):
        top = group.sort_values(["size", "runtime_s"], ascending=[False, True]).iloc[0]
        print(
            f"| {objective} | {solver} | {top['size']:,} | {top['scenario_id']} | {top['runtime_s']:.2f} |"
        )


if __name__ == "__main__":
    main()
