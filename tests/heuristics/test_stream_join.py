"""Tests of heuristics.stream_join, KIP-315's stream-join sticky assignor."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given

import heuristics.range as range_assignor
import heuristics.roundrobin as roundrobin_assignor
import heuristics.stream_join as stream_join
from problems import evaluate, load_problem, number_owners, previous_number_owners, problem_to_json
from support.problem_builders import group, member
from support.problem_strategies import groups
from support.stream_join_strategies import joins

EXAMPLES = Path(__file__).parents[2] / "examples" / "group"
JOINED = ["impressions", "clicks"]


def both_topics(table):
    return {
        m: {"impressions": numbers, "clicks": numbers} if numbers else {}
        for m, numbers in table.items()
    }


# ------------------------------------------------------------- the KIP's tables
def test_kip315_round_robin_is_rejected_range_and_stream_join_accepted():
    """Tests KIP-315's motivation: round robin's answer is not co-partitioned, range's and the join's are."""
    problem = load_problem(EXAMPLES / "kip-315-four-consumers.json")
    rejected = evaluate(problem, roundrobin_assignor.assign(problem).answer, "stream-join")
    assert not rejected.valid and any("not co-partitioned" in v for v in rejected.violations)
    ranged = range_assignor.assign(problem).answer
    assert evaluate(problem, ranged, "stream-join").valid
    result = stream_join.assign(problem)
    # Nobody owns anything: the draft deals the unowned numbers round by round.
    assert result.assignment == both_topics(
        {"A": [0, 4, 8], "B": [1, 5, 9], "C": [2, 6], "D": [3, 7]}
    )
    assert result.valid and result.objective == [9 + 9 + 4 + 4, 0] and result.info == {"epoch": 1}


def test_kip315_d_leaves_gives_the_better_assignment():
    """Tests KIP-315's D-leaves table: A 0,1,2,9 / B 3,4,5 / C 6,7,8, no number moves; range moves 3 and 6."""
    problem = load_problem(EXAMPLES / "kip-315-d-leaves.json")
    result = stream_join.assign(problem)
    assert result.assignment == both_topics({"A": [0, 1, 2, 9], "B": [3, 4, 5], "C": [6, 7, 8]})
    assert result.objective == [16 + 9 + 9, 0] and result.info == {"epoch": 2}
    ranged = evaluate(problem, range_assignor.assign(problem).answer, "stream-join")
    assert ranged.valid and ranged.objective == (34, 2)


# ------------------------------------------------------ the KIP's rules, one by one
def test_previous_owners_draft_first_and_take_the_spare_number():
    """Tests that in the last, partial round a member with previous numbers left drafts before a new one."""
    problem = group({"t": 3}, member("a-new", ["t"]), member("b", ["t"], {"t": [0, 1, 2]}, 1))
    # Round 0: b drafts 0, a-new must steal (nothing unowned): 1.  Round 1: b drafts 2.
    assert stream_join.assign(problem).assignment == {"a-new": {"t": [1]}, "b": {"t": [0, 2]}}


def test_unowned_numbers_before_stealing():
    """Tests that a member without previous numbers takes an unowned number before it steals."""
    problem = group(
        {"t": 5}, member("a", ["t"], {"t": [0, 1, 2, 3]}, 3), member("b", ["t"]), member("c", ["t"])
    )
    # Round 0: a 0, b takes the unowned 4, c steals 1.  Round 1: a 2, b steals 3.
    result = stream_join.assign(problem)
    assert result.assignment == {"a": {"t": [0, 2]}, "b": {"t": [3, 4]}, "c": {"t": [1]}}
    assert result.objective == [4 + 4 + 1, 2]


def test_steals_begin_with_the_longest_previous_list_and_take_turns():
    """Tests that steals start from the member that had the most numbers and then go round the owners."""
    owned = {"a": [0, 1], "b": [2, 3, 4, 5], "c": [6, 7, 8]}
    members = [member(m, ["t"], {"t": numbers}, 1) for m, numbers in owned.items()]
    problem = group({"t": 9}, *members, member("x", ["t"]), member("y", ["t"]))
    # Round 0: a 0, b 2, c 6, x steals from b (longest: 4) -> 3, y steals from c (next) -> 7.
    # Round 1: a 1, b 4, c 8, x steals from a?  a has nothing left: skipped, b -> 5.
    assert stream_join.assign(problem).assignment == {
        "a": {"t": [0, 1]},
        "b": {"t": [2, 4]},
        "c": {"t": [6, 8]},
        "x": {"t": [3, 5]},
        "y": {"t": [7]},
    }


def test_no_steal_from_a_member_with_nothing_left():
    """Tests the example code's first defect: the steal turn reaching an exhausted member skips it.

    The example code cycles over every previous owner and calls ``remove(0)``
    on B's empty list in round 1 (B, out of numbers, would steal from itself).
    """
    problem = group(
        {"t": 7},
        member("A", ["t"], {"t": [0, 1, 2, 3, 4, 5]}, 1),
        member("B", ["t"], {"t": [6]}, 1),
        member("C", ["t"]),
    )
    result = stream_join.assign(problem)
    assert result.assignment == {"A": {"t": [0, 2, 5]}, "B": {"t": [3, 6]}, "C": {"t": [1, 4]}}
    assert result.valid and result.objective == [9 + 4 + 4, 3]


