"""Tests of the input limits (problems.checks through problems.io).

Each test pins one limit: what would otherwise be a traceback, a numpy allocation
of terabytes or a silently wrong answer is one ``ProblemError`` naming the field
(exit status 2 and one line on the command line).
"""

from __future__ import annotations

import json
import time

import pytest

from experiments.cli import main
from problems import ProblemError, evaluate, load_problem
from problems.checks import INT32_MAX, INT64_MAX
from problems.lags import group_lags, lags_documents
from problems.snapshots import read_snapshot

HEADER = "group,topic,partition,committed_offset,log_start_offset,log_end_offset\n"


def group(**member) -> dict:
    return {"topics": {"t": 3}, "members": [{"id": "c0", "topics": ["t"], **member}]}


def placement(broker_id=1, partition=0, replicas=(1,)) -> dict:
    return {
        "brokers": [{"id": broker_id}],
        "partitions": [{"topic": "t", "partition": partition, "replicas": list(replicas)}],
    }


def error(source) -> ProblemError:
    with pytest.raises(ProblemError) as caught:
        load_problem(source)
    assert "\n" not in str(caught.value)
    return caught.value


# --------------------------------------------------------------- integers
@pytest.mark.parametrize(
    "doc, field, high",
    [
        ({"topics": {"t": 2**63}, "members": []}, "topics.t", INT32_MAX),
        (group(generation=2**63), "members[0].generation", INT32_MAX),
        (group(owned={"t": [0, 2**63]}), "members[0].owned.t[1]", INT32_MAX),
        ({"topics": {"t": 2}, "members": [], "lags": {"t": [0, 2**63]}}, "lags.t[1]", INT64_MAX),
        (placement(broker_id=2**63), "brokers[0].id", INT32_MAX),
        (placement(partition=2**63), "partitions[0].partition", INT32_MAX),
        (placement(replicas=(2**63,)), "partitions[0].replicas[0]", INT32_MAX),
        (placement(broker_id=2**31), "brokers[0].id", INT32_MAX),
        (group(owned={"t": [2**31]}), "members[0].owned.t[0]", INT32_MAX),
    ],
)
def test_integers_beyond_kafkas_types_are_errors(doc, field, high):
    """Tests that any integer >= 2**63 (and an int32 field >= 2**31) names its field and Kafka's type."""
    caught = error(doc)
    assert caught.field == field and f"must be at most {high}" in caught.message


@pytest.mark.parametrize(
    "doc, field",
    [
        (placement(broker_id=-1), "brokers[0].id"),
        (placement(replicas=(-5,)), "partitions[0].replicas[0]"),
        (group(generation=-2), "members[0].generation"),
        (group(owned={"t": [-1]}), "members[0].owned.t[0]"),
        ({"topics": {"t": 1}, "members": [], "lags": {"t": [-1]}}, "lags.t[0]"),
    ],
)
def test_negative_ids_partitions_lags_are_errors(doc, field):
    """Tests that negative broker ids, replica ids, partitions, generations below -1 and lags are rejected."""
    caught = error(doc)
    assert caught.field == field and "must be an integer >=" in caught.message


def test_generation_minus_one_is_kafkas_none():
    """Tests that generation -1 (Kafka's default generation) is accepted, and means the same as absent."""
    assert load_problem(group(generation=-1)).generations.tolist() == [-1]


def test_lag_at_int64_max_is_exact():
    """Tests that the largest int64 lag loads exactly."""
    assert load_problem(
        {"topics": {"t": 1}, "members": [], "lags": {"t": [INT64_MAX]}}
    ).lags.tolist() == [INT64_MAX]


@pytest.mark.parametrize(
    "topics, words",
    [
        ({"t": 10**12}, "must be at most 2147483647"),
        ({"t": 2**62, "u": 2**62}, "must be at most 2147483647"),
        ({"t": INT32_MAX, "u": INT32_MAX}, "4,294,967,294 partitions in all; at most 100,000,000"),
    ],
)
def test_totals_are_checked_before_any_array(topics, words):
    """Tests that a count of 10**12 or two of 2**62 is an error at once, not a numpy allocation."""
    started = time.perf_counter()
    caught = error({"topics": topics, "members": [{"id": "c", "topics": list(topics)}]})
    assert words in caught.message and time.perf_counter() - started < 1


