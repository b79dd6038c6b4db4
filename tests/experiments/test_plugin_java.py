"""``java:CLASS`` plugins: Kafka's own assignor classes, loaded from their jars by the lab's JVM
program (peers/java ``AssignorServer``) and called through the plugin protocol, answer as
rebalance-lab's heuristics do.

The heuristics are proven equal to the same classes through JPype (tests/peers/); here the same
random groups go through the plugin path instead (the document sent over a pipe, the input built in
the JVM as Kafka's client or coordinator builds it, the answer read back and re-scored), so an
equal answer proves the path.  One JVM per class serves every example (the runner keeps it).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import heuristics.range as range_assignor
import heuristics.roundrobin as roundrobin
import heuristics.server_range as server_range
import heuristics.share as share
import heuristics.sticky.cooperative_sticky as cooperative_sticky
import heuristics.sticky.sticky as sticky
import heuristics.streams.streams_sticky as streams_sticky
import heuristics.uniform as uniform
from experiments import plugin_java
from experiments.experiment_plugins import resolve
from experiments.plugin_runner import run
from problems import ProblemError, load_problem
from problems.share import share_assignment_json
from support.problem_strategies import group_documents
from support.sticky_kafka_check import unsubscribed_earlier_owner
from support.sticky_strategies import kafka_documents
from support.streams_documents import streams_document

CLIENT = "org.apache.kafka.clients.consumer."
SERVER = "org.apache.kafka.coordinator.group.assignor."
EXAMPLES = 60
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(scope="module", autouse=True)
def built():
    """The JVM program must be built (``make peers``): a missing one fails, naming the command."""
    assert plugin_java.PROGRAM_JAR.exists(), (
        f"{plugin_java.PROGRAM_JAR} is missing: run `make peers`"
    )


def _answer(class_name: str, doc: dict, judged_on: str = "sticky"):
    call = run(class_name, f"java:{class_name}", load_problem(doc), doc, judged_on, 60.0)
    return call.answer


def _owner(class_name: str, doc: dict) -> np.ndarray:
    answer = _answer(class_name, doc)
    assert answer.error is None, (answer.error, json.dumps(doc))
    assert answer.result is not None
    return np.asarray(answer.result.answer)


@SETTINGS
@given(doc=group_documents(racks=True))
def test_range_and_roundrobin_equal_the_heuristics(doc):
    """Tests that Kafka's client RangeAssignor and RoundRobinAssignor through java: give the heuristics' answers."""
    problem = load_problem(doc)
    if problem.num_members == 0:
        return
    for name, module in (
        (CLIENT + "RangeAssignor", range_assignor),
        (CLIENT + "RoundRobinAssignor", roundrobin),
    ):
        assert np.array_equal(_owner(name, doc), module.assign(problem).answer), (
            name,
            json.dumps(doc),
        )


@SETTINGS
@given(doc=group_documents(max_members=10, max_partitions=20, racks=True))
def test_server_assignors_equal_the_heuristics(doc):
    """Tests that KIP-848's UniformAssignor and server RangeAssignor through java: give the heuristics' answers."""
    problem = load_problem(doc)
    for name, module in (
        (SERVER + "UniformAssignor", uniform),
        (SERVER + "RangeAssignor", server_range),
    ):
        assert np.array_equal(_owner(name, doc), module.assign(problem).answer), (
            name,
            json.dumps(doc),
        )


@SETTINGS
@given(doc=kafka_documents(equal=True))
def test_sticky_equals_the_heuristic_with_equal_subscriptions(doc):
    """Tests that Kafka's StickyAssignor through java: gives the sticky heuristic's answer (equal subscriptions)."""
    problem = load_problem(doc)
    assert np.array_equal(_owner(CLIENT + "StickyAssignor", doc), sticky.assign(problem).answer)


@SETTINGS
@given(doc=kafka_documents(equal=False))
def test_sticky_equals_the_heuristic_or_is_broken_as_documented(doc):
    """Tests that with unequal subscriptions Kafka's StickyAssignor through java: gives the sticky
    heuristic's answer, or is broken in the ways docs/strategies/client-assignors.md lists (a
    partition given back to an earlier owner that no longer subscribes it: an invalid row; a
    NullPointerException: an error row)."""
    problem = load_problem(doc)
    answer = _answer(CLIENT + "StickyAssignor", doc)
    ours = sticky.assign(problem).answer
    if answer.status == "error":
        assert "NullPointerException" in str(answer.error), json.dumps(doc)
    elif not answer.valid:
        assert answer.result is not None
        assert len(unsubscribed_earlier_owner(problem, np.asarray(answer.result.answer))) > 0
    else:
        assert answer.result is not None
        assert np.array_equal(np.asarray(answer.result.answer), ours), json.dumps(doc)


@SETTINGS
@given(doc=kafka_documents(equal=True))
def test_cooperative_sticky_completes_as_the_heuristic(doc):
    """Tests that Kafka's CooperativeStickyAssignor through java:, followed round by round until
    nobody revokes, gives cooperative-sticky's completed assignment."""
    problem = load_problem(doc)
    answer = _answer(CLIENT + "CooperativeStickyAssignor", doc)
    assert answer.result is not None, answer.error
    assert np.array_equal(
        np.asarray(answer.result.answer), cooperative_sticky.assign(problem).answer
    ), json.dumps(doc)


