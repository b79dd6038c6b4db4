"""Streams groups (problems/streams/): the document, its checks, answers and their JSON, and the
``streams`` objective's verdict on hand-computed cases."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from problems import (
    ProblemError,
    StreamsAssignment,
    evaluate,
    evaluate_streams,
    load_problem,
    load_streams_problem,
    problem_to_json,
    streams_answer_from_json,
    streams_assignment_json,
)
from problems.streams import NO_STATE, StreamsConfigs, previous_assignment
from support.kafka_support import run_cli

DOC = {
    "kind": "streams-group",
    "subtopologies": {
        "s0": {"partitions": 4, "stateful": True},
        "s1": {"partitions": 2, "stateful": False},
    },
    "members": [
        {"id": "m0", "process": "p0", "rack": "r1", "client_tags": {"zone": "a"},
         "active": {"s0": [0, 1]}, "standby": {"s0": [2]}, "warmup": {},
         "lags": {"s0": [0, 0, 500, -1]}},
        {"id": "m1", "process": "p1", "threads": 2, "rack": "r2", "active": {"s1": [1]},
         "warmup": {"s0": [3]}, "lags": {"s0": [10, -1, 0, 3]}},
        {"id": "m2", "process": "p0", "client_tags": {"zone": "a"},
         "lags": {"s0": [0, 0, 500, -1]}},
    ],
    "configs": {"num_standby_replicas": 1, "max_warmup_replicas": 1},
}  # fmt: skip


def test_document_is_read_into_arrays():
    """Tests the task numbering, processes by first appearance, lags by process (-1 without state,
    0 for stateless tasks), the previous assignment and the configs."""
    problem = load_problem(DOC)
    assert problem.tasks == [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1)]
    assert problem.n_tasks == 6 and problem.task_id("s1", 1) == 5
    assert problem.task_name(5) == "s1_1"
    assert problem.processes == ("p0", "p1")
    assert problem.member_process.tolist() == [0, 1, 0]
    assert problem.threads.tolist() == [1, 2, 1]
    assert problem.process_threads.tolist() == [2, 2]
    assert problem.racks == ("r1", "r2", None) == problem.rack
    assert dict(problem.client_tags[2]) == {"zone": "a"}
    assert problem.process_lag.tolist() == [[0, 0, 500, -1, 0, 0], [10, -1, 0, 3, 0, 0]]
    assert problem.prev_active.tolist() == [0, 0, -1, -1, -1, 1]
    assert problem.prev_standby.tolist() == [[2, 0]]
    assert problem.prev_warmup.tolist() == [[3, 1]]
    assert problem.configs == StreamsConfigs(num_standby_replicas=1, max_warmup_replicas=1)
    assert problem.configs.acceptable_recovery_lag == 10_000
    assert problem.configs.rack_aware_assignment_strategy == "none"
    assert not problem.partitions.flags.writeable and not problem.process_lag.flags.writeable


def test_restore_cost_counts_a_missing_state_as_the_largest_known_lag():
    """Tests level 1's per-process cost: the lag, or (-1) the task's largest lag of any process."""
    problem = load_problem(DOC)
    # s0_1: p0 lag 0, p1 none -> full cost 0; s0_3: p0 none -> full cost 3 (p1's lag)
    assert problem.restore_cost.tolist() == [[0, 0, 500, 3, 0, 0], [10, 0, 0, 3, 0, 0]]
    assert NO_STATE == -1


def test_problem_json_round_trip():
    """Tests that the problem's document reads back to the same document."""
    problem = load_problem(DOC)
    doc = problem_to_json(problem)
    assert problem_to_json(load_problem(doc)) == doc
    again = load_problem(json.dumps(doc))
    assert again.prev_warmup.tolist() == problem.prev_warmup.tolist()
    assert np.array_equal(again.process_lag, problem.process_lag)
    assert load_streams_problem(doc).members == problem.members