def test_members_times_topics_is_bounded():
    """Tests that the members x topics tables are bounded before they are sized."""
    doc = {
        "topics": {f"t{i}": 0 for i in range(20_000)},
        "members": [{"id": f"c{m}", "topics": []} for m in range(6_000)],
    }
    assert "members x topics (6,000 x 20,000)" in error(doc).message


# ---------------------------------------------------------------- strings
def test_lone_surrogate_in_a_dict_is_an_error():
    """Tests that a member id "\\ud800" (only possible in memory) is an error, not a UnicodeEncodeError later."""
    caught = error(group(id="\ud800"))
    assert caught.field == "members[0].id" and "not valid Unicode" in caught.message
    assert error({"topics": {"t\udfff": 1}, "members": []}).field == "topics"
    assert error(group(owned={"t\ud800": [0]})).field == "members[0].owned"


def test_lone_surrogate_in_a_file_is_not_json(tmp_path):
    """Tests that an escaped lone surrogate in a file is a JSON error with line and column."""
    path = tmp_path / "bad.json"
    path.write_text('{"topics": {"t": 1}, "members": [{"id": "\\ud800", "topics": ["t"]}]}')
    assert "surrogate" in error(path).message


def test_json_text_with_a_surrogate_is_an_error():
    """Tests that JSON text holding a raw lone surrogate is an error, not a UnicodeEncodeError."""
    assert error('{"topics": {"t\ud800": 1}, "members": []}').message.startswith("not JSON")


# ----------------------------------------------------------- duplicate keys
@pytest.mark.parametrize(
    "text, field, key",
    [
        ('{"topics": {"t": 2, "t": 3}, "members": []}', "topics", "t"),
        (
            '{"topics": {"t": 2}, "members": [{"id": "a", "topics": ["t"], "id": "b"}]}',
            "members[0]",
            "id",
        ),
        (
            '{"topics": {"t": 2}, "members": [{"id": "a", "topics": ["t"], "owned": {"t": [0], "t": [1]}}]}',
            "members[0].owned",
            "t",
        ),
        ('{"topics": {"t": 2}, "members": [], "members": []}', "", "members"),
        ('{"brokers": [{"id": 1, "id": 2}], "partitions": []}', "brokers[0]", "id"),
    ],
)
def test_duplicate_keys_are_errors_with_their_path(tmp_path, text, field, key):
    """Tests that a key given twice is an error naming the object's path (not the last value kept)."""
    path = tmp_path / "dup.json"
    path.write_text(text)
    for source in (path, text):
        caught = error(source)
        assert (caught.field, caught.message) == (
            field,
            f"key {key!r} given twice in the same object",
        )


def test_duplicate_key_is_reported_before_the_error_it_causes(tmp_path):
    """Tests that a repeated key that makes the kept value wrong is reported as the repeat."""
    caught = error(
        '{"topics": {"t": 2}, "members": [{"id": "a", "topics": ["t"], "generation": 1, '
        '"generation": "x"}]}'
    )
    assert caught.message == "key 'generation' given twice in the same object"


def test_colons_inside_strings_are_not_duplicates():
    """Tests the exact search: ':' inside ids (more ':' than keys) loads when no key repeats."""
    problem = load_problem(
        '{"topics": {"t:1": 2}, "members": [{"id": "host:9092", "topics": ["t:1"], '
        '"owned": {"t:1": [0]}, "rack": "a\\u003ab"}]}'
    )
    assert problem.members == ("host:9092",) and problem.racks == ("a:b",)


