"""Benchmark: Kafka's range and round-robin assignors at Kafka's large test shape.

Shape (AbstractStickyAssignorTest's large case): 500 topics x 2,000 partitions
= 1,000,000 partitions, 2,000 members all subscribed; then the last member
subscribed to topic 0 only; for the growth, the same with 500 topics of 20 and
of 200 partitions (``--sizes`` 10,000, 100,000 and 1,000,000 partitions in
all).  Times ``load_problem`` of the in-memory document (with its derived
arrays), ``assign(problem)`` (the best of ``--repeat`` runs), their sum, and the
evaluator.

    .venv/bin/python benchmarks/kafka_baselines.py [--topics 500] [--sizes 10000,100000,1000000]
    [--members 2000]
"""

from __future__ import annotations

import argparse

import heuristics.range as range_assignor
import heuristics.roundrobin as roundrobin_assignor
from problems import evaluate, load_problem
from timing import best_of


def group_document(topics: int, partitions: int, members: int, odd_member: bool) -> dict:
    names = [f"topic{t:03d}" for t in range(topics)]
    docs = [{"id": f"consumer{m:04d}", "topics": names} for m in range(members)]
    if odd_member:
        docs[-1] = {**docs[-1], "topics": names[:1]}
    return {"topics": {name: partitions for name in names}, "members": docs}


def loaded(doc: dict):
    problem = load_problem(doc)
    problem.subscribes  # noqa: B018 - derived arrays are part of loading
    return problem


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--topics", type=int, default=500)
    parser.add_argument(
        "--sizes", default="10000,100000,1000000", help="partitions in all (over --topics topics)"
    )
    parser.add_argument("--members", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print("| case | strategy | load s | assign s | load + assign s | evaluate s | sum of squares |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for partitions in (int(size) // args.topics for size in args.sizes.split(",")):
        for odd in (False, True):
            case = f"{args.topics * partitions:,} x {args.members:,}" + (
                ", one odd member" if odd else ""
            )
            doc = group_document(args.topics, partitions, args.members, odd)
            load_s, problem = best_of(1, loaded, doc)
            for name, module in (("range", range_assignor), ("roundrobin", roundrobin_assignor)):
                assign_s, result = best_of(args.repeat, module.assign, problem)
                evaluate_s, verdict = best_of(1, evaluate, problem, result.answer, name)
                assert verdict.valid
                print(
                    f"| {case} | {name} | {load_s:.3f} | {assign_s:.3f} | {load_s + assign_s:.3f} | "
                    f"{evaluate_s:.3f} | {verdict.objective[0]:,} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
