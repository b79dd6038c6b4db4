"""Benchmark: exact replica placement by min-cost flow (models/sticky_replica/flow.py) at Kafka's scale.

The clusters of the targets: ``P`` partitions (topics of 20), replication
factor 3, ``B`` brokers on ``R`` racks (broker ``b`` on rack ``b % R``), placed
as kafka-default places them (seed 0), then the last two brokers removed.
Targets: 1,000 x 30 brokers x 3 racks proven optimal on all four levels within
10 s; 100,000 x 100 brokers x 5 racks with levels 1, 2 and moves exact within
60 s (level 3 proven or bounded), peak memory under 4 GB.  Each size runs in a
fresh process so that its peak resident memory is its own.

    .venv/bin/python benchmarks/replica_flow.py
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

CASES = [(1_000, 30, 3), (10_000, 100, 5), (100_000, 100, 5)]


def cluster(partitions: int, brokers: int, racks: int, factor: int = 3, removed: int = 2):
    """kafka-default's placement (seed 0) of the cluster, then the last ``removed`` brokers gone."""
    from heuristics import kafka_default
    from problems import load_problem

    full = [{"id": b, "rack": f"rack{b % racks}"} for b in range(brokers)]
    topics = [
        {"topic": f"topic{p // 20:05d}", "partition": p % 20, "replicas": list(range(factor))}
        for p in range(partitions)
    ]
    placed = kafka_default.assign(load_problem({"brokers": full, "partitions": topics}), seed=0)
    return load_problem(
        {"brokers": full[: brokers - removed], "partitions": placed.assignment["partitions"]}
    )


def measure(partitions: int, brokers: int, racks: int) -> dict:
    """One case in this process: the flow's status, levels, bound, seconds and peak memory."""
    import numpy as np

    from models.options import SolveOptions
    from models.sticky_replica import flow

    problem = cluster(partitions, brokers, racks)
    started = time.perf_counter()
    result = flow.solve(problem, SolveOptions.of(time_limit=60))
    seconds = time.perf_counter() - started
    forced = int(np.count_nonzero(problem.replica_positions < 0))
    return {
        "partitions": partitions,
        "brokers": brokers,
        "racks": racks,
        "status": result.status,
        "method": result.info["method"],
        "levels": result.objective,
        "bound": list(result.bound),
        "forced": forced,
        "seconds": seconds,
        "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2,
    }


def main() -> None:
    if len(sys.argv) == 4:  # a child: one case
        print(json.dumps(measure(*map(int, sys.argv[1:]))))
        return
    print(
        "| partitions x RF 3 | brokers (racks), 2 removed | status | proven by | level 1 | level 2 | level 3 "
        "| moves (forced) | level 3 bound | seconds | peak GB |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for case in CASES:
        done = subprocess.run(
            [sys.executable, __file__, *map(str, case)], capture_output=True, text=True, check=True
        )
        r = json.loads(done.stdout)
        l1, l2, l3, moves = r["levels"]
        print(
            f"| {r['partitions']:,} | {r['brokers']} ({r['racks']}) | {r['status']} | {r['method']} | {l1:,} "
            f"| {l2:,} | {l3:,} | {moves:,} ({r['forced']:,}) | {r['bound'][2]:,} | {r['seconds']:.2f} "
            f"| {r['peak_gb']:.2f} |"
        )


if __name__ == "__main__":
    main()
