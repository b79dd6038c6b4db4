"""The streams-group scenarios of every shipped suite (experiments/suites/*.toml)."""

from __future__ import annotations

import pytest

from experiments.experiment import suite
from experiments.scenarios import SUITES
from experiments.streams_scenarios import CHURN, JUDGED_ON, PATTERNS

#: The streams scenarios each suite holds (``kafka-atlas`` is Kafka's consumer-assignor grid alone).
STREAMS_SCENARIOS = {
    "smoke": 1,
    "gate": 28,
    "default": 72,
    "scale": 24,
    "kafka-benchmark-grid": 6,
    "kafka-atlas": 0,
}


def test_every_suite_is_counted():
    """Tests that every shipped suite says how many streams groups it holds."""
    assert set(SUITES) == set(STREAMS_SCENARIOS)


@pytest.mark.parametrize("name", [n for n, count in STREAMS_SCENARIOS.items() if count])
def test_every_suite_has_its_streams_groups_before_the_share_groups(name):
    """Tests that each suite holds its streams scenarios, all judged on the streams objective's
    strategy, in one run of the file before any share group, so the scenarios before them keep
    their places."""
    scenarios = suite(name)
    streams = [i for i, s in enumerate(scenarios) if s.judged_on == JUDGED_ON]
    assert len(streams) == STREAMS_SCENARIOS[name]
    assert streams == list(range(streams[0], streams[0] + len(streams)))
    share = [i for i, s in enumerate(scenarios) if s.judged_on == "share"]
    assert not share or streams[-1] < share[0]
    for i in streams:
        scenario = scenarios[i]
        assert scenario.family == "group" and scenario.scenario_id.startswith(f"{JUDGED_ON}/")
        assert scenario.churn in CHURN and scenario.pattern in PATTERNS
        assert 0 <= scenario.replication <= 2


def test_the_gate_and_default_suites_cover_the_streams_families():
    """Tests that the gate and default suites hold every topology shape, KIP-441's scale-out, and
    groups without and with standbys."""
    for name in ("gate", "default"):
        streams = [s for s in suite(name) if s.judged_on == JUDGED_ON]
        assert {"stateless", "stateful", "uneven-threads", "racked"} <= {s.pattern for s in streams}
        assert {"fresh", "member-joins", "member-leaves", "scale-out"} <= {s.churn for s in streams}
        assert {0} < {s.replication for s in streams}
