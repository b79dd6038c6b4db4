"""The horizon over a trace (models/horizon/horizon.py) against an independent oracle, and its properties.

The oracle enumerates every assignment of every step of a tiny trace, keeps those at the step's
optimum of the levels above moves, and finds the fewest trace moves by a dynamic program over the
steps: it shares no code with the models beyond the trace's parsed steps.
"""

from __future__ import annotations

import itertools
import random
import time
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import models
from models.horizon import cpsat as cpsat_horizon
from models.horizon.bound import lp_bound
from models.horizon.classes import trace_classes
from models.horizon.cpsat import count_bound
from models.horizon.horizon import solve_horizon
from models.horizon.levels import count_box, step_policy
from models.horizon.steps import group_steps
from models.options import SolveOptions
from models.registry import STRATEGIES
from problems import (
    GroupProblem,
    PlacementProblem,
    ProblemError,
    evaluate,
    join_partition_count,
    owner_from_assignment,
    parse_problem,
)
from problems.trace import (
    Trace,
    load_trace,
    next_document,
    placement_trace_moves,
    step_problems,
    trace_moves,
)

ABOVE = {"sticky": 1, "rack-aware": 2, "stream-join": 1}


# ------------------------------------------------------------------ the oracle
def _candidates(problem: GroupProblem, kind: str) -> tuple[np.ndarray, tuple[int, ...]]:
    """Every owner array of the step at its optimum of the levels above moves, and those levels."""
    if kind == "stream-join":
        return _number_candidates(problem)
    parts = list(range(problem.num_partitions))
    choices = []
    for g in parts:
        subscribers = [m for m in range(problem.num_members) if _subscribes(problem, m, g)]
        choices.append(subscribers or [-1])
    owners = np.array(list(itertools.product(*choices)), dtype=np.int64).reshape(-1, len(parts))
    counts = np.stack([(owners == m).sum(axis=1) for m in range(problem.num_members)], axis=1)
    levels = [(counts**2).sum(axis=1)]
    if kind == "rack-aware":
        racks = problem.partition_rack_lists or ()
        mismatched = np.zeros(len(owners), dtype=np.int64)
        for g in parts:
            for m in range(problem.num_members):
                rack = problem.racks[m]
                if rack is not None and rack not in racks[g]:
                    mismatched += owners[:, g] == m
        levels.append(mismatched)
    keep = np.ones(len(owners), dtype=bool)
    best = []
    for level in levels:
        low = int(level[keep].min())
        keep &= level == low
        best.append(low)
    return owners[keep], tuple(best)


def _number_candidates(problem: GroupProblem) -> tuple[np.ndarray, tuple[int, ...]]:
    """Stream-join: every owner of the partition numbers below K (the smallest partition count of
    the subscribed topics), ``(t, j)`` to number ``j``'s owner when it subscribes ``t``."""
    existing = {t for t, n in zip(problem.topics, problem.partition_counts.tolist()) if n > 0}
    subscribed = {t for sub in problem.subscriptions for t in sub} & existing
    count = min(
        (n for t, n in zip(problem.topics, problem.partition_counts) if t in subscribed), default=0
    )
    eligible = [m for m in range(problem.num_members) if set(problem.subscriptions[m]) & existing]
    rows, best = [], None
    for numbers in itertools.product(eligible, repeat=int(count)):
        level = sum(numbers.count(m) ** 2 for m in eligible)
        owner = [-1] * problem.num_partitions
        for g in range(problem.num_partitions):
            j = int(problem.partition_index[g])
            if j < count and _subscribes(problem, numbers[j], g):
                owner[g] = numbers[j]
        if best is None or level < best:
            rows, best = [owner], level
        elif level == best:
            rows.append(owner)
    owners = np.array(rows, dtype=np.int64).reshape(len(rows), problem.num_partitions)
    return owners, (best or 0,)


def _subscribes(problem: GroupProblem, m: int, g: int) -> bool:
    topic = problem.topics[int(problem.partition_topic[g])]
    return topic in problem.subscriptions[m]


