"""A recorded trace beside the strategies: ``rebalance-lab trace`` on what ``record`` wrote.

With ``--strategy S`` every step line of a recorded trace gains an ``observed`` object (what the
members held, judged on S: ``objective``, ``moves``, ``valid``, and the recording's ``rounds``,
``settle_ms``, ``unowned_partition_ms``) and the summary line the observed totals.  With
``--compare`` it prints one line per row instead, ``observed`` first, then every consumer-group
strategy's heuristic and the horizon optimum of the judged objective, each row with its moves,
its objective sums judged on one strategy (``--strategy``, default the recorded assignor when
the lab has it, else ``sticky``), its balance (the sum over the steps of the most partitions a
member holds minus the fewest), its valid steps and its rounds; ``--report`` prints the rows as
a table on stderr.  Details: docs/record.md.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson

from models.registry import STRATEGIES, UsageError
from models.trace import TraceResult, trace
from models.trace.observed import imbalance, measured_total, observed_run
from problems.evaluate import evaluate
from problems.trace import Trace

#: Group strategies that answer a recorded consumer group (a share group's answer is another
#: kind: a partition may go to several members).
NOT_COMPARED = frozenset({"share"})
#: The judged strategy when neither --strategy nor a known recorded assignor names one.
DEFAULT_JUDGE = "sticky"


def observed_step(run: TraceResult, k: int) -> dict[str, Any]:
    step = run.steps[k]
    doc: dict[str, Any] = {
        "objective": list(step.objective),
        "moves": step.moves,
        "valid": step.result is not None
        and step.result.evaluation is not None
        and step.result.evaluation.valid,
    }
    doc.update(step.info)
    return doc


def judge_of(loaded: Trace, args: argparse.Namespace) -> str:
    """The strategy every row is judged on."""
    if args.strategy is not None:
        return str(args.strategy)
    assignor = (loaded.recorded or {}).get("assignor")
    if assignor in STRATEGIES and STRATEGIES[assignor].family == "group":
        return str(assignor)
    return DEFAULT_JUDGE


def _valid(run: TraceResult, judge: str | None) -> tuple[int, tuple[int, ...]]:
    """Valid steps and objective sums of ``run`` judged on ``judge`` (its own when ``None``)."""
    valid, sums = 0, None
    for step in run.steps:
        result = step.result
        if result is None or result.answer is None:
            continue
        evaluation = (
            result.evaluation
            if judge is None
            else evaluate(
                result.problem, result.answer, STRATEGIES[judge].objective_on(result.problem)
            )
        )
        assert evaluation is not None  # the step has an answer
        valid += bool(evaluation.valid)
        levels = tuple(int(v) for v in evaluation.objective)
        sums = levels if sums is None else tuple(a + b for a, b in zip(sums, levels))
    return valid, sums or ()


def row(run: TraceResult, judge: str | None) -> dict[str, Any]:
    """One row: moves, objective sums, balance, valid steps, rounds (and what was measured)."""
    valid, sums = _valid(run, judge)
    spreads = [imbalance(s) for s in run.steps]
    rounds = [s.info.get("rounds", s.rounds if s.rounds is not None else 1) for s in run.steps[1:]]
    doc: dict[str, Any] = {
        "row": f"{run.strategy}" if run.solver == "recorded" else f"{run.strategy}/{run.solver}",
        "steps": len(run.steps) - 1,
        "moves": run.moves,
        "objective_sums": list(sums),
        "imbalance": sum(v for v in spreads if v is not None),
        "valid_steps": valid,
        "rounds": sum(rounds),
        "status": run.status,
    }
    for key in ("settle_ms", "unowned_partition_ms"):
        total = measured_total(run, key)
        if total is not None:
            doc[key] = total
    return doc


def compare(loaded: Trace, args: argparse.Namespace) -> int:
    """``--compare``: the rows as JSON lines (and a table with ``--report``)."""
    if loaded.recorded is None:
        raise UsageError("--compare needs a recorded trace (rebalance-lab record)")
    if args.solver not in (None, "heuristic") or args.lookahead is not None:
        raise UsageError("--compare runs every strategy's heuristic and the horizon itself")
    judge = judge_of(loaded, args)
    runs = [observed_run(loaded, judge)]
    for name, entry in STRATEGIES.items():
        if entry.family == "group" and name not in NOT_COMPARED:
            runs.append(trace(loaded, name, "heuristic", seed=args.seed))
    runs.append(trace(loaded, judge, "horizon", time_limit=args.time_limit, workers=args.workers))
    rows = [row(run, judge) | {"judged_on": judge} for run in runs]
    for line in rows:
        sys.stdout.write(orjson.dumps(line).decode() + "\n")
    if args.report:
        _table(rows)
    return 0


def print_rows(runs: list[TraceResult]) -> None:
    """The rows of ``runs`` (each judged on its own strategy) as a table on stderr."""
    _table([row(run, None) for run in runs])


def _table(rows: list[dict[str, Any]]) -> None:
    columns = [
        "row",
        "moves",
        "objective_sums",
        "imbalance",
        "valid_steps",
        "rounds",
        "settle_ms",
        "unowned_partition_ms",
    ]
    cells = [columns] + [
        [
            str(line.get(c, "")) if c != "valid_steps" else f"{line[c]}/{line['steps'] + 1}"
            for c in columns
        ]
        for line in rows
    ]
    widths = [max(len(r[c]) for r in cells) for c in range(len(columns))]
    for r in cells:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip(), file=sys.stderr)
