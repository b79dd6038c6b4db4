"""Benchmark: rebalance-lab's sticky assignor side by side with Kafka's own Java StickyAssignor,
franz-go's sticky balancer and kafka-python, on the same inputs in the same run.

Shapes: Kafka's large test shape (AbstractStickyAssignorTest: 500 topics x 2,000 partitions =
1,000,000 partitions, 2,000 members, all subscribed), and 50 topics x 200 partitions = 10,000
partitions x 500 members, where kafka-python (too slow for the large shape) runs too.  Cases on
each shape: ``fresh``; ``member-leaves``: the last member leaves and everyone else owns the fresh
answer (rebalance-lab's; every side gets that same input), generation 1; ``odd-member``: fresh,
the last member subscribed to topic 0 only (unequal subscriptions: the general algorithm).

Every side is timed from an in-memory group to an assignment, building its own structures:

* rebalance-lab: ``load_problem`` of the group document (a dict) plus ``heuristics.sticky.assign``
  (the KIP-341 resolution of owned claims included); best of ``--repeat``;
* Kafka's Java ``StickyAssignor`` (the release ``peers/java/pom.xml`` pins, in-process through
  JPype): ``assign(Cluster, GroupSubscription)`` on what the leader's consumer hands it (every
  member's subscription and user data built by its own assignor instance, serialized and read
  back), timed inside the JVM with ``System.nanoTime`` after ``--warmups`` untimed runs (JIT
  warm-up); best of ``--repeat``;
* franz-go's ``kgo.StickyBalancer`` (``peers/franz_go``): what a kgo leader does with the JoinGroup
  response (parse every member's metadata, balance), timed inside Go; best of ``--repeat``;
* kafka-python's ``StickyPartitionAssignor`` (10,000-partition shape only): building each member's
  metadata and ``assign``; one run.

Every answer is re-scored by ``problems.evaluate`` on the sticky objective (sum of squared member
partition counts, then moves) and must be valid.  ``--json`` prints one object per (case,
implementation): ``case``, ``implementation``, ``seconds``, ``objective`` (plus ``shape``).

    .venv/bin/python benchmarks/peers.py             # markdown table with ratios to rebalance-lab
    .venv/bin/python benchmarks/peers.py --json > peers.jsonl     # the same numbers, one object per
    line .venv/bin/python benchmarks/peers.py --table-from peers.jsonl  # the table of a --json run

The targets (large shape: rebalance-lab <= 0.5 s per case, at least 3x faster than Kafka's
Java, no slower than franz-go) are printed after the table (to stderr with ``--json``), each
``target met`` or ``target MISSED``, and the whole run's (under 10 minutes); every row
carries the 1-minute load average and the seconds since the run began when it ended, and
rebalance-lab's rows the CPU seconds of the timed call too (on a loaded machine the wall time grows
with the load; the peers are timed in wall time, inside their own runtime).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import heuristics.sticky as sticky
from problems import evaluate, load_problem

# The repository root, for the test-and-benchmark-only ``peers`` package (not installed); first,
# so that ``peers`` is that package and not this script.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sticky import group_document  # noqa: E402  (benchmarks/sticky.py)

from timing import best_of_with_cpu, seconds_target, target  # noqa: E402


def cases(topics: int, partitions: int, members: int) -> list[tuple[str, dict]]:
    """The three groups of a shape: fresh, the last member leaves, the last member on topic 0 only."""
    fresh = group_document(topics, partitions, members)
    first = sticky.assign(load_problem(fresh)).assignment
    return [
        ("fresh", fresh),
        ("member-leaves", group_document(topics, partitions, members, owned=first, leave=True)),
        ("odd-member", group_document(topics, partitions, members, odd_member=True)),
    ]


def ours(doc: dict):
    """The answer, and the wall and CPU seconds of the fastest ``load_problem`` + ``assign``."""

    def run():
        return sticky.assign(load_problem(doc)).answer

    seconds, cpu, answer = best_of_with_cpu(ARGS.repeat, run)
    return answer, seconds, cpu


def kafka_java_sticky(problem, doc):
    from peers import kafka_java

    owner, seconds = kafka_java.time_assign(
        problem, "sticky", warmups=ARGS.warmups, runs=ARGS.repeat
    )
    return owner, min(seconds), None


def franz_go_sticky(problem, doc):
    from peers import kgo

    owner, seconds = kgo.balance(problem, doc, repeat=ARGS.repeat)
    return owner, min(seconds), None


def kafka_python_sticky(problem, doc):
    from peers.kafka_python import PeerStickyGroup

    started = time.perf_counter()
    owner = PeerStickyGroup().assign(problem)
    return owner, time.perf_counter() - started, None


def implementations(with_kafka_python: bool) -> list[tuple[str, object]]:
    from peers import kafka_java, kgo

    found = [
        ("rebalance-lab", lambda problem, doc: ours(doc)),
        (f"Kafka {kafka_java.kafka_version()} StickyAssignor (Java)", kafka_java_sticky),
        (f"franz-go {kgo.franz_go_version()} StickyBalancer", franz_go_sticky),
    ]
    if with_kafka_python:
        found.append(("kafka-python StickyPartitionAssignor", kafka_python_sticky))
    return found


TARGET_SECONDS = 0.5  # load + assign at the large shape, each case
TARGET_VS_JAVA = 3.0  # at least 3x faster than Kafka's Java (goal 10x)
TARGET_RUN_MINUTES = 10  # the whole --json run


def render(rows: list[dict]) -> None:
    """The markdown table (ratios to rebalance-lab in the same case) and the targets."""
    print("| shape | case | implementation | seconds | vs rebalance-lab | sum of squares | moves |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    ours = {
        (r["shape"], r["case"]): r["seconds"]
        for r in rows
        if r["implementation"] == "rebalance-lab"
    }
    for r in rows:
        base = ours[r["shape"], r["case"]]
        ratio = f"{r['seconds'] / base:.2f}x" if base > 0 else "-"
        cpu = f" (CPU {r['cpu_seconds']:.3f})" if "cpu_seconds" in r else ""
        print(
            f"| {r['shape']} | {r['case']} | {r['implementation']} | {r['seconds']:.3f}{cpu} | {ratio} | "
            f"{r['objective'][0]:,} | {r['objective'][1]:,} |"
        )
    loads = [r["load1"] for r in rows if "load1" in r]
    if loads:
        print(
            f"\nload average (1 min) during the run: {min(loads):.1f} to {max(loads):.1f} on {os.cpu_count()} cores"
        )
    print()
    for line in targets(rows):
        print(line)


def targets(rows: list[dict]) -> list[str]:
    """The targets on the large shape, from the rows."""
    large = max(rows, key=lambda r: int(r["shape"].split(" x ")[0].replace(",", "")))["shape"]
    by = {
        (r["case"], r["implementation"].split()[0]): r["seconds"]
        for r in rows
        if r["shape"] == large
    }
    cpu = {
        r["case"]: r.get("cpu_seconds")
        for r in rows
        if r["shape"] == large and r["implementation"] == "rebalance-lab"
    }
    elapsed = max(r.get("elapsed", 0) for r in rows)
    lines = (
        [
            target(
                f"the whole run under {TARGET_RUN_MINUTES} minutes",
                elapsed < 60 * TARGET_RUN_MINUTES,
                f"{elapsed / 60:.1f} minutes",
            )
        ]
        if elapsed
        else []
    )
    for case in ("fresh", "member-leaves", "odd-member"):
        ours_s, java_s, go_s = by[case, "rebalance-lab"], by[case, "Kafka"], by[case, "franz-go"]
        label = f"{large} {case}: rebalance-lab load + assign"
        lines.append(
            target(f"{label} <= {TARGET_SECONDS} s", ours_s <= TARGET_SECONDS, f"{ours_s:.3f} s")
            if cpu[case] is None
            else seconds_target(label, ours_s, cpu[case], TARGET_SECONDS)
        )
        lines.append(
            target(
                f"{large} {case}: at least {TARGET_VS_JAVA:g}x faster than Kafka's Java (goal 10x)",
                java_s >= TARGET_VS_JAVA * ours_s,
                f"{java_s / ours_s:.2f}x ({java_s:.3f} s)",
            )
        )
        lines.append(
            target(
                f"{large} {case}: no slower than franz-go",
                ours_s <= go_s,
                f"{go_s / ours_s:.2f}x ({go_s:.3f} s)",
            )
        )
    return lines


def main(argv=None) -> None:
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per (case, implementation) on stdout; the targets on stderr",
    )
    parser.add_argument(
        "--table-from",
        metavar="FILE",
        help="print the table and targets from a --json run's output",
    )
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per side (best kept)")
    parser.add_argument(
        "--warmups", type=int, default=3, help="untimed JIT warm-up runs of the Java assignor"
    )
    parser.add_argument(
        "--large", default="500,2000,2000", help="topics,partitions per topic,members"
    )
    parser.add_argument("--small", default="50,200,500", help="the shape kafka-python runs on too")
    ARGS = parser.parse_args(argv)
    if ARGS.table_from:
        lines = Path(ARGS.table_from).read_text().splitlines()
        render(
            [json.loads(line) for line in lines if line.startswith("{")]
        )  # other lines: notes around the run
        return

    rows, started = [], time.perf_counter()
    for shape, with_python in ((ARGS.small, True), (ARGS.large, False)):
        topics, partitions, members = (int(x) for x in shape.split(","))
        label = f"{topics * partitions:,} x {members:,}"
        for case, doc in cases(topics, partitions, members):
            problem = load_problem(doc)
            for name, run in implementations(with_python):
                owner, seconds, cpu = run(problem, doc)
                verdict = evaluate(problem, owner, "sticky")
                assert verdict.valid, (case, name, verdict.violations[:3])
                row = {
                    "shape": label,
                    "case": case,
                    "implementation": name,
                    "seconds": round(seconds, 4),
                    "objective": [int(x) for x in verdict.objective],
                    "load1": round(os.getloadavg()[0], 1),
                    "elapsed": round(time.perf_counter() - started, 1),
                }
                if cpu is not None:
                    row["cpu_seconds"] = round(cpu, 4)
                rows.append(row)
                if ARGS.json:
                    print(json.dumps(row), flush=True)
                else:
                    print(f"{label} {case} {name}: {seconds:.3f} s", file=sys.stderr, flush=True)
    if ARGS.json:
        print("\n".join(targets(rows)), file=sys.stderr)
    else:
        render(rows)


ARGS = None

if __name__ == "__main__":
    main()
