"""Benchmark: KIP-169's lag-aware heuristic at scale, and how far CP-SAT proves optimality.

1. The heuristic on ``--partitions`` partitions (over ``--topics`` topics) x
   ``--members`` members, all subscribed, lags uniform and Zipf: the best of
   ``--repeat`` runs of ``assign(problem)`` (the answer is checked valid).
2. CP-SAT (both levels, ``--workers`` workers) on one topic of P partitions and
   M members, growing along ``--ladder``: per lag shape, each size until the
   first one not proven optimal within ``--time-limit`` seconds.

Lags: ``uniform`` draws integers in [0, 10**6); ``zipf`` gives the partition of
rank r (a random permutation) ``10**6 // r`` (Zipf's law, exponent 1).

    .venv/bin/python benchmarks/lag_aware.py [--partitions 100000] [--members 1000] [--time-limit 60]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from models import solve
from problems import load_problem

LADDER = "8x2,12x3,16x4,20x4,24x4,32x4,40x5,48x6,64x8,96x8,128x8"


def lags(shape: str, count: int, rng: np.random.Generator) -> list[int]:
    if shape == "uniform":
        return rng.integers(0, 10**6, size=count).tolist()
    return (10**6 // (rng.permutation(count) + 1)).tolist()


def group(partitions: int, topics: int, members: int, shape: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    counts = [partitions // topics + (t < partitions % topics) for t in range(topics)]
    names = [f"topic{t:03d}" for t in range(topics)]
    return load_problem({
        "topics": dict(zip(names, counts)),
        "members": [{"id": f"consumer{m:04d}", "topics": names} for m in range(members)],
        "lags": {name: lags(shape, count, rng) for name, count in zip(names, counts)},
    })


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--topics", type=int, default=10)
    parser.add_argument("--members", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ladder", default=LADDER, help="PxM sizes for CP-SAT, comma-separated")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()

    print("| heuristic: partitions x members | lags | variant | assign s | max member lag |")
    print("| --- | --- | --- | --- | --- |")
    for shape in ("uniform", "zipf"):
        problem = group(args.partitions, args.topics, args.members, shape)
        problem.topic_subscribers  # noqa: B018 - derived arrays are part of loading
        for variant in (None, "cumulative"):
            best = float("inf")
            for _ in range(args.repeat):
                started = time.perf_counter()
                result = solve(problem, "lag-aware", variant=variant)
                best = min(best, time.perf_counter() - started)
            assert result.valid
            print(f"| {args.partitions:,} x {args.members:,} ({args.topics} topics) | {shape} | {variant or 'kip-169'} "
                  f"| {best:.3f} | {result.objective[0]:,} |")

    print()
    print("| CP-SAT: partitions x members | lags | status | seconds | level 1 (heuristic) | bound |")
    print("| --- | --- | --- | --- | --- | --- |")
    for shape in ("uniform", "zipf"):
        for size in args.ladder.split(","):
            partitions, members = map(int, size.split("x"))
            problem = group(partitions, 1, members, shape)
            started = time.perf_counter()
            result = solve(problem, "lag-aware", "cpsat", time_limit=args.time_limit, workers=args.workers)
            seconds = time.perf_counter() - started
            greedy = solve(problem, "lag-aware").objective[0]
            level = result.objective[0] if result.objective else "-"
            print(f"| {partitions} x {members} | {shape} | {result.status} | {seconds:.1f} | {level:,} ({greedy:,}) "
                  f"| {list(result.bound) if result.bound else '-'} |", flush=True)
            if result.status != "optimal":
                break


if __name__ == "__main__":
    main()
