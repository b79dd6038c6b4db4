"""The measured gap of Kafka 4's assignors with KIP-881 racks, by subscription pattern and rack layout.

The ``rack-aware`` scenarios of a suite (``default``: 24 partitions x 4 members x 3 topics and 200 x
10 x 5; equal subscriptions, random subsets and Kafka's 5 buckets; fresh, a member joining, a member
leaving; members on 3 racks with every partition's replicas on 2 of them or on all 3, and the same
groups without racks) run through the harness's own code (:func:`experiments.runs.solve_frame`:
every baseline and the exact models, each answer re-scored by the evaluator on the ``rack-aware``
objective; the gaps by :func:`experiments.gap.gaps` against the proven optimum). Per rack layout,
subscription pattern and heuristic: scenarios, the mean and max relative level-1 gap (sum of squared
member counts), the mean extra rack mismatches where level 1 ties, the mean extra moves where levels
1 and 2 tie, and how often the answer is optimal on every level; cooperative-sticky's rounds (its
completed assignment is judged).

    .venv/bin/python benchmarks/rack_gaps.py
    .venv/bin/python benchmarks/rack_gaps.py --suite gate
"""

from __future__ import annotations

import argparse
import collections
import time

import numpy as np

from experiments.experiment import suite
from experiments.gap import gaps, tied_above
from experiments.runs import TIME_LIMITS, scenario_frame, solve_frame
from experiments.scenarios import RACKS, build_problem
from heuristics.sticky import cooperative_sticky
from problems import load_problem

NAMES = {
    "rack-aware": "sticky (KIP-881)",
    "range": "range (KIP-881)",
    "roundrobin": "round robin",
    "cooperative-sticky": "cooperative-sticky",
    "uniform": "uniform (KIP-848)",
    "server-range": "server range (KIP-848)",
}


def layout(replication: int) -> str:
    return f"replicas on {replication} of {RACKS} racks" if replication else "no racks"


def _mean(values: np.ndarray, fmt: str) -> str:
    return format(float(values.mean()), fmt) if len(values) else "-"


def main(args) -> None:
    scenarios = [s for s in suite(args.suite) if s.judged_on == "rack-aware"]
    started = time.perf_counter()
    rows = solve_frame(scenario_frame(scenarios), TIME_LIMITS[args.suite])
    elapsed = time.perf_counter() - started
    table = gaps(rows)
    proven = table[table["ref_status"].astype(object) == "optimal"].copy()
    print(
        f"{len(scenarios)} rack-aware scenarios of suite {args.suite!r}, {proven['scenario_id'].nunique()} with a "
        f"proven optimum; {elapsed:.0f} s\n"
    )
    print(
        "| racks | subscriptions | heuristic | scenarios | mean rel. gap level 1 | max | level 1 optimal "
        "| mean extra mismatches (level 1 tied) | mean extra moves (levels 1-2 tied) | optimal on every level |"
    )
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    proven["tied2"], proven["tied3"] = tied_above(proven, 2), tied_above(proven, 3)
    order = {name: i for i, name in enumerate(NAMES)}
    groups = proven.groupby(["replication", "pattern", "heuristic"], sort=False)
    keys = sorted(groups.groups, key=lambda k: (-k[0], k[1], order.get(k[2], len(order))))
    for replication, pattern, heuristic in keys:
        g = groups.get_group((replication, pattern, heuristic))
        rel = g["rel_gap1"].to_numpy(dtype=float)
        mismatches = g.loc[g["tied2"], "gap2"].to_numpy(dtype=float)
        moves = g.loc[g["tied3"], "gap3"].to_numpy(dtype=float)
        print(
            f"| {layout(replication)} | {pattern} | {NAMES.get(heuristic, heuristic)} | {len(g)} "
            f"| {100 * rel.mean():.2f}% | {100 * rel.max():.1f}% | {int((rel == 0).sum())}/{len(g)} "
            f"| {_mean(mismatches, '.2f')} | {_mean(moves, '.2f')} | {100 * g['heuristic_optimal'].mean():.0f}% |"
        )
    missing = table[table["ref_status"].astype(object) != "optimal"]["scenario_id"].nunique()
    if missing:
        print(f"\n{missing} scenarios without a proven optimum (left out)")
    rounds = collections.Counter()
    for scenario in scenarios:
        rounds[cooperative_sticky.assign(load_problem(build_problem(scenario))).info["rounds"]] += 1
    print(
        "\ncooperative-sticky rounds to complete its assignment: "
        + ", ".join(
            f"{n} round{'s' if n > 1 else ''}: {count} scenarios"
            for n, count in sorted(rounds.items())
        )
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="default", choices=("smoke", "gate", "default", "scale"))
    main(parser.parse_args())