def _wide(
    problem: GroupProblem,
    owners: np.ndarray,
    keys: dict[tuple[str, int], int],
    ids: dict[str, int],
) -> np.ndarray:
    """Owner rows over trace-wide partition keys, members by id code (-1: no owner)."""
    columns = [
        keys.setdefault(
            (problem.topics[int(problem.partition_topic[g])], int(problem.partition_index[g])),
            len(keys),
        )
        for g in range(problem.num_partitions)
    ]
    codes = np.array([ids.setdefault(m, len(ids)) for m in problem.members] + [-1], dtype=np.int64)
    wide = np.full((len(owners), 64), -1, dtype=np.int64)
    wide[:, columns] = codes[owners]
    return wide


def oracle(trace: Trace, strategy: str) -> tuple[list[tuple[int, ...]], int]:
    """Per-step optimal levels and the fewest total trace moves, by enumeration and DP."""
    problems = step_problems(trace)
    levels, cost, before = [], None, None
    keys: dict[tuple[str, int], int] = {}
    ids: dict[str, int] = {}
    for problem in problems:
        assert isinstance(problem, GroupProblem)
        owners, best = _candidates(problem, STRATEGIES[strategy].objective_on(problem))
        levels.append(best)
        rows = _wide(problem, owners, keys, ids)
        if before is None:
            cost = np.zeros(len(rows), dtype=np.int64)
        else:
            moves = np.zeros((len(before), len(rows)), dtype=np.int64)
            for u in range(len(keys)):
                old, new = before[:, u][:, None], rows[:, u][None, :]
                moves += (old >= 0) & (new >= 0) & (old != new)
            cost = (cost[:, None] + moves).min(axis=0)
        before = rows
    assert cost is not None
    return levels, int(cost.min())


# ------------------------------------------------------------------ random traces
def random_trace(
    seed: int, equal: bool, racks: bool = False, deletions: bool = True
) -> dict[str, Any]:
    """A tiny group trace: 2-4 members, at most 7 partitions, 1-4 steps of one or two events
    (joins, leaves, restarts, topic growth and deletion, new subscriptions)."""
    rng = random.Random(seed)
    topics = {f"t{i}": rng.randint(2, 3) for i in range(rng.randint(1, 2))}
    names = list(topics)

    def subscription() -> list[str]:
        return list(names) if equal else rng.sample(names, rng.randint(1, len(names)))

    def rack() -> str:
        return rng.choice(["r0", "r1"])

    members = [{"id": f"m{i}", "topics": subscription()} for i in range(rng.randint(2, 3))]
    if racks:
        for member in members:
            member["rack"] = rack()
    problem: dict[str, Any] = {"topics": dict(topics), "members": members}
    if racks:
        problem["partition_racks"] = {t: [[rack()] for _ in range(n)] for t, n in topics.items()}
    present = [m["id"] for m in members]
    fresh = len(members)
    steps = []
    for _ in range(rng.randint(1, 4)):
        events = ["join", "join", "leave", "leave", "restart", "subscribe"]
        if not racks:
            events += ["grow", "grow"] + ["delete"] * deletions
        step: dict[str, Any] = {}
        for event in rng.sample(events, rng.randint(1, 2)):
            if event == "join" and len(present) < 4 and "join" not in step:
                member: dict[str, Any] = {"id": f"m{fresh}", "topics": subscription()}
                if racks:
                    member["rack"] = rack()
                step["join"] = [member]
                present.append(f"m{fresh}")
                fresh += 1
            elif event in ("leave", "restart") and len(present) > 1 and not step:
                gone = rng.choice(present)
                if event == "leave":
                    present.remove(gone)
                step[event] = [gone]
            elif event == "subscribe" and not equal and "subscribe" not in step:
                step["subscribe"] = {rng.choice(present): subscription()}
            elif event == "grow" and sum(topics.values()) < 7 and "topics" not in step:
                name = rng.choice(names + ["t9"] * (len(names) < 2 and equal))
                topics[name] = topics.get(name, 0) + rng.randint(1, 7 - sum(topics.values()))
                if name not in names:
                    names.append(name)
                    step["subscribe"] = {m: list(names) for m in present}
                step["topics"] = {name: topics[name]}
            elif event == "delete" and len(names) > 1 and not step:
                name = names.pop()
                del topics[name]
                step["topics"] = {name: 0}
        steps.append(step)
    return {"kind": "group-trace", "problem": problem, "steps": steps}


