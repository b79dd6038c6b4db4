"""Benchmark: the KIP-315 stream-join heuristic and the exact solvers at 10,000 numbers x 5 topics x 500 members.

The group first gets a fresh KIP-315 assignment (epoch 1); then one churn
event per row, and every solver answers the churned group:

* ``member leaves``: the last member leaves;
* ``50 join``: 50 new members join (steals: nothing is unowned);
* ``50 leave, 50 join``;
* ``zombie``: a member expelled at epoch 0 comes back claiming every fifth
  number (2,000, all owned by live members), and one member leaves;
* ``topic added, count raised``: a sixth topic (12,000 partitions, for
  10,000 numbers) joins, subscribed by 100 members only, and topic 0 grows to
  12,000 partitions: K stays 10,000;
* ``uneven, 50 join``: the previous assignment is uneven (half the members
  own 3/4 of the numbers, half 1/4: 30 and 10 each) and
  50 members join: the draft's steals take turns over every previous owner,
  the 10-number owners too, which costs moves the exact solvers avoid.

Times ``assign(problem)`` / ``solve(problem)`` on a loaded problem (load not
included), CP-SAT with one worker; every answer is re-scored by the evaluator.

    .venv/bin/python benchmarks/stream_join.py [--numbers 10000] [--topics 5] [--members 500] [--time-limit 60]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from models import solve
from problems import load_problem, problem_to_json


def previous_group(numbers: int, topics: int, members: int) -> dict:
    """A group after a fresh KIP-315 assignment, carrying it as ``owned`` at epoch 1."""
    names = [f"topic{t}" for t in range(topics)]
    doc = {"topics": {name: numbers for name in names},
           "members": [{"id": f"consumer{m:04d}", "topics": names} for m in range(members)]}
    result = solve(load_problem(doc), "stream-join")
    for member in doc["members"]:
        member["owned"] = result.assignment[member["id"]]
        member["generation"] = result.info["epoch"]
    return doc


def churned(doc: dict, event: str) -> dict:
    doc = problem_to_json(load_problem(doc))
    members, names = doc["members"], list(doc["topics"])
    fresh = lambda i: {"id": f"joiner{i:04d}", "topics": names}  # noqa: E731
    if event == "member leaves":
        members.pop()
    elif event == "50 join":
        members += [fresh(i) for i in range(50)]
    elif event == "50 leave, 50 join":
        del members[-50:]
        members += [fresh(i) for i in range(50)]
    elif event == "zombie":
        members.pop()
        stolen = list(range(0, doc["topics"][names[0]], 5))
        members.append({"id": "zombie", "topics": names, "owned": {names[0]: stolen}, "generation": 0})
    elif event == "uneven, 50 join":
        count, half = doc["topics"][names[0]], len(members) // 2
        blocks = [*np.array_split(np.arange(3 * count // 4), half),
                  *np.array_split(np.arange(3 * count // 4, count), len(members) - half)]
        for member, owned in zip(members, blocks):
            member["owned"] = {name: owned.tolist() for name in names}
        members += [fresh(i) for i in range(50)]
    elif event == "topic added, count raised":
        doc["topics"]["added"] = doc["topics"][names[0]] = doc["topics"][names[0]] * 6 // 5
        for member in members[:100]:
            member["topics"] = member["topics"] + ["added"]
    return doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--numbers", type=int, default=10_000)
    parser.add_argument("--topics", type=int, default=5)
    parser.add_argument("--members", type=int, default=500)
    parser.add_argument("--time-limit", type=float, default=60.0)
    args = parser.parse_args()
    solvers = {
        "heuristic": lambda p: solve(p, "stream-join"),
        "cpsat": lambda p: solve(p, "stream-join", "cpsat", time_limit=args.time_limit, workers=1),
        "mip (highs)": lambda p: solve(p, "stream-join", "mip", time_limit=args.time_limit),
        "flow": lambda p: solve(p, "stream-join", "flow"),
    }
    base = previous_group(args.numbers, args.topics, args.members)
    print(f"{args.numbers:,} partition numbers x {args.topics} topics x {args.members} members")
    print()
    print("| churn | solver | status | sum of squares | moves | seconds |")
    print("| --- | --- | --- | --- | --- | --- |")
    events = ("member leaves", "50 join", "50 leave, 50 join", "zombie", "topic added, count raised",
              "uneven, 50 join")
    for event in events:
        problem = load_problem(churned(base, event))
        problem.subscribes  # noqa: B018 - derived arrays are part of loading
        for name, solve in solvers.items():
            started = time.perf_counter()
            result = solve(problem)
            seconds = time.perf_counter() - started
            assert result.valid, result.evaluation.violations
            balance, moves = result.objective
            print(f"| {event} | {name} | {result.status} | {balance:,} | {moves:,} | {seconds:.2f} |", flush=True)


if __name__ == "__main__":
    main()
