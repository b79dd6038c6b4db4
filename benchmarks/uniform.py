"""Benchmark: rebalance-lab's ``uniform`` beside Kafka's Java ``UniformAssignor`` in the same run.

The shape of Kafka's own JMH ``ServerSideAssignorBenchmark`` (``jmh-benchmarks``): ``--members``
members named ``member0`` .. (default 10,000), ``--ratio`` partitions per member (10), ``--topics``
topics named ``topic0`` .. (1,000) with random topic ids (seeded) and ``members x ratio / topics``
partitions each; subscriptions homogeneous (every member on every topic) or heterogeneous (5
buckets: the members in ``ceil(M / 5)`` consecutive blocks, block ``b`` on the ``b``-th block of
``ceil(T / 5)`` consecutive topics); assignment ``full`` (nobody owns anything) or ``incremental``
(members ``0 .. M-2`` own the full answer for ``M - 1`` members, and ``newMember`` joins,
subscribed as member ``M - 2``).  No racks.

Timed as Kafka's benchmark times it: the ``assign`` call on an already-built group.

* Kafka: ``UniformAssignor.assign(GroupSpec, SubscribedTopicDescriber)`` on the spec the group
  coordinator builds (``peers.kafka_java.server_input``), timed inside the JVM after
  ``--warmups`` untimed calls (JIT warm-up); best of ``--repeat``.  Its build time is
  ``server_input`` (the ``GroupSpec`` from the loaded problem, through JPype).
* rebalance-lab: ``heuristics.uniform.assign(problem)`` on a freshly loaded problem (every
  derived array it needs computed inside the timed call); best of ``--repeat``.  Its build time
  is ``load_problem(document)`` of the in-memory document (a dict, members sharing their
  subscription lists as Kafka's benchmark shares its topic-name sets).

Both answers must be equal.  The targets: ours at most 2x Kafka's assign, and our
build at most 10x our assign.  Prints a markdown table (or ``--json``) and ``uptime``.

    .venv/bin/python benchmarks/uniform.py
    .venv/bin/python benchmarks/uniform.py --members 1000 --topics 100 --repeat 3
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import heuristics.uniform as uniform
from problems import assignment_json, load_problem

sys.path.insert(
    0, str(Path(__file__).resolve().parents[1])
)  # the test-and-benchmark-only ``peers``

from timing import best_of  # noqa: E402


def group_document(
    members: int, ratio: int, topics: int, pattern: str, seed: int = 0, owned: dict | None = None
) -> dict:
    """Kafka's benchmark group (``incremental`` when ``owned`` is given: ``members - 1`` own it, one joins)."""
    rng = np.random.default_rng(seed)
    names = [f"topic{t}" for t in range(topics)]
    ids = {n: base64.urlsafe_b64encode(rng.bytes(16)).decode().rstrip("=") for n in names}
    existing = members - 1 if owned is not None else members
    if pattern == "homogeneous":
        subscriptions = [names] * existing
    else:
        buckets = min(5, existing)
        topic_block, member_block = math.ceil(topics / buckets), math.ceil(existing / buckets)
        lists = [names[b * topic_block : (b + 1) * topic_block] for b in range(buckets)]
        subscriptions = [lists[m // member_block] for m in range(existing)]
    docs = [{"id": f"member{m}", "topics": subscriptions[m]} for m in range(existing)]
    if owned is not None:
        for doc in docs:
            if owned.get(doc["id"]):
                doc["owned"] = owned[doc["id"]]
        docs.append({"id": "newMember", "topics": subscriptions[-1]})
    return {
        "topics": dict.fromkeys(names, members * ratio // topics),
        "members": docs,
        "topic_ids": ids,
    }


def case(members: int, ratio: int, topics: int, pattern: str, kind: str) -> dict:
    from peers import kafka_java

    doc = group_document(members, ratio, topics, pattern)
    if kind == "incremental":
        first = load_problem(group_document(members - 1, ratio, topics, pattern))
        doc = group_document(
            members,
            ratio,
            topics,
            pattern,
            owned=assignment_json(first, uniform.assign(first).answer),
        )

    build, problem = best_of(ARGS.repeat, load_problem, doc)

    def fresh_assign():
        fresh = load_problem(doc)
        started = time.perf_counter()
        answer = uniform.assign(fresh).answer
        return time.perf_counter() - started, answer

    runs = [fresh_assign() for _ in range(ARGS.repeat)]
    ours, answer = min(runs, key=lambda run: run[0])
    java_owner, java_seconds, java_build = kafka_java.time_server_assign(
        problem, "uniform", warmups=ARGS.warmups, runs=ARGS.repeat
    )
    if not np.array_equal(answer, java_owner):
        raise SystemExit(
            f"{pattern} {kind}: rebalance-lab and Kafka disagree on "
            f"{int((answer != java_owner).sum())} partitions"
        )
    return {
        "pattern": pattern,
        "kind": kind,
        "members": problem.num_members,
        "topics": topics,
        "partitions": problem.num_partitions,
        "ours_s": ours,
        "kafka_s": min(java_seconds),
        "ours_build_s": build,
        "kafka_build_s": java_build,
        "equal": True,
    }


def main() -> None:
    rows = [
        case(ARGS.members, ARGS.ratio, ARGS.topics, pattern, kind)
        for pattern in ("homogeneous", "heterogeneous")
        for kind in ("full", "incremental")
    ]
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    if ARGS.json:
        for row in rows:
            print(json.dumps({**row, "uptime": load}))
        return
    print(
        f"uniform: {ARGS.members:,} members x {ARGS.ratio} partitions per member x {ARGS.topics:,} topics "
        f"(best of {ARGS.repeat}; Kafka after {ARGS.warmups} warm-up calls); {os.cpu_count()} cores, {load}\n"
    )
    print(
        "| subscriptions | assignment | rebalance-lab assign | Kafka assign | ratio (target <= 2) "
        "| rebalance-lab build | build / assign (target <= 10) | Kafka build (peer GroupSpec, JPype included) | equal |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        print(
            f"| {r['pattern']} | {r['kind']} | {r['ours_s'] * 1e3:.1f} ms | {r['kafka_s'] * 1e3:.1f} ms "
            f"| {r['ours_s'] / r['kafka_s']:.2f} | {r['ours_build_s'] * 1e3:.1f} ms "
            f"| {r['ours_build_s'] / r['ours_s']:.1f} | {r['kafka_build_s'] * 1e3:.0f} ms "
            f"| {'yes' if r['equal'] else 'NO'} |"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=10_000)
    parser.add_argument("--ratio", type=int, default=10, help="partitions per member")
    parser.add_argument("--topics", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--warmups", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    ARGS = parser.parse_args()
    main()
