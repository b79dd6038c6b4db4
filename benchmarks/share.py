"""Share groups (KIP-932): Kafka 4.4's ``SimpleAssignor`` (``heuristics/share.py``) against the optimum.

Random share groups of four shapes (more members than partitions, about as many, fewer, and a
large group), each with every member subscribing every topic (homogeneous) or a random half of
them (heterogeneous), fresh or after one member joins a group that holds the heuristic's previous
answer.  For each: the heuristic's levels against the proven optimum of the min-cost flow
(``models/share/flow.py``; CP-SAT too where it finishes within 10 s), the relative level-1 gap
(sum of squared member counts), the relative level-2 gap (sum of squared reader counts) and the
seconds each took.

Then the target, at the shapes of Kafka's JMH ``ServerSideAssignorBenchmark`` (10,000 members with
10 partitions per member over 1,000 topics, and 10,000 members sharing 1,000 partitions; every
member subscribing every topic, fresh): the heuristic's best of 3 ``assign`` calls against Kafka's
own ``SimpleAssignor`` in the same run (the JPype peer; its ``assign`` on one built
``GroupSpec``, timed around the call after 3 JIT warm-up calls, best of 3), and the exact flow
proven within 5 s.  Each prints ``target met`` or ``target MISSED``.  ``--target`` runs the target alone.

    .venv/bin/python benchmarks/share.py [--target]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from heuristics import share
from models.options import SolveOptions
from models.share import cpsat as cpsat_share
from models.share import flow as flow_share
from problems import load_problem
from problems.share import share_assignment_json

#: (name, members, topics, partitions per topic, run CP-SAT)
SHAPES = (
    ("more members", 60, 2, 6, True),
    ("about as many", 40, 4, 10, True),
    ("fewer members", 10, 5, 40, True),
    ("large", 2000, 10, 100, False),
)
SEEDS = range(3)


def document(members: int, topics: int, partitions: int, homogeneous: bool, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    names = [f"t{i}" for i in range(topics)]
    return {
        "topics": {t: partitions for t in names},
        "members": [
            {
                "id": f"m{m}",
                "topics": names
                if homogeneous
                else [t for t in names if rng.random() < 0.5] or [names[m % topics]],
            }
            for m in range(members)
        ],
    }


def after_join(doc: dict) -> dict:
    """The group holding the heuristic's answer for all but its last member, which then joins."""
    before = {**doc, "members": doc["members"][:-1]}
    problem = load_problem(before)
    held = share_assignment_json(problem, share.assign(problem).answer)
    members = [{**m, "owned": held[m["id"]]} for m in before["members"]] + [doc["members"][-1]]
    return {**doc, "members": members}


def timed(run, *args):
    began = time.perf_counter()
    result = run(*args)
    return result, time.perf_counter() - began


def gap(ours: int, best: int) -> float:
    return (ours - best) / best if best else 0.0


def main() -> None:
    print(
        "| shape | subscriptions | assignment | groups | level-1 gap mean (max) | level-2 gap mean "
        "| heuristic s | flow s | CP-SAT s (optimal) |"
    )
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, members, topics, partitions, with_cpsat in SHAPES:
        for homogeneous in (True, False):
            for kind in ("fresh", "member joins"):
                gaps1, gaps2, seconds = [], [], {"heuristic": [], "flow": [], "cpsat": []}
                proven = 0
                for seed in SEEDS:
                    doc = document(members, topics, partitions, homogeneous, seed)
                    problem = load_problem(after_join(doc) if kind != "fresh" else doc)
                    kafka, s = timed(share.assign, problem)
                    seconds["heuristic"].append(s)
                    best, s = timed(flow_share.solve, problem, SolveOptions())
                    seconds["flow"].append(s)
                    assert best.status == "optimal"
                    gaps1.append(gap(kafka.objective[0], best.objective[0]))
                    gaps2.append(gap(kafka.objective[1], best.objective[1]))
                    if with_cpsat:
                        exact, s = timed(cpsat_share.solve, problem, SolveOptions())
                        seconds["cpsat"].append(s)
                        proven += exact.status == "optimal"
                        if exact.status == "optimal":
                            assert exact.objective == best.objective
                cpsat = (
                    f"{np.mean(seconds['cpsat']):.2f} ({proven}/{len(SEEDS)})"
                    if with_cpsat
                    else "-"
                )
                print(
                    f"| {name} ({members} x {topics * partitions}) "
                    f"| {'homogeneous' if homogeneous else 'heterogeneous'} | {kind} | {len(SEEDS)} "
                    f"| {np.mean(gaps1):.1%} ({max(gaps1):.1%}) | {np.mean(gaps2):.1%} "
                    f"| {np.mean(seconds['heuristic']):.3f} | {np.mean(seconds['flow']):.3f} "
                    f"| {cpsat} |",
                    flush=True,
                )


#: (name, members, topics, partitions per topic) of the target.
TARGET_SHAPES = (
    ("10,000 members x 10 partitions per member x 1,000 topics", 10_000, 1_000, 100),
    ("10,000 members sharing 1,000 partitions", 10_000, 100, 10),
)
#: The exact flow must prove the optimum within this many seconds.
FLOW_SECONDS = 5.0
#: Allowed pairs beyond which the flow's network is not tried (it would not fit the machine); its
#: closed form for complete groups is.
FLOW_PAIRS = 50_000_000


def target() -> bool:
    """The target lines; True when every target is met."""
    import jpype

    sys.path.insert(
        0, str(Path(__file__).resolve().parents[1])
    )  # the peers package, not ./peers.py
    from peers import kafka_java

    kafka_java.start()
    met = True
    print(f"Kafka {kafka_java.kafka_version()} SimpleAssignor (JPype, 3 warm-up calls, best of 3)")
    for name, members, topics, partitions in TARGET_SHAPES:
        problem = load_problem(document(members, topics, partitions, True, 0))
        ours = min(timed(share.assign, problem)[1] for _ in range(3))
        spec, describer = kafka_java.share_input(problem)
        assignor = jpype.JClass(kafka_java.SHARE_ASSIGNOR)()
        for _ in range(3):  # JIT warm-up
            assignor.assign(spec, describer)
        java = min(timed(assignor.assign, spec, describer)[1] for _ in range(3))
        verdict = "target met" if ours <= java else "target MISSED"
        print(f"{name}: heuristic {ours:.3f} s, Kafka {java:.3f} s: {verdict}", flush=True)
        met &= ours <= java
        pairs = members * topics * partitions
        if pairs > FLOW_PAIRS and flow_share.complete_optimum(problem) is None:
            print(
                f"{name}: flow not run ({pairs:,} allowed pairs, over {FLOW_PAIRS:,}): "
                "target MISSED",
                flush=True,
            )
            met = False
            continue
        best, seconds = timed(flow_share.solve, problem, SolveOptions())
        ok = best.status == "optimal" and seconds <= FLOW_SECONDS
        method = best.info.get("method", "the network")
        print(
            f"{name}: flow {best.status} in {seconds:.2f} s by {method} (limit {FLOW_SECONDS:g} s): "
            f"{'target met' if ok else 'target MISSED'}",
            flush=True,
        )
        met &= ok
    return met


if __name__ == "__main__":
    if "--target" not in sys.argv[1:]:
        main()
    target()