# ----------------------------------------------------------------- nesting
def test_deep_nesting_in_a_file_is_an_error(tmp_path):
    """Tests that 100,000-deep JSON is a one-line error, not a RecursionError."""
    path = tmp_path / "deep.json"
    path.write_text('{"topics": {"t": 1}, "members": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert "depth limit" in error(path).message


def test_deep_nesting_in_a_dict_is_an_error():
    """Tests that a 100,000-deep structure in memory is a type error (the checks never recurse)."""
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert error({"topics": {"t": 1}, "members": deep}).field == "members[0]"
    assert error({"topics": {"t": 1}, "members": [], "lags": {"t": deep}}).field == "lags.t[0]"


# -------------------------------------------------------------- placements
def test_no_live_brokers_is_an_error():
    """Tests that {"brokers": [], "partitions": []} is an error at load, not a ZeroDivisionError."""
    assert error({"brokers": [], "partitions": []}).message == "must list at least one live broker"


@pytest.mark.parametrize("base", [0, 2**31 - 4])
def test_evaluator_keys_are_safe_for_any_broker_ids(base):
    """Tests that large broker ids do not collide in the evaluator's keys (a valid plan stays valid)."""
    ids = [base, base + 1, base + 2, base + 3]
    doc = {
        "brokers": [{"id": b} for b in ids],
        "partitions": [
            {"topic": "t", "partition": k, "replicas": [ids[k % 4], ids[(k + 1) % 4]]}
            for k in range(8)
        ],
    }
    problem = load_problem(doc)
    verdict = evaluate(problem, problem.replica_brokers, "replica")
    assert verdict.valid and verdict.objective == (64, 32, 16, 0)
    moved = problem.replica_brokers.copy()
    moved[0] = ids[2]  # partition 0: [0, 1] -> [2, 1], one move
    assert evaluate(problem, moved, "replica").objective[3] == 1
    twice = problem.replica_brokers.copy()
    twice[0] = twice[1]
    assert any("twice" in v for v in evaluate(problem, twice, "replica").violations)


# ----------------------------------------------------------------- sources
def test_file_name_starting_with_a_bracket_is_a_file(tmp_path, monkeypatch):
    """Tests that a file named '[x].json' or '{x}.json' is read as a file, not parsed as JSON text."""
    monkeypatch.chdir(tmp_path)
    for name in ("[x].json", "{x}.json"):
        (tmp_path / name).write_text(json.dumps(group()))
        assert load_problem(name).members == ("c0",)
    assert load_problem(json.dumps(group())).members == ("c0",)  # text still works


def test_byte_order_mark_in_a_problem_file(tmp_path):
    """Tests that a UTF-8 byte order mark before the JSON is not an error."""
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(group()).encode())
    assert load_problem(path).members == ("c0",)


# -------------------------------------------------------------------- lags
def test_snapshot_csv_with_a_byte_order_mark(tmp_path):
    """Tests that a CSV saved with a UTF-8 BOM (Excel) reads its header (the BOM is not part of 'group')."""
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + (HEADER + "g,t,0,1,0,5\n").encode())
    documents, _ = lags_documents(group_lags(read_snapshot(path)), str(path))
    assert documents == {"g": {"t": [4]}}


def test_snapshot_partition_beyond_int32_and_a_far_gap_are_quick_errors(tmp_path):
    """Tests that a partition >= 2**31 is an error and a gap up to 2**31 - 1 is found without a huge set."""
    path = tmp_path / "far.csv"
    path.write_text(HEADER + "g,t,0,1,0,5\ng,t,2147483648,1,0,5\n")
    rows = group_lags(read_snapshot(path))
    assert rows.error.tolist() == [
        "partition: must be at most 2147483647 (an int32, as in Kafka), got 2147483648"
    ]
    path.write_text(HEADER + "g,t,0,1,0,5\ng,t,2147483647,1,0,5\n")
    started = time.perf_counter()
    rows = group_lags(read_snapshot(path))
    assert rows.error.tolist() == [
        "partition: group 'g' topic 't' has no row for partition 1 "
        "(it has partitions up to 2147483647)"
    ]
    assert time.perf_counter() - started < 2


def test_lags_empty_group_cell_is_one_line_before_spark(tmp_path, capsys):
    """Tests that an empty group cell is exit 2 and one line, found before Spark starts (no trace)."""
    path = tmp_path / "bad.csv"
    path.write_text(HEADER + "g,t,0,1,0,5\n,t,1,1,0,5\n")
    assert main(["lags", str(path)]) == 2
    assert capsys.readouterr().err == f"error: {path}: line 3, group: missing\n"


def test_lags_out_into_a_missing_folder_is_one_line_before_spark(tmp_path, capsys):
    """Tests that --out into a folder that does not exist is exit 2 and one line, before any Spark work."""
    path = tmp_path / "ok.csv"
    path.write_text(HEADER + "g,t,0,1,0,5\n")
    out = tmp_path / "missing" / "lags.json"
    assert main(["lags", str(path), "--out", str(out)]) == 2
    assert (
        capsys.readouterr().err == f"error: {out}: --out: cannot write: its folder does not exist\n"
    )