def test_levels_on_a_hand_computed_answer():
    """Tests every level on an answer computed by hand.

    Actives: s0_0 m0, s0_1 m2, s0_2 m1, s0_3 m1, s1_0 m2, s1_1 m0; standbys s0_0 m1, s0_1 m1,
    s0_2 m0, s0_3 m2 (one per stateful task: min(1, 2 processes - 1)); no warm-up.
    1. restore: s0_0 p0 0 + s0_1 p0 0 + s0_2 p1 0 + s0_3 p1 3 = 3.
    2. actives per member 2, 2, 2 with threads 1, 2, 1: L = 2; 2*4/1 + 2*4/2 + 2*4/1 = 20.
    3. standbys 1, 2, 1: 2 + 4 + 2 = 8.
    4. no partition racks: 0.
    5. previous actives s0_0 m0 (kept), s0_1 m0 (now m2), s1_1 m1 (now m0): 2 moves.
    6. new standbys: s0_0 on m1 (held nothing), s0_1 on m1 (held nothing), s0_2 on m0 (was its
       standby), s0_3 on m2 (held nothing; m1 had the warm-up): 3.
    """
    problem = load_problem(DOC)
    answer = StreamsAssignment.of([0, 2, 1, 1, 2, 0], [(0, 1), (1, 1), (2, 0), (3, 2)])
    verdict = evaluate(problem, answer, "streams")
    assert verdict.valid, verdict.violations
    assert verdict.objective == (3, 20, 8, 0, 2, 3)
    assert verdict.names == (
        "restore_cost",
        "sum_sq_actives",
        "sum_sq_standbys",
        "cross_rack_traffic",
        "active_moves",
        "standby_moves",
    )
    assert evaluate_streams(problem, answer) == verdict


def test_cross_rack_traffic_counts_source_partitions_off_the_members_rack():
    """Tests level 4: per source partition with racks, whose active member's rack holds no replica
    (a member without a rack never counts)."""
    doc = copy.deepcopy(DOC)
    doc["subtopologies"]["s0"]["partition_racks"] = {
        "orders": [["r1"], ["r1", "r2"], ["r1"], ["r2"]],
        "payments": [["r2"], ["r2"]],
    }
    problem = load_problem(doc)
    assert problem.has_racks and len(problem.source_task) == 6
    # s0_0 on m0 (r1): orders-0 r1 ok, payments-0 r2 off; s0_1 on m2 (no rack): never;
    # s0_2 on m1 (r2): orders-2 r1 off; s0_3 on m1 (r2): orders-3 ok  -> 2
    answer = StreamsAssignment.of([0, 2, 1, 1, 2, 0], [(0, 1), (1, 1), (2, 0), (3, 2)])
    assert evaluate(problem, answer, "streams").objective[3] == 2


def test_violations_are_listed_and_the_answer_still_scored():
    """Tests the hard constraints: an unassigned active task, two copies on one process (m0 and m2
    share p0), a standby of a stateless task, more standbys than configured, too many warm-ups."""
    problem = load_problem(DOC)
    answer = StreamsAssignment.of(
        [0, 2, 1, -1, 2, 0],
        standby=[(0, 2), (2, 0), (2, 1), (4, 1)],
        warmup=[(3, 0), (3, 1)],
    )
    verdict = evaluate(problem, answer, "streams")
    assert not verdict.valid
    text = "\n".join(verdict.violations)
    assert "task s0_3 has no active member" in text
    assert "process p0 holds task s0_0 more than once" in text
    assert "task s1_0 of a stateless subtopology has a standby replica on m1" in text
    assert (
        "task s0_2 has 2 standby replicas, not min(num_standby_replicas, processes - 1) = 1" in text
    )
    assert "2 warm-up replicas, more than max_warmup_replicas = 1" in text
    assert len(verdict.objective) == 6


def test_wrong_shapes_are_invalid_without_levels():
    """Tests an answer that is not a StreamsAssignment of the problem: invalid, no levels."""
    problem = load_problem(DOC)
    short = StreamsAssignment.of([0, 0, 0])
    assert not evaluate(problem, short, "streams").valid
    stranger = StreamsAssignment.of([0, 0, 0, 0, 0, 9])
    verdict = evaluate(problem, stranger, "streams")
    assert verdict.violations == ("active owners hold positions that are not members",)
    assert verdict.objective == ()


