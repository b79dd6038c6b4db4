"""Benchmark: replica reassignment (PR 18903's use case), its growth, and the exact model.

Part 1, scaling: ``--scale-brokers`` brokers (100) on ``--scale-racks`` racks
(5; broker ``b`` on rack ``b % racks``), partitions ``--sizes`` (1,000,
10,000, 100,000; topics of 20) with replication factor 3, placed as
kafka-default places them (seed 0); then either the last two brokers removed
or one empty broker added.  Timed for each heuristic (best of ``--repeat``):
``load_problem`` of the in-memory document and ``assign`` apart, and their sum;
the last column divides the sum by ``n log2 n`` (flat or falling: growth no
worse than n log n).  The targets (sticky-replica at 100,000: <= 5 s per
change; growth from 1,000 to 100,000 at most n log n) are printed after the
table, each ``target met`` or ``target MISSED``.  kafka-default (seed 0) re-places everything from
scratch; sticky-replica's moves are stage 1's placements plus stage 2's moves.

Part 2, the exact model: ``--brokers`` brokers on ``--racks`` racks,
``--partitions`` partitions (topics of 20) with replication factor
``--factor``, placed as kafka-default places them (seed 0), then the last
``--removed`` brokers removed.  Rows: kafka-default (seed 0), the sticky
heuristic, and the exact CP-SAT model (``--time-limit`` s, one worker); then
the largest cluster of the same shape that CP-SAT proves optimal within the
time limit (partitions doubling from ``--scan-from``).

    .venv/bin/python benchmarks/sticky_replica.py                  # both parts .venv/bin/python
    benchmarks/sticky_replica.py --skip-exact     # part 1 only .venv/bin/python
    benchmarks/sticky_replica.py --skip-scaling [--partitions 1000] [--brokers 30] \
        [--racks 3] [--removed 2] [--time-limit 60] [--scan-from 30] [--no-scan]
"""

from __future__ import annotations

import argparse
import math
import time
from functools import partial

from models import solve
from problems import load_problem
from timing import best_of_with_cpu, growth_target, load_average, print_targets, seconds_target


def cluster_document(
    partitions: int, brokers: int, racks: int, factor: int, removed: int, added: int = 0
) -> dict:
    """kafka-default's placement (seed 0), then the last ``removed`` brokers gone and ``added`` empty ones new."""
    full = [{"id": b, "rack": f"rack{b % racks}"} for b in range(brokers + added)]
    topics = [
        {"topic": f"topic{p // 20:03d}", "partition": p % 20, "replicas": list(range(factor))}
        for p in range(partitions)
    ]
    placed = solve(
        load_problem({"brokers": full[:brokers], "partitions": topics}), "kafka-default", seed=0
    )
    return {
        "brokers": full[: brokers - removed] + full[brokers:],
        "partitions": placed.assignment["partitions"],
    }


def cluster(partitions: int, brokers: int, racks: int, factor: int, removed: int):
    """The benchmark cluster, loaded."""
    return load_problem(cluster_document(partitions, brokers, racks, factor, removed))