def test_claims_at_or_beyond_k_are_dropped():
    """Tests the example code's second defect: claims on numbers >= K are skipped, not kept.

    Topic ``b`` joins with 2 partitions, so K = 2.  X's numbers 2 and 3 (2 = K
    itself included) are no longer eligible; the example code, which logs
    "Skipping" but keeps them, would draft 2 for X and leave number 1 unassigned.
    """
    problem = group(
        {"a": 4, "b": 2},
        member("X", ["a", "b"], {"a": [2, 3]}, 1),
        member("Y", ["a", "b"], {"a": [0, 1]}, 1),
    )
    assert previous_number_owners(problem).tolist() == [1, 1]
    result = stream_join.assign(problem)
    assert result.assignment == {"X": {"a": [1], "b": [1]}, "Y": {"a": [0], "b": [0]}}
    assert result.valid and result.objective == [2, 1]


def test_zombie_with_a_stale_epoch_loses_its_claims():
    """Tests that a zombie's claims on live members' numbers give it nothing; it is stolen for like a new member."""
    problem = group(
        {"t": 4},
        member("A", ["t"], {"t": [0, 1]}, 5),
        member("B", ["t"], {"t": [2, 3]}, 5),
        member("Z", ["t"], {"t": [0, 1, 2, 3]}, 2),
    )
    assert previous_number_owners(problem).tolist() == [0, 0, 1, 1]
    result = stream_join.assign(problem)
    assert result.assignment == {"A": {"t": [0]}, "B": {"t": [2, 3]}, "Z": {"t": [1]}}
    assert result.objective == [6, 1] and result.info == {"epoch": 6}


def test_topic_added_to_the_join_covers_only_its_subscribers_share():
    """Tests KIP-315 step 5: a topic only A subscribes gives A its numbers of it; the rest stays unassigned."""
    problem = group(
        {"imp": 4, "clk": 4, "new": 6},
        member("A", ["imp", "clk", "new"], {"imp": [0, 1], "clk": [0, 1]}, 2),
        member("B", ["imp", "clk"], {"imp": [2, 3], "clk": [2, 3]}, 2),
    )
    result = stream_join.assign(problem)
    assert result.assignment == {
        "A": {"imp": [0, 1], "clk": [0, 1], "new": [0, 1]},
        "B": {"imp": [2, 3], "clk": [2, 3]},
    }
    assert result.valid and result.objective == [8, 0]


def test_partition_count_raised_on_one_topic():
    """Tests KIP-315 step 1: the new partitions of one topic stay unassigned until the others catch up."""
    problem = load_problem(EXAMPLES / "kip-315-d-leaves.json")
    doc = problem_to_json(problem)
    doc["topics"]["impressions"] = 12
    result = stream_join.assign(load_problem(doc))
    assert result.assignment == both_topics({"A": [0, 1, 2, 9], "B": [3, 4, 5], "C": [6, 7, 8]})
    assert result.valid and result.objective == [34, 0]


def test_member_of_no_existing_topic_gets_nothing():
    """Tests that a member subscribing only a topic not created yet takes no number (it would consume nothing)."""
    problem = group({"t": 2}, member("early", ["later"]), member("x", ["t"]))
    assert stream_join.assign(problem).assignment == {"early": {}, "x": {"t": [0, 1]}}


def test_next_epoch_is_the_largest_received_plus_one():
    """Tests KIP-315 step 6: max epoch + 1, zombies' and new members' included; 1 when none is received."""
    assert stream_join.assign(group({"t": 1}, member("a", ["t"]))).info == {"epoch": 1}
    problem = group(
        {"t": 1}, member("a", ["t"], {"t": [0]}, 4), member("z", ["t"], {}, 9), member("n", ["t"])
    )
    assert stream_join.assign(problem).info == {"epoch": 10}


# ------------------------------------------------------------------ properties
def eligible_counts(problem, result):
    numbers = number_owners(problem, result.answer)
    counts = np.bincount(numbers[numbers >= 0], minlength=problem.num_members)
    eligible = problem.subscribes.any(axis=1)
    return counts[eligible], counts[~eligible]


@given(joins())
def test_churned_joins_are_co_partitioned_balanced_and_valid(problem):
    """Tests that after joins, leaves, zombies, added topics and raised counts the answer is valid and balanced."""
    result = stream_join.assign(problem)
    assert result.valid, result.evaluation.violations
    eligible, others = eligible_counts(problem, result)
    assert not others.any()
    assert eligible.size == 0 or eligible.max() - eligible.min() <= 1
    given_epochs = [int(g) for g, has in zip(problem.generations, problem.has_generation) if has]
    assert result.info["epoch"] == max([0, *given_epochs]) + 1


@given(joins())
def test_its_own_answer_is_a_fixed_point(problem):
    """Tests that feeding the answer back as everybody's previous assignment, at the new epoch, moves nothing."""
    result = stream_join.assign(problem)
    doc = problem_to_json(problem)
    for entry in doc["members"]:
        entry["owned"] = result.assignment[entry["id"]]
        entry["generation"] = result.info["epoch"]
    again = stream_join.assign(load_problem(doc))
    assert again.assignment == result.assignment
    assert again.objective == [result.objective[0], 0]


@given(groups())
def test_any_group_gets_a_valid_answer(problem):
    """Tests validity on random groups of mixed subscriptions, deleted topics and conflicting claims."""
    result = stream_join.assign(problem)
    assert result.valid, result.evaluation.violations
    eligible, others = eligible_counts(problem, result)
    assert not others.any() and (eligible.size == 0 or eligible.max() - eligible.min() <= 1)