def test_answer_json_round_trip():
    """Tests the output JSON (every member, all three kinds, lists ascending) and its parser."""
    problem = load_problem(DOC)
    answer = StreamsAssignment.of([0, 2, 1, 1, 2, 0], [(2, 0), (0, 1), (3, 2)], [(1, 1)])
    doc = streams_assignment_json(problem, answer)
    assert doc == {
        "m0": {"active": {"s0": [0], "s1": [1]}, "standby": {"s0": [2]}, "warmup": {}},
        "m1": {"active": {"s0": [2, 3]}, "standby": {"s0": [0]}, "warmup": {"s0": [1]}},
        "m2": {"active": {"s0": [1], "s1": [0]}, "standby": {"s0": [3]}, "warmup": {}},
    }
    assert streams_answer_from_json(problem, doc) == answer
    assert streams_answer_from_json(problem, {"m0": {"active": {"s0": [0, 1, 2, 3]}}}) == (
        StreamsAssignment.of([0, 0, 0, 0, -1, -1])
    )
    previous = previous_assignment(problem)
    assert streams_answer_from_json(problem, streams_assignment_json(problem, previous)) == previous


@pytest.mark.parametrize(
    "doc, message",
    [
        ({"m9": {}}, "<assignment>: m9: not a member of the group"),
        (
            {"m0": {"passive": {}}},
            "<assignment>: m0.passive: not a kind of task (active, standby, warmup)",
        ),
        ({"m0": {"active": {"s7": [0]}}}, "<assignment>: m0.active.s7: subtopology does not exist"),
        (
            {"m0": {"active": {"s0": [4]}}},
            "<assignment>: m0.active.s0[0]: task s0_4 does not exist (s0 has 4 partitions)",
        ),
        (
            {"m0": {"active": {"s0": [0]}}, "m1": {"active": {"s0": [0]}}},
            "<assignment>: m1.active: task s0_0 is also active on m0",
        ),
    ],
)
def test_bad_answer_json(doc, message):
    """Tests that a malformed assignment JSON is one line naming the member and field."""
    with pytest.raises(ProblemError) as error:
        streams_answer_from_json(load_problem(DOC), doc)
    assert str(error.value) == message


def _changed(path: tuple, value=None, delete: bool = False) -> dict:
    doc = copy.deepcopy(DOC)
    node = doc
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


