"""Share groups (KIP-932): Kafka 4.4's ``SimpleAssignor`` (``heuristics/share.py``) against the optimum.

Random share groups of four shapes (more members than partitions, about as many, fewer, and a
large group), each with every member subscribing every topic (homogeneous) or a random half of
them (heterogeneous), fresh or after one member joins a group that holds the heuristic's previous
answer.  For each: the heuristic's levels against the proven optimum of the min-cost flow
(``models/flow/share.py``; CP-SAT too where it finishes within 10 s), the relative level-1 gap
(sum of squared member counts), the relative level-2 gap (sum of squared reader counts) and the
seconds each took.

    .venv/bin/python benchmarks/share.py
"""

from __future__ import annotations

import time

import numpy as np

from heuristics import share
from models.cpsat import share as cpsat_share
from models.flow import share as flow_share
from models.options import SolveOptions
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


if __name__ == "__main__":
    main()
