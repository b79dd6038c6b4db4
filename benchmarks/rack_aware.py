"""Benchmark: the exact rack-aware flow (models.rack_aware.flow) at Kafka's assignor benchmark size.

Target: the rack-aware flow proves optimality at 10,000 members x 10 partitions per
member x 1,000 topics within 5 s.  Groups are the ones of ``benchmarks/uniform.py`` (Kafka's JMH
``ServerSideAssignorBenchmark`` shape: homogeneous or heterogeneous in 5 buckets; ``full``, or
``incremental``: members ``0 .. M-2`` own a balanced answer for ``M - 1`` members, dealt partition
by partition among each topic's subscribers, generation 1, and one member joins), with member ``m``
on rack ``r{m mod 3}`` and racks per layout:

* ``3 of 3``: every partition with replicas on all three racks (Kafka's rack-aware benchmark shape:
  every member is aligned with every partition, so level 2 is 0 whatever the answer);
* ``2 of 3``: replication factor 2, partition ``p`` of topic ``t`` on racks ``(p + t) mod 3`` and
  ``(p + t + 1) mod 3`` (each partition misaligned with a third of the members);
* ``1 of 3``: replication factor 1 on rack ``(p + t) mod 3`` (two thirds misaligned);
* ``none``: no ``partition_racks`` (the objective then ranks balance, then moves).

Each case runs in its own process (its peak resident memory is that process's, problem included);
``solve s`` is the CPU-bound ``models.rack_aware.flow.solve(problem)`` on the loaded problem (wall
and CPU seconds: the machine is shared), ``load s`` is ``load_problem`` of the in-memory document.

    .venv/bin/python benchmarks/rack_aware.py
    .venv/bin/python benchmarks/rack_aware.py --members 1000 --topics 100

``--assignors``: KIP-881's rack-aware client ``range`` and ``sticky`` (``heuristics.range.assign``,
``heuristics.sticky.sticky.assign``) on the same groups with replicas on 2 of 3 racks (rack logic on),
beside Kafka's Java ``RangeAssignor`` and ``StickyAssignor`` in the same run (through
``peers.kafka_java``): ours is the best of ``--repeat`` calls on an already-loaded problem (CPU
seconds beside), Kafka's the best of ``--repeat`` ``assign`` calls timed inside the JVM after
``--warmups`` untimed ones on an already-built ``Cluster`` and ``GroupSubscription``; both answers
are compared partition by partition.

    .venv/bin/python benchmarks/rack_aware.py --assignors --repeat 5 --warmups 5 .venv/bin/python
    benchmarks/rack_aware.py --assignors --members 300 --topics 30 --repeat 1 --warmups 1
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from uniform import group_document  # noqa: E402

from timing import load_average, seconds_target  # noqa: E402

LAYOUTS = {"3 of 3": 3, "2 of 3": 2, "1 of 3": 1, "none": 0}
RACKS = ["r0", "r1", "r2"]


def document(members: int, ratio: int, topics: int, pattern: str, kind: str, layout: str) -> dict:
    """The benchmark group of one case (see the module docstring)."""
    doc = group_document(members, ratio, topics, pattern)
    if kind == "incremental":
        doc = group_document(members, ratio, topics, pattern, owned=_dealt(doc, members - 1))
        for member in doc["members"][:-1]:
            member["generation"] = 1
    for m, member in enumerate(doc["members"]):
        member["rack"] = RACKS[m % 3]
    replicas = LAYOUTS[layout]
    if replicas:
        doc["partition_racks"] = {
            name: [[RACKS[(p + t + j) % 3] for j in range(replicas)] for p in range(count)]
            for t, (name, count) in enumerate(doc["topics"].items())
        }
    return doc


def _dealt(doc: dict, existing: int) -> dict:
    """A balanced previous answer for the first ``existing`` members: each topic's partitions dealt in turn
    to its subscribers, each subscription's turn carried from topic to topic."""
    subscribers: dict[str, list[str]] = {}
    for member in doc["members"][:existing]:
        for topic in member["topics"]:
            subscribers.setdefault(topic, []).append(member["id"])
    turn: dict[tuple, int] = {}
    owned: dict[str, dict[str, list[int]]] = {}
    for topic, count in doc["topics"].items():
        group = tuple(subscribers.get(topic, ()))
        for p in range(count if group else 0):
            at = turn.get(group, 0)
            owned.setdefault(group[at % len(group)], {}).setdefault(topic, []).append(p)
            turn[group] = at + 1
    return owned


def run_case(members: int, ratio: int, topics: int, pattern: str, kind: str, layout: str) -> dict:
    from models.options import SolveOptions
    from models.rack_aware import flow as rack_aware
    from problems import load_problem

    doc = document(members, ratio, topics, pattern, kind, layout)
    started = time.perf_counter()
    problem = load_problem(doc)
    loaded = time.perf_counter() - started
    started, started_cpu = time.perf_counter(), time.process_time()
    result = rack_aware.solve(problem, SolveOptions())
    wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
    assert result.valid and tuple(result.objective) == result.bound
    return {
        "pattern": pattern,
        "kind": kind,
        "layout": layout,
        "partitions": problem.num_partitions,
        "load_s": loaded,
        "solve_s": wall,
        "solve_cpu_s": cpu,
        "status": result.status,
        "levels": result.objective,
        "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
    }


