"""Benchmark: Kafka's general sticky algorithm (unequal subscriptions) as it grows.

Part 1, the scaling table: 2 topics of ``n / 2`` partitions, 10 members, every
third of them subscribed to the first topic only, the others to both; the
group's own fresh answer is owned (generation 1) when an 11th member, on both
topics, joins.  Timed: ``load_problem`` of the in-memory document (with the
owned-claim arrays) plus ``heuristics.sticky.sticky.assign`` of the join; the last
column divides the time by ``n log2 n`` (flat or falling: no worse than n log n).

Part 2, Kafka's large unequal shape: 500 topics x 2,000 partitions = 1,000,000
partitions, 2,000 members each subscribed to a random 50-500 of the topics
(seed 1); fresh, then after 1% of the members leave (the others own the fresh
answer, generation 1); and the same at 500 topics x 20 and x 200 (10,000 and
100,000 partitions) for the growth.  Timed: load + assign, each answer
re-scored by ``problems.evaluate``.  The targets (1M: <= 5 s each; growth
from 10,000 to 1,000,000 and across part 1 at most n log n) are printed, each
``target met`` or ``target MISSED``.

    .venv/bin/python benchmarks/sticky_general.py                  # both parts
    .venv/bin/python benchmarks/sticky_general.py --skip-large     # part 1 only
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import heuristics.sticky.sticky as sticky
from problems import evaluate, load_problem
from timing import growth_target, load_average, seconds_target


def timed(doc: dict):
    """Load (with the owned-claim arrays) and assign.

    Returns their wall times, the CPU time of both, the problem and the result.
    """
    started, started_cpu = time.perf_counter(), time.process_time()
    problem = load_problem(doc)
    problem.owned_claims  # noqa: B018 - part of loading
    loaded = time.perf_counter()
    result = sticky.assign(problem)
    return (
        loaded - started,
        time.perf_counter() - loaded,
        time.process_time() - started_cpu,
        problem,
        result,
    )


def two_topic_join(n: int) -> dict:
    """Part 1's group after the 11th member joins."""
    topics = {"t0": n // 2, "t1": n - n // 2}
    members = [
        {"id": f"c{m:02d}", "topics": ["t0"] if m % 3 == 0 else ["t0", "t1"]} for m in range(10)
    ]
    first = sticky.assign(load_problem({"topics": topics, "members": members})).assignment
    members = [{**d, "owned": first[d["id"]], "generation": 1} for d in members]
    return {"topics": topics, "members": [*members, {"id": "c10", "topics": ["t0", "t1"]}]}


def scaling(sizes: list[int]) -> None:
    print(
        "| partitions | load s | assign s | load + assign s | CPU s | moves | (load + assign) / (n log2 n), ns |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    totals, cpus = [], []
    for n in sizes:
        load_s, assign_s, cpu, problem, result = timed(two_topic_join(n))
        verdict = evaluate(problem, result.answer, "sticky")
        assert verdict.valid, verdict.violations
        per = (load_s + assign_s) / (n * math.log2(n)) * 1e9
        totals.append(load_s + assign_s)
        cpus.append(cpu)
        print(
            f"| {n:,} | {load_s:.3f} | {assign_s:.3f} | {load_s + assign_s:.3f} | {cpu:.3f} | "
            f"{verdict.objective[1]:,} | {per:.1f} |",
            flush=True,
        )
    print()
    print(growth_target("two topics, a member joins: load + assign", sizes, totals, cpus))


def large(topics: int, partitions: list[int], members: int, leave_share: float) -> None:
    """Part 2 at ``topics`` x each of ``partitions`` (the last is Kafka's 1M shape)."""
    print(
        f"\n| partitions ({topics} topics), {members:,} members on 50-500 random topics | case | load s | assign s "
        "| load + assign s | CPU s | sum of squares | moves | path |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    totals: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    for per_topic in partitions:
        rng = np.random.default_rng(1)
        names = [f"topic{t:03d}" for t in range(topics)]
        docs = [
            {
                "id": f"consumer{m:04d}",
                "topics": [
                    names[t]
                    for t in np.sort(rng.choice(topics, int(rng.integers(50, 501)), replace=False))
                ],
            }
            for m in range(members)
        ]
        fresh = {"topics": {name: per_topic for name in names}, "members": docs}
        rows = [("fresh", *timed(fresh))]
        result = rows[0][-1]
        first = result.assignment
        stay = docs[: members - int(members * leave_share)]
        left = {
            "topics": fresh["topics"],
            "members": [{**d, "owned": first[d["id"]], "generation": 1} for d in stay],
        }
        rows.append((f"{leave_share:.0%} of the members leave", *timed(left)))
        for case, load_s, assign_s, cpu, problem, result in rows:
            verdict = evaluate(problem, result.answer, "sticky")
            assert verdict.valid, verdict.violations
            totals.setdefault(case, []).append(load_s + assign_s)
            cpus.setdefault(case, []).append(cpu)
            print(
                f"| {topics * per_topic:,} | {case} | {load_s:.2f} | {assign_s:.2f} | {load_s + assign_s:.2f} | "
                f"{cpu:.2f} | {verdict.objective[0]:,} | {verdict.objective[1]:,} | {result.info['algorithm']} |",
                flush=True,
            )
    sizes = [topics * p for p in partitions]
    print()
    for case, seconds in totals.items():
        print(
            seconds_target(
                f"{sizes[-1]:,} partitions, {case}: load + assign",
                seconds[-1],
                cpus[case][-1],
                TARGET_SECONDS,
            )
        )
        print(growth_target(f"{case}: load + assign", sizes, seconds, cpus[case]))


TARGET_SECONDS = 5.0  # Kafka's 1M unequal shape, load + assign, each case


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 40_000, 80_000, 200_000])
    parser.add_argument("--topics", type=int, default=500)
    parser.add_argument(
        "--partitions",
        type=int,
        nargs="+",
        default=[20, 200, 2000],
        help="partitions per topic of part 2 (the last: Kafka's 1M shape)",
    )
    parser.add_argument("--members", type=int, default=2000)
    parser.add_argument("--leave", type=float, default=0.01, help="share of the members that leave")
    parser.add_argument("--skip-scaling", action="store_true")
    parser.add_argument("--skip-large", action="store_true")
    args = parser.parse_args()
    print(f"load average before: {load_average()}\n")
    if not args.skip_scaling:
        scaling(args.sizes)
    if not args.skip_large:
        large(args.topics, args.partitions, args.members, args.leave)
    print(f"\nload average after: {load_average()}")


if __name__ == "__main__":
    main()
