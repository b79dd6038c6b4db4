"""The shipped suites as experiment files: the same scenarios, ids and problem digests as the code
that defined them before (kept below, frozen, as the reference), and the gate's recorded optima
still match."""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

import pytest

from experiments.experiment import load_suite, suite, suite_path
from experiments.gate import scenario_digests
from experiments.runs import TIME_LIMITS
from experiments.scenarios import (
    KIP848_PATTERNS,
    LAGS,
    PATTERNS,
    PLACEMENT_CHURN,
    RACK_LAYOUTS,
    TWO_MOVE_LIMIT,
    Scenario,
    build_problem,
)

ROOT = Path(__file__).parents[2]
#: The churn events the suites were written with (later events are levels of other experiments).
GROUP_CHURN = (
    "fresh",
    "member-joins",
    "member-leaves",
    "several-leave",
    "topic-added",
    "topic-deleted",
    "partitions-added",
    "zombie",
)


# ------------------------------------------------- the suites as code defined them (reference)
def _groups(strategies, churns, sizes, seeds, patterns=("equal",), lags=("zero",)):
    for judged_on, churn, (p, m, t), seed, pattern in itertools.product(
        strategies, churns, sizes, seeds, patterns
    ):
        for lag in lags if judged_on == "lag-aware" else ("zero",):
            yield Scenario(
                "group",
                judged_on,
                churn,
                p,
                m,
                t,
                seed,
                pattern if judged_on != "stream-join" else "equal",
                lag,
            )


def _racked(churns, sizes, seeds, patterns, layouts=RACK_LAYOUTS):
    """Group scenarios judged on ``rack-aware``, one per rack layout (replicas per partition, 0: no racks)."""
    for churn, (p, m, t), seed, pattern, replication in itertools.product(
        churns, sizes, seeds, patterns, layouts
    ):
        yield Scenario(
            "group", "rack-aware", churn, p, m, t, seed, pattern, replication=replication
        )


def _placements(churns, sizes, seeds):
    for churn, (p, b, r, rf), seed in itertools.product(churns, sizes, seeds):
        yield Scenario("placement", "sticky-replica", churn, p, b, r, seed, replication=rf)


TWO_MOVE_SCENARIO = Scenario(
    "placement", "sticky-replica", TWO_MOVE_LIMIT, 2, 4, 2, 0, replication=2
)


def _unique(scenarios) -> list[Scenario]:
    return list(dict.fromkeys(scenarios))


def legacy_suite(name: str) -> list[Scenario]:
    """The scenarios of suite ``name`` (``smoke``, ``gate``, ``default``, ``scale``)."""
    if name == "smoke":
        return _unique(
            [
                *_groups(["sticky"], ["fresh", "member-leaves"], [(12, 3, 2)], [1]),
                *_groups(["lag-aware"], ["fresh"], [(8, 3, 2)], [1], lags=("zipf",)),
                *_groups(["stream-join"], ["member-leaves"], [(12, 3, 2)], [1]),
                *_racked(["member-leaves"], [(12, 3, 2)], [1], ["random-subsets"], layouts=(2,)),
                *_placements(["broker-removed"], [(6, 4, 2, 2)], [1]),
                TWO_MOVE_SCENARIO,
            ]
        )
    if name == "gate":
        return _unique(
            [
                *_groups(
                    ["sticky"],
                    GROUP_CHURN,
                    [(24, 4, 3), (60, 7, 4)],
                    [1, 2],
                    patterns=("equal", "random-subsets"),
                ),
                *_groups(
                    ["lag-aware"],
                    ["fresh", "member-joins"],
                    [(12, 3, 2), (16, 4, 2)],
                    [1, 2],
                    patterns=("equal",),
                    lags=("uniform", "zipf", "hot"),
                ),
                *_groups(
                    ["stream-join"],
                    ["fresh", "member-joins", "member-leaves", "zombie", "topic-added"],
                    [(24, 4, 3)],
                    [1, 2],
                ),
                *_racked(
                    ["fresh", "member-leaves"],
                    [(24, 4, 3)],
                    [1, 2],
                    ("equal", "random-subsets"),
                    layouts=(2, 0),
                ),
                *_placements(PLACEMENT_CHURN, [(12, 6, 2, 3), (24, 9, 3, 3)], [1, 2]),
                TWO_MOVE_SCENARIO,
            ]
        )
    if name == "default":
        return _unique(
            [
                *_groups(
                    ["sticky"],
                    GROUP_CHURN,
                    [(12, 3, 2), (200, 10, 5), (2000, 100, 20)],
                    [1, 2],
                    patterns=PATTERNS,
                ),
                # Kafka's server-side assignor benchmark shapes, small: 10 partitions per member,
                # full and incremental (a member joins), homogeneous and in 5 buckets.
                *_groups(
                    ["sticky"],
                    ["fresh", "member-joins"],
                    [(1000, 100, 10), (2000, 200, 100)],
                    [1],
                    patterns=KIP848_PATTERNS,
                ),
                # KIP-881 racks (3 racks; replicas on 2 of them, on all 3, or no racks at all):
                # range, sticky and cooperative-sticky rack-aware, uniform and server-range with
                # racks, against the exact rack-aware model.
                *_racked(
                    ["fresh", "member-joins", "member-leaves"],
                    [(24, 4, 3), (200, 10, 5)],
                    [1],
                    ("equal", "random-subsets", "buckets"),
                ),
                *_groups(
                    ["lag-aware"],
                    ["fresh", "member-joins", "member-leaves"],
                    [(12, 3, 2), (16, 4, 2), (24, 4, 2)],
                    [1],
                    patterns=("equal", "few-topics"),
                    lags=LAGS,
                ),
                *_groups(["lag-aware"], ["fresh"], [(200, 10, 2)], [1], lags=("uniform", "zipf")),
                *_groups(
                    ["stream-join"], GROUP_CHURN, [(24, 4, 3), (300, 10, 3), (2000, 50, 5)], [1, 2]
                ),
                *_placements(
                    PLACEMENT_CHURN, [(12, 4, 2, 2), (60, 9, 3, 3), (300, 12, 3, 3)], [1, 2]
                ),
                *_placements(["broker-removed"], [(1000, 30, 3, 3)], [1]),
                TWO_MOVE_SCENARIO,
            ]
        )
    if name == "scale":
        return _unique(
            [
                *_groups(
                    ["sticky"],
                    GROUP_CHURN,
                    [(100_000, 1000, 100), (1_000_000, 2000, 500)],
                    [1],
                    patterns=("equal", "one-odd"),
                ),
                # Kafka's server-side assignor benchmark at its largest: 10,000 members x 10
                # partitions per member x 1,000 topics, and 5 and 50 partitions per member on 100
                # topics.
                *_groups(
                    ["sticky"],
                    ["fresh", "member-joins"],
                    [(100_000, 10_000, 1000), (5_000, 1000, 100), (50_000, 1000, 100)],
                    [1],
                    patterns=KIP848_PATTERNS,
                ),
                *_racked(
                    ["fresh", "member-joins"], [(100_000, 10_000, 1000)], [1], KIP848_PATTERNS
                ),
                *_groups(["stream-join"], ["member-leaves", "zombie"], [(50_000, 500, 5)], [1]),
                *_placements(PLACEMENT_CHURN, [(10_000, 100, 5, 3)], [1]),
                *_placements(["broker-removed"], [(100_000, 100, 5, 3)], [1]),
                *_groups(
                    ["lag-aware"],
                    ["fresh", "member-joins"],
                    [(10_000, 100, 10), (100_000, 1000, 10)],
                    [1],
                    lags=("uniform", "zipf"),
                ),
            ]
        )
    raise ValueError(name)


