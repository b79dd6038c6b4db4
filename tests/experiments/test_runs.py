"""Tests of experiments.runs: the plain-pandas function the Spark job maps over, without Spark."""

from __future__ import annotations

import heuristics.roundrobin as roundrobin_assignor
from experiments.experiment import suite
from experiments.results import load_results
from experiments.runs import RESULT_COLUMNS, runs_for, scenario_frame, solve_frame, solve_scenario
from experiments.scenarios import Scenario

KEY = ["scenario_id", "strategy", "variant", "solver"]
LEVELS = ["valid", "level1", "level2", "level3", "level4"]


def test_solve_frame_gives_one_typed_row_per_run(smoke_run):
    """Tests that each smoke scenario yields one row per available run, typed as RESULT_COLUMNS, from two
    worker processes (`rebalance-lab gate`'s way) in the frame's scenario order, with the
    heuristics' rows
    of one process (``smoke_run``)."""
    scenarios = suite("smoke")
    out = solve_frame(scenario_frame(scenarios), time_limit=2, processes=2)
    assert list(out["scenario_id"].unique()) == [s.scenario_id for s in scenarios]
    ours, here = (
        rows[rows["role"] == "heuristic"][[*KEY, *LEVELS]]
        .astype(str)
        .sort_values(KEY)
        .reset_index(drop=True)
        for rows in (out, load_results(smoke_run))
    )
    assert len(ours) > 0 and ours.equals(here)
    assert list(out.columns) == list(RESULT_COLUMNS)
    expected = sum(len(runs_for(s.judged_on)) for s in scenarios)
    assert (out["role"] != "frontier").sum() == expected
    assert not out.duplicated(["scenario_id", "strategy", "variant", "solver"]).any()
    # The exact moves/quality frontier of PR 18903's two-move case: nothing better at k = 1, the
    # swap at k = 2.
    frontier = out[(out["role"] == "frontier") & out["scenario_id"].str.contains("two-move-limit")]
    by_k = {
        v: (l2, moves)
        for v, l2, moves in zip(frontier["variant"], frontier["level2"], frontier["level4"])
    }
    assert by_k["k=0"] == by_k["k=1"] == (8, 0) and by_k["k=2"] == (4, 2)
    baselines = out[out["strategy"].isin(["range", "roundrobin"]) & (out["judged_on"] == "sticky")]
    assert (
        len(baselines) == 4
        and baselines["valid"].all()
        and (baselines["status"] == "heuristic").all()
    )


def test_rows_are_scored_on_the_scenarios_objective():
    """Tests that range is judged on the sticky objective (sum of squares, moves) by the evaluator."""
    scenario = Scenario("group", "sticky", "member-leaves", 12, 3, 2, seed=1)
    rows = {(r["strategy"], r["solver"]): r for r in solve_scenario(scenario, 2)}
    assert rows["range", "heuristic"]["level1"] == 3 * 4 * 4  # 12 partitions, 3 members
    assert rows["range", "heuristic"]["level2"] == 6


def test_a_crashing_solver_is_a_row_not_a_failed_job(monkeypatch):
    """Tests that an exception inside a solver becomes a row with status 'error' and the message."""

    def broken(problem):
        raise RuntimeError("solver exploded")

    monkeypatch.setattr(roundrobin_assignor, "assign", broken)
    rows = solve_scenario(Scenario("group", "sticky", "fresh", 6, 2, 1, seed=1), 2)
    failed = [r for r in rows if r["strategy"] == "roundrobin"]
    assert failed[0]["status"] == "error" and "solver exploded" in failed[0]["error"]
    assert any(r["strategy"] == "range" and r["status"] == "heuristic" for r in rows)


def test_racked_scenarios_are_judged_on_rack_aware_against_the_exact_model():
    """Tests a racked scenario's rows: every KIP-881 / KIP-848 baseline and cooperative-sticky is scored by the
    evaluator on the rack-aware objective (level 2 = Kafka's rack mismatches), and the exact flow,
    proven
    optimal, is never beaten; the twin without racks has no mismatch anywhere."""
    from experiments.scenarios import build_problem
    from models import solve
    from problems import evaluate, load_problem

    scenario = Scenario(
        "group",
        "rack-aware",
        "member-leaves",
        24,
        4,
        3,
        seed=1,
        pattern="random-subsets",
        replication=2,
    )
    rows = {(r["strategy"], r["solver"]): r for r in solve_scenario(scenario, 2)}
    names = {"range", "roundrobin", "cooperative-sticky", "uniform", "server-range", "rack-aware"}
    assert {s for s, solver in rows if solver == "heuristic"} == names
    problem = load_problem(build_problem(scenario))
    for name in names:
        expected = evaluate(problem, solve(problem, name).answer, "rack-aware").objective
        assert [rows[name, "heuristic"][f"level{i}"] for i in (1, 2, 3)] == list(expected)
    best = rows["rack-aware", "flow"]
    assert best["status"] == "optimal"
    optimum = (best["level1"], best["level2"], best["level3"])
    assert all(
        (r["level1"], r["level2"], r["level3"]) >= optimum for r in rows.values() if r["valid"]
    )
    assert rows["range", "heuristic"]["level2"] > 0  # range aligns racks only after co-partitioning
    plain = solve_scenario(
        Scenario(
            "group", "rack-aware", "member-leaves", 24, 4, 3, seed=1, pattern="random-subsets"
        ),
        2,
    )
    assert all(r["level2"] == 0 for r in plain if r["valid"])


def test_cooperative_sticky_is_judged_on_its_completed_assignment():
    """Tests that cooperative-sticky is a baseline of sticky and that its row scores the assignment completed by
    the follow-up round, not the first round's output (which leaves out the partitions changing owner)."""
    from experiments.scenarios import build_problem
    from heuristics.sticky import cooperative_sticky
    from problems import evaluate, load_problem

    scenario = Scenario(
        "group", "sticky", "member-joins", 24, 4, 3, seed=1, pattern="random-subsets"
    )
    assert ("cooperative-sticky", None, "heuristic") in runs_for("sticky")
    rows = {(r["strategy"], r["variant"], r["solver"]): r for r in solve_scenario(scenario, 2)}
    cooperative = rows["cooperative-sticky", "", "heuristic"]
    problem = load_problem(build_problem(scenario))
    result = cooperative_sticky.assign(problem)
    assert (
        result.info["rounds"] == 2 and (result.shown < 0).sum() == 12
    )  # 12 partitions wait for round 2
    assert cooperative["valid"] and (result.answer >= 0).all()
    assert (
        (cooperative["level1"], cooperative["level2"])
        == evaluate(problem, result.answer, "sticky").objective
        == (144, 11)
    )
