"""Benchmark: the horizon over a trace (models/horizon/horizon.py) and the heuristics through it, at scale.

Targets, all measured in this run:

1. a 50-step rolling restart of 1,000 members x 100,000 partitions (equal subscriptions; batches
   of 40 members leave at one step and come back at the next): the sticky horizon proven optimal
   within 60 s, and every heuristic through the same trace (``models.trace``) within 10 s each;
2. 100 members x 1,000 partitions (20 topics of 50), random subscriptions, 20 steps of joins,
   leaves and new subscriptions: the CP-SAT horizon proven, or bounded within 1 %, in 60 s;
3. 100 brokers, 100,000 partitions x RF 3 (placed by kafka-default, seed 0), brokers 100 .. 91
   decommissioned one at a time: the horizon optimum of the total replica moves proven within
   60 s.

    .venv/bin/python benchmarks/traces.py [--quick]

``--quick`` runs every case at a tenth of its size (a smoke test of the script).
"""

from __future__ import annotations

import random
import sys
import time

from timing import load_average, print_targets, target

QUICK = "--quick" in sys.argv[1:]
SCALE = 10 if QUICK else 1
HEURISTICS = ("sticky", "cooperative-sticky", "range", "roundrobin", "uniform", "server-range")


def rolling_restart(members: int, partitions: int, batch: int) -> dict:
    """Every member leaves with its batch at one step and comes back at the next."""
    ids = [f"c{i:04d}" for i in range(members)]
    steps = []
    for first in range(0, members, batch):
        group = ids[first : first + batch]
        steps.append({"leave": group})
        steps.append({"join": [{"id": m, "topics": ["t0"]} for m in group]})
    return {
        "kind": "group-trace",
        "problem": {
            "topics": {"t0": partitions},
            "members": [{"id": m, "topics": ["t0"]} for m in ids],
        },
        "steps": steps,
    }


def random_subscriptions(members: int, topics: int, size: int, steps: int, seed: int = 0) -> dict:
    """A group with random subscriptions, then joins, leaves and new subscriptions."""
    rng = random.Random(seed)
    names = [f"t{i:02d}" for i in range(topics)]

    def subscription() -> list[str]:
        return sorted(rng.sample(names, rng.randint(3, 8)))

    start = [{"id": f"c{i:03d}", "topics": subscription()} for i in range(members)]
    present = [m["id"] for m in start]
    fresh = members
    events = []
    for _ in range(steps):
        step: dict = {}
        kind = rng.choice(["join", "leave", "subscribe"])
        if kind == "join":
            step["join"] = [{"id": f"c{fresh:03d}", "topics": subscription()}]
            present.append(f"c{fresh:03d}")
            fresh += 1
        elif kind == "leave":
            gone = rng.choice(present)
            present.remove(gone)
            step["leave"] = [gone]
        else:
            step["subscribe"] = {rng.choice(present): subscription()}
        events.append(step)
    return {
        "kind": "group-trace",
        "problem": {
            "topics": {n: size for n in names},
            "members": start,
        },
        "steps": events,
    }


def decommission(brokers: int, partitions: int, removed: int) -> dict:
    """kafka-default's placement (seed 0), then the last ``removed`` brokers one at a time."""
    from heuristics import kafka_default
    from problems import load_problem

    full = [{"id": b} for b in range(1, brokers + 1)]
    parts = [
        {"topic": f"topic{p // 20:05d}", "partition": p % 20, "replicas": [1, 2, 3]}
        for p in range(partitions)
    ]
    placed = kafka_default.assign(load_problem({"brokers": full, "partitions": parts}), seed=0)
    return {
        "kind": "placement-trace",
        "problem": {"brokers": full, "partitions": placed.assignment["partitions"]},
        "steps": [{"remove_brokers": [brokers - i]} for i in range(removed)],
    }


def timed(function, *args, **keywords):
    started = time.perf_counter()
    result = function(*args, **keywords)
    return time.perf_counter() - started, result


def main() -> None:
    import models
    from models.horizon.horizon import solve_horizon
    from models.options import SolveOptions
    from problems.trace import load_trace

    print(f"load average at start: {load_average()}")
    lines = []

    # 1. the rolling restart
    members, partitions = 1_000 // SCALE, 100_000 // SCALE
    trace = load_trace(rolling_restart(members, partitions, 40 // SCALE or 1))
    seconds, answer = timed(solve_horizon, trace, "sticky")
    print(
        f"\nrolling restart, {members:,} members x {partitions:,} partitions, {len(trace) - 1} "
        f"steps: horizon {answer.status} ({answer.info['method']}), {answer.info['moves']:,} "
        f"moves, {seconds:.1f} s"
    )
    lines.append(
        target(
            "sticky horizon of the rolling restart proven within 60 s",
            answer.status == "optimal" and seconds <= 60,
            f"{answer.status}, {seconds:.1f} s",
        )
    )
    level1 = sum(
        sum(sum(len(p) for p in topics.values()) ** 2 for topics in step.values())
        for step in answer.assignments
    )
    print(f"{'heuristic':<20} {'moves':>10} {'seconds':>8}   every step balanced")
    slowest = 0.0
    for strategy in HEURISTICS:
        seconds, result = timed(models.trace, trace, strategy)
        balance = result.objective_sums[0]
        print(f"{strategy:<20} {result.moves:>10,} {seconds:>8.1f}   {balance == level1}")
        slowest = max(slowest, seconds)
        lines.append(
            target(
                f"{strategy} through the rolling restart within 10 s",
                seconds <= 10,
                f"{seconds:.1f} s, {result.moves:,} moves (horizon {answer.info['moves']:,})",
            )
        )

    # 2. random subscriptions, CP-SAT
    trace = load_trace(random_subscriptions(100 // SCALE, 20, 50 // SCALE or 1, 20))
    seconds, answer = timed(solve_horizon, trace, "sticky", SolveOptions(time_limit=60))
    moves, bound = answer.info["moves"], answer.bound
    gap = (moves - bound) / moves if moves and bound is not None else 0.0
    step = models.trace(trace, "sticky", "step", time_limit=600)  # one budget for all 20 steps
    print(
        f"\nrandom subscriptions, {100 // SCALE} members, 20 steps: horizon {answer.status} "
        f"({answer.info['method']}), {moves:,} moves, bound {bound}, {seconds:.1f} s; "
        f"the step optimum (each step alone) {step.moves:,} moves"
    )
    lines.append(
        target(
            "CP-SAT horizon of random subscriptions proven or within 1 % in 60 s",
            answer.status == "optimal" or (bound is not None and gap <= 0.01),
            f"{answer.status}, gap {100 * gap:.2f} %, {seconds:.1f} s",
        )
    )

    # 3. decommission
    brokers, partitions = 100, 100_000 // SCALE
    trace = load_trace(decommission(brokers, partitions, 10))
    seconds, answer = timed(solve_horizon, trace, "sticky-replica")
    print(
        f"\ndecommission 10 of {brokers} brokers one at a time, {partitions:,} partitions x RF 3: "
        f"horizon {answer.status}, {answer.info['moves']:,} replica moves "
        f"(bound {answer.bound}), {seconds:.1f} s"
    )
    lines.append(
        target(
            "replica horizon of the decommission proven within 60 s",
            answer.status == "optimal" and seconds <= 60,
            f"{answer.status}, {seconds:.1f} s",
        )
    )
    print_targets(lines, "at the end")


if __name__ == "__main__":
    main()