def _digest(scenario: Scenario) -> str:
    return hashlib.sha256(json.dumps(build_problem(scenario), sort_keys=True).encode()).hexdigest()[
        :16
    ]


@pytest.mark.parametrize("name", ["smoke", "gate", "default", "scale"])
def test_suite_files_give_the_scenarios_the_code_gave(name):
    """Tests that each suite file expands to exactly the code-defined scenarios, in the same order.

    A scenario's problem document is a function of its fields alone, so equal scenarios (same
    family, strategy, churn, sizes, seed, pattern, lags, racks; no run settings) have equal ids and
    equal digests; the digests are compared too where building is cheap (below).
    """
    # added later: SHARE_SCENARIOS, and the streams groups (tests/experiments/test_streams_suites.py)
    files = [s for s in suite(name) if s.judged_on not in ("share", "streams-sticky")]
    code = legacy_suite(name)
    assert [s.scenario_id for s in files] == [s.scenario_id for s in code]
    assert files == code
    assert load_suite(name).time_limit == TIME_LIMITS[name]


@pytest.mark.parametrize("name", ["smoke", "gate"])
def test_suite_files_give_the_same_problem_digests(name):
    """Tests that every problem document of the smoke and gate suites hashes as the code's did."""
    files = {
        s.scenario_id: _digest(s)
        for s in suite(name)
        if s.judged_on not in ("share", "streams-sticky")
    }
    code = {s.scenario_id: _digest(s) for s in legacy_suite(name)}
    assert files == code


#: The share-group (KIP-932) scenarios each suite adds after the code-defined ones.
SHARE_SCENARIOS = {"smoke": 1, "gate": 42, "default": 140, "scale": 68}


@pytest.mark.parametrize("name", ["smoke", "gate", "default", "scale"])
def test_suites_add_share_groups_after_the_others(name):
    """Tests that every suite ends with its share-group scenarios: judged on ``share``, members
    fewer than the partitions and more (the smoke suite: one small group after a member joined)."""
    scenarios = suite(name)
    share = [s for s in scenarios if s.judged_on == "share"]
    assert len(share) == SHARE_SCENARIOS[name]
    assert scenarios[-len(share) :] == share
    assert all(s.family == "group" and s.scenario_id.startswith("share/") for s in share)
    if name != "smoke":
        assert any(s.members < s.partitions for s in share)
        assert any(s.members > s.partitions for s in share)
        assert {"fresh", "member-joins", "member-leaves"} <= {s.churn for s in share}


def test_the_gates_recorded_optima_still_match():
    """Tests that baselines/gate.json's recorded optima name scenarios of the gate file, same digests."""
    recorded = json.loads((ROOT / "baselines" / "gate.json").read_text())["optima"]
    digests = scenario_digests("gate")  # what `rebalance-lab gate` checks, from the gate file
    assert recorded, "the baseline records optima"
    for scenario_id, entry in recorded.items():
        assert scenario_id in digests
        assert entry["digest"] == digests[scenario_id], scenario_id


def test_suite_files_are_packaged_with_experiments():
    """Tests that the suites are read from the experiments package (pyproject's package data)."""
    assert suite_path("gate") == ROOT / "experiments" / "suites" / "gate.toml"
    text = (ROOT / "pyproject.toml").read_text()
    assert '"suites/*.toml"' in text