def check_against_oracle(doc: dict[str, Any], strategy: str) -> None:
    trace = load_trace(doc)
    levels, fewest = oracle(trace, strategy)
    answer = solve_horizon(trace, strategy, SolveOptions(time_limit=20))
    assert answer.status == "optimal", (doc, answer.info)
    assert answer.bound == fewest and answer.info["moves"] == fewest, (doc, answer.info)
    problems = step_problems(trace)
    rescored = 0
    for k, (problem, assignment) in enumerate(zip(problems, answer.assignments)):
        assert isinstance(problem, GroupProblem)
        verdict = evaluate(
            problem,
            owner_from_assignment(problem, assignment),
            STRATEGIES[strategy].objective_on(problem),
        )
        assert verdict.valid, verdict.violations
        kind = STRATEGIES[strategy].objective_on(problem)
        assert tuple(verdict.objective[: ABOVE[kind]]) == levels[k], (doc, k)
        if k:
            rescored += trace_moves(answer.assignments[k - 1], assignment)
    assert rescored == fewest


@pytest.mark.parametrize("seed", range(12))
def test_equal_subscriptions_match_the_oracle(seed: int) -> None:
    check_against_oracle(random_trace(seed, equal=True), "sticky")


@pytest.mark.parametrize("seed", range(12))
def test_random_subscriptions_match_the_oracle(seed: int) -> None:
    check_against_oracle(random_trace(100 + seed, equal=False), "sticky")


@pytest.mark.parametrize("seed", range(4))
def test_a_baseline_with_racks_is_judged_rack_aware(seed: int) -> None:
    check_against_oracle(random_trace(200 + seed, equal=False, racks=True), "range")


@pytest.mark.parametrize("seed", range(4))
def test_rack_aware_matches_the_oracle(seed: int) -> None:
    check_against_oracle(random_trace(300 + seed, equal=True, racks=True), "rack-aware")


def test_the_flow_answers_equal_subscriptions_without_deletions() -> None:
    doc = {
        "kind": "group-trace",
        "problem": {"topics": {"t0": 6}, "members": [{"id": "a", "topics": ["t0"]}]},
        "steps": [
            {"join": [{"id": "b", "topics": ["t0"]}]},
            {"topics": {"t0": 8}},
            {"restart": ["a"]},
        ],
    }
    answer = solve_horizon(load_trace(doc), "sticky")
    assert answer.info["method"] == "flow"
    assert (answer.status, answer.bound, answer.info["step_moves"]) == ("optimal", 3, [0, 3, 0, 0])


@pytest.mark.parametrize("seed", range(8))
def test_stream_join_numbers_match_the_oracle(seed: int) -> None:
    doc = random_trace(600 + seed, equal=True, deletions=False)
    counts = [join_partition_count(p) for p in step_problems(load_trace(doc))]
    if any(b < a for a, b in zip(counts, counts[1:])):  # a new topic with fewer partitions
        with pytest.raises(ProblemError, match="partition numbers fall"):
            solve_horizon(load_trace(doc), "stream-join")
        return
    check_against_oracle(doc, "stream-join")
    assert solve_horizon(load_trace(doc), "stream-join").info["method"] == "flow"


def test_stream_join_with_different_subscriptions_is_refused() -> None:
    doc = {
        "kind": "group-trace",
        "problem": {
            "topics": {"a": 2, "b": 2},
            "members": [{"id": "x", "topics": ["a", "b"]}, {"id": "y", "topics": ["a"]}],
        },
        "steps": [{"leave": ["x"]}],
    }
    with pytest.raises(ProblemError, match="stream-join: no exact horizon model here"):
        solve_horizon(load_trace(doc), "stream-join")


@pytest.mark.parametrize("strategy", ["sticky", "stream-join"])
def test_members_subscribing_nothing_stand_aside(strategy: str) -> None:
    doc = {
        "kind": "group-trace",
        "problem": {
            "topics": {"t": 4, "u": 4},
            "members": [
                {"id": "a", "topics": ["t", "u"]},
                {"id": "b", "topics": []},
                {"id": "c", "topics": ["t", "u"]},
            ],
        },
        "steps": [{"leave": ["a"]}, {"subscribe": {"b": ["t", "u"]}}, {"topics": {"t": 0}}],
    }
    check_against_oracle(doc, strategy)


