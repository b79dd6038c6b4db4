"""Tests of experiments.trace_scenarios and the trace factor of experiment files: every trace family
builds the same valid trace every time, as its docstring describes, and the suites carry traces."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from experiments.experiment import expand, load_suite
from experiments.scenarios import KIP848_PATTERNS, LAGS, PATTERNS
from experiments.trace_scenarios import (
    ONLY_FOR,
    TRACE_FAMILIES,
    TraceScenario,
    build_trace,
    check,
    trace_length,
    trace_size,
)
from problems import ProblemError
from problems.trace import load_trace, step_documents
from problems.trace import trace_size as read_size

GROUP_JUDGED = ("sticky", "rack-aware", "lag-aware", "stream-join")


def group_trace(judged_on: str, family: str, **fields) -> TraceScenario:
    sizes = {"partitions": 24, "members": 6, "topics": 3, "steps": 4, "seed": 1, **fields}
    return TraceScenario(
        "group",
        judged_on,
        family,
        sizes["partitions"],
        sizes["members"],
        sizes["topics"],
        sizes["steps"],
        sizes["seed"],
        sizes.get("pattern", "random-subsets" if judged_on != "stream-join" else "equal"),
        sizes.get("lags", "zipf" if judged_on == "lag-aware" else "zero"),
        sizes.get("replication", 2 if judged_on == "rack-aware" else 0),
    )


def placement_trace(family: str, steps: int = 3, racks: int = 2, seed: int = 1) -> TraceScenario:
    return TraceScenario(
        "placement", "sticky-replica", family, 12, 6, racks, steps, seed, "equal", "zero", 3
    )


def every_trace() -> list[TraceScenario]:
    out = []
    for family, kind in TRACE_FAMILIES.items():
        if kind == "placement":
            out += [placement_trace(family, steps, racks) for steps in (1, 3) for racks in (0, 2)]
            continue
        judged = [ONLY_FOR[family]] if family in ONLY_FOR else GROUP_JUDGED
        for judged_on, steps, seed in itertools.product(judged, (1, 5, 9), (1, 2)):
            out.append(group_trace(judged_on, family, steps=steps, seed=seed, members=10))
    return out


@pytest.mark.parametrize("scenario", every_trace(), ids=lambda s: s.scenario_id)
def test_every_family_builds_one_valid_trace_per_scenario(scenario):
    """Tests that each trace is the same document built twice, loads with problems.trace.load_trace
    (every step's problem checked) and has the rebalances the family says."""
    document = build_trace(scenario)
    assert json.dumps(build_trace(scenario), sort_keys=True) == json.dumps(document, sort_keys=True)
    trace = load_trace(document, name=scenario.scenario_id)
    assert len(trace) == trace_length(scenario)
    assert len(step_documents(trace)) == len(trace)
    assert document["kind"] == (
        "placement-trace" if scenario.family == "placement" else "group-trace"
    )


def test_rolling_restarts_restart_every_member_once_static_ones_keep_their_instance():
    """Tests the rolling restarts: slices of the member list in order, every member once; the static
    family's members carry an instance_id (their claims survive the restart)."""
    dynamic = build_trace(group_trace("sticky", "rolling-restart", steps=4, members=10))
    restarted = [m for step in dynamic["steps"] for m in step["restart"]]
    assert restarted == [m["id"] for m in dynamic["problem"]["members"]]
    assert [len(step["restart"]) for step in dynamic["steps"]] == [3, 3, 2, 2]
    static = build_trace(group_trace("sticky", "static-rolling-restart", steps=4, members=10))
    assert all(m["instance_id"] == f"instance-{m['id']}" for m in static["problem"]["members"])
    assert "instance_id" not in dynamic["problem"]["members"][0]


def test_scaling_joins_and_leaves_one_to_k_members_a_step():
    """Tests scale-out and scale-in: 1 to k = members // (2 * steps) members a step, new ids, racks
    for a racked group, and scale-in never empties the group."""
    out = build_trace(group_trace("rack-aware", "scale-out", members=40, steps=4))
    counts = [len(step["join"]) for step in out["steps"]]
    assert all(1 <= c <= 5 for c in counts) and len(set(counts)) > 1
    joined = [m for step in out["steps"] for m in step["join"]]
    assert len({m["id"] for m in joined}) == len(joined) and all("rack" in m for m in joined)
    scale_in = build_trace(group_trace("sticky", "scale-in", members=7, steps=6))
    left = [m for step in scale_in["steps"] for m in step["leave"]]
    assert len(left) == len(set(left)) == 6  # k = 1: one a step, one member stays


def test_crash_rejoin_and_flapping_bring_members_back():
    """Tests that crashed members come back one a step with their subscription, and that a flapping
    member leaves on odd steps and rejoins on even ones."""
    crash = build_trace(group_trace("sticky", "crash-rejoin", members=8, steps=5))
    assert len(crash["steps"][0]["leave"]) == 2  # a machine of 8 // 4 members
    assert [s["join"][0]["id"] for s in crash["steps"][1:3]] == crash["steps"][0]["leave"]
    assert len(crash["steps"][3]["leave"]) == 2
    flapping = build_trace(group_trace("sticky", "flapping", steps=5))
    flapper = flapping["steps"][0]["leave"][0]
    for k, step in enumerate(flapping["steps"]):
        assert (step["leave"] == [flapper]) if k % 2 == 0 else (step["join"][0]["id"] == flapper)


def test_topic_growth_keeps_stream_joins_co_partitioned_and_lags_complete():
    """Tests topic growth: stream joins grow every topic together; lag-aware traces give every new
    partition a lag in the same step; rack-aware ones give it replica racks."""
    document = build_trace(group_trace("stream-join", "topic-growth", steps=4))
    trace = load_trace(document)
    for doc in step_documents(trace):
        assert len(set(doc["topics"].values())) == 1
    lagged = build_trace(group_trace("lag-aware", "topic-growth", steps=4))
    for doc in step_documents(load_trace(lagged)):
        assert {t: len(v) for t, v in doc["lags"].items()} == doc["topics"]
    racked = build_trace(group_trace("rack-aware", "topic-growth", steps=2))
    assert all("partition_racks" in step for step in racked["steps"])


def test_lag_drift_changes_every_step_and_makes_a_partition_hot():
    """Tests lag drift: new lags at every step, one partition at 10^6 messages."""
    steps = build_trace(group_trace("lag-aware", "lag-drift", steps=3))["steps"]
    lags = [step["lags"] for step in steps]
    assert lags[0] != lags[1] != lags[2]
    assert all(max(max(v) for v in step.values()) == 10**6 for step in lags)


def test_decommissions_remove_the_same_brokers_and_rack_added_fills_a_new_rack():
    """Tests that one-by-one and all-at-once remove the same brokers (so their totals compare) and a
    new rack gets one broker a step."""
    one = build_trace(placement_trace("decommission-one-by-one", steps=3))["steps"]
    at_once = build_trace(placement_trace("decommission-all-at-once", steps=3))["steps"]
    assert len(one) == 3 and len(at_once) == 1
    assert sorted(b for s in one for b in s["remove_brokers"]) == at_once[0]["remove_brokers"]
    added = build_trace(placement_trace("rack-added", steps=2))["steps"]
    assert [s["add_brokers"] for s in added] == [
        [{"id": 7, "rack": "rack2"}],
        [{"id": 8, "rack": "rack2"}],
    ]


@pytest.mark.parametrize(
    ("scenario", "problem"),
    [
        (group_trace("sticky", "lag-drift"), "judged on lag-aware only"),
        (group_trace("sticky", "scale-in", members=4, steps=4), "more members (4) than steps"),
        (placement_trace("decommission-one-by-one", steps=4), "fewer than the replication factor"),
        (group_trace("sticky", "decommission-all-at-once"), "is for placements"),
        (group_trace("sticky", "no-such-trace"), "unknown trace family"),
    ],
)
def test_check_says_why_a_trace_cannot_be_built(scenario, problem):
    """Tests the checks of impossible traces (and that building one refuses it)."""
    assert problem in check(scenario)
    with pytest.raises(ValueError, match="cannot|only|more|fewer|for|unknown"):
        build_trace(scenario)


# ----------------------------------------------------------------- experiment files
def experiment(*blocks: dict) -> dict:
    return {"name": "t", "description": "traces", "scenarios": list(blocks)}


def test_a_trace_block_expands_into_trace_scenarios_beside_the_others():
    """Tests the trace factor: a block with ``trace`` and ``steps`` makes trace scenarios (crossed
    like any factor), kept apart from the single rebalances, with ids of their own."""
    found = expand(
        experiment(
            {"judged_on": "sticky", "churn": "fresh", "size": [12, 3, 2], "seed": 1},
            {
                "judged_on": ["sticky", "lag-aware"],
                "trace": ["rolling-restart", "scale-out"],
                "steps": [2, 3],
                "size": [12, 3, 2],
                "seed": 1,
                "lags": "zipf",
            },
        )
    )
    assert [s.scenario_id for s in found.scenarios] == ["sticky/fresh/equal-zero/p12-m3-t2/s1"]
    assert len(found.traces) == 8
    assert found.traces[0].scenario_id == "trace/sticky/rolling-restart/equal-zero/p12-m3-t2-T2/s1"
    assert found.traces[-1].scenario_id == "trace/lag-aware/scale-out/equal-zipf/p12-m3-t2-T3/s1"
    assert found.factors["trace"] == ["rolling-restart", "scale-out"]
    assert found.factors["steps"] == [2, 3]


@pytest.mark.parametrize(
    ("block", "field", "problem"),
    [
        ({"churn": "fresh", "trace": "scale-out", "steps": 2}, "scenarios[0].churn", "no churn"),
        ({"trace": "scale-out"}, "scenarios[0].steps", "is required"),
        ({"trace": "teleport", "steps": 2}, "scenarios[0].trace[0]", "must be one of"),
        ({"trace": "rack-added", "steps": 2}, "scenarios[0].trace[0]", "is a placement trace"),
        ({"trace": "scale-out", "steps": 0}, "scenarios[0].steps[0]", "integer > 0"),
        ({"trace": "scale-in", "steps": 3}, "scenarios[0]", "more members (3) than steps (3)"),
        (
            {"trace": "scale-out", "steps": 2, "solvers": ["cpsat"]},
            "scenarios[0].solvers[0]",
            "not a solver (heuristic, step, horizon)",
        ),
    ],
)
def test_a_bad_trace_block_is_one_line_naming_the_field(block, field, problem):
    """Tests the trace factor's checks: one ProblemError naming the field and the problem."""
    base = {"judged_on": "sticky", "size": [12, 3, 2], "seed": 1}
    with pytest.raises(ProblemError) as caught:
        expand(experiment({**base, **block}))
    message = str(caught.value)
    assert (
        "\n" not in message and message.startswith(f"<problem>: {field}: ") and problem in message
    )


@pytest.mark.parametrize("name", ["smoke", "gate", "default", "scale"])
def test_the_suites_carry_trace_families(name):
    """Tests that every shipped tier has traces with unique ids, the gate and default every family,
    the scale suite 1,000 members x 100,000 partitions x 50 steps; all but scale's load."""
    traces = load_suite(name).traces
    assert traces and len({t.scenario_id for t in traces}) == len(traces)
    assert all(t.scenario_id.startswith("trace/") and check(t) is None for t in traces)
    if name in ("gate", "default"):
        assert {t.trace for t in traces} == set(TRACE_FAMILIES)
    if name == "scale":
        assert any((t.members, t.partitions, t.steps) == (1000, 100_000, 50) for t in traces)
    else:
        for t in traces:
            load_trace(build_trace(t), name=t.scenario_id)


@st.composite
def trace_scenarios(draw) -> TraceScenario:
    """Small trace scenarios of every family, judged-on strategy, pattern and lag kind."""
    family = draw(st.sampled_from(sorted(TRACE_FAMILIES)))
    steps, seed = draw(st.integers(1, 9)), draw(st.integers(0, 3))
    if TRACE_FAMILIES[family] == "placement":
        return placement_trace(family, min(steps, 3), draw(st.sampled_from([0, 2])), seed)
    judged_on = ONLY_FOR.get(family) or draw(st.sampled_from(GROUP_JUDGED))
    topics = draw(st.integers(1, 4))
    return group_trace(
        judged_on,
        family,
        partitions=draw(st.integers(topics, 30)),
        members=draw(st.integers(2, 8)),
        topics=topics,
        steps=steps,
        seed=seed,
        pattern="equal"
        if judged_on == "stream-join"
        else draw(st.sampled_from(PATTERNS + KIP848_PATTERNS[1:])),
        lags=draw(st.sampled_from(LAGS)) if judged_on == "lag-aware" else "zero",
    )


@settings(max_examples=150, deadline=None)
@given(trace_scenarios(), st.integers(0, 2))
def test_the_size_counted_from_the_sizes_is_the_trace_readers(scenario, below):
    """Tests :func:`trace_size` against :func:`problems.trace.trace_size` of the built trace
    (the experiment files' size limit and ``trace``'s are one measure), and that a limit below the
    size stops the count at a lower bound still above the limit."""
    assume(check(scenario) is None)
    want = read_size(load_trace(build_trace(scenario)))
    assert trace_size(scenario) == (want, True)
    limit = max(0, want - 1 - below * want // 3)
    size, exact = trace_size(scenario, limit)
    assert limit < size <= want and (exact or size < want or scenario.trace == "topic-growth")