@SETTINGS
@given(doc=group_documents(max_members=12, max_partitions=6), ids=st.booleans())
def test_share_simple_assignor_equals_the_heuristic(doc, ids):
    """Tests that KIP-932's SimpleAssignor through java: gives every member the share heuristic's partitions."""
    if ids:
        doc["topic_ids"] = {t: _topic_id(i) for i, t in enumerate(doc["topics"])}
    problem = load_problem(doc)
    answer = _answer(SERVER + "SimpleAssignor", doc, "share")
    assert answer.result is not None, answer.error
    expected = share_assignment_json(problem, share.assign(problem).answer)
    assert share_assignment_json(problem, np.asarray(answer.result.answer)) == expected, json.dumps(
        doc
    )


@pytest.mark.parametrize("seed", range(40))
def test_streams_group_sticky_assignor_equals_the_heuristic(seed):
    """Tests that KIP-1071's streams-group StickyTaskAssignor through java: gives streams-sticky's
    answer (random streams groups: standbys, warm-ups, lags, client tags, racks)."""
    doc = streams_document(seed)
    problem = load_problem(doc)
    name = "org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor"
    answer = run(name, f"java:{name}", problem, doc, "streams-sticky", 60.0).answer
    assert answer.result is not None, answer.error
    assert answer.result.assignment == streams_sticky.assign(problem).assignment, json.dumps(doc)


def _topic_id(i: int) -> str:
    """A base64 Uuid (22 characters) different for each ``i``."""
    import base64

    return base64.urlsafe_b64encode((7919 * (i + 1)).to_bytes(16, "big")).decode().rstrip("=")


def test_java_plugin_resolves_with_its_interface_and_judged_on():
    """Tests that java:CLASS resolves to a plugin named by the user, judged on what the class's interface says."""
    plugin = resolve(f"kafka-uniform=java:{SERVER}UniformAssignor")
    assert (plugin.name, plugin.judged_on) == ("kafka-uniform", ("sticky", "rack-aware"))
    assert resolve(f"kafka-simple=java:{SERVER}SimpleAssignor").judged_on == ("share",)
    streams = "org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor"
    assert resolve(f"kafka-streams=java:{streams}").judged_on == ("streams-sticky",)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("x=java:com.example.Missing", "class com.example.Missing is not on the classpath"),
        ("x=java:java.lang.String", "class java.lang.String implements none of Kafka's assignor"),
        ("x=java:not a class", "java: needs a class name"),
        ("x=java:com.example.A:/no/such.jar", "classpath entry /no/such.jar does not exist"),
    ],
)
def test_bad_java_plugins_are_one_line(spec, message):
    """Tests that a missing class, a class of no assignor interface, a bad name or classpath is one line."""
    with pytest.raises(ProblemError) as raised:
        resolve(spec)
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_missing_program_says_run_make_peers(monkeypatch, tmp_path):
    """Tests that without the built program java: names the jar and `make peers`."""
    monkeypatch.setattr(plugin_java, "PROGRAM_JAR", tmp_path / "kafka-peers-1.jar")
    with pytest.raises(ProblemError, match="run `make peers`"):
        resolve(f"x=java:{SERVER}UniformAssignor")