def test_blocks_of_equal_subscriptions_are_flows() -> None:
    """Two groups of members on disjoint topics, joins and leaves in both: one flow per block."""
    doc = {
        "kind": "group-trace",
        "problem": {
            "topics": {"t": 3, "u": 4},
            "members": [
                {"id": "a", "topics": ["t"]},
                {"id": "b", "topics": ["u"]},
                {"id": "c", "topics": ["u"]},
            ],
        },
        "steps": [
            {"join": [{"id": "d", "topics": ["t"]}]},
            {"leave": ["b"], "topics": {"u": 5}},
            {"leave": ["a"], "join": [{"id": "e", "topics": ["u"]}]},
        ],
    }
    check_against_oracle(doc, "sticky")
    trace = load_trace(doc)
    assert solve_horizon(trace, "sticky").info["method"] == "flow"
    fewest = oracle(trace, "sticky")[1]
    for lookahead in (0, 1):
        policy = solve_horizon(trace, "sticky", lookahead=lookahead)
        assert policy.info["method"] == "flow" and policy.info["moves"] >= fewest


# ------------------------------------------------------------------ the known example
def test_the_leaver_is_given_the_smaller_share() -> None:
    """10 partitions, 3 members, one leaves next: the horizon gives the leaver 3, so 3 move; the
    step optimum alone may give it 4."""
    members = [{"id": f"c{i}", "topics": ["t0"]} for i in range(3)]
    doc = {
        "kind": "group-trace",
        "problem": {"topics": {"t0": 10}, "members": members},
        "steps": [{"leave": ["c2"]}],
    }
    trace = load_trace(doc)
    answer = solve_horizon(trace, "sticky")
    assert sum(len(p) for p in answer.assignments[0]["c2"].values()) == 3
    assert (answer.status, answer.bound, answer.info["moves"]) == ("optimal", 3, 3)
    assert answer.info["moves"] <= run_steps(trace, "sticky", "step")[1]


# ------------------------------------------------------------------ the step policy and heuristics
def run_steps(trace: Trace, strategy: str, solver: str) -> tuple[list[tuple[int, ...]], int]:
    """``strategy`` through the trace by ``models.trace`` (each step alone, the previous answer as
    claims; ``step``: each step's exact optimum): per-step levels above moves, total moves."""
    result = models.trace(trace, strategy, solver)
    levels = []
    for problem, step in zip(step_problems(trace), result.steps):
        assert isinstance(problem, GroupProblem)
        levels.append(tuple(step.objective[: ABOVE[STRATEGIES[strategy].objective_on(problem)]]))
    return levels, result.moves


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(seed=st.integers(0, 10_000), equal=st.booleans())
def test_horizon_beats_the_step_optimum_which_beats_the_heuristics(seed: int, equal: bool) -> None:
    trace = load_trace(random_trace(seed, equal))
    answer = solve_horizon(trace, "sticky", SolveOptions(time_limit=20))
    assert answer.status == "optimal"
    step_levels, step_total = run_steps(trace, "sticky", "step")
    assert answer.info["moves"] <= step_total
    for strategy in (
        "sticky",
        "cooperative-sticky",
        "range",
        "roundrobin",
        "uniform",
        "server-range",
    ):
        levels, total = run_steps(trace, strategy, "heuristic")
        if levels == step_levels:  # every step as balanced as it can be
            assert answer.info["moves"] <= total, strategy


# ------------------------------------------------------------------ lookahead
@pytest.mark.parametrize("seed", range(4))
def test_lookahead_keeps_every_step_optimal_and_sees_the_whole_trace_at_full_length(
    seed: int,
) -> None:
    trace = load_trace(random_trace(400 + seed, equal=seed % 2 == 0))
    levels, fewest = oracle(trace, "sticky")
    for lookahead in (0, 1):
        answer = solve_horizon(trace, "sticky", lookahead=lookahead)
        policy = lookahead < len(trace) - 1  # else the window is the whole trace
        assert answer.status == ("feasible" if policy else "optimal")
        assert answer.info["moves"] >= fewest
        for k, (problem, assignment) in enumerate(zip(step_problems(trace), answer.assignments)):
            assert isinstance(problem, GroupProblem)
            verdict = evaluate(problem, owner_from_assignment(problem, assignment), "sticky")
            assert verdict.valid and tuple(verdict.objective[:1]) == levels[k]
    whole = solve_horizon(trace, "sticky", lookahead=len(trace))
    assert (whole.status, whole.info["moves"]) == ("optimal", fewest)


