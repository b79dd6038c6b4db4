"""heuristics/streams/streams_ha.py: Kafka Streams' HighAvailabilityTaskAssignor on hand-checked groups.

The cases follow KIP-441 (caught-up clients keep stateful active tasks, warm-ups where tasks
should move, the probing rebalance), KIP-708 (standbys spread over client tags) and KIP-925
(rack-aware min-cost flow, switched on only with racks everywhere).  Process order is Kafka's,
by process UUID: ``B`` < ``A`` (``UUID.nameUUIDFromBytes`` of the names).  The same answers come
out of Kafka's own classes (tests/peers/test_streams_ha_equality.py runs 300 random groups).
"""

from __future__ import annotations

import numpy as np

from heuristics.java import JavaPriorityQueue, hash_set_order
from heuristics.streams import streams_ha
from heuristics.streams.streams_ha_flow import Graph
from heuristics.streams.streams_ha_input import streams_input
from heuristics.streams.streams_ha_order import process_uuid, task_hash, uuid_hash
from problems import load_problem


def member(name: str, **fields) -> dict:
    return {"id": name, "process": name, **fields}


def group(subtopologies: dict, members: list, **configs) -> dict:
    return {
        "kind": "streams-group",
        "subtopologies": subtopologies,
        "members": members,
        "configs": configs,
    }


def test_process_uuids_are_javas_name_based_uuids():
    """Tests ``UUID.nameUUIDFromBytes`` (values printed by the JVM), its ``hashCode``, and the
    signed order of ``UUID.compareTo`` (a lower half with its top bit set sorts first)."""
    assert process_uuid("p0") == (4797315494014500010, -6914058756697624445)
    assert uuid_hash(*process_uuid("p0")) == -1066212066
    assert process_uuid("00000000-0000-0000-0000-000000000001") == (0, 1)
    assert process_uuid("00000000-0000-0000-8000-000000000000") < (0, 1)
    assert process_uuid("B") < process_uuid("A")


def test_task_hash_and_hash_set_order():
    """Tests ``TaskId.hashCode`` (``Objects.hash(subtopology, partition, null)``) and the order
    of a ``HashSet``: by bucket (hash & 15 for up to 12 keys), ties in insertion order."""
    assert task_hash(0, 0) == 29791 and task_hash(1, 2) == 29791 + 961 + 62
    assert hash_set_order([17, 1, 16, 33]) == [2, 0, 1, 3]  # buckets 1, 1, 0, 1


def test_java_priority_queue_sifts_like_javas():
    """Tests poll order under a changing comparator key: Java's heap array, not a sorted list."""
    load = {0: 3, 1: 1, 2: 2}

    def compare(a: int, b: int) -> int:
        return (load[a] > load[b]) - (load[a] < load[b]) or (a > b) - (a < b)

    queue = JavaPriorityQueue(compare)
    queue.offer_all([0, 1, 2])
    load[0] = 0  # changed while queued: Java does not re-sift it, so 1 is still at the root
    assert queue.poll() == 1
    assert queue.remove(2) and queue.poll() == 0 and queue.poll() is None


def test_min_cost_flow_cancels_the_negative_cycle():
    """Tests Kafka's cycle cancelling on two tasks held crosswise: both move (cost 4 -> 0)."""
    graph = Graph()
    for task, (here, there) in enumerate([(2, 0), (0, 2)]):
        graph.add_edge(-1, task, 1, 0, 1)
        graph.add_edge(task, 2, 1, here, 1 - task)
        graph.add_edge(task, 3, 1, there, task)
    graph.add_edge(2, 4, 1, 0, 1)
    graph.add_edge(3, 4, 1, 0, 1)
    assert graph.total_cost() == 4
    graph.solve_min_cost_flow()
    assert graph.total_cost() == 0
    assert [e.flow for e in graph.edges(0)] == [0, 1]