BAD = [
    (_changed(("extra",), 1), "extra: unknown field in a streams group"),
    (
        _changed(("kind",), delete=True),
        "kind: must be 'streams-group' in a streams group (subtopologies)",
    ),
    (
        _changed(("subtopologies", "s0", "partitions"), -1),
        "subtopologies.s0.partitions: must be an integer >= 0, got -1",
    ),
    (
        _changed(("subtopologies", "s0", "stateful"), "yes"),
        "subtopologies.s0.stateful: must be true or false, got a string",
    ),
    (_changed(("subtopologies", "s0", "colour"), 1), "subtopologies.s0.colour: unknown field"),
    (_changed(("members",), []), "members: must list at least one member"),
    (
        _changed(("members", 1, "id"), "m0"),
        "members[1].id: duplicate member id 'm0' (also members[0])",
    ),
    (
        _changed(("members", 1, "process"), delete=True),
        "members[1].process: missing (the member's process id)",
    ),
    (_changed(("members", 1, "threads"), 0), "members[1].threads: must be an integer >= 1, got 0"),
    (
        _changed(("members", 0, "active"), {"s0": [0, 9]}),
        "members[0].active.s0[1]: task s0_9 does not exist (s0 has 4 partitions)",
    ),
    (
        _changed(("members", 0, "active"), {"s9": [0]}),
        "members[0].active.s9: subtopology does not exist",
    ),
    (
        _changed(("members", 0, "active"), {"s0": [1, 1]}),
        "members[0].active.s0[1]: partition 1 is given twice",
    ),
    (
        _changed(("members", 1, "active"), {"s0": [1]}),
        "members[1].active: task s0_1 is also active on members[0] ('m0')",
    ),
    (
        _changed(("members", 0, "standby"), {"s0": [0]}),
        "members[0].standby: task s0_0 is also in the member's active",
    ),
    (
        _changed(("members", 1, "standby"), {"s1": [0]}),
        "members[1].standby: task s1_0 is of a stateless subtopology (no standby replicas)",
    ),
    (
        _changed(("members", 1, "warmup"), {"s1": [0]}),
        "members[1].warmup: task s1_0 is of a stateless subtopology (no warmup replicas)",
    ),
    (
        _changed(("members", 1, "lags"), {"s1": [0, 0]}),
        "members[1].lags.s1: s1 is stateless: its tasks have no state, so no lag",
    ),
    (
        _changed(("members", 1, "lags"), {"s0": [0, 0]}),
        "members[1].lags.s0: must have 4 lags (one per partition number), got 2",
    ),
    (
        _changed(("members", 1, "lags"), {"s0": [0, 0, -2, 0]}),
        "members[1].lags.s0[2]: must be an integer >= -1, got -2",
    ),
    (
        _changed(("members", 2, "lags"), {"s0": [0, 0, 7, -1]}),
        "members[2].lags.s0[2]: lag 7 differs from members[0]'s 500, of the same process "
        "(members of one process share its state)",
    ),
    (
        _changed(("members", 2, "client_tags"), {"zone": "b"}),
        "members[2].client_tags: differs from members[0], of the same process (client tags belong to the process)",
    ),
    (
        _changed(("configs", "num_standby"), 1),
        "configs.num_standby: unknown config (known: acceptable_recovery_lag, max_warmup_replicas, "
        "non_overlap_cost, num_standby_replicas, rack_aware_assignment_strategy, "
        "rack_aware_assignment_tags, traffic_cost)",
    ),
    (
        _changed(("configs", "rack_aware_assignment_strategy"), "closest"),
        "configs.rack_aware_assignment_strategy: must be one of none, min_traffic, balance_subtopology, got 'closest'",
    ),
    (
        _changed(("configs", "max_warmup_replicas"), 0),
        "configs.max_warmup_replicas: must be an integer >= 1, got 0",
    ),
    (
        _changed(("configs", "num_standby_replicas"), -1),
        "configs.num_standby_replicas: must be an integer >= 0, got -1",
    ),
    (
        _changed(("subtopologies", "s0", "partition_racks"), {"t": [["r1"]] * 5}),
        "subtopologies.s0.partition_racks.t: has 5 partitions, more than the subtopology's 4",
    ),
]


@pytest.mark.parametrize("doc, message", BAD, ids=[m.split(":")[0] for _, m in BAD])
def test_bad_documents_name_the_field(doc, message):
    """Tests that each malformed streams document is one ProblemError line naming the field."""
    with pytest.raises(ProblemError) as error:
        load_problem(doc)
    assert str(error.value) == f"<dict>: {message}"


@pytest.mark.parametrize("doc, message", BAD[:6], ids=[m.split(":")[0] for _, m in BAD[:6]])
def test_bad_documents_exit_2_with_one_line(capsys, tmp_path, doc, message):
    """Tests the command line on bad streams documents: exit status 2, one stderr line."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    status, out, err = run_cli(capsys, "assign", "--strategy", "streams-sticky", str(path))
    assert (status, out) == (2, "")
    assert err == f"error: {path}: {message}\n"


def test_kind_mismatches_exit_2_with_one_line(capsys, tmp_path):
    """Tests a streams document given to a consumer-group strategy and the reverse."""
    path = tmp_path / "streams.json"
    path.write_text(json.dumps(DOC))
    status, out, err = run_cli(capsys, "assign", "--strategy", "range", str(path))
    assert (status, out) == (2, "")
    assert err == (
        f"error: {path}: is a streams group; use a streams strategy "
        "(streams-sticky, streams-ha, streams-kip924-sticky)\n"
    )
    group = tmp_path / "group.json"
    group.write_text(json.dumps({"topics": {"t": 1}, "members": [{"id": "c", "topics": ["t"]}]}))
    status, out, err = run_cli(capsys, "assign", "--strategy", "streams-sticky", str(group))
    assert (status, out) == (2, "")
    assert (
        err
        == f"error: {group}: is a consumer group; --strategy streams-sticky takes a streams group\n"
    )