# ------------------------------------------------------------------ placements
def decommission(brokers: int, partitions: int, factor: int, removed: list[int]) -> Trace:
    """A cluster whose first brokers start with the most replicas, then brokers removed one at a
    time."""
    parts = [
        {"topic": "t", "partition": p, "replicas": [(p + i) % brokers + 1 for i in range(factor)]}
        for p in range(partitions)
    ]
    return load_trace(
        {
            "kind": "placement-trace",
            "problem": {"brokers": [{"id": b + 1} for b in range(brokers)], "partitions": parts},
            "steps": [{"remove_brokers": [b]} for b in removed],
        }
    )


def test_decommission_one_at_a_time_moves_only_what_must_move() -> None:
    """4 brokers, 5 partitions x RF 2: step 0 may hold 3, 3, 2, 2; broker 4 leaves holding 2, then
    broker 3 leaves holding 3 of the 10 (4, 3, 3): 5 moves, the least possible."""
    trace = decommission(4, 5, 2, [4, 3])
    answer = solve_horizon(trace, "sticky-replica")
    assert (answer.status, answer.bound, answer.info["moves"]) == ("optimal", 5, 5)
    assert answer.info["step_moves"] == [0, 2, 3]
    for k, problem in enumerate(step_problems(trace)):
        assert isinstance(problem, PlacementProblem)
        replicas = np.array([b for p in answer.assignments[k]["partitions"] for b in p["replicas"]])
        verdict = evaluate(problem, replicas, "replica")
        best = models.solve(problem, "sticky-replica", "flow")
        assert verdict.valid and list(verdict.objective[:3]) == best.objective[:3]
        if k:
            moved = placement_trace_moves(answer.assignments[k - 1], answer.assignments[k])
            assert moved == answer.info["step_moves"][k]


def test_decommission_beats_the_step_optimum_and_the_heuristic() -> None:
    trace = decommission(7, 20, 3, [7, 6, 5])
    answer = solve_horizon(trace, "kafka-default")
    assert answer.status == "optimal"
    for strategy, solver in (("sticky-replica", "flow"), ("sticky-replica", "heuristic")):
        previous: dict[str, Any] | None = None
        total = 0
        for k in range(len(trace)):
            problem = parse_problem(next_document(trace, k, previous))
            reassignment = models.solve(problem, strategy, solver).assignment
            assert reassignment is not None
            if previous is not None:
                total += placement_trace_moves(previous, reassignment)
            previous = reassignment
        assert answer.info["moves"] <= total, (strategy, solver)
    lookahead = solve_horizon(trace, "sticky-replica", lookahead=1)
    assert lookahead.info["moves"] >= answer.info["moves"]


# ------------------------------------------------------------------ the cuts
@pytest.mark.parametrize("seed", range(10))
def test_the_count_box_holds_every_optimum_and_the_count_bound_is_a_bound(seed: int) -> None:
    trace = load_trace(random_trace(500 + seed, equal=seed % 3 == 0))
    steps = group_steps([p for p in step_problems(trace) if isinstance(p, GroupProblem)])
    levels = step_policy(steps, "sticky", SolveOptions(), None)
    for k, problem in enumerate(steps.problems):
        owners, _ = _candidates(problem, "sticky")
        low, high = count_box(problem, levels[k].owner)
        for row in owners:
            counts = np.bincount(row[row >= 0], minlength=problem.num_members)
            assert (low <= counts).all() and (counts <= high).all(), (seed, k)
        assert (high - low <= 1).all()
    assert count_bound(steps, levels, None) <= oracle(trace, "sticky")[1]


def test_the_relaxation_bound_is_a_bound_and_mostly_meets_the_optimum() -> None:
    met = 0
    for seed in range(16):
        racks = seed % 4 == 3
        strategy = "rack-aware" if racks else "sticky"
        trace = load_trace(random_trace(600 + seed, equal=seed % 3 == 0, racks=racks))
        steps = group_steps([p for p in step_problems(trace) if isinstance(p, GroupProblem)])
        levels = step_policy(steps, strategy, SolveOptions(), None)
        classes = trace_classes(steps, [step.kind for step in levels], None)
        bound = lp_bound(steps, levels, None, classes, 10.0)
        fewest = oracle(trace, strategy)[1]
        assert count_bound(steps, levels, None) <= fewest and bound <= fewest, seed
        met += bound == fewest
    assert met >= 12


