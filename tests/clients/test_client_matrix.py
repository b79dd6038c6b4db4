"""peers/client_matrix.py on the live cluster: one short sequence per client library.

For each library (Kafka's Java client, confluent-kafka/librdkafka, franz-go, Sarama,
kafka-python, KafkaJS) a group of three real consumers, each in its own driver process, settles;
a fourth joins; the first leaves (a clean close).  Every step of the trace written from the
members' own callbacks must be valid (every partition of the two topics held by exactly one
member of the group, as the evaluator judges it), hold exactly the step's members, and its moves
(``models.trace.observed``) must equal a recount straight from the assignments; the join costs no
partition-second without an owner on an incremental protocol (cooperative-sticky, the consumer
protocol) but some on an eager one, where every member gives up everything; the leave's step
times it.  ``rebalance-lab record`` watches the group meanwhile (the classic protocol's and the
consumer protocol's) and must see the same rebalances with the same members.  Each client runs an
assignor of its own: the test covers the drivers, the callbacks and the judging, and the
benchmark (benchmarks/client_matrix.py) the whole matrix.  The six groups (each its own group id
and topics) are driven at once, as the benchmark drives its runs, and each library's test reads
its own group's outcome.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest
from kafka.admin import KafkaAdminClient

from models.trace.observed import observed_run
from peers.client_matrix import CLIENTS, Outcome, Sequence, Step, member_sets, run_sequence
from problems.trace import load_trace

pytestmark = pytest.mark.kafka

#: Per library: the assignor and the group protocol of its test, and whether it is incremental.
CASES = {
    "java": ("cooperative-sticky", "classic", True),
    "confluent-kafka": ("uniform", "consumer", True),
    "franz-go": ("cooperative-sticky", "classic", True),
    "sarama": ("sticky", "classic", False),
    "kafka-python": ("range", "classic", False),
    "kafkajs": ("roundrobin", "classic", False),
}
SHORT = Sequence("join-leave", (Step("start", 3), Step("stop", 0)))


def recount(before: dict, after: dict) -> int:
    """Partitions held at ``before`` that another member holds at ``after``."""
    owner = {(t, p): m for m, held in before.items() for t, ps in held.items() for p in ps}
    return sum(
        1
        for m, held in after.items()
        for t, ps in held.items()
        for p in ps
        if (t, p) in owner and owner[(t, p)] != m
    )


def recorded_sets(name: str, recorded: dict[str, Any]) -> list[list[str]]:
    """The member sets of the recorded rebalances; kafka-python's with a rebalance that changed no
    member folded into the one before: a member of kafka-python 3.0.12 that lost its SyncGroup
    answer rejoins, and the coordinator rebalances once more with the same members, a round of the
    run's step."""
    sets = member_sets(recorded)
    if name != "kafka-python":
        return sets
    return [s for k, s in enumerate(sets) if k == 0 or s != sets[k - 1]]


def short_sequence(name: str, bootstrap: str, folder: Any) -> Outcome:
    """``name``'s group through :data:`SHORT` (its own admin client: the groups run at once)."""
    assignor, protocol, _ = CASES[name]
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:

        def run(log: str) -> Outcome:
            return run_sequence(
                CLIENTS[name],
                assignor,
                protocol,
                SHORT,
                bootstrap,
                admin,
                members=3,
                log=folder / log,
                record=True,
            )

        outcome = run(f"{name}.log")
        if name == "kafka-python" and (
            outcome.recorded is None
            or recorded_sets(name, outcome.recorded) != member_sets(outcome.document)
        ):
            # kafka-python 3.0.12 now and then loses a JoinGroup/SyncGroup answer: the coordinator
            # drops the stalled member while its callbacks still show its partitions. One run in a
            # fresh group.
            outcome = run(f"{name}-again.log")
        return outcome
    finally:
        admin.close()


@pytest.fixture(scope="module")
def outcomes(kafka_cluster, tmp_path_factory) -> dict[str, Future[Outcome]]:
    """Every library's short sequence, the six groups driven at once on the cluster."""
    folder = tmp_path_factory.mktemp("client-matrix")
    with ThreadPoolExecutor(len(CASES)) as pool:
        return {
            name: pool.submit(short_sequence, name, kafka_cluster.bootstrap, folder)
            for name in CASES
        }


@pytest.mark.parametrize("name", list(CASES))
def test_short_sequence(name, outcomes):
    _, protocol, incremental = CASES[name]
    outcome = outcomes[name].result()
    assert outcome.defects == []
    doc = outcome.document
    start = {m["id"]: m.get("owned", {}) for m in doc["problem"]["members"]}
    assert sorted(start) == ["m0", "m1", "m2"]
    join, leave = doc["steps"]
    assert [j["id"] for j in join["join"]] == ["m3"] and leave["leave"] == ["m0"]
    assert sorted(join["observed"]["assignment"]) == ["m0", "m1", "m2", "m3"]
    assert sorted(leave["observed"]["assignment"]) == ["m1", "m2", "m3"]

    run = observed_run(load_trace(doc), "sticky")
    assert [s.result.evaluation.valid for s in run.steps] == [True, True, True]
    held = [start, join["observed"]["assignment"], leave["observed"]["assignment"]]
    assert [s.moves for s in run.steps] == [0, recount(held[0], held[1]), recount(held[1], held[2])]
    for step in (join, leave):
        owned = sum(
            len(ps) for held in step["observed"]["assignment"].values() for ps in held.values()
        )
        assert owned == 24
    # Eager protocols give up everything on a join: partition-ms without an owner; the leaver's
    # partitions are unowned until the group reassigns them, whatever the protocol.
    if not incremental:
        assert join["observed"]["unowned_partition_ms"] > 0
    assert leave["observed"]["unowned_partition_ms"] > 0
    # rebalance-lab record, watching the group meanwhile, saw the same rebalances with the same
    # members (the consumer protocol's from its records too).
    assert outcome.recorded is not None, outcome.record_error
    assert outcome.recorded["recorded"]["protocol"] == protocol
    assert recorded_sets(name, outcome.recorded) == member_sets(doc), outcome.record_error
