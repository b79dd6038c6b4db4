"""heuristics/streams/streams_ha.py against Kafka Streams 4.4's own ``HighAvailabilityTaskAssignor``.

Both run on the same input, the one ``StreamsPartitionAssignor`` would hand Kafka's assignor for
the document (:func:`heuristics.streams.streams_ha_input.streams_input`; peers/kafka_streams_client.py
builds Kafka's ``ClientState``s, ``RackAwareTaskAssignor`` and configs from it), and must agree on
every process's active and standby tasks (warm-ups included), on the probing rebalance and on
whether KIP-925's optimisation ran.  300 seeded random groups (tests/support/streams_documents.py):
previous assignments, uneven threads, racks (missing ones now and then), client tags, lags of
every kind, 0-2 standbys, 1-3 warm-ups, the three rack-aware strategies.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from heuristics.streams import streams_ha
from heuristics.streams.streams_ha_assignor import high_availability_assign
from heuristics.streams.streams_ha_input import streams_input
from problems import load_problem
from support.streams_documents import streams_document

GROUPS = 300
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "streams"


@pytest.fixture(scope="module")
def kafka_streams(kafka_java):
    from peers import kafka_streams_client

    return kafka_streams_client


def test_streams_ha_equals_kafka_on_random_groups(kafka_streams):
    """Tests that 300 random groups get Kafka's answer, process by process, and that the runs
    cover what they should: rack-aware optimisation, probing rebalances, warm-ups, tags."""
    differences = []
    seen = {"rack_aware": 0, "probing": 0, "warmup": 0, "tags": 0, "standbys": 0}
    for seed in range(GROUPS):
        problem = load_problem(streams_document(seed))
        inp, _ = streams_input(problem)
        ours = high_availability_assign(inp)
        theirs = kafka_streams.high_availability(inp)
        mine = (ours.active, ours.standby, ours.probing, ours.rack_aware)
        if mine != (theirs.active, theirs.standby, theirs.probing, theirs.rack_aware):
            differences.append((seed, mine, theirs))
        seen["rack_aware"] += ours.rack_aware
        seen["probing"] += ours.probing
        seen["warmup"] += any(ours.warmup)
        seen["tags"] += bool(inp.rack_aware_assignment_tags) and inp.num_standby_replicas > 0
        seen["standbys"] += inp.num_standby_replicas > 0
    assert differences == []
    assert min(seen.values()) >= 30, seen


def test_streams_ha_answers_are_valid_and_kafkas(kafka_streams):
    """Tests that the member-level answer of ``assign`` is valid and holds, per process, exactly
    Kafka's tasks, with Kafka's warm-ups inside its standbys."""
    for seed in range(40):
        problem = load_problem(streams_document(seed))
        result = streams_ha.assign(problem)
        assert result.evaluation.valid, (seed, result.evaluation.violations)
        inp, order = streams_input(problem)
        theirs = kafka_streams.high_availability(inp)
        process = problem.member_process
        for c, p in enumerate(order):
            answer = result.answer
            active = {t for t, m in enumerate(answer.active.tolist()) if process[m] == p}
            replicas = {int(t) for t, m in [*answer.standby, *answer.warmup] if process[m] == p}
            assert (active, replicas) == (theirs.active[c], theirs.standby[c]), seed
        assert result.info["probing_rebalance"] == theirs.probing


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.name)
def test_streams_ha_examples_equal_kafka(kafka_streams, path):
    """Tests every streams example (tags, racks and KIP-925 in kip-708-925-tags-racks.json)."""
    inp, _ = streams_input(load_problem(path))
    ours = high_availability_assign(inp)
    theirs = kafka_streams.high_availability(inp)
    assert (ours.active, ours.standby, ours.probing, ours.rack_aware) == (
        theirs.active,
        theirs.standby,
        theirs.probing,
        theirs.rack_aware,
    )
