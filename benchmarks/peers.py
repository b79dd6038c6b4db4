"""Benchmark: rebalance-lab's sticky assignor side by side with Kafka's own Java StickyAssignor,
franz-go's sticky balancer and kafka-python, on the same inputs in the same run.

Shapes: Kafka's large test shape (AbstractStickyAssignorTest: 500 topics x 2,000 partitions =
1,000,000 partitions, 2,000 members, all subscribed), and 50 topics x 200 partitions = 10,000
partitions x 500 members, where kafka-python (too slow for the large shape) runs too.  Cases on
each shape: ``fresh``; ``member-leaves``: the last member leaves and everyone else owns the fresh
answer (rebalance-lab's; every side gets that same input), generation 1; ``odd-member``: fresh,
the last member subscribed to topic 0 only (unequal subscriptions: the general algorithm).

Every side is timed from an in-memory group to the answer its API hands the caller, building its
own structures:

* rebalance-lab: ``load_problem`` of the group document (a dict), ``models.solve(problem,
  "sticky")`` (the KIP-341 resolution of owned claims included) and ``result.assignment``, the
  ``{member: {topic: [partitions]}}`` dicts and lists; in separate columns, the same to the
  columnar answer (``result.assignment_table()``, a pyarrow Table) and to the owner array
  (``result.answer``, no answer object built); best of ``--repeat`` each;
* Kafka's Java ``StickyAssignor`` (the release ``peers/java/pom.xml`` pins, in-process through
  JPype): ``assign(Cluster, GroupSubscription)`` on what the leader's consumer hands it (every
  member's subscription and user data built by its own assignor instance, serialized and read
  back), to the ``GroupAssignment`` it returns (its ``Map<String, List<TopicPartition>>``, one
  ``Assignment`` per member), timed inside the JVM with ``System.nanoTime`` after ``--warmups``
  untimed runs (JIT warm-up); best of ``--repeat``;
* franz-go's ``kgo.StickyBalancer`` (``peers/franz_go``): what a kgo leader does with the JoinGroup
  response (parse every member's metadata, balance) to the ``BalancePlan`` it returns (the plan the
  leader sends in SyncGroup), timed inside Go; best of ``--repeat``;
* kafka-python's ``StickyPartitionAssignor`` (10,000-partition shape only): building each member's
  metadata and ``assign``, to its answer read into an owner array; one run.

Every answer is re-scored by ``problems.evaluate`` on the sticky objective (sum of squared member
partition counts, then moves) and must be valid.  ``--json`` prints one object per (case,
implementation): ``case``, ``implementation``, ``seconds`` (to the caller's answer),
``objective``, ``shape``, and for rebalance-lab ``columnar_seconds``, ``owner_seconds`` and the
seconds of building each answer object alone (``assignment_build_seconds``,
``table_build_seconds``: on a solved result).

    .venv/bin/python benchmarks/peers.py             # markdown table with ratios to rebalance-lab
    .venv/bin/python benchmarks/peers.py --json > peers.jsonl     # the same numbers, one per line
    .venv/bin/python benchmarks/peers.py --table-from peers.jsonl  # the table of a --json run

The targets on the large shape are printed after the table (to stderr with ``--json``), each
``target met`` or ``target MISSED``: to the columnar answer, faster than Kafka's Java in every
case; to ``result.assignment``, at least 3x faster than Kafka's Java when a member leaves and with
the odd member, and within 4x of Java on the fresh group (whose floor, the cost of a million Python
lists, is printed as ``floor``); ``result.assignment`` alone within 0.2 s and
``assignment_table()`` alone within 0.03 s; to the owner array, load + solve within 0.5 s; the
whole run under 10 minutes.  Every row carries the 1-minute load average and the seconds since the run
began when it ended, and rebalance-lab's rows the CPU seconds of the timed calls too (on a loaded
machine the wall time grows with the load; the peers are timed in wall time, inside their own
runtime).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path

import pyarrow  # noqa: F401  (the columnar answer's: imported once, not in the first timed call)

import heuristics.sticky.sticky as sticky
from models import solve
from problems import evaluate, load_problem

# The repository root, for the test-and-benchmark-only ``peers`` package (not installed); first,
# so that ``peers`` is that package and not this script.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sticky import group_document  # noqa: E402  (benchmarks/sticky.py)

from timing import best_of_with_cpu, seconds_target, target  # noqa: E402

OURS = "rebalance-lab"


def cases(topics: int, partitions: int, members: int) -> list[tuple[str, dict]]:
    """The three groups of a shape: fresh, the last member leaves, the last member on topic 0 only."""
    fresh = group_document(topics, partitions, members)
    first = sticky.assign(load_problem(fresh)).assignment
    return [
        ("fresh", fresh),
        ("member-leaves", group_document(topics, partitions, members, owned=first, leave=True)),
        ("odd-member", group_document(topics, partitions, members, odd_member=True)),
    ]


def answered(doc: dict, end: str):
    """``load_problem`` + ``models.solve(problem, "sticky")``, then the answer object ``end`` names:
    ``assignment`` (``result.assignment``), ``table`` (``result.assignment_table()``) or ``owner``
    (none: the owner array ``result.answer``)."""
    result = solve(load_problem(doc), "sticky")
    if end == "assignment":
        result.assignment  # noqa: B018 - built on first access: the end point timed
    elif end == "table":
        result.assignment_table()
    return result


def built(doc: dict, end: str) -> tuple[float, float]:
    """The wall and CPU seconds of building the answer object ``end`` names (``assignment`` or
    ``table``) alone, on a result that has built nothing yet; the fastest of ``--repeat``."""
    best, cpu = float("inf"), float("inf")
    for _ in range(ARGS.repeat):
        result = solve(load_problem(doc), "sticky")
        started, started_cpu = time.perf_counter(), time.process_time()
        answer = result.assignment if end == "assignment" else result.assignment_table()
        wall = time.perf_counter() - started
        if wall < best:
            best, cpu = wall, time.process_time() - started_cpu
        del answer, result  # freed before the next one is made
    return best, cpu


def ours(doc: dict) -> tuple[object, dict]:
    """The answer, and the seconds (best of ``--repeat``) to each end point, with CPU seconds, and
    of building each answer object alone."""
    times = {}
    for end in ("owner", "table", "assignment"):
        seconds, cpu, result = best_of_with_cpu(ARGS.repeat, answered, doc, end)
        times[end] = (seconds, cpu)
        answer = result.answer
        del result  # its answer objects freed here, before anything else is timed
    return answer, {
        "seconds": times["assignment"][0],
        "cpu_seconds": times["assignment"][1],
        "columnar_seconds": times["table"][0],
        "owner_seconds": times["owner"][0],
        "owner_cpu_seconds": times["owner"][1],
        **{
            f"{end}_build{suffix}": value
            for end in ("assignment", "table")
            for suffix, value in zip(("_seconds", "_cpu_seconds"), built(doc, end))
        },
    }


def floor(doc: dict) -> tuple[float, float]:
    """What a million-list answer costs in Python at the least: the seconds of a copy of ``doc``'s
    answer JSON (a new list per list, a new dict per member, the same int objects) made with the
    cyclic collector paused, and of one young collection over those new objects (what building
    them costs again when they are not moved straight to the oldest generation); best of
    ``--repeat`` each."""
    assignment = sticky.assign(load_problem(doc)).assignment
    copies, passes = [], []
    for _ in range(ARGS.repeat):
        gc.collect()
        gc.disable()
        started = time.perf_counter()
        copy = {
            member: dict(zip(topics, map(list.copy, topics.values())))
            for member, topics in assignment.items()
        }
        copied = time.perf_counter()
        gc.collect(0)
        collected = time.perf_counter()
        gc.enable()
        copies.append(copied - started)
        passes.append(collected - copied)
        del copy
    return min(copies), min(passes)


def kafka_java_sticky(problem, doc):
    from peers import kafka_java

    owner, seconds = kafka_java.time_assign(
        problem, "sticky", warmups=ARGS.warmups, runs=ARGS.repeat
    )
    return owner, {"seconds": min(seconds)}


def franz_go_sticky(problem, doc):
    from peers import kgo

    owner, seconds = kgo.balance(problem, doc, repeat=ARGS.repeat)
    return owner, {"seconds": min(seconds)}


def kafka_python_sticky(problem, doc):
    from peers.kafka_python import PeerStickyGroup

    started = time.perf_counter()
    owner = PeerStickyGroup().assign(problem)
    return owner, {"seconds": time.perf_counter() - started}


def implementations(with_kafka_python: bool) -> list[tuple[str, object]]:
    from peers import kafka_java, kgo

    found = [
        (OURS, lambda problem, doc: ours(doc)),
        (f"Kafka {kafka_java.kafka_version()} StickyAssignor (Java)", kafka_java_sticky),
        (f"franz-go {kgo.franz_go_version()} StickyBalancer", franz_go_sticky),
    ]
    if with_kafka_python:
        found.append(("kafka-python StickyPartitionAssignor", kafka_python_sticky))
    return found


TARGET_OWNER_SECONDS = 0.5  # load + solve, to the owner array, at the large shape, each case
TARGET_VS_JAVA = 3.0  # to result.assignment, when a member leaves and with the odd member
TARGET_FRESH_WITHIN = 4.0  # to result.assignment on the fresh group: at most 4x Java's time
TARGET_RUN_MINUTES = 10  # the whole --json run
TARGET_BUILD = {"assignment": 0.2, "table": 0.03}  # building each answer object alone, each case


def _seconds(row: dict, key: str) -> str:
    if key not in row:
        return "-"
    cpu = key.replace("seconds", "cpu_seconds") if key != "columnar_seconds" else None
    return f"{row[key]:.3f}" + (f" (CPU {row[cpu]:.3f})" if cpu in row else "")


def render(rows: list[dict]) -> None:
    """The markdown table (ratios to rebalance-lab's answer in the same case) and the targets."""
    print(
        "| shape | case | implementation | to the answer s | to the columnar answer s "
        "| to the owner array s | answer vs rebalance-lab | sum of squares | moves "
        "| result.assignment alone s | assignment_table() alone s |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    base = {(r["shape"], r["case"]): r["seconds"] for r in rows if r["implementation"] == OURS}
    for r in (r for r in rows if r["implementation"] != "floor"):
        ours_s = base[r["shape"], r["case"]]
        ratio = f"{r['seconds'] / ours_s:.2f}x" if ours_s > 0 else "-"
        print(
            f"| {r['shape']} | {r['case']} | {r['implementation']} | {_seconds(r, 'seconds')} "
            f"| {_seconds(r, 'columnar_seconds')} | {_seconds(r, 'owner_seconds')} | {ratio} "
            f"| {r['objective'][0]:,} | {r['objective'][1]:,} "
            f"| {_seconds(r, 'assignment_build_seconds')} | {_seconds(r, 'table_build_seconds')} |"
        )
    loads = [r["load1"] for r in rows if "load1" in r]
    if loads:
        print(
            f"\nload average (1 min) during the run: {min(loads):.1f} to {max(loads):.1f} on "
            f"{os.cpu_count()} cores"
        )
    floors = [r for r in rows if r.get("implementation") == "floor"]
    for r in floors:
        print(
            f"\nfloor, {r['shape']} {r['case']}: {r['note']}: {r['seconds']:.3f} s; one young "
            f"collection over those objects: {r['collection_seconds']:.3f} s"
        )
    print()
    for line in targets(rows):
        print(line)


def targets(rows: list[dict]) -> list[str]:
    """The targets on the large shape, from the rows."""
    rows = [r for r in rows if r["implementation"] != "floor"]
    large = max(rows, key=lambda r: int(r["shape"].split(" x ")[0].replace(",", "")))["shape"]
    by = {(r["case"], r["implementation"].split()[0]): r for r in rows if r["shape"] == large}
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
        mine, java, go = by[case, OURS], by[case, "Kafka"]["seconds"], by[case, "franz-go"]
        answer, columnar = mine["seconds"], mine["columnar_seconds"]
        answer_cpu = mine.get("cpu_seconds", answer)
        label = f"{large} {case}"
        lines.append(
            target(
                f"{label}: to the columnar answer, faster than Kafka's Java",
                columnar < java,
                f"{columnar:.3f} s vs {java:.3f} s ({java / columnar:.2f}x)",
            )
        )
        if case == "fresh":
            lines.append(
                target(
                    f"{label}: to result.assignment, within {TARGET_FRESH_WITHIN:g}x of Kafka's Java",
                    answer <= TARGET_FRESH_WITHIN * java,
                    f"{answer:.3f} s vs {java:.3f} s ({answer / java:.2f}x Java's time); on "
                    f"rebalance-lab's CPU time {answer_cpu:.3f} s, {answer_cpu / java:.2f}x ("
                    f"{'met' if answer_cpu <= TARGET_FRESH_WITHIN * java else 'MISSED'})",
                )
            )
        else:
            lines.append(
                target(
                    f"{label}: to result.assignment, at least {TARGET_VS_JAVA:g}x faster than "
                    "Kafka's Java",
                    java >= TARGET_VS_JAVA * answer,
                    f"{java / answer:.2f}x ({answer:.3f} s vs {java:.3f} s); on rebalance-lab's "
                    f"CPU time {answer_cpu:.3f} s, {java / answer_cpu:.2f}x",
                )
            )
        lines.append(
            target(
                f"{label}: to result.assignment, no slower than franz-go to its plan",
                answer <= go["seconds"],
                f"{go['seconds'] / answer:.2f}x ({answer:.3f} s vs {go['seconds']:.3f} s); on "
                f"rebalance-lab's CPU time {answer_cpu:.3f} s, {go['seconds'] / answer_cpu:.2f}x",
            )
        )
        for end, name in (("assignment", "result.assignment"), ("table", "assignment_table()")):
            if f"{end}_build_seconds" not in mine:
                continue  # a run from before these were measured
            wall, limit = mine[f"{end}_build_seconds"], TARGET_BUILD[end]
            cpu = mine.get(f"{end}_build_cpu_seconds")
            lines.append(
                target(f"{label}: {name} alone <= {limit:g} s", wall <= limit, f"{wall:.3f} s")
                if cpu is None
                else seconds_target(f"{label}: {name} alone", wall, cpu, limit)
            )
        lines.append(
            seconds_target(
                f"{label}: to the owner array (load + solve)",
                mine["owner_seconds"],
                mine["owner_cpu_seconds"],
                TARGET_OWNER_SECONDS,
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

    def emit(row: dict) -> None:
        row["load1"] = round(os.getloadavg()[0], 1)
        row["elapsed"] = round(time.perf_counter() - started, 1)
        rows.append(row)
        if ARGS.json:
            print(json.dumps(row), flush=True)
        else:
            print(
                f"{row['shape']} {row['case']} {row['implementation']}: {row['seconds']:.3f} s",
                file=sys.stderr,
                flush=True,
            )

    for shape, with_python in ((ARGS.small, True), (ARGS.large, False)):
        topics, partitions, members = (int(x) for x in shape.split(","))
        label = f"{topics * partitions:,} x {members:,}"
        for case, doc in cases(topics, partitions, members):
            problem = load_problem(doc)
            for name, run in implementations(with_python):
                owner, seconds = run(problem, doc)
                verdict = evaluate(problem, owner, "sticky")
                assert verdict.valid, (case, name, verdict.violations[:3])
                emit(
                    {
                        "shape": label,
                        "case": case,
                        "implementation": name,
                        **{key: round(value, 4) for key, value in seconds.items()},
                        "objective": [int(x) for x in verdict.objective],
                    }
                )
            if case == "fresh" and not with_python:
                copy, collection = floor(doc)
                emit(
                    {
                        "shape": label,
                        "case": case,
                        "implementation": "floor",
                        "note": "a copy of the answer's lists and dicts (the same ints) with the "
                        "collector paused",
                        "seconds": round(copy, 4),
                        "collection_seconds": round(collection, 4),
                    }
                )
    if ARGS.json:
        print("\n".join(targets(rows)), file=sys.stderr)
    else:
        render(rows)


ARGS = None

if __name__ == "__main__":
    main()