def test_caught_up_owner_keeps_its_tasks_and_the_newcomer_warms_up():
    """Tests KIP-441: B joins with stale state (lag 5000 > 100); round robin deals it tasks 0
    and 2, which move back to the caught-up A, and B keeps warm-ups of both (2 allowed); a
    probing rebalance is due."""
    doc = group(
        {"s0": {"partitions": 4, "stateful": True}},
        [
            member("A", active={"s0": [0, 1, 2, 3]}, lags={"s0": [0] * 4}),
            member("B", lags={"s0": [5000] * 4}),
        ],
        acceptable_recovery_lag=100,
        max_warmup_replicas=2,
    )
    result = streams_ha.assign(load_problem(doc))
    assert result.assignment == {
        "A": {"active": {"s0": [0, 1, 2, 3]}, "standby": {}, "warmup": {}},
        "B": {"active": {}, "standby": {}, "warmup": {"s0": [0, 2]}},
    }
    assert result.info == {"probing_rebalance": True, "rack_aware": False}
    doc["configs"]["max_warmup_replicas"] = 1  # the movement of task 0 comes first
    assert streams_ha.assign(load_problem(doc)).assignment["B"]["warmup"] == {"s0": [0]}


def test_caught_up_standby_swaps_with_the_active():
    """Tests the first movement rule: round robin gives the task to B (behind), the standby goes
    to A (caught up), and the two swap: A active, B standby (not a warm-up)."""
    doc = group(
        {"s0": {"partitions": 1, "stateful": True}},
        [member("A", lags={"s0": [0]}), member("B", lags={"s0": [5000]})],
        acceptable_recovery_lag=100,
        num_standby_replicas=1,
    )
    result = streams_ha.assign(load_problem(doc))
    assert result.assignment["A"]["active"] == {"s0": [0]}
    assert result.assignment["B"]["standby"] == {"s0": [0]}
    assert result.info["probing_rebalance"]


def test_stateless_tasks_follow_threads_not_history():
    """Tests the stateless step: tasks go to the client with the fewest active tasks per thread,
    whoever held them (A has 2 threads: 4 of 6 tasks; five of B's six move)."""
    doc = group(
        {"s0": {"partitions": 6, "stateful": False}},
        [member("A", threads=2, active={"s0": [0]}), member("B", active={"s0": [1, 2, 3, 4, 5]})],
    )
    result = streams_ha.assign(load_problem(doc))
    assert result.assignment["A"]["active"] == {"s0": [1, 2, 4, 5]}
    assert result.assignment["B"]["active"] == {"s0": [0, 3]}
    assert result.objective[4] == 5  # active moves


def test_client_tags_spread_standbys_as_kip_708_describes():
    """Tests KIP-708's example: six clients over three zones and two clusters, two standbys.
    The first standby differs from the active in zone and cluster; the second (both clusters
    used, so the cluster is forgotten) differs from both in zone."""
    zones = ["eu-central-1a", "eu-central-1b", "eu-central-1c"]
    members = [
        member(
            f"client-{i + 1}",
            client_tags={"zone": zones[i % 3], "cluster": f"k8s-cluster{1 + i // 3}"},
        )
        for i in range(6)
    ]
    doc = group(
        {"s0": {"partitions": 1, "stateful": True}},
        members,
        num_standby_replicas=2,
        rack_aware_assignment_tags=["zone", "cluster"],
    )
    problem = load_problem(doc)
    answer = streams_ha.assign(problem).answer
    tags = [problem.client_tags[m] for m in range(6)]
    active = int(answer.active[0])
    first, second = (int(m) for _, m in answer.standby)
    assert len({tags[m]["zone"] for m in (active, first, second)}) == 3
    assert tags[first]["cluster"] != tags[active]["cluster"]
    assert len({tags[m]["cluster"] for m in (active, first, second)}) == 2
    assert (active, first, second) == (5, 0, 4)  # client-6, then client-1 and client-5


