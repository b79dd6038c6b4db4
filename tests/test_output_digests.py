"""Every runner's answers are those recorded: a representative part of :mod:`support.output_digests`.

The record (``tests/data/output_digests.json``) holds the digest of every registered runner's answer
on every example, 450 seeded generated cases and every trace.  These tests recompute every runner on
every example, every runner on one generated case in fifteen, and every strategy's heuristic and
``step`` runs on three traces; the whole record is checked by
``python tests/support/output_digests.py`` (its line: ``N cases, M runs, 0 differences``).
"""

from __future__ import annotations

import itertools

import pytest

from support import output_digests

RECORD = output_digests.recorded()
EXAMPLES = list(output_digests.example_cases())
GENERATED = list(itertools.islice(output_digests.generated_cases(), 0, None, 15))
TRACES = ("crash-and-rejoin.json", "rack-added.json", "scale-out.json")


def _check(actual: dict[str, str]) -> None:
    assert actual, "no runs"
    missing = [key for key in actual if key not in RECORD]
    assert not missing, f"runs the record does not hold: {missing[:5]}"
    assert output_digests.differences({k: RECORD[k] for k in actual}, actual) == []


@pytest.mark.parametrize("case, doc", EXAMPLES, ids=[case for case, _ in EXAMPLES])
def test_every_runner_answers_each_example_as_recorded(case, doc):
    """Tests every (strategy, solver, variant) of the example's family (and sticky-replica's
    frontiers) against the record."""
    _check(output_digests.case_digests(case, doc))


def test_every_runner_answers_generated_cases_as_recorded():
    """Tests every runner on one generated case in fifteen (groups, streams groups, placements)."""
    assert {case.split("/")[1] for case, _ in GENERATED} >= {"sticky", "streams-sticky"}
    actual: dict[str, str] = {}
    for case, doc in GENERATED:
        actual.update(output_digests.case_digests(case, doc))
    _check(actual)


def test_traces_run_as_recorded():
    """Tests every strategy's heuristic and ``step`` runs through three traces."""
    actual = output_digests.trace_digests(names=TRACES)
    assert len(actual) == len(TRACES) * len({k.split("|")[1] for k in actual}) * 2
    _check(actual)


def test_a_changed_answer_is_a_difference():
    """Tests the comparison itself: a changed digest, a missing run and a new run are reported."""
    expected = {"a|s|heuristic|": "1", "b|s|heuristic|": "2"}
    actual = {"a|s|heuristic|": "1", "b|s|heuristic|": "3", "c|s|heuristic|": "4"}
    assert output_digests.differences(expected, actual) == [
        "b|s|heuristic|: 2 -> 3",
        "c|s|heuristic|: None -> 4",
    ]
    assert output_digests.digest({"b": 1, "a": [2]}) == output_digests.digest({"a": [2], "b": 1})
