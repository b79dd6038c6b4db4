"""heuristics/streams/streams_kip924_sticky.py against Kafka Streams 4.4's KIP-924 ``StickyTaskAssignor``.

Both run on the ``ApplicationState`` ``StreamsPartitionAssignor`` would build for the document
(peers/kafka_streams_client.py: ``DefaultKafkaStreamsState``s and ``DefaultTaskInfo``s in
``HashMap``s filled in process and task order) and must agree on every process's active and
standby tasks.  Kafka walks the stateful tasks of its standby step in the order of a ``HashSet``
of ``TaskInfo`` objects, whose hash codes are the JVM's identity hash codes of that run; the peer
reports them and the heuristic is given them (``task_info_hashes``), the one input that is not
the document's (docs/strategies/streams.md, differences).  300 seeded random groups
(tests/support/streams_documents.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from heuristics.streams import streams_kip924_sticky
from heuristics.streams.streams_ha_input import streams_input
from heuristics.streams.streams_kip924_sticky import kip924_sticky_assign
from problems import load_problem
from support.streams_documents import streams_document

GROUPS = 300
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "streams"


@pytest.fixture(scope="module")
def kafka_streams(kafka_java):
    from peers import kafka_streams_client

    return kafka_streams_client


def _rack_aware(inp) -> bool:
    """KIP-924's conditions for its active-task optimisation (``canPerformRackAwareOptimization``)."""
    return (
        inp.rack_aware_assignment_strategy != "none"
        and inp.traffic_cost is not None
        and inp.non_overlap_cost is not None
        and all(racks and racks[0] is not None for racks in inp.member_racks)
        and all(r for parts in (*inp.source_racks, *inp.changelog_racks) for r in parts)
    )


def test_kip924_sticky_equals_kafka_on_random_groups(kafka_streams):
    """Tests that 300 random groups get Kafka's answer, process by process, and that the runs
    cover previous owners, standbys and KIP-925's optimisation."""
    differences = []
    seen = {"rack_aware": 0, "standbys": 0, "previous": 0}
    for seed in range(GROUPS):
        problem = load_problem(streams_document(seed))
        inp, _ = streams_input(problem)
        theirs = kafka_streams.kip924_sticky(inp)
        ours = kip924_sticky_assign(inp, theirs.task_info_hashes)
        if ours != (theirs.active, theirs.standby):
            differences.append((seed, ours, theirs))
        seen["rack_aware"] += _rack_aware(inp)
        seen["standbys"] += inp.num_standby_replicas > 0
        seen["previous"] += any(inp.previous_active)
    assert differences == []
    assert min(seen.values()) >= 30, seen


def test_kip924_sticky_answers_are_valid(kafka_streams):
    """Tests that the member-level answers are valid, without warm-ups (KIP-924's sticky assignor
    has none), and hold Kafka's tasks per process."""
    for seed in range(40):
        problem = load_problem(streams_document(seed))
        inp, order = streams_input(problem)
        theirs = kafka_streams.kip924_sticky(inp)
        result = streams_kip924_sticky.assign(problem, task_info_hashes=theirs.task_info_hashes)
        assert result.evaluation.valid, (seed, result.evaluation.violations)
        assert len(result.answer.warmup) == 0
        process = problem.member_process
        for c, p in enumerate(order):
            active = {t for t, m in enumerate(result.answer.active.tolist()) if process[m] == p}
            standby = {int(t) for t, m in result.answer.standby if process[m] == p}
            assert (active, standby) == (theirs.active[c], theirs.standby[c]), seed


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.name)
def test_kip924_sticky_examples_equal_kafka(kafka_streams, path):
    """Tests every streams example against Kafka's class."""
    inp, _ = streams_input(load_problem(path))
    theirs = kafka_streams.kip924_sticky(inp)
    assert kip924_sticky_assign(inp, theirs.task_info_hashes) == (theirs.active, theirs.standby)
