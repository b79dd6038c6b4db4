"""Benchmark: ``rebalance-lab assign --strategy sticky`` end to end at Kafka's large test shape.

Kafka's large shape (AbstractStickyAssignorTest): 500 topics x 2,000 partitions
= 1,000,000 partitions, 2,000 members all subscribed.  Three problem files:

* fresh: nobody owns anything;
* one member left: the last member leaves, the other 1,999 own the fresh answer
  (generation 1): 999,500 owned claims;
* last member on topic 0 only, fresh.

Part 1 runs the command line on each file, as a user would (a new process:
interpreter start, imports, reading and checking the file, the assignment,
writing the JSON to a file), and reports the wall time and the peak resident
memory of that process (``wait4``'s ``ru_maxrss`` of the child alone); best of
``--repeat`` for the time, the largest peak.

Part 2 times, in this process, what a caller of the Python API pays from the
in-memory document: ``load_problem(document)`` (checking, building the arrays,
resolving the owned claims) and then ``heuristics.sticky.sticky.assign(problem)`` on
that fresh problem (the owner array), each reported, best of ``--repeat``, with the CPU time of
the two; then, apart, each answer object built from that result: ``result.assignment`` (the
``{member: {topic: [partitions]}}`` dicts and lists), ``result.assignment_table()`` (a pyarrow
Table) and the output bytes (:func:`problems.output.result_bytes`, after the evaluator's
re-scoring), each on a result that has built nothing yet.

The targets are printed last, each ``target met`` or ``target MISSED`` on the wall time, with what
the CPU time says (on a loaded machine the wall time grows with the load).

    .venv/bin/python benchmarks/end_to_end.py
    .venv/bin/python benchmarks/end_to_end.py --dir /tmp/e2e --keep     # keep the files
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow  # noqa: F401  (the columnar answer's: imported once, not in the first timed call)
from sticky import group_document

import heuristics.sticky.sticky as sticky
from problems import Result, load_problem
from problems.output import result_bytes
from timing import seconds_target, target

# The targets: the CLI on the one-leaves file, and load + assign in process per case.
TARGET_WALL, TARGET_PEAK_GB, TARGET_IN_PROCESS = 3.0, 1.5, 0.5


def documents(topics: int, partitions: int, members: int) -> list[tuple[str, str, dict]]:
    """``(case, file stem, document)`` of the three cases."""
    fresh = group_document(topics, partitions, members)
    first = sticky.assign(load_problem(fresh)).assignment
    return [
        ("fresh", "fresh", fresh),
        (
            "last member leaves (owned claims)",
            "one-leaves",
            group_document(topics, partitions, members, owned=first, leave=True),
        ),
        (
            "last member on topic 0 only, fresh",
            "odd-member",
            group_document(topics, partitions, members, odd_member=True),
        ),
    ]


def command() -> list[str]:
    """The ``rebalance-lab`` console script of this interpreter, or ``python -m experiments.cli``."""
    script = Path(sys.executable).with_name("rebalance-lab")
    return [str(script)] if script.exists() else [sys.executable, "-m", "experiments.cli"]


def run_cli(path: Path, out: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak resident GB of one ``assign`` process
    writing to ``out``."""
    started = time.perf_counter()
    with open(out, "wb") as stdout:
        process = subprocess.Popen(
            [*command(), "assign", "--strategy", "sticky", str(path)],
            stdout=stdout,
            stderr=subprocess.PIPE,
        )
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    stderr = process.stderr.read().decode()
    process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{path}: exit {os.waitstatus_to_exitcode(status)}: {stderr}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024**2


def in_process(doc: dict, repeat: int) -> tuple[float, ...]:
    """Best ``load_problem(doc)``, ``sticky.assign(problem)`` (on a fresh problem each time: nothing
    cached from an earlier call), ``result.assignment``, ``result.assignment_table()`` and
    output-bytes seconds (each answer object on a result of its own, built from the same owner
    array: nothing shared between them), and the least CPU seconds of load + assign."""
    best = [float("inf")] * 6
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        problem = load_problem(doc)
        loaded = time.perf_counter()
        result = sticky.assign(problem)
        assigned, cpu = time.perf_counter(), time.process_time() - started_cpu
        assert result.valid, result.evaluation.violations
        built = []
        for make in (
            lambda r: r.assignment,
            lambda r: r.assignment_table(),
            result_bytes,
        ):
            fresh = Result(problem, result.strategy, result.answer, info=result.info)
            fresh.evaluation  # noqa: B018 - the re-scoring, not part of building the answer
            began = time.perf_counter()
            answer = make(fresh)
            built.append(time.perf_counter() - began)
            del answer, fresh  # freed before the next one is timed
        best = [min(b, t) for b, t in zip(best, (loaded - started, assigned - loaded, *built, cpu))]
    return tuple(best)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--topics", type=int, default=500)
    parser.add_argument("--partitions", type=int, default=2000)
    parser.add_argument("--members", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--dir", help="where to write the problem files (default: a temporary folder)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the problem files")
    args = parser.parse_args()

    folder = Path(args.dir or tempfile.mkdtemp(prefix="rebalance-lab-e2e-"))
    folder.mkdir(parents=True, exist_ok=True)
    cases = documents(args.topics, args.partitions, args.members)
    try:
        print(
            f"shape: {args.topics} topics x {args.partitions:,} partitions, {args.members:,} members\n"
        )
        print(f"load average before: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)\n")
        print(
            "| case | file MB | CLI wall s | CLI CPU s | CLI peak GB | load_problem s | assign s "
            "| load + assign s | load + assign CPU s | result.assignment s "
            "| assignment_table() s | output bytes s |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        lines = []
        for case, stem, doc in cases:
            path = folder / f"{stem}.json"
            path.write_text(
                json.dumps(doc)
            )  # json.dumps's spacing, as a user's tool would write it
            runs = [run_cli(path, folder / f"{stem}.out.json") for _ in range(args.repeat)]
            wall, cpu, peak = (
                min(r[0] for r in runs),
                min(r[1] for r in runs),
                max(r[2] for r in runs),
            )
            load_s, assign_s, json_s, table_s, output_s, load_assign_cpu = in_process(
                doc, args.repeat
            )
            print(
                f"| {case} | {path.stat().st_size / 1e6:.1f} | {wall:.2f} | {cpu:.2f} | {peak:.2f} "
                f"| {load_s:.3f} | {assign_s:.3f} | {load_s + assign_s:.3f} "
                f"| {load_assign_cpu:.3f} | {json_s:.3f} | {table_s:.4f} | {output_s:.3f} |",
                flush=True,
            )
            lines.append(
                seconds_target(
                    f"{case}: load_problem + assign",
                    load_s + assign_s,
                    load_assign_cpu,
                    TARGET_IN_PROCESS,
                )
            )
            if stem == "one-leaves":
                lines.append(seconds_target(f"{case}: CLI", wall, cpu, TARGET_WALL))
                lines.append(
                    target(
                        f"{case}: CLI peak <= {TARGET_PEAK_GB} GB",
                        peak <= TARGET_PEAK_GB,
                        f"{peak:.2f} GB",
                    )
                )
        print(f"\nload average after: {os.getloadavg()[0]:.1f}\n")
        print("\n".join(lines))
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
