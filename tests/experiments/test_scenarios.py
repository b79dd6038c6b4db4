"""Tests of experiments.scenarios: deterministic, valid, churn events as named."""

from __future__ import annotations

import hashlib
import json

import pytest

from experiments.experiment import suite
from experiments.scenarios import SUITES, Scenario, build_problem
from problems import load_problem, previous_owners


def digest(doc: dict) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]


@pytest.mark.parametrize("name", ["smoke", "gate", "default"])
def test_every_scenario_builds_a_valid_problem_with_a_unique_id(name):
    """Tests that each scenario of a suite loads without error and ids are unique."""
    scenarios = suite(name)
    assert len({s.scenario_id for s in scenarios}) == len(scenarios)
    for scenario in scenarios:
        load_problem(build_problem(scenario))


def test_same_seed_same_problem_and_another_seed_another():
    """Tests that a scenario's problem depends on its seed alone (same seed, same document)."""
    scenario = Scenario(
        "group",
        "lag-aware",
        "member-joins",
        60,
        6,
        3,
        seed=7,
        pattern="random-subsets",
        lags="zipf",
    )
    assert digest(build_problem(scenario)) == digest(build_problem(scenario))
    other = Scenario(
        "group",
        "lag-aware",
        "member-joins",
        60,
        6,
        3,
        seed=8,
        pattern="random-subsets",
        lags="zipf",
    )
    assert digest(build_problem(scenario)) != digest(build_problem(other))


def test_pinned_documents_are_the_same_on_every_machine():
    """Tests that scenario documents are pinned by digest (PCG64 and Kafka's round robin are platform-independent)."""
    zombie = build_problem(
        Scenario("group", "sticky", "zombie", 12, 3, 2, seed=1, pattern="random-subsets")
    )
    assert zombie["members"][2] == {
        "id": "consumer0002",
        "topics": ["topic00"],
        "owned": {"topic00": [0, 2, 3, 5]},
        "generation": 3,
    }
    assert digest(zombie) == "09bc7842f6c1508b"
    cluster = build_problem(
        Scenario("placement", "sticky-replica", "broker-removed", 12, 6, 2, 1, replication=3)
    )
    assert digest(cluster) == "02a8cd99b0a243f9"


def test_churn_events_do_what_they_say():
    """Tests member joins / leaves, zombies, deleted topics and removed brokers in the built problems."""
    base = dict(family="group", judged_on="sticky", partitions=24, members=4, topics=3, seed=3)
    joins = load_problem(build_problem(Scenario(churn="member-joins", **base)))
    assert joins.owned[-1] == {} and all(joins.owned[:-1])
    leaves = load_problem(build_problem(Scenario(churn="member-leaves", **base)))
    assert (previous_owners(leaves) == -1).sum() > 0  # the leaver's partitions are nobody's now
    zombie = load_problem(build_problem(Scenario(churn="zombie", **base)))
    assert zombie.generations[-1] < zombie.generations[0]
    assert set(zombie.owned[0]["topic00"]) <= set(zombie.owned[-1]["topic00"])
    assert previous_owners(zombie)[zombie.global_id("topic00", zombie.owned[0]["topic00"][0])] == 0
    deleted = load_problem(build_problem(Scenario(churn="topic-deleted", **base)))
    assert any("deleted-topic" in note for note in deleted.notes)
    fresh = load_problem(build_problem(Scenario(churn="fresh", **base)))
    assert all(not owned for owned in fresh.owned)
    removed = load_problem(
        build_problem(
            Scenario("placement", "sticky-replica", "broker-removed", 12, 6, 2, 1, replication=3)
        )
    )
    assert removed.num_brokers == 4 and (removed.replica_positions == -1).any()


def test_unknown_suite_is_refused():
    """Tests that an unknown suite name raises with the list of suites."""
    with pytest.raises(ValueError, match="smoke"):
        suite("nope")
    # the four tiers first, then the other shipped experiment files by name
    assert SUITES == ("smoke", "gate", "default", "scale", "kafka-atlas", "kafka-benchmark-grid")


def test_racked_twins_differ_only_by_racks():
    """Tests the rack-aware families: ids name the rack layout; with racks, members sit on rack m mod 3 and every
    partition has its replicas on distinct racks; the twin without racks is the same group, racks left out."""
    from experiments.scenarios import RACKS

    base = dict(
        family="group",
        judged_on="rack-aware",
        churn="member-leaves",
        partitions=24,
        members=4,
        topics=3,
        seed=2,
        pattern="random-subsets",
    )
    racked, plain = Scenario(replication=2, **base), Scenario(replication=0, **base)
    assert (
        racked.scenario_id == "rack-aware/member-leaves/random-subsets-zero-racks3-rf2/p24-m4-t3/s2"
    )
    assert plain.scenario_id == "rack-aware/member-leaves/random-subsets-zero-norack/p24-m4-t3/s2"
    with_racks, without = build_problem(racked), build_problem(plain)
    assert [m["rack"] for m in with_racks["members"]] == [f"rack{m % RACKS}" for m in range(4)]
    lists = [
        racks for topic in with_racks["topics"] for racks in with_racks["partition_racks"][topic]
    ]
    assert len(lists) == 24 and all(len(set(r)) == len(r) == 2 for r in lists)
    assert len({tuple(r) for r in lists}) > 1  # the first replica's rack is drawn per partition
    assert "partition_racks" not in without and not any("rack" in m for m in without["members"])
    stripped = {k: v for k, v in with_racks.items() if k != "partition_racks"}
    stripped["members"] = [
        {k: v for k, v in m.items() if k != "rack"} for m in with_racks["members"]
    ]
    assert stripped == without
    assert load_problem(with_racks).has_racks and not load_problem(without).has_racks
    everywhere = build_problem(Scenario(replication=3, **base))
    assert all(
        sorted(r) == ["rack0", "rack1", "rack2"]
        for t in everywhere["partition_racks"].values()
        for r in t
    )


@pytest.mark.parametrize("name", ["smoke", "gate", "default", "scale"])
def test_every_suite_has_racked_groups_judged_on_rack_aware(name):
    """Tests that each suite holds rack-aware scenarios with racks, and (beyond smoke) their twins without."""
    racked = [s for s in suite(name) if s.judged_on == "rack-aware"]
    assert any(s.replication for s in racked)
    assert name == "smoke" or any(not s.replication for s in racked)
