"""The measured gap of KIP-848's server assignors (``uniform``, ``server-range``) on the sticky objective.

Every ``sticky`` scenario of the ``gate`` suite (equal and random-subset subscriptions, every churn
event, two sizes, two seeds) and the KIP-848 shapes of the ``default`` suite (Kafka's server-side
benchmark: equal and 5 buckets, 10 partitions per member, fresh and a member joining), each
heuristic against the proven optimum of the sticky flow model (no racks: docs/design/objectives.md
judges these baselines on ``sticky``).  Per subscription pattern and assignment (fresh or after a
churn event): scenarios, the mean and max relative level-1 gap (sum of squared member counts), how
often level 1 is optimal, and the mean extra moves where level 1 is tied.

    .venv/bin/python benchmarks/kip848_gaps.py
"""

from __future__ import annotations

import collections

import models
from experiments.experiment import suite
from experiments.scenarios import KIP848_PATTERNS, build_problem
from problems import evaluate, load_problem

HEURISTICS = ("uniform", "server-range", "range", "roundrobin", "sticky")


def scenarios():
    gate = [s for s in suite("gate") if s.judged_on == "sticky"]
    kip848 = [
        s
        for s in suite("default")
        if s.judged_on == "sticky"
        and s.pattern in KIP848_PATTERNS
        and s.churn in ("fresh", "member-joins")
        and s.partitions == 10 * s.members
    ]
    return list(dict.fromkeys(gate + kip848))


def main() -> None:
    rows = collections.defaultdict(list)
    for scenario in scenarios():
        problem = load_problem(build_problem(scenario))
        best = models.solve(problem, "sticky", "flow")
        assert best.status == "optimal"
        level1, level2 = best.objective[:2]
        for name in HEURISTICS:
            ours = evaluate(problem, models.solve(problem, name).answer, "sticky").objective
            key = (scenario.pattern, "fresh" if scenario.churn == "fresh" else "after churn", name)
            rows[key].append(
                (
                    (ours[0] - level1) / level1 if level1 else 0.0,
                    ours[1] - level2 if ours[0] == level1 else None,
                )
            )
    print(
        "| subscriptions | assignment | heuristic | scenarios | mean rel. gap level 1 | max | level 1 optimal "
        "| mean extra moves (level 1 tied) |"
    )
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for (pattern, kind, name), gaps in sorted(rows.items()):
        relative = [g for g, _ in gaps]
        moves = [m for _, m in gaps if m is not None]
        extra = f"{sum(moves) / len(moves):.2f}" if moves else "-"
        print(
            f"| {pattern} | {kind} | {name} | {len(gaps)} | {100 * sum(relative) / len(relative):.2f}% "
            f"| {100 * max(relative):.1f}% | {sum(g == 0 for g in relative)}/{len(gaps)} | {extra} |"
        )


if __name__ == "__main__":
    main()
