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

Times ``load_problem`` of the churned document (with its derived arrays) once per event, and
``solve(problem)`` apart, CP-SAT with one worker; every answer is re-scored by the evaluator.

Part 1 (first), the heuristic's growth: the same churn events at ``--sizes``
partitions in all (10,000, 100,000 and 1,000,000: ``--topics`` topics of
size / topics numbers), ``--members`` members; ``load_problem`` of the
in-memory document (with its derived arrays) and ``models.solve`` timed apart
(best of ``--repeat``).  The target (solve < 0.1 s at 100,000
partitions, load excluded) is printed after the table.

    .venv/bin/python benchmarks/stream_join.py [--numbers 10000] [--topics 5] [--members 500]
    [--time-limit 60] .venv/bin/python benchmarks/stream_join.py --skip-exact [--sizes
    10000,100000,1000000]   # part 1 only
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from models import solve
from problems import load_problem, problem_to_json
from timing import best_of, best_of_with_cpu, load_average, print_targets, seconds_target


def previous_group(numbers: int, topics: int, members: int) -> dict:
    """A group after a fresh KIP-315 assignment, carrying it as ``owned`` at epoch 1."""
    names = [f"topic{t}" for t in range(topics)]
    doc = {
        "topics": {name: numbers for name in names},
        "members": [{"id": f"consumer{m:04d}", "topics": names} for m in range(members)],
    }
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
        members.append(
            {"id": "zombie", "topics": names, "owned": {names[0]: stolen}, "generation": 0}
        )
    elif event == "uneven, 50 join":
        count, half = doc["topics"][names[0]], len(members) // 2
        blocks = [
            *np.array_split(np.arange(3 * count // 4), half),
            *np.array_split(np.arange(3 * count // 4, count), len(members) - half),
        ]
        for member, owned in zip(members, blocks):
            member["owned"] = {name: owned.tolist() for name in names}
        members += [fresh(i) for i in range(50)]
    elif event == "topic added, count raised":
        doc["topics"]["added"] = doc["topics"][names[0]] = doc["topics"][names[0]] * 6 // 5
        for member in members[:100]:
            member["topics"] = member["topics"] + ["added"]
    return doc


EVENTS = (
    "member leaves",
    "50 join",
    "50 leave, 50 join",
    "zombie",
    "topic added, count raised",
    "uneven, 50 join",
)


def loaded(doc: dict):
    problem = load_problem(doc)
    problem.subscribes  # noqa: B018 - derived arrays are part of loading
    return problem


def scaling(args) -> None:
    """Part 1: the heuristic's load and solve apart, at each size."""
    print(
        "| partitions (numbers x topics) x members | churn | load s | solve s | load + solve s | moves |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    lines = []
    for size in (int(size) for size in args.sizes.split(",")):
        numbers = size // args.topics
        base = previous_group(numbers, args.topics, args.members)
        for event in EVENTS:
            doc = churned(base, event)
            load_s, problem = best_of(args.repeat, loaded, doc)
            solve_s, solve_cpu, result = best_of_with_cpu(
                args.repeat, solve, problem, "stream-join"
            )
            assert result.valid, result.evaluation.violations
            print(
                f"| {numbers * args.topics:,} ({numbers:,} x {args.topics}) x {args.members} | {event} "
                f"| {load_s:.3f} | {solve_s:.3f} | {load_s + solve_s:.3f} | {result.objective[1]:,} |",
                flush=True,
            )
            if numbers * args.topics == TARGET_PARTITIONS:
                lines.append(
                    seconds_target(
                        f"{TARGET_PARTITIONS:,} partitions, {event}: solve (load excluded; "
                        f"load + solve {load_s + solve_s:.3f} s)",
                        solve_s,
                        solve_cpu,
                        TARGET_SECONDS,
                    )
                )
    print_targets(lines, "after part 1")


# The target: the heuristic within 0.1 s at 100,000 partitions, load excluded.
TARGET_PARTITIONS, TARGET_SECONDS = 100_000, 0.1


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--numbers", type=int, default=10_000)
    parser.add_argument("--topics", type=int, default=5)
    parser.add_argument("--members", type=int, default=500)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--sizes", default="10000,100000,1000000", help="partitions in all, part 1")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-exact", action="store_true")
    args = parser.parse_args()
    print(f"load average before: {load_average()}\n")
    scaling(args)
    if args.skip_exact:
        return
    print()
    solvers = {
        "heuristic": lambda p: solve(p, "stream-join"),
        "cpsat": lambda p: solve(p, "stream-join", "cpsat", time_limit=args.time_limit, workers=1),
        "mip (highs)": lambda p: solve(p, "stream-join", "mip", time_limit=args.time_limit),
        "flow": lambda p: solve(p, "stream-join", "flow"),
    }
    base = previous_group(args.numbers, args.topics, args.members)
    print(f"{args.numbers:,} partition numbers x {args.topics} topics x {args.members} members")
    print()
    print("| churn | load s | solver | status | sum of squares | moves | seconds |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for event in EVENTS:
        load_s, problem = best_of(1, loaded, churned(base, event))
        for name, run in solvers.items():
            started = time.perf_counter()
            result = run(problem)
            seconds = time.perf_counter() - started
            assert result.valid, result.evaluation.violations
            balance, moves = result.objective
            print(
                f"| {event} | {load_s:.3f} | {name} | {result.status} | {balance:,} | {moves:,} | {seconds:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