def assignor_case(
    members: int,
    ratio: int,
    topics: int,
    pattern: str,
    kind: str,
    assignor: str,
    repeat: int,
    warmups: int,
) -> dict:
    """One rack-aware client assignor, ours and Kafka's, on one group with replicas on 2 of 3 racks."""
    import importlib

    import numpy as np

    from peers import kafka_java
    from problems import load_problem
    from timing import best_of_with_cpu

    problem = load_problem(document(members, ratio, topics, pattern, kind, "2 of 3"))
    function = importlib.import_module(f"heuristics.{assignor}").assign
    wall, cpu, result = best_of_with_cpu(repeat, function, problem)
    java_owner, java_seconds = kafka_java.time_assign(
        problem, assignor, warmups=warmups, runs=repeat
    )
    differ = int((result.answer != java_owner).sum())
    return {
        "assignor": assignor,
        "pattern": pattern,
        "kind": kind,
        "ours_s": wall,
        "ours_cpu_s": cpu,
        "kafka_s": min(java_seconds),
        "differ": differ,
        "equal": differ == 0,
        "levels": list(result.objective) if np.all(result.answer >= 0) else None,
    }


def assignors(args) -> None:
    rows = [
        assignor_case(
            args.members,
            args.ratio,
            args.topics,
            pattern,
            kind,
            assignor,
            args.repeat,
            args.warmups,
        )
        for assignor in ("range", "sticky")
        for pattern in ("homogeneous", "heterogeneous")
        for kind in ("full", "incremental")
    ]
    print(
        f"KIP-881 rack-aware client assignors: {args.members:,} members x {args.ratio} partitions per member x "
        f"{args.topics:,} topics, members on 3 racks, replicas on 2 of them (best of {args.repeat}; Kafka after "
        f"{args.warmups} warm-up calls); load average {load_average()}\n"
    )
    print(
        "| assignor | subscriptions | assignment | rebalance-lab assign (CPU) | Kafka assign | ratio | equal |"
    )
    print("| --- | --- | --- | ---: | ---: | ---: | --- |")
    for r in rows:
        equal = "yes" if r["equal"] else f"NO ({r['differ']:,} partitions)"
        print(
            f"| {r['assignor']} | {r['pattern']} | {r['kind']} | {r['ours_s'] * 1e3:,.1f} ms "
            f"({r['ours_cpu_s'] * 1e3:,.1f} ms) | {r['kafka_s'] * 1e3:,.1f} ms | {r['ours_s'] / r['kafka_s']:.2f} "
            f"| {equal} |"
        )


def main(args) -> None:
    if args.assignors:
        assignors(args)
        return
    if args.case:
        print(json.dumps(run_case(args.members, args.ratio, args.topics, *args.case)))
        return
    rows = []
    for pattern in ("homogeneous", "heterogeneous"):
        for kind in ("full", "incremental"):
            for layout in LAYOUTS:
                done = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--members",
                        str(args.members),
                        "--ratio",
                        str(args.ratio),
                        "--topics",
                        str(args.topics),
                        "--case",
                        pattern,
                        kind,
                        layout,
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                rows.append(json.loads(done.stdout))
    print(
        f"rack-aware flow: {args.members:,} members x {args.ratio} partitions per member x {args.topics:,} topics, "
        f"members on 3 racks; load average {load_average()}\n"
    )
    print(
        "| subscriptions | assignment | replica racks | status | level 1 | level 2 (mismatches) | level 3 (moves) "
        "| load s | solve s (CPU s) | peak GB |"
    )
    print("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['pattern']} | {r['kind']} | {r['layout']} | {r['status']} | {r['levels'][0]:,} "
            f"| {r['levels'][1]:,} | {r['levels'][2]:,} | {r['load_s']:.2f} "
            f"| {r['solve_s']:.2f} ({r['solve_cpu_s']:.2f}) "
            f"| {r['peak_gb']:.2f} |"
        )
    assert all(r["status"] == "optimal" for r in rows)
    print()
    print(
        seconds_target(
            "rack-aware flow proves optimality at this size (slowest case)",
            max(r["solve_s"] for r in rows),
            max(r["solve_cpu_s"] for r in rows),
            5,
        )
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=10_000)
    parser.add_argument("--ratio", type=int, default=10, help="partitions per member")
    parser.add_argument("--topics", type=int, default=1_000)
    parser.add_argument(
        "--assignors",
        action="store_true",
        help="time rack-aware range and sticky beside Kafka's Java classes instead of the flow",
    )
    parser.add_argument("--repeat", type=int, default=5, help="--assignors: timed calls per side")
    parser.add_argument(
        "--warmups", type=int, default=5, help="--assignors: Kafka's untimed warm-up calls"
    )
    parser.add_argument(
        "--case", nargs=3, metavar=("PATTERN", "KIND", "LAYOUT"), help=argparse.SUPPRESS
    )
    main(parser.parse_args())
