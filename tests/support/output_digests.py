"""Digests of every runner's answers: the proof that a change of layout changes no output.

Every registered ``(strategy, solver)`` pair (every heuristic with each of its variants, every
exact backend with each of its variants) answers every example of ``examples/`` of its family and
a few hundred small seeded cases of the scenario generators; every strategy runs through every
trace of ``examples/traces`` with its heuristic and with ``step``.  Each answer is reduced to the
SHA-256 of its canonical JSON (what ``assign`` prints: assignment, status, objective, bound,
violations, info; times left out); the cases are
small enough that each exact solve proves its optimum well inside its time limit, and CP-SAT runs
on one worker with a fixed seed, so the digests are the same on every run of the same code.

``python tests/support/output_digests.py --write`` records them in
``tests/data/output_digests.json``; without ``--write`` it recomputes them and prints every
difference (exit status 1 when there is one).  ``tests/test_output_digests.py`` recomputes a part.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "tests" / "data" / "output_digests.json"
EXAMPLES = ROOT / "examples"

#: Options of every exact solve: one CP-SAT worker, a fixed seed, time enough to prove the optimum.
EXACT_OPTIONS: dict[str, Any] = {"workers": 1, "seed": 0, "time_limit": 60.0}

#: Generated cases per family (``judged_on`` of :class:`experiments.scenarios.Scenario`).
GROUP_JUDGED = ("sticky", "rack-aware", "lag-aware", "stream-join", "share")
GENERATED = {"group": 250, "streams": 100, "placement": 100}


def _plain(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def digest(doc: Any) -> str:
    """The SHA-256 (hex, first 20 digits) of ``doc``'s canonical JSON."""
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=_plain)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def answer_doc(result: Any) -> dict[str, Any]:
    """What of a :class:`problems.Result` is compared: what ``assign`` prints, times left out."""
    return {k: v for k, v in result.to_json().items() if not isinstance(v, float)}


def trace_doc(run: Any) -> dict[str, Any]:
    """What of a :class:`models.trace.TraceResult` is compared: every line ``trace`` prints,
    times left out."""
    return {
        "steps": [
            {k: v for k, v in step.to_json().items() if not isinstance(v, float)}
            for step in run.steps
        ],
        "summary": run.summary(),
    }


# ----------------------------------------------------------------------------- the cases
def example_cases() -> Iterator[tuple[str, dict[str, Any]]]:
    """Every problem document of ``examples/`` (traces apart), by its path."""
    for folder in ("group", "share", "streams", "placement"):
        for path in sorted((EXAMPLES / folder).glob("*.json")):
            yield f"examples/{folder}/{path.name}", json.loads(path.read_text())


