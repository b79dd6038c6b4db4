"""Benchmark: what a ``java:`` plugin costs beyond the assignor's own time in the JVM.

One call of a ``java:CLASS`` plugin (:mod:`experiments.plugin_java`) is: the request line built
from the document (Python), written to the JVM program, the document parsed and the assignor's
input built there as Kafka builds it, the assignor called (timed inside the JVM: ``assign``),
the answer written, read back and turned into the owner array the evaluator reads (Python).  The
overhead is everything but ``assign``: the call's wall time, from the document to the owner
array, less the assignor's own time (re-scoring, which every strategy's answer gets, is left out).

Two parts:

* Kafka's benchmark shapes at 1,000 members x 100,000 partitions (``benchmarks/uniform.py``'s
  group: 100 topics, homogeneous or heterogeneous subscriptions, ``full`` or ``incremental``) for
  KIP-848's ``UniformAssignor`` and the client ``StickyAssignor`` and ``RangeAssignor``: each call
  after ``--warmups`` untimed ones, best of ``--repeat``; target: overhead at most 20% of the
  assignor's in-JVM time;
* the atlas's small instances (``--small`` scenarios of ``kafka-atlas``, every k-th): every call
  timed after a warm-up pass; target: overhead at most 5 ms per call (mean, and p99 printed).

    .venv/bin/python benchmarks/jvm_plugin.py [--repeat 3] [--warmups 3] [--small 500]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # uniform.py's benchmark group

from uniform import group_document  # noqa: E402

from experiments.experiment import load_suite  # noqa: E402
from experiments.plugin_protocol import answer_array, parse_line, request  # noqa: E402
from experiments.plugin_runner import process_for  # noqa: E402
from experiments.scenarios import build_problem  # noqa: E402
from problems import assignment_json, load_problem  # noqa: E402
from timing import load_average, print_targets, target  # noqa: E402

CLASSES = {
    "UniformAssignor": "org.apache.kafka.coordinator.group.assignor.UniformAssignor",
    "StickyAssignor": "org.apache.kafka.clients.consumer.StickyAssignor",
    "RangeAssignor": "org.apache.kafka.clients.consumer.RangeAssignor",
}
#: Shapes left out, and why.
SKIPPED = {
    (
        "StickyAssignor",
        "heterogeneous",
        "incremental",
    ): "Kafka's general sticky path takes over 10 min a call",
}
LARGE_LIMIT = 20.0  # overhead at most 20% of the in-JVM assign time
SMALL_LIMIT = 0.005  # seconds of overhead per small call


def exchange(process, line: bytes) -> bytes:
    """The answer line to ``line`` (the program started first if it is not running)."""
    if not process.running:
        process.start()
    return process.exchange(line, 600.0)


def call(process, document: dict, problem) -> dict[str, float]:
    """One timed call: wall seconds from the document to the owner array, and the JVM's own times."""
    started = time.perf_counter()
    line = request(document, "sticky", None)
    built = time.perf_counter()
    reply = exchange(process, line)
    crossed = time.perf_counter()
    answer = parse_line(reply)
    if answer.get("error"):
        raise RuntimeError(answer["error"])
    answer_array(problem, answer, "sticky")
    done = time.perf_counter()
    assign = float(answer["info"]["assign_seconds"])
    return {
        "wall": done - started,
        "request": built - started,
        "exchange": crossed - built,
        "read": done - crossed,
        "assign": assign,
        "jvm_input": float(answer["info"]["input_seconds"]),
        "jvm_parse": float(answer["info"].get("parse_seconds", 0.0)),
        "overhead": done - started - assign,
    }


