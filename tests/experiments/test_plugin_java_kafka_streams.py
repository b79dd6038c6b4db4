"""``java:`` with a Kafka Streams client-side ``TaskAssignor`` (KIP-924): Kafka 4.4's own
``StickyTaskAssignor``, loaded from its jar and called through the plugin path, answers as
``streams-kip924-sticky`` does.

The lab's JVM program builds the ``ApplicationState`` Kafka Streams' ``StreamsPartitionAssignor``
builds from the streams document (peers/java ``StreamsClientRun``), calls ``assign`` and spreads
each process's tasks over its members by the lab's rule.  The heuristic is proven equal to the
class through JPype (tests/peers/test_streams_kip924_equality.py), where, as here, the one input
that is not the document's is the order of Kafka's ``HashSet`` of ``TaskInfo`` objects (their
identity hash codes of that run, docs/strategies/streams.md): the program reports them in its
answer's ``info`` and the heuristic is given them.  With them, every member's active and standby
tasks agree (so every process's do).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments import plugin_java
from experiments.experiment_plugins import resolve
from experiments.plugin_protocol import read_answer, request
from experiments.plugin_runner import process_for, run
from heuristics.streams import streams_kip924_sticky
from problems import load_problem
from support.streams_documents import streams_document

STICKY = "org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor"
TARGET = f"java:{STICKY}"
GROUPS = 200
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "streams"


@pytest.fixture(scope="module", autouse=True)
def built():
    """The JVM program must be built (``make peers``): a missing one fails, naming the command."""
    assert plugin_java.PROGRAM_JAR.exists(), (
        f"{plugin_java.PROGRAM_JAR} is missing: run `make peers`"
    )


def _exchange(doc: dict):
    """The plugin's answer to ``doc`` as the lab reads it, and the answer line's ``info``."""
    process = process_for(STICKY, TARGET)
    if not process.running:
        assert process.start().get("error") is None
    line = process.exchange(request(doc, "streams-sticky", 60.0), 60.0)
    return read_answer(load_problem(doc), "streams-sticky", line), json.loads(line)["info"]


def _assert_equal(doc: dict) -> None:
    problem = load_problem(doc)
    answer, info = _exchange(doc)
    assert answer.result is not None and answer.error is None, answer.error
    hashes = info["task_info_hashes"]
    assert len(hashes) == problem.n_tasks
    ours = streams_kip924_sticky.assign(problem, task_info_hashes=hashes)
    assert answer.result.assignment == ours.assignment, json.dumps(doc)


def test_kip924_sticky_equals_the_heuristic_on_random_groups():
    """Tests that 200 random streams groups (standbys, warm-ups, lags, client tags, racks, KIP-925
    settings) get streams-kip924-sticky's answer, member by member, through java:."""
    for seed in range(GROUPS):
        _assert_equal(streams_document(seed))


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.name)
def test_kip924_sticky_examples_equal_the_heuristic(path):
    """Tests every streams example through java: against the heuristic."""
    _assert_equal(json.loads(path.read_text()))


def test_kip924_sticky_through_the_runner_is_valid_and_timed():
    """Tests that the runner's own call (as the harness and the gate make it) gives a valid,
    re-scored streams answer with every task active once."""
    doc = streams_document(3)
    problem = load_problem(doc)
    call = run(STICKY, TARGET, problem, doc, "streams-sticky", 60.0)
    assert call.answer.error is None and call.answer.result is not None
    assert call.answer.result.valid
    assert (call.answer.result.answer.active >= 0).all()


def test_kip924_assignor_resolves_judged_on_streams_sticky():
    """Tests that a KIP-924 class resolves as a plugin judged on streams-sticky."""
    assert resolve(f"kip924={TARGET}").judged_on == ("streams-sticky",)


def test_kip924_assignor_refuses_a_consumer_group():
    """Tests that a consumer-group document to a Kafka Streams assignor is an error answer, one line."""
    doc = {"members": [{"id": "a", "topics": ["t"]}], "topics": {"t": 2}}
    call = run(STICKY, TARGET, load_problem(doc), doc, "streams-sticky", 60.0)
    assert call.answer.result is None
    assert "streams-group documents only" in call.answer.error and "\n" not in call.answer.error
