"""The small atlas of Kafka's assignor benchmark grid: its scenario levels, its suite, its table."""

from __future__ import annotations

import pandas as pd
import pytest

from experiments.atlas_tables import atlas_numbers, atlas_table, is_atlas
from experiments.experiment import expand, load_suite
from experiments.pipeline import MAX_BATCH, TASKS_PER_CORE, default_batch_size
from experiments.runs import RESULT_COLUMNS, solve_scenario
from experiments.scenarios import KAFKA_EVENTS, Scenario, build_problem, topic_sizes
from problems import ProblemError


def _group(pattern: str, churn: str = "fresh", members: int = 8, topics: int = 8, **kw) -> dict:
    return build_problem(
        Scenario(
            "group",
            "sticky",
            churn,
            30,
            members,
            topics,
            1,
            pattern=pattern,
            assignor="uniform",
            **kw,
        )
    )


def test_atlas_groups_are_the_benchmark_construction_at_small_sizes():
    """Tests that an atlas scenario is the benchmark group: names, buckets of consecutive topics."""
    disjoint = _group("disjoint")["members"]
    nested = _group("nested")["members"]
    runs = [[f"topic-{t}" for t in range(8 * b // 5, 8 * (b + 1) // 5)] for b in range(5)]
    for m, member in enumerate(disjoint):
        assert member["id"] == f"member{m}" and member["topics"] == runs[m % 5]
    for m, member in enumerate(nested):
        assert member["topics"] == [t for run in runs[: m % 5 + 1] for t in run]
    skewed = _group("equal", topology="skewed")
    assert list(skewed["topics"].values()) == topic_sizes(30, 8, "skewed").tolist()


def test_the_grid_events_change_the_group_as_kafka_names_them():
    """Tests STABLE, JOIN_MANY, LEAVE_MANY and PARTITIONS_ADDED against the group they describe."""
    stable = _group("equal", "stable", members=20, topics=10)
    owned = sum(len(ps) for m in stable["members"] for ps in m["owned"].values())
    assert owned == 30 and len(stable["members"]) == 20
    joins = _group("equal", "join-many", members=20, topics=10)["members"]
    assert [m["id"] for m in joins if "owned" not in m] == ["member18", "member19"]
    leaves = _group("equal", "leave-many", members=20, topics=10)["members"]
    assert [m["id"] for m in leaves] == [f"member{i}" for i in range(20)]
    held = sum(len(ps) for m in leaves for ps in m.get("owned", {}).values())
    assert held < 30  # the two leavers' partitions are nobody's now
    grown = _group("equal", "partitions-grow", members=20, topics=10)
    claimed = {(t, p) for m in grown["members"] for t, ps in m.get("owned", {}).items() for p in ps}
    new = [(t, p) for t, n in grown["topics"].items() for p in range(n) if (t, p) not in claimed]
    assert new == [("topic-0", 3)]  # one partition more on a tenth of the 10 topics


def test_the_atlas_suite_has_every_kafka_event_shape_and_assignor_once():
    """Tests the shipped kafka-atlas suite: distinct ids, its factors in full, both assignors."""
    experiment = load_suite("kafka-atlas")
    ids = [s.scenario_id for s in experiment.scenarios]
    assert len(ids) == len(set(ids)) >= 20_000
    assert set(experiment.factors["churn"]) == set(KAFKA_EVENTS)
    assert set(experiment.factors["topology"]) == {"equal", "skewed"}
    assert set(experiment.factors["pattern"]) == {"equal", "disjoint", "nested"}
    assert set(experiment.factors["judged_on"]) == {"sticky", "rack-aware"}
    assert set(experiment.factors["assignor"]) == {"range", "uniform"}
    # With one topic the skewed and heterogeneous levels are the equal ones, kept once.
    single = [s for s in experiment.scenarios if s.topics == 1]
    assert {(s.topology, s.pattern) for s in single} == {("equal", "equal")}


def test_a_bad_topology_is_one_line_naming_the_field():
    """Tests the topology factor's check (a group factor; known levels only)."""
    block = {"judged_on": "sticky", "churn": "fresh", "size": [12, 3, 2], "seed": 1}
    with pytest.raises(ProblemError, match=r"scenarios\[0\]\.topology\[0\].*must be one of"):
        expand({"name": "x", "description": "x", "scenarios": [{**block, "topology": "lopsided"}]})
    placement = {"judged_on": "sticky-replica", "churn": "broker-added", "size": [12, 4, 2, 2]}
    with pytest.raises(ProblemError, match="consumer-group factor"):
        expand(
            {
                "name": "x",
                "description": "x",
                "scenarios": [{**placement, "seed": 1, "topology": "skewed"}],
            }
        )


def test_atlas_rows_are_certified_and_tabled_by_kafka_event():
    """Tests a slice of the atlas end to end: every instance's flow proves it, the table counts them."""
    experiment = load_suite("kafka-atlas")
    sample = experiment.scenarios[:: len(experiment.scenarios) // 60][:60]
    rows = pd.DataFrame(
        [row for s in sample for row in solve_scenario(s, 2.0)], columns=list(RESULT_COLUMNS)
    )
    exact = rows[rows["role"] == "exact"]
    assert (exact["status"] == "optimal").all() and len(exact) == len(sample)
    assert is_atlas(rows)
    from experiments.gap import gaps

    gap_rows = gaps(rows)
    numbers = atlas_numbers(gap_rows)
    per_objective = pd.Series([s.judged_on for s in sample]).value_counts()
    counted = numbers.groupby(["judged_on", "heuristic"])["instances"].sum()
    for (judged_on, _), instances in counted.items():
        assert instances == per_objective[judged_on]
    assert numbers["optimal"].between(0, 1).all()
    assert (numbers["optimal"] <= numbers["level1_optimal"]).all()
    table = atlas_table(gap_rows)
    assert set(table["event"]) <= set(KAFKA_EVENTS.values())
    assert {"p50 gap, level 1", "p99 gap, level 1", "optimal on every level"} <= set(table)


def test_rows_without_the_grid_events_are_not_an_atlas():
    """Tests that the default suite's churn events alone do not make a run an atlas."""
    rows = pd.DataFrame({"churn": ["fresh", "member-joins", "member-leaves", "zombie"]})
    assert not is_atlas(rows)
    assert is_atlas(pd.DataFrame({"churn": ["fresh", "stable", "member-leaves"]}))


def test_long_runs_are_batched_in_about_twenty_jobs_and_short_ones_as_before():
    """Tests the default batch size: one scenario per task for a suite, large batches for an atlas."""
    assert default_batch_size(536, 2) == TASKS_PER_CORE * 2
    assert default_batch_size(104_160, 2) == MAX_BATCH
    assert default_batch_size(20_000, 2) == 1_000


def test_the_overview_has_one_column_per_kafka_event_and_a_line_per_assignor_and_topics():
    """Tests the findings' overview: per objective, assignor x topic sizes by Kafka's events."""
    from experiments.atlas_tables import atlas_overview
    from experiments.gap import gaps

    experiment = load_suite("kafka-atlas")
    sample = [
        s
        for s in experiment.scenarios
        if (s.topics, s.members, s.partitions, s.pattern, s.assignor)
        == (5, 4, 20, "equal", "uniform")
    ]
    rows = pd.DataFrame(
        [row for s in sample for row in solve_scenario(s, 2.0)], columns=list(RESULT_COLUMNS)
    )
    tables = atlas_overview(gaps(rows))
    assert set(tables) == {s.judged_on for s in sample}
    for table in tables.values():
        assert list(table.columns[:2]) == ["assignor", "topics"]
        assert set(table.columns[2:]) <= set(KAFKA_EVENTS.values())
        assert table.iloc[:, 2:].stack().str.endswith("%").all()
