"""The foreign strategies shipped with the lab (experiments/plugin_shipped.py): franz-go's balancers,
Sarama's strategies and KafkaJS's round robin, each its client's own code in a program that
speaks the plugin protocol (``make peers`` builds them).

Where a client's assignor is Kafka's algorithm (range and round robin), its answers must be the
heuristics' answers; where the client departs from Kafka, the test pins how: Sarama's leader fails
on a subscribed topic that does not exist, KafkaJS's leader deals out its own subscription to every
member.  The sticky balancers answer validly and completely (the cooperative ones after their
follow-up rounds).
"""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import heuristics.range as range_assignor
import heuristics.roundrobin as roundrobin
from experiments import plugin_shipped
from experiments.experiment_plugins import resolve
from experiments.plugin_runner import run
from problems import ProblemError, load_problem
from support.problem_strategies import group_documents
from support.sticky_strategies import kafka_documents

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
HEURISTIC = {"range": range_assignor, "roundrobin": roundrobin}


def _dynamic(doc: dict) -> dict:
    """``doc`` without static members (Sarama and KafkaJS send no group.instance.id to their assignors)."""
    for member in doc["members"]:
        member.pop("instance_id", None)
    return doc


@functools.cache
def _target(name: str) -> str:
    return resolve(name).target


def _answer(name: str, doc: dict):
    return run(name, _target(name), load_problem(doc), doc, "sticky", 30.0).answer


@pytest.mark.parametrize("name", [n for n in plugin_shipped.names() if not n.startswith("kafka-")])
def test_every_foreign_name_resolves_judged_on_sticky(name):
    """Tests that each shipped client strategy starts, describes itself and is judged on sticky."""
    plugin = resolve(name)
    assert (plugin.name, plugin.judged_on) == (name, ("sticky",))


@SETTINGS
@given(doc=group_documents())
def test_franz_go_range_and_roundrobin_are_kafkas(doc):
    """Tests that franz-go's range and round robin balancers give Kafka's answers (the heuristics')."""
    problem = load_problem(doc)
    if problem.num_members == 0:
        return
    for kind, module in HEURISTIC.items():
        answer = _answer(f"franz-go-{kind}", doc)
        assert answer.result is not None, answer.error
        assert np.array_equal(np.asarray(answer.result.answer), module.assign(problem).answer), (
            kind,
            json.dumps(doc),
        )


@SETTINGS
@given(doc=group_documents().map(_dynamic))
def test_sarama_range_and_roundrobin_are_kafkas_or_fail_on_missing_topics(doc):
    """Tests that Sarama's range and round robin give Kafka's answers (topics of at most ten
    partitions: below, round robin's order of names), and that a subscription to a topic that does
    not exist fails Sarama's leader (an error row naming the topic)."""
    problem = load_problem(doc)
    if problem.num_members == 0:
        return
    missing = sorted({t for m in doc["members"] for t in m["topics"]} - set(doc["topics"]))
    for kind, module in HEURISTIC.items():
        answer = _answer(f"sarama-{kind}", doc)
        if missing:
            assert (
                answer.status == "error"
                and missing[0] in str(answer.error)
                or ("does not exist" in str(answer.error))
            ), answer.error
        elif kind == "roundrobin" and not any(m["topics"] for m in doc["members"]):
            assert answer.status == "error"  # Sarama's round robin refuses a group with no topic
        else:
            assert answer.result is not None, answer.error
            assert np.array_equal(
                np.asarray(answer.result.answer), module.assign(problem).answer
            ), (kind, json.dumps(doc))


@SETTINGS
@given(doc=group_documents().map(_dynamic))
def test_kafkajs_round_robin_deals_the_leaders_topics(doc):
    """Tests that KafkaJS's round robin equals Kafka's where every member subscribes what the
    leader (the first member) does, topics in order, and otherwise deals the leader's topics to all."""
    problem = load_problem(doc)
    if problem.num_members == 0:
        return
    answer = _answer("kafkajs-roundrobin", doc)
    assert answer.result is not None, answer.error
    owner = np.asarray(answer.result.answer)
    leader = doc["members"][0]["topics"]
    same = all(m["topics"] == leader for m in doc["members"]) and leader == sorted(leader)
    if same:
        assert np.array_equal(owner, roundrobin.assign(problem).answer), json.dumps(doc)
    dealt = np.isin(
        problem.partition_topic,
        [problem.topic_index[t] for t in leader if t in problem.topic_index],
    )
    assert ((owner >= 0) == dealt).all()  # exactly the leader's topics are assigned


def test_sarama_round_robin_orders_partitions_by_their_names():
    """Tests Sarama's round robin on a 12-partition topic: it deals t-10 and t-11 before t-2, as
    the strings "t-10" < "t-2", where Kafka deals by partition number."""
    members = [{"id": m, "topics": ["t"]} for m in ("a", "b", "c")]
    doc = {"topics": {"t": 12}, "members": members}
    answer = _answer("sarama-roundrobin", doc)
    assert answer.result is not None, answer.error
    # dealt t-0 a, t-1 b, t-10 c, t-11 a, t-2 b, t-3 c, ...; Kafka deals t-0 a, t-1 b, t-2 c, ...
    assert np.asarray(answer.result.answer).tolist() == [0, 1, 1, 2, 0, 1, 2, 0, 1, 2, 2, 0]
    assert roundrobin.assign(load_problem(doc)).answer.tolist() == [0, 1, 2] * 4


def test_kafkajs_gives_partitions_to_members_that_do_not_subscribe():
    """Tests KafkaJS's departure from Kafka on one group: c1 is dealt t1, which it does not subscribe."""
    doc = {
        "topics": {"t0": 3, "t1": 2},
        "members": [{"id": "c0", "topics": ["t0", "t1"]}, {"id": "c1", "topics": ["t0"]}],
    }
    answer = _answer("kafkajs-roundrobin", doc)
    assert not answer.valid and "invalid" in str(answer.error)


@SETTINGS
@given(doc=kafka_documents(equal=True).map(_dynamic))
def test_sticky_balancers_answer_validly_and_completely(doc):
    """Tests that franz-go's and Sarama's sticky and cooperative-sticky strategies give every
    partition of a subscribed, existing topic to one subscriber (after the cooperative rounds)."""
    problem = load_problem(doc)
    if problem.num_members == 0 or (set(problem.subscriptions[0]) - set(problem.topics)):
        return
    for name in (
        "franz-go-sticky",
        "franz-go-cooperative-sticky",
        "sarama-sticky",
        "sarama-cooperative-sticky",
    ):
        answer = _answer(name, doc)
        assert answer.valid, (name, answer.error, json.dumps(doc))


def test_a_program_not_built_names_make_peers(monkeypatch, tmp_path):
    """Tests that a shipped name whose program is missing is one line naming `make peers`."""
    monkeypatch.setattr(plugin_shipped, "SARAMA", tmp_path / "sarama-peer")
    with pytest.raises(ProblemError, match="run `make peers`"):
        resolve("sarama-sticky")


def test_another_kafka_release_needs_its_jars(monkeypatch, tmp_path):
    """Tests that kafka-VERSION-ASSIGNOR names the make command that fetches that release."""
    monkeypatch.setattr(plugin_shipped, "PEERS_TARGET", tmp_path)
    with pytest.raises(ProblemError, match="make kafka-release KAFKA_VERSION=4.1.2"):
        resolve("kafka-4.1.2-uniform")