@pytest.mark.parametrize("seed", range(8))
def test_pieces_keep_every_steps_levels_and_the_horizon_stays_exact(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pieces of two steps, committing one: the pieced answer is valid at every step's levels and
    moves no less than the optimum; the horizon it hints still meets the oracle."""
    monkeypatch.setattr(cpsat_horizon, "ROLL_STEPS", 2)
    monkeypatch.setattr(cpsat_horizon, "ROLL_COMMIT", 1)
    doc = random_trace(700 + seed, equal=False)
    trace = load_trace(doc)
    steps = group_steps([p for p in step_problems(trace) if isinstance(p, GroupProblem)])
    levels = step_policy(steps, "sticky", SolveOptions(), None)
    hint = [steps.to_wide(k, step.owner) for k, step in enumerate(levels)]
    until = time.perf_counter() + 30
    pieced = cpsat_horizon._rolling(steps, levels, None, hint, SolveOptions(time_limit=5), until)
    assert len(pieced) == len(steps)
    fewest_levels, fewest = oracle(trace, "sticky")
    moves = 0
    for k, (problem, wide) in enumerate(zip(steps.problems, pieced)):
        owner = steps.to_local(k, wide)
        verdict = evaluate(problem, owner, "sticky")
        assert verdict.valid and tuple(verdict.objective[:1]) == fewest_levels[k], (seed, k)
        if k:
            moves += int(((pieced[k - 1] >= 0) & (wide >= 0) & (pieced[k - 1] != wide)).sum())
    assert moves >= fewest
    check_against_oracle(doc, "sticky")


def test_the_relaxation_bound_sees_more_than_the_counts() -> None:
    """A member swaps subscriptions: every partition of the topic it drops must move, which the
    per-topic counts of the relaxation see and the members' totals do not."""
    doc = {
        "kind": "group-trace",
        "problem": {
            "topics": {"a": 2, "b": 2},
            "members": [{"id": "x", "topics": ["a"]}, {"id": "y", "topics": ["a", "b"]}],
        },
        "steps": [{"subscribe": {"x": ["b"]}}],
    }
    trace = load_trace(doc)
    steps = group_steps([p for p in step_problems(trace) if isinstance(p, GroupProblem)])
    levels = step_policy(steps, "sticky", SolveOptions(), None)
    classes = trace_classes(steps, [step.kind for step in levels], None)
    fewest = oracle(trace, "sticky")[1]
    assert lp_bound(steps, levels, None, classes, 10.0) == fewest
    assert count_bound(steps, levels, None) < fewest


def test_a_rack_aware_cluster_keeps_every_steps_levels() -> None:
    """Racks: the counts ignore them, so each step is checked against its optimum; the answer
    never has more moves than the step policy, and is proven only when it meets the bound."""
    brokers = [{"id": b + 1, "rack": f"r{b % 3}"} for b in range(9)]
    parts = [
        {"topic": "t", "partition": p, "replicas": [(p + i) % 9 + 1 for i in range(3)]}
        for p in range(30)
    ]
    new = {"topic": "u", "partition": 0, "replicas": [], "replication_factor": 3}
    trace = load_trace(
        {
            "kind": "placement-trace",
            "problem": {"brokers": brokers, "partitions": parts},
            "steps": [
                {"remove_brokers": [9]},
                {"remove_brokers": [8]},
                {"add_brokers": [{"id": 10, "rack": "r2"}]},
                {"partitions": [new]},
            ],
        }
    )
    answer = solve_horizon(trace, "sticky-replica")
    for k, problem in enumerate(step_problems(trace)):
        assert isinstance(problem, PlacementProblem)
        replicas = np.array([b for p in answer.assignments[k]["partitions"] for b in p["replicas"]])
        verdict = evaluate(problem, replicas, "replica")
        best = models.solve(problem, "sticky-replica", "flow")
        assert verdict.valid and list(verdict.objective[:3]) == best.objective[:3]
    assert answer.bound is not None and answer.bound <= answer.info["moves"]
    assert (answer.status == "optimal") == (answer.bound == answer.info["moves"])
    assert answer.info["moves"] <= models.trace(trace, "sticky-replica", "step").moves