def test_rack_aware_min_traffic_keeps_tasks_on_their_racks():
    """Tests KIP-925: with ``min_traffic`` each process gets the tasks whose partitions are on its
    rack (no cross-rack traffic); with ``none`` round robin leaves two tasks off their racks."""
    doc = group(
        {
            "s0": {
                "partitions": 4,
                "stateful": False,
                "partition_racks": {"in": [["r1"], ["r1"], ["r2"], ["r2"]]},
            }
        },
        [member("A", rack="r2"), member("B", rack="r1")],
        rack_aware_assignment_strategy="min_traffic",
    )
    result = streams_ha.assign(load_problem(doc))
    assert result.assignment["B"]["active"] == {"s0": [0, 1]}
    assert result.info["rack_aware"] and result.objective[3] == 0
    doc["configs"]["rack_aware_assignment_strategy"] = "none"
    plain = streams_ha.assign(load_problem(doc))
    assert not plain.info["rack_aware"] and plain.objective[3] == 2


def test_rack_awareness_needs_every_rack():
    """Tests the switch: a member without a rack, or a source partition without racks, keeps
    KIP-925 off as in Kafka (``validateClientRack``, ``validateTopicPartitionRack``)."""
    subs = {"s0": {"partitions": 2, "stateful": True, "partition_racks": {"in": [["r1"], ["r2"]]}}}
    racked = [member("A", rack="r1"), member("B", rack="r2")]
    on = streams_ha.assign(
        load_problem(group(subs, racked, rack_aware_assignment_strategy="min_traffic"))
    )
    assert on.info["rack_aware"]
    rackless = [member("A", rack="r1"), member("B")]
    off = streams_ha.assign(
        load_problem(group(subs, rackless, rack_aware_assignment_strategy="min_traffic"))
    )
    assert not off.info["rack_aware"]
    short = {"s0": {"partitions": 2, "stateful": True, "partition_racks": {"in": [["r1"]]}}}
    unknown = streams_ha.assign(
        load_problem(group(short, racked, rack_aware_assignment_strategy="min_traffic"))
    )
    assert not unknown.info["rack_aware"]


def test_input_lags_and_order():
    """Tests the assignor's input: clients in UUID order (B, A), capacity = threads, a previous
    active task's lag -2 (a running active), the document's lag where there is state, and the
    task's full restore cost (the largest reported lag) where there is none."""
    doc = group(
        {"s0": {"partitions": 2, "stateful": True}},
        [
            member("A", threads=3, active={"s0": [0]}, lags={"s0": [0, 70]}),
            member("B", lags={"s0": [-1, 30]}),
        ],
    )
    inp, order = streams_input(load_problem(doc))
    assert inp.client_names == ("B", "A") and order == [1, 0]
    assert inp.capacity == (1, 3)
    assert inp.lag == ((0, 30), (-2, 70))
    assert np.array_equal(load_problem(doc).restore_cost, [[0, 70], [0, 30]])


def test_members_keep_their_tasks_within_their_share():
    """Tests the split of a process's tasks over its members (ours; Kafka's assignors stop at
    processes): x1 (2 threads) keeps its tasks while under ceil(tasks so far * 2 / 3); task 2
    finds it at its share and goes to x2, the member with fewer tasks per thread; x2 keeps
    task 5.  Tasks split 4:2, as the threads do, with one move."""
    doc = group(
        {"s0": {"partitions": 6, "stateful": False}},
        [
            {"id": "x1", "process": "X", "threads": 2, "active": {"s0": [0, 1, 2, 3, 4]}},
            {"id": "x2", "process": "X", "threads": 1, "active": {"s0": [5]}},
        ],
    )
    result = streams_ha.assign(load_problem(doc))
    assert result.assignment["x1"]["active"] == {"s0": [0, 1, 3, 4]}
    assert result.assignment["x2"]["active"] == {"s0": [2, 5]}
    assert result.objective[4] == 1
