"""Benchmark: certified lag-aware gaps at Kafka's scale, and CP-SAT with the size-free bounds at 200 x 10.

1. ``--partitions`` partitions over ``--topics`` topics x ``--members`` members (all
   subscribed), lags uniform and Zipf (the generator of benchmarks/lag_aware.py):
   each heuristic variant's max member lag ``H``, the size-free lower bound ``B``
   of models/lag_bounds.py and the best answer found ``E`` (the best variant); the
   certified interval of the level-1 gap is ``[H - E, H - B]``, its upper end
   given as a share of ``B`` (target: at most 1% within 10 s).  The
   last row per lag shape is what the exact solvers return at this size (no
   model: the best variant improved by swaps, with the bound), its seconds
   including all three heuristics and the bound.
2. CP-SAT (``--time-limit`` s, one worker) on one topic of ``--small`` partitions x
   members, uniform and Zipf: status, level 1 and the proven bounds.

    .venv/bin/python benchmarks/lag_bounds.py [--partitions 100000] [--members 1000] [--topics 10]
"""

from __future__ import annotations

import argparse
import time

from lag_aware import group

import heuristics.lag_aware as heuristic
import models.cpsat.lag_aware as cpsat
from models.lag_aware_data import HINTS
from models.lag_bounds import lower_bound
from models.options import SolveOptions

VARIANTS = {"kip-169": None, "cumulative": "cumulative", "differencing": "differencing"}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--members", type=int, default=1000)
    parser.add_argument("--topics", type=int, default=10)
    parser.add_argument("--small", default="200x10")
    parser.add_argument("--time-limit", type=float, default=60.0)
    args = parser.parse_args()

    print(
        "| lags | variant | assign s | bound s | max member lag H | best found E | bound B "
        "| certified gap [H - E, H - B] | upper end / B |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for shape in ("uniform", "zipf"):
        problem = group(args.partitions, args.topics, args.members, shape)
        started = time.perf_counter()
        bound = lower_bound(problem)[0]
        bound_s = time.perf_counter() - started
        rows = {}
        for name, variant in VARIANTS.items():
            started = time.perf_counter()
            result = heuristic.assign(problem, variant=variant)
            rows[name] = (time.perf_counter() - started, result.objective[0])
            assert result.valid
        started = time.perf_counter()
        certified = cpsat.solve(
            problem, SolveOptions.of(time_limit=10, workers=1)
        )  # beyond the model size: answer + bounds
        rows["certified answer (exact side)"] = (
            time.perf_counter() - started,
            certified.objective[0],
        )
        assert certified.valid and certified.bound[0] == bound
        best = min(level for _, level in rows.values())
        for name, (seconds, level) in rows.items():
            print(
                f"| {shape} | {name} | {seconds:.2f} | {bound_s:.2f} | {level:,} | {best:,} | {bound:,} "
                f"| [{level - best:,}, {level - bound:,}] | {100 * (level - bound) / bound:.3f}% |"
            )

    partitions, members = map(int, args.small.split("x"))
    print()
    print(
        f"| CP-SAT, {partitions} x {members}, one topic | status | level 1 proven | seconds "
        "| level 1 (best heuristic) | level 1 bound | level 2 bound / level 2 |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for shape in ("uniform", "zipf"):
        problem = group(partitions, 1, members, shape)
        best = min(heuristic.assign(problem, variant=v).objective for v in HINTS)
        started = time.perf_counter()
        result = cpsat.solve(problem, SolveOptions.of(time_limit=args.time_limit, workers=1))
        seconds = time.perf_counter() - started
        level1, level2 = result.objective
        proven = "yes" if result.bound[0] == level1 else "no"
        print(
            f"| {shape} | {result.status} | {proven} | {seconds:.1f} | {level1:,} ({best[0]:,}) | {result.bound[0]:,} "
            f"| {result.bound[1] / level2:.6f} |"
        )


if __name__ == "__main__":
    main()
