"""heuristics/streams/streams_kip924_sticky.py: KIP-924's public StickyTaskAssignor on hand-checked groups.

KIP-924 ships it as the sticky assignor a Kafka Streams application may plug in
(``task.assignor.class``): previous active tasks stay while their client has room, previous
standbys take over tasks whose owner left, the rest go to the least loaded clients, standbys to
the best client without the task.  Process order (Kafka's ``HashMap`` of ``ProcessId``): the
equality tests run Kafka's own class on 300 random groups (tests/peers/test_streams_kip924_equality.py).
"""

from __future__ import annotations

from heuristics.streams import streams_kip924_sticky
from heuristics.streams.streams_ha_input import streams_input
from heuristics.streams.streams_kip924_sticky import kip924_sticky_assign
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


def test_balanced_previous_assignment_is_kept():
    """Tests stickiness: a balanced previous assignment comes back unchanged (no moves)."""
    doc = group(
        {"s0": {"partitions": 4, "stateful": False}},
        [member("A", active={"s0": [0, 3]}), member("B", active={"s0": [1, 2]})],
    )
    result = streams_kip924_sticky.assign(load_problem(doc))
    assert result.assignment["A"]["active"] == {"s0": [0, 3]}
    assert result.objective[4] == 0


def test_a_newcomer_gets_what_exceeds_the_owners_share():
    """Tests the room rule: A held all four tasks, B joins; A keeps ceil(4 * 1 / 2) = 2 (the first
    two in Kafka's HashMap order of task ids: tasks 2 and 3), B takes the others, and each task's
    standby goes to the other process."""
    doc = group(
        {"s0": {"partitions": 4, "stateful": True}},
        [member("A", active={"s0": [0, 1, 2, 3]}), member("B")],
        num_standby_replicas=1,
    )
    result = streams_kip924_sticky.assign(load_problem(doc))
    assert result.assignment == {
        "A": {"active": {"s0": [2, 3]}, "standby": {"s0": [0, 1]}, "warmup": {}},
        "B": {"active": {"s0": [0, 1]}, "standby": {"s0": [2, 3]}, "warmup": {}},
    }


def test_a_previous_standby_takes_over_an_orphaned_task():
    """Tests the second rule: task 0's owner left; B held its standby and takes it."""
    doc = group(
        {"s0": {"partitions": 2, "stateful": True}},
        [member("B", standby={"s0": [0]}), member("C", active={"s0": [1]})],
    )
    result = streams_kip924_sticky.assign(load_problem(doc))
    assert result.assignment["B"]["active"] == {"s0": [0]}
    assert result.assignment["C"]["active"] == {"s0": [1]}


def test_rack_optimisation_needs_both_costs_configured():
    """Tests KIP-924's switch: ``min_traffic`` without ``traffic_cost`` and ``non_overlap_cost``
    does nothing (``canPerformRackAwareOptimization``); with both, tasks move to their racks."""
    subs = {
        "s0": {
            "partitions": 4,
            "stateful": False,
            "partition_racks": {"in": [["r1"], ["r1"], ["r2"], ["r2"]]},
        }
    }
    members = [
        member("A", rack="r1", active={"s0": [2, 3]}),
        member("B", rack="r2", active={"s0": [0, 1]}),
    ]
    plain = streams_kip924_sticky.assign(
        load_problem(group(subs, members, rack_aware_assignment_strategy="min_traffic"))
    )
    assert plain.assignment["A"]["active"] == {"s0": [2, 3]} and plain.objective[3] == 4
    tuned = streams_kip924_sticky.assign(
        load_problem(
            group(
                subs,
                members,
                rack_aware_assignment_strategy="min_traffic",
                traffic_cost=10,
                non_overlap_cost=1,
            )
        )
    )
    assert tuned.assignment["A"]["active"] == {"s0": [0, 1]} and tuned.objective[3] == 0


def test_standby_order_follows_the_task_info_hashes():
    """Pins the one order the document cannot give: Kafka takes the stateful tasks for standbys
    from a ``HashSet`` of ``TaskInfo``, by the JVM's identity hash codes.  Three processes each
    keep one task; task 1 first (hashes 2, 1, 3) lays the standbys out otherwise than task 0
    first (hashes 1, 2, 3), which is also what the ``TaskId`` hashes give."""
    doc = group(
        {"s0": {"partitions": 3, "stateful": True}},
        [
            member("A", active={"s0": [0]}),
            member("B", active={"s0": [1]}),
            member("C", active={"s0": [2]}),
        ],
        num_standby_replicas=1,
    )
    inp, _ = streams_input(load_problem(doc))
    assert inp.client_names == ("B", "C", "A")
    in_task_order = kip924_sticky_assign(inp, [1, 2, 3])
    task_1_first = kip924_sticky_assign(inp, [2, 1, 3])
    assert in_task_order == ([{1}, {2}, {0}], [{0}, {1}, {2}])
    assert task_1_first == ([{1}, {2}, {0}], [{2}, {0}, {1}])
    assert kip924_sticky_assign(inp) == in_task_order