def large(repeat: int, warmups: int) -> list[str]:
    print(
        "| assignor | subscriptions | assignment | assign in the JVM (ms) | input in the JVM (ms) "
        "| document read in the JVM (ms) | request (ms) | answer read (ms) | overhead (ms) | overhead / assign |"
    )
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    lines = []
    worst = 0.0
    for name, class_name in CLASSES.items():
        process = process_for(name, f"java:{class_name}")
        for pattern in ("homogeneous", "heterogeneous"):
            fresh = group_document(1000, 100, 100, pattern)
            problem = load_problem(fresh)
            first = call(process, fresh, problem)  # the owned claims: the answer for 999 members
            del first
            smaller = group_document(999, 100, 100, pattern)
            previous = assignment_json(load_problem(smaller), _owner(process, smaller))
            for kind, document in (
                ("full", fresh),
                ("incremental", group_document(1000, 100, 100, pattern, owned=previous)),
            ):
                if (name, pattern, kind) in SKIPPED:
                    print(
                        f"| {name} | {pattern} | {kind} | (not run: {SKIPPED[name, pattern, kind]}) | | | | | | |"
                    )
                    continue
                problem = load_problem(document)
                for _ in range(warmups):
                    call(process, document, problem)
                best = min(
                    (call(process, document, problem) for _ in range(repeat)),
                    key=lambda r: r["wall"],
                )
                ratio = 100 * best["overhead"] / best["assign"]
                worst = max(worst, ratio)
                print(
                    f"| {name} | {pattern} | {kind} | {1e3 * best['assign']:,.1f} | {1e3 * best['jvm_input']:,.1f} "
                    f"| {1e3 * best['jvm_parse']:,.1f} | {1e3 * best['request']:,.1f} "
                    f"| {1e3 * best['read']:,.1f} | {1e3 * best['overhead']:,.1f} "
                    f"| {ratio:,.0f}% |"
                )
        process.stop()
    lines.append(
        target(
            "java: overhead at most 20% of the assignor's in-JVM time, 1,000 members x 100,000 partitions",
            worst <= LARGE_LIMIT,
            f"worst {worst:,.0f}%",
        )
    )
    return lines


def _owner(process, document: dict):
    problem = load_problem(document)
    reply = parse_line(exchange(process, request(document, "sticky", None)))
    return np.asarray(answer_array(problem, reply, "sticky"))


def small(count: int) -> list[str]:
    scenarios = [s for s in load_suite("kafka-atlas").scenarios if s.judged_on == "sticky"]
    step = max(1, len(scenarios) // count)
    chosen = scenarios[::step][:count]
    documents = [build_problem(s) for s in chosen]
    problems = [load_problem(d) for d in documents]
    print()
    print(
        f"The atlas's small instances: {len(chosen)} sticky scenarios of kafka-atlas (every {step}-th)"
    )
    print()
    print(
        "| assignor | calls | mean wall (ms) | mean assign in the JVM (ms) | mean overhead (ms) | p99 overhead (ms) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    lines = []
    for name, class_name in CLASSES.items():
        process = process_for(name, f"java:{class_name}")
        for document, problem in zip(documents, problems):  # warm-up pass
            call(process, document, problem)
        runs = [call(process, d, p) for d, p in zip(documents, problems)]
        overhead = np.array([r["overhead"] for r in runs])
        print(
            f"| {name} | {len(runs)} | {1e3 * np.mean([r['wall'] for r in runs]):.2f} "
            f"| {1e3 * np.mean([r['assign'] for r in runs]):.2f} | {1e3 * overhead.mean():.2f} "
            f"| {1e3 * np.percentile(overhead, 99):.2f} |"
        )
        lines.append(
            target(
                f"java:{name} overhead at most 5 ms per small call",
                overhead.mean() <= SMALL_LIMIT,
                f"mean {1e3 * overhead.mean():.2f} ms",
            )
        )
        process.stop()
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmups", type=int, default=3)
    parser.add_argument("--small", type=int, default=500)
    args = parser.parse_args()
    print(f"load average before: {load_average()}\n")
    lines = large(args.repeat, args.warmups)
    lines += small(args.small)
    print_targets(lines, "after the run")


if __name__ == "__main__":
    main()