def generated_cases(counts: dict[str, int] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """Small seeded cases of the scenario generators, the same on every run."""
    from experiments.scenarios import (
        GROUP_CHURN,
        LAGS,
        PATTERNS,
        PLACEMENT_CHURN,
        Scenario,
        build_problem,
    )
    from experiments.streams_scenarios import CHURN as STREAMS_CHURN
    from experiments.streams_scenarios import PATTERNS as STREAMS_PATTERNS

    counts = GENERATED if counts is None else counts
    rng = np.random.default_rng(20261128)
    scenarios: list[Scenario] = []
    for i in range(counts.get("group", 0)):
        judged = GROUP_JUDGED[i % len(GROUP_JUDGED)]
        scenarios.append(
            Scenario(
                "group",
                judged,
                str(rng.choice(GROUP_CHURN)),
                partitions=int(rng.integers(2, 9)),
                members=int(rng.integers(2, 5)),
                topics=int(rng.integers(1, 3)),
                seed=i,
                pattern=str(rng.choice(PATTERNS)),
                lags=str(rng.choice(LAGS)) if judged in ("lag-aware", "stream-join") else "zero",
                replication=int(rng.integers(1, 3)) if judged == "rack-aware" else 0,
            )
        )
    for i in range(counts.get("streams", 0)):
        scenarios.append(
            Scenario(
                "group",
                "streams-sticky",
                str(rng.choice(STREAMS_CHURN)),
                partitions=int(rng.integers(2, 7)),
                members=int(rng.integers(2, 4)),
                topics=int(rng.integers(1, 3)),
                seed=i,
                pattern=str(rng.choice(STREAMS_PATTERNS)),
                lags=str(rng.choice(LAGS)),
                replication=int(rng.integers(0, 2)),
            )
        )
    for i in range(counts.get("placement", 0)):
        brokers = int(rng.integers(3, 6))
        scenarios.append(
            Scenario(
                "placement",
                "sticky-replica",
                str(rng.choice(PLACEMENT_CHURN)),
                partitions=int(rng.integers(2, 7)),
                members=brokers,
                topics=int(rng.integers(0, 3)),
                seed=i,
                replication=int(rng.integers(1, 3)),
            )
        )
    for scenario in scenarios:
        yield f"generated/{scenario.scenario_id}", build_problem(scenario)


# ----------------------------------------------------------------------------- the runs
def _runs(family: str) -> Iterator[tuple[str, str, str | None]]:
    """Every ``(strategy, solver, variant)`` of a problem family."""
    from models.registry import STRATEGIES

    for name, entry in STRATEGIES.items():
        if entry.family != family:
            continue
        for solver in entry.solvers:
            for variant in entry.runner(solver).variants:
                yield name, solver, variant


def _family(problem: Any) -> str:
    from problems import PlacementProblem
    from problems.streams import StreamsProblem

    if isinstance(problem, StreamsProblem):
        return "streams"
    return "placement" if isinstance(problem, PlacementProblem) else "group"


def _guarded(compute: Callable[..., dict[str, Any]], *args: Any, **kwargs: Any) -> dict[str, Any]:
    """``compute(*args, **kwargs)``, or the error it raised (a refusal is an output too)."""
    try:
        return compute(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - the error's type and text are compared
        message = str(error).replace(f"{ROOT}/", "")  # the same wherever the tree is
        return {"error": type(error).__name__, "message": message}


def _solved(problem: Any, strategy: str, solver: str, options: dict[str, Any]) -> dict[str, Any]:
    from models import solve

    return answer_doc(solve(problem, strategy, solver, **options))


def _frontier(problem: Any, strategy: str, solver: str, options: dict[str, Any]) -> dict[str, Any]:
    """The moves/quality frontier up to 2 moves."""
    from models import frontier

    return {"points": [answer_doc(r) for r in frontier(problem, strategy, solver, 2, **options)]}


def _traced(loaded: Any, strategy: str, solver: str, options: dict[str, Any]) -> dict[str, Any]:
    from models import trace

    return trace_doc(trace(loaded, strategy, solver, **options))


def case_digests(case: str, doc: dict[str, Any], solvers: set[str] | None = None) -> dict[str, str]:
    """The digest of every run of ``case`` (``solvers``: only those, e.g. ``{"heuristic"}``)."""
    from problems import parse_problem

    problem = parse_problem(doc)
    out: dict[str, str] = {}
    for strategy, solver, variant in _runs(_family(problem)):
        if solvers is not None and solver not in solvers:
            continue
        options = {"variant": variant}
        if solver != "heuristic":
            options.update(EXACT_OPTIONS)
        elif strategy == "kafka-default":
            options["seed"] = 0
        key = f"{case}|{strategy}|{solver}|{variant or ''}"
        out[key] = digest(_guarded(_solved, problem, strategy, solver, options))
        if solver != "heuristic" and strategy == "sticky-replica" and case.startswith("examples/"):
            out[f"{key}|frontier2"] = digest(
                _guarded(_frontier, problem, strategy, solver, options)
            )
    return out


def trace_digests(
    solvers: tuple[str, ...] = ("heuristic", "step"), names: tuple[str, ...] | None = None
) -> dict[str, str]:
    """Every strategy through every trace of ``examples/traces`` (``names``: only those)."""
    from models.registry import STRATEGIES
    from problems.trace import load_trace

    out: dict[str, str] = {}
    for path in sorted((EXAMPLES / "traces").glob("*.json")):
        if names is not None and path.name not in names:
            continue
        loaded = load_trace(path)
        for strategy in STRATEGIES:
            for solver in solvers:
                options = {} if solver == "heuristic" else EXACT_OPTIONS
                key = f"examples/traces/{path.name}|{strategy}|trace-{solver}|"
                out[key] = digest(_guarded(_traced, loaded, strategy, solver, options))
    return out


def all_digests(progress: bool = False) -> dict[str, str]:
    """Every digest: the examples, the generated cases, the traces."""
    out: dict[str, str] = {}
    cases = [*example_cases(), *generated_cases()]
    for i, (case, doc) in enumerate(cases):
        out.update(case_digests(case, doc))
        if progress and i % 20 == 0:
            print(f"{i}/{len(cases)} cases", file=sys.stderr, flush=True)
    out.update(trace_digests())
    return out


def by_case(digests: dict[str, str]) -> dict[str, dict[str, str]]:
    """``{case: {"strategy|solver|variant": digest}}``: how the record keeps them."""
    out: dict[str, dict[str, str]] = {}
    for key, value in digests.items():
        case, _, run = key.partition("|")
        out.setdefault(case, {})[run] = value
    return out


def recorded() -> dict[str, str]:
    """The recorded digests, by ``case|strategy|solver|variant``."""
    nested = json.loads(RECORD.read_text())
    return {f"{case}|{run}": value for case, runs in nested.items() for run, value in runs.items()}


def differences(expected: dict[str, str], actual: dict[str, str]) -> list[str]:
    """Each key whose digest differs, or that only one side has."""
    return [
        f"{key}: {expected.get(key)} -> {actual.get(key)}"
        for key in sorted(expected.keys() | actual.keys())
        if expected.get(key) != actual.get(key)
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"record the digests in {RECORD}")
    args = parser.parse_args(argv)
    actual = all_digests(progress=True)
    if args.write:
        RECORD.write_text(json.dumps(by_case(actual), indent=1, sort_keys=True) + "\n")
        print(f"{len(actual)} digests written to {RECORD.relative_to(ROOT)}")
        return 0
    expected = recorded()
    found = differences(expected, actual)
    print("\n".join(found))
    cases = len({key.split("|")[0] for key in actual})
    print(f"{cases} cases, {len(actual)} runs, {len(found)} differences")
    return 1 if found else 0


if __name__ == "__main__":
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    sys.exit(main())
