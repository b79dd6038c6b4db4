"""Benchmark: the plugin protocol's throughput on small instances (docs/plugins.md).

Builds ``--instances`` small consumer groups the way the harness does (the gate suite's sizes:
12 to 60 partitions, 3 to 7 members, 2 to 4 topics; equal and random subscriptions, fresh and after
a member leaves, each with its own seed) and sends every one through each plugin, one call after
another, as a Spark worker does: the request written (the document as JSON), the answer line read,
judged and re-scored by the evaluator (``experiments.plugin_runner.run``: what one plugin row
costs the harness).  The plugins: the JavaScript example (``exec:node
examples/plugins/least_loaded.js``), the same assignor as a Python function in the Python host
(``least_loaded:assign``) and, for scale, that function called in this process with the
evaluator's re-scoring (no protocol).  Prints instances per second on the wall clock and on the
CPU time of both processes (the harness's and the plugin's, from ``/proc``: the calls are
sequential, so on an idle machine the wall time is about their sum plus the pipes' wake-ups; on
a loaded one the wall time grows with the load), each side's CPU per call, the mean and the 99th
percentile of a call, then the target (at least 500 small instances per second through the
protocol).

    .venv/bin/python benchmarks/plugin_protocol.py
    .venv/bin/python benchmarks/plugin_protocol.py --instances 5000
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT / "examples" / "plugins"))

import least_loaded  # noqa: E402

from experiments.plugin_runner import describe, process_for, run, stop_all  # noqa: E402
from experiments.scenarios import Scenario, build_problem  # noqa: E402
from problems import evaluate, load_problem  # noqa: E402
from timing import load_average, target  # noqa: E402

TARGET_PER_SECOND = 500
SIZES = [(12, 3, 2), (24, 4, 3), (36, 5, 3), (48, 6, 4), (60, 7, 4)]
PATTERNS = ["equal", "random-subsets"]
CHURN = ["fresh", "member-leaves"]


def instances(count: int) -> list[tuple[dict, object]]:
    """``count`` small groups (document, problem), cycling through sizes, patterns and churn."""
    out = []
    for i in range(count):
        partitions, members, topics = SIZES[i % len(SIZES)]
        pattern = PATTERNS[(i // len(SIZES)) % len(PATTERNS)]
        churn = CHURN[(i // (len(SIZES) * len(PATTERNS))) % len(CHURN)]
        scenario = Scenario(
            "group", "sticky", churn, partitions, members, topics, i, pattern=pattern
        )
        document = build_problem(scenario)
        out.append((document, load_problem(document)))
    return out


def through_protocol(target_spec: str, cases: list[tuple[dict, object]]) -> dict:
    """Every case through the plugin ``target_spec``: rate, CPU and call times; every answer valid."""
    describe("bench", target_spec, keep=True)  # started before the clock, as in a worker
    pid = process_for("bench", target_spec).pid
    assert pid is not None
    times = []
    child_cpu = _cpu_of(pid)
    started, started_cpu = time.perf_counter(), time.process_time()
    for document, problem in cases:
        begun = time.perf_counter()
        call = run("bench", target_spec, problem, document, "sticky", 10.0)
        times.append(time.perf_counter() - begun)
        assert call.answer.valid, call.answer.error
    wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
    child_cpu = _cpu_of(pid) - child_cpu
    stop_all()
    return _row(len(cases), wall, cpu, times, child_cpu)


def _cpu_of(pid: int) -> float:
    """CPU seconds (user and system) of the process ``pid`` so far, from ``/proc``."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def in_process(cases: list[tuple[dict, object]]) -> dict:
    """The Python function called here, its answer re-scored (no protocol): for scale."""
    times = []
    started, started_cpu = time.perf_counter(), time.process_time()
    for _, problem in cases:
        begun = time.perf_counter()
        verdict = evaluate(problem, least_loaded.assign(problem), "sticky")
        times.append(time.perf_counter() - begun)
        assert verdict.valid
    wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
    return _row(len(cases), wall, cpu, times, 0.0)


def _row(count: int, wall: float, cpu: float, times: list[float], child_cpu: float) -> dict:
    both = cpu + child_cpu
    return {
        "per_second": count / wall,
        "per_second_cpu": count / both if both > 0 else float("inf"),
        "parent_ms": 1000 * cpu / count,
        "child_ms": 1000 * child_cpu / count,
        "mean_ms": 1000 * float(np.mean(times)),
        "p99_ms": 1000 * float(np.percentile(times, 99)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", type=int, default=2000)
    args = parser.parse_args()
    cases = instances(args.instances)
    print(f"load average before: {load_average()}; {len(cases):,} instances\n")
    runs = [
        (
            "JavaScript, exec:node examples/plugins/least_loaded.js",
            through_protocol(
                f"exec:node {ROOT / 'examples' / 'plugins' / 'least_loaded.js'}", cases
            ),
        ),
        ("Python host, least_loaded:assign", through_protocol("least_loaded:assign", cases)),
        ("in this process, least_loaded.assign + evaluate (no protocol)", in_process(cases)),
    ]
    print(
        "| plugin | instances/s (wall) | instances/s (CPU of both processes) | harness CPU ms "
        "per call | plugin CPU ms per call | mean call ms | p99 call ms |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for label, row in runs:
        print(
            f"| {label} | {row['per_second']:,.0f} | {row['per_second_cpu']:,.0f} | "
            f"{row['parent_ms']:.3f} | {row['child_ms']:.3f} | {row['mean_ms']:.2f} | "
            f"{row['p99_ms']:.2f} |"
        )
    print()
    for label, row in runs[:2]:
        verdict = "met" if row["per_second_cpu"] >= TARGET_PER_SECOND else "MISSED"
        print(
            target(
                f"{label.split(',')[0]}: >= {TARGET_PER_SECOND} small instances/s",
                row["per_second"] >= TARGET_PER_SECOND,
                f"{row['per_second']:,.0f} /s wall, {row['per_second_cpu']:,.0f} /s on the CPU "
                f"time of both processes ({verdict} on CPU time)",
            )
        )
    print(f"\nload average after: {load_average()}")


if __name__ == "__main__":
    main()
