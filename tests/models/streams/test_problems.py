"""The exact streams backends on tiny streams-group documents, against every answer enumerated and
scored by the one evaluator (problems/streams/).

Each tiny group has 1-3 processes (1-2 members each, 1-2 threads), 2-4 tasks over one or two
subtopologies, ``num_standby_replicas`` 0 or 1, random lags, racks and a previous assignment.
Every answer is enumerated: each task's active member, and each stateful task's standbys (up to
``num_standby_replicas``, on processes holding no other copy).  Warm-ups are left out of the
enumeration: they enter no level and only take a process's place, so no optimum needs one.
"""

from __future__ import annotations

import itertools
import random
import time

import numpy as np
import pytest

from models.options import SolveOptions
from models.streams import cpsat as cpsat_streams
from models.streams import flow as flow_streams
from models.streams import mip as mip_streams
from models.streams.data import streams_data
from problems import evaluate, load_problem
from problems.streams import StreamsAssignment, StreamsProblem, required_standbys


def tiny_document(seed: int) -> dict:
    rng = random.Random(seed)
    processes = rng.randint(1, 3)
    members = []
    for p in range(processes):
        for k in range(rng.randint(1, 2) if processes < 3 else 1):
            members.append({"id": f"m{p}{k}", "process": f"p{p}", "threads": rng.randint(1, 2)})
    racks = rng.random() < 0.5
    if racks:
        for member in members:
            member["rack"] = f"r{int(member['process'][1:]) % 2}"
    tasks = rng.randint(2, 4 if len(members) <= 3 else 3)
    split = [tasks] if tasks < 3 or rng.random() < 0.5 else [tasks - 1, 1]
    subs = {}
    for s, count in enumerate(split):
        sub = {"partitions": count, "stateful": rng.random() < 0.7}
        if racks:
            sub["partition_racks"] = {
                f"topic{s}": [[rng.choice(["r0", "r1", "r2"])] for _ in range(count)]
            }
        subs[f"s{s}"] = sub
    by_process: dict[str, dict] = {}
    for name, sub in subs.items():
        for k in range(sub["partitions"]):
            owner = rng.choice([None, *members])
            if owner is not None:
                owner.setdefault("active", {}).setdefault(name, []).append(k)
    for member in members:
        if member["process"] in by_process:
            member["lags"] = by_process[member["process"]]
            continue
        lags = {
            name: [rng.choice([-1, 0, 0, 300, 2000]) for _ in range(sub["partitions"])]
            for name, sub in subs.items()
            if sub["stateful"]
        }
        by_process[member["process"]] = lags
        member["lags"] = lags
    standbys = rng.randint(0, 1)
    return {
        "kind": "streams-group",
        "subtopologies": subs,
        "members": members,
        "configs": {"num_standby_replicas": standbys},
    }


def every_answer(problem: StreamsProblem):
    """Every answer without warm-ups that keeps the copy and standby constraints (each stateful task
    exactly its required standbys, on processes without another copy)."""
    members = range(problem.num_members)
    required = required_standbys(problem).tolist()
    for active in itertools.product(members, repeat=problem.n_tasks):
        options = []
        for t in range(problem.n_tasks):
            if not problem.task_stateful[t]:
                options.append([()])
                continue
            own = int(problem.member_process[active[t]])
            options.append(
                [
                    c
                    for c in itertools.combinations(members, required[t])
                    if len({own, *(int(problem.member_process[m]) for m in c)}) == required[t] + 1
                ]
            )
        for pick in itertools.product(*options):
            rows = [(t, m) for t, c in enumerate(pick) for m in c]
            yield StreamsAssignment.of(active, rows)


def enumerated_optimum(problem: StreamsProblem) -> tuple[int, ...]:
    best = None
    for answer in every_answer(problem):
        verdict = evaluate(problem, answer, "streams")
        assert verdict.valid, verdict.violations
        levels = tuple(verdict.objective)
        best = levels if best is None or levels < best else best
    assert best is not None
    return best


@pytest.mark.parametrize("seed", range(16))
def test_backends_meet_the_enumerated_optimum_of_tiny_groups(seed):
    """Tests that CP-SAT and the MIP prove the enumerated optimum on every level, that the flow
    meets it where it says optimal, and that every bound is at or below every backend's answer."""
    problem = load_problem(tiny_document(seed))
    best = enumerated_optimum(problem)
    options = SolveOptions(time_limit=20)
    results = {
        "cpsat": cpsat_streams.solve(problem, options),
        "mip": mip_streams.solve(problem, options),
        "flow": flow_streams.solve(problem, options),
    }
    for solver in ("cpsat", "mip"):
        assert results[solver].status == "optimal", solver
        assert tuple(results[solver].objective) == best == results[solver].bound, solver
    flow = results["flow"]
    assert flow.valid and tuple(flow.objective) >= best
    assert flow.bound[:2] == best[:2]
    if flow.status == "optimal":
        assert tuple(flow.objective) == best
    found = min(tuple(r.objective) for r in results.values())
    for solver, result in results.items():
        assert result.valid, solver
        assert tuple(result.bound) <= found[: len(result.bound)], solver


@pytest.mark.parametrize("seed", range(16))
def test_model_levels_equal_the_evaluator(seed):
    """Tests that the models' arrays (models/streams/data.py) score answers as the evaluator does."""
    problem = load_problem(tiny_document(seed))
    data = streams_data(problem)
    rng = np.random.default_rng(seed)
    answers = list(every_answer(problem))
    for i in rng.choice(len(answers), size=min(25, len(answers)), replace=False).tolist():
        answer = answers[i]
        expected = tuple(evaluate(problem, answer, "streams").objective)
        assert data.levels(answer.active, answer.standby) == expected


@pytest.mark.parametrize("backend", ["cpsat", "mip"])
def test_out_of_time_answers_are_feasible_with_a_bound_below_the_optimum(backend):
    """Tests that a streams model stopped by its time limit says ``feasible`` (or ``unknown``
    without an answer), never ``optimal`` unproven, with a bound at or below the flow's proven
    optimum, and stops within its limit plus the solvers' grace."""
    from experiments.streams_scenarios import streams_document

    problem = load_problem(
        streams_document(120, 12, 4, 3, churn="member-leaves", pattern="racked", lags="zipf")
    )
    best = flow_streams.solve(problem, SolveOptions())
    assert best.status == "optimal"  # no standbys required: the flow proves every level
    module = cpsat_streams if backend == "cpsat" else mip_streams
    limit = 0.3
    started = time.perf_counter()
    result = module.solve(problem, SolveOptions(time_limit=limit))
    assert time.perf_counter() - started < limit + 5.0
    if result.status == "optimal":
        assert result.objective == best.objective
    elif result.status == "feasible":
        assert result.valid and tuple(result.objective) >= tuple(best.objective)
        assert tuple(result.bound) <= tuple(best.objective)[: len(result.bound)]
    else:
        assert result.status == "unknown" and result.answer is None
