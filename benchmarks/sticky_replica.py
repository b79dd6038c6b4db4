"""Benchmark: replica reassignment after removing brokers (PR 18903's use case).

The cluster: ``--brokers`` brokers on ``--racks`` racks (broker ``b`` on rack
``b % racks``), ``--partitions`` partitions (topics of 20) with replication
factor ``--factor``, placed as kafka-default places them (seed 0), then the
last ``--removed`` brokers removed.  Rows: kafka-default (seed 0), the sticky
heuristic, and the exact CP-SAT model (``--time-limit`` s, one worker); then
the largest cluster of the same shape that CP-SAT proves optimal within the
time limit (partitions doubling from ``--scan-from``).

    .venv/bin/python benchmarks/sticky_replica.py [--partitions 1000] [--brokers 30] [--racks 3] \
        [--removed 2] [--time-limit 60] [--scan-from 30] [--no-scan]
"""

from __future__ import annotations

import argparse
import time

from models import solve
from problems import load_problem


def cluster(partitions: int, brokers: int, racks: int, factor: int, removed: int):
    """The benchmark cluster: kafka-default's placement, then the last ``removed`` brokers gone."""
    full = [{"id": b, "rack": f"rack{b % racks}"} for b in range(brokers)]
    topics = [{"topic": f"topic{p // 20:03d}", "partition": p % 20, "replicas": list(range(factor))}
              for p in range(partitions)]
    placed = solve(load_problem({"brokers": full, "partitions": topics}), "kafka-default", seed=0)
    return load_problem({"brokers": full[: brokers - removed], "partitions": placed.assignment["partitions"]})


def timed(function, *args, **kwargs):
    started = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - started, result


def row(case: str, solver: str, seconds: float, result) -> str:
    levels = result.objective or ["-"] * 4
    cells = [f"{v:,}" if isinstance(v, int) else v for v in levels]
    bound = ", ".join(f"{v:,}" for v in result.bound) if result.bound and result.status != "optimal" else ""
    return f"| {case} | {solver} | {result.status} | {' | '.join(cells)} | {bound} | {seconds:.2f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--brokers", type=int, default=30)
    parser.add_argument("--racks", type=int, default=3)
    parser.add_argument("--factor", type=int, default=3)
    parser.add_argument("--removed", type=int, default=2)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--scan-from", type=int, default=30)
    parser.add_argument("--no-scan", action="store_true")
    args = parser.parse_args()
    shape = (args.brokers, args.racks, args.factor, args.removed)

    print("| case | solver | status | level 1 | level 2 | level 3 | moves | proven bound | seconds |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    problem = cluster(args.partitions, *shape)
    case = (f"{args.partitions:,} x RF {args.factor}, {args.brokers} brokers, {args.racks} racks, "
            f"{args.removed} removed")
    print(row(case, "kafka-default (seed 0)", *timed(solve, problem, "kafka-default", seed=0)))
    print(row(case, "sticky-replica heuristic", *timed(solve, problem, "sticky-replica")))
    print(row(case, f"cpsat ({args.time_limit:g} s)", *timed(solve, problem, "sticky-replica", "cpsat", time_limit=args.time_limit)))
    if args.no_scan:
        return
    partitions, largest = args.scan_from, None
    while True:
        seconds, result = timed(solve, cluster(partitions, *shape), "sticky-replica", "cpsat", time_limit=args.time_limit)
        if result.status != "optimal":
            break
        largest = (partitions, seconds, result)
        partitions *= 2
    if largest is not None:
        print(row(f"largest proven optimal within {args.time_limit:g} s: {largest[0]:,} partitions", "cpsat",
                  largest[1], largest[2]))
    print(f"\nfirst size not proven optimal within {args.time_limit:g} s: {partitions:,} partitions "
          f"({result.status}{', bound ' + str(list(result.bound)) if result.bound else ''})")


if __name__ == "__main__":
    main()
