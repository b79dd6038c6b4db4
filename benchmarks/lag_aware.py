"""Benchmark: KIP-169's lag-aware heuristic at scale, and how far CP-SAT proves optimality.

1. The heuristic on each of ``--sizes`` partitions (10,000, 100,000 and
   1,000,000, over ``--topics`` topics) x ``--members`` members, all
   subscribed, lags uniform and Zipf: ``load_problem`` of the in-memory
   document (with its derived arrays) and ``models.solve`` (the heuristic,
   re-scored by the evaluator) timed apart, each the best of ``--repeat``
   runs (the answer is checked valid).  The target (assign < 0.1 s
   at 100,000 partitions, load excluded) is printed after the table.
2. CP-SAT (both levels, ``--workers`` workers) on one topic of P partitions and
   M members, growing along ``--ladder``: per lag shape, each size until the
   first one not proven optimal within ``--time-limit`` seconds.

Lags: ``uniform`` draws integers in [0, 10**6); ``zipf`` gives the partition of
rank r (a random permutation) ``10**6 // r`` (Zipf's law, exponent 1); ``hot`` draws
integers in [0, 10**3) except one partition in 100 (at random), in [5 * 10**5, 10**6).

    .venv/bin/python benchmarks/lag_aware.py [--sizes 10000,100000,1000000] [--members 1000]
    [--time-limit 60] .venv/bin/python benchmarks/lag_aware.py --skip-exact      # part 1 only
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import numpy as np

from models import solve
from problems import load_problem
from timing import best_of, best_of_with_cpu, load_average, print_targets, seconds_target

# The target: assign within 0.1 s at 100,000 partitions, load excluded.
TARGET_PARTITIONS, TARGET_SECONDS = 100_000, 0.1

LADDER = "8x2,12x3,16x4,20x4,24x4,32x4,40x5,48x6,64x8,96x8,128x8"


def lags(shape: str, count: int, rng: np.random.Generator) -> list[int]:
    if shape == "uniform":
        return rng.integers(0, 10**6, size=count).tolist()
    if shape == "hot":  # one partition in 100 hot
        values = rng.integers(0, 10**3, size=count)
        hot = rng.random(count) < 0.01
        values[hot] = rng.integers(5 * 10**5, 10**6, size=int(hot.sum()))
        return values.tolist()
    return (10**6 // (rng.permutation(count) + 1)).tolist()


def group_document(partitions: int, topics: int, members: int, shape: str, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    counts = [partitions // topics + (t < partitions % topics) for t in range(topics)]
    names = [f"topic{t:03d}" for t in range(topics)]
    return {
        "topics": dict(zip(names, counts)),
        "members": [{"id": f"consumer{m:04d}", "topics": names} for m in range(members)],
        "lags": {name: lags(shape, count, rng) for name, count in zip(names, counts)},
    }


def group(partitions: int, topics: int, members: int, shape: str, seed: int = 0):
    return load_problem(group_document(partitions, topics, members, shape, seed))


def loaded(doc: dict):
    problem = load_problem(doc)
    problem.topic_subscribers  # noqa: B018 - derived arrays are part of loading
    return problem


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes", default="10000,100000,1000000", help="partition counts of part 1"
    )
    parser.add_argument("--topics", type=int, default=10)
    parser.add_argument("--members", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ladder", default=LADDER, help="PxM sizes for CP-SAT, comma-separated")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--skip-exact", action="store_true")
    args = parser.parse_args()
    print(f"load average before: {load_average()}\n")

    print(
        "| heuristic: partitions x members | lags | variant | load s | assign s | load + assign s "
        "| max member lag |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    lines = []
    for partitions in (int(size) for size in args.sizes.split(",")):
        for shape in ("uniform", "zipf"):
            load_s, problem = best_of(
                args.repeat, loaded, group_document(partitions, args.topics, args.members, shape)
            )
            for variant in (None, "cumulative"):
                assign_s, assign_cpu, result = best_of_with_cpu(
                    args.repeat, partial(solve, problem, "lag-aware", variant=variant)
                )
                assert result.valid
                print(
                    f"| {partitions:,} x {args.members:,} ({args.topics} topics) | {shape} | {variant or 'kip-169'} "
                    f"| {load_s:.3f} | {assign_s:.3f} | {load_s + assign_s:.3f} | {result.objective[0]:,} |",
                    flush=True,
                )
                if partitions == TARGET_PARTITIONS:
                    lines.append(
                        seconds_target(
                            f"{partitions:,} partitions, {shape} lags, {variant or 'kip-169'}: "
                            f"assign (load excluded; load + assign {load_s + assign_s:.3f} s)",
                            assign_s,
                            assign_cpu,
                            TARGET_SECONDS,
                        )
                    )
    print_targets(lines, "after part 1")
    if args.skip_exact:
        return

    print()
    print(
        "| CP-SAT: partitions x members | lags | status | seconds | level 1 (heuristic) | bound |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for shape in ("uniform", "zipf"):
        for size in args.ladder.split(","):
            partitions, members = map(int, size.split("x"))
            problem = group(partitions, 1, members, shape)
            started = time.perf_counter()
            result = solve(
                problem, "lag-aware", "cpsat", time_limit=args.time_limit, workers=args.workers
            )
            seconds = time.perf_counter() - started
            greedy = solve(problem, "lag-aware").objective[0]
            level = result.objective[0] if result.objective else "-"
            print(
                f"| {partitions} x {members} | {shape} | {result.status} | {seconds:.1f} | {level:,} ({greedy:,}) "
                f"| {list(result.bound) if result.bound else '-'} |",
                flush=True,
            )
            if result.status != "optimal":
                break


if __name__ == "__main__":
    main()