def scaling(args) -> None:
    """Part 1: load and assign apart at each size, both changes, both heuristics."""
    print(
        "| change | partitions x RF 3 | heuristic | load s | assign s | load + assign s | CPU s | moves | "
        "us / (n log2 n) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    sizes = [int(size) for size in args.sizes.split(",")]
    lines = []
    for change, removed, added in (("2 brokers removed", 2, 0), ("1 empty broker added", 0, 1)):
        totals, cpus = [], []
        for n in sizes:
            doc = cluster_document(n, args.scale_brokers, args.scale_racks, 3, removed, added)
            for strategy, seed in (("kafka-default", 0), ("sticky-replica", None)):
                load_s, load_cpu, problem = best_of_with_cpu(args.repeat, load_problem, doc)
                assign_s, assign_cpu, result = best_of_with_cpu(
                    args.repeat, partial(solve, problem, strategy, seed=seed)
                )
                assert result.valid
                total, cpu = load_s + assign_s, load_cpu + assign_cpu
                name = strategy + (f" (seed {seed})" if seed is not None else "")
                print(
                    f"| {change} | {n:,} | {name} | {load_s:.3f} | {assign_s:.3f} | {total:.3f} | {cpu:.3f} | "
                    f"{result.objective[3]:,} | {total / (n * math.log2(n)) * 1e6:.3f} |",
                    flush=True,
                )
                if strategy == "sticky-replica":
                    totals.append(total)
                    cpus.append(cpu)
        lines.append(
            seconds_target(
                f"sticky-replica, {change}, {sizes[-1]:,} partitions: load + assign",
                totals[-1],
                cpus[-1],
                TARGET_SECONDS,
            )
        )
        lines.append(growth_target(f"sticky-replica, {change}: load + assign", sizes, totals, cpus))
    print_targets(lines, "after part 1")


TARGET_SECONDS = 5.0  # 100,000 x RF 3 x 100 brokers x 5 racks, each change


def timed(function, *args, **kwargs):
    started = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - started, result


def row(case: str, solver: str, seconds: float, result) -> str:
    levels = result.objective or ["-"] * 4
    cells = [f"{v:,}" if isinstance(v, int) else v for v in levels]
    bound = (
        ", ".join(f"{v:,}" for v in result.bound)
        if result.bound and result.status != "optimal"
        else ""
    )
    return (
        f"| {case} | {solver} | {result.status} | {' | '.join(cells)} | {bound} | {seconds:.2f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--brokers", type=int, default=30)
    parser.add_argument("--racks", type=int, default=3)
    parser.add_argument("--factor", type=int, default=3)
    parser.add_argument("--removed", type=int, default=2)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--scan-from", type=int, default=30)
    parser.add_argument("--no-scan", action="store_true")
    parser.add_argument("--sizes", default="1000,10000,100000", help="partition counts of part 1")
    parser.add_argument("--scale-brokers", type=int, default=100)
    parser.add_argument("--scale-racks", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--skip-scaling", action="store_true")
    parser.add_argument("--skip-exact", action="store_true")
    args = parser.parse_args()
    print(f"load average before: {load_average()}\n")
    if not args.skip_scaling:
        scaling(args)
    if args.skip_exact:
        return
    print()
    shape = (args.brokers, args.racks, args.factor, args.removed)

    print(
        "| case | solver | status | level 1 | level 2 | level 3 | moves | proven bound | seconds |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    problem = cluster(args.partitions, *shape)
    case = (
        f"{args.partitions:,} x RF {args.factor}, {args.brokers} brokers, {args.racks} racks, "
        f"{args.removed} removed"
    )
    print(row(case, "kafka-default (seed 0)", *timed(solve, problem, "kafka-default", seed=0)))
    print(row(case, "sticky-replica heuristic", *timed(solve, problem, "sticky-replica")))
    print(
        row(
            case,
            f"cpsat ({args.time_limit:g} s)",
            *timed(solve, problem, "sticky-replica", "cpsat", time_limit=args.time_limit),
        )
    )
    if args.no_scan:
        return
    partitions, largest = args.scan_from, None
    while True:
        seconds, result = timed(
            solve,
            cluster(partitions, *shape),
            "sticky-replica",
            "cpsat",
            time_limit=args.time_limit,
        )
        if result.status != "optimal":
            break
        largest = (partitions, seconds, result)
        partitions *= 2
    if largest is not None:
        print(
            row(
                f"largest proven optimal within {args.time_limit:g} s: {largest[0]:,} partitions",
                "cpsat",
                largest[1],
                largest[2],
            )
        )
    print(
        f"\nfirst size not proven optimal within {args.time_limit:g} s: {partitions:,} partitions "
        f"({result.status}{', bound ' + str(list(result.bound)) if result.bound else ''})"
    )


if __name__ == "__main__":
    main()
