"""Kafka's ``CooperativeStickyAssignor`` (``partition.assignment.strategy=cooperative-sticky``).

Step by step, with its sources and where it follows Kafka: docs/strategies/client-assignors.md.
"""

from __future__ import annotations

import dataclasses

import numpy as np

import heuristics.sticky.sticky_kafka as kafka
from problems import GroupProblem, Result, assignment_json, baseline_objective
from problems.arrays import frozen

MAX_ROUNDS = 8


def round_output(problem: GroupProblem) -> tuple[np.ndarray, np.ndarray]:
    """One round: Kafka's output (``-1`` where the partition changes owner) and the full sticky assignment."""
    if problem.num_members == 0:
        owner = np.full(problem.num_partitions, -1, dtype=np.int32)
        return owner, owner
    owner, _, transfers = kafka.assign_with_transfers(problem)
    output = owner.copy()
    output[transfers] = -1
    return output, owner


def follow_up(problem: GroupProblem, output: np.ndarray) -> GroupProblem:
    """The group at the next rebalance: each member owns its part of ``output``, at the round's generation."""
    assigned = np.flatnonzero(output >= 0)
    order = assigned[np.argsort(output[assigned], kind="stable")]  # by member, then global id
    members, topics = output[order].astype(np.int64), problem.partition_topic[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (members[1:] != members[:-1]) | (topics[1:] != topics[:-1])
    starts = np.flatnonzero(first)
    entry_start = np.zeros(problem.num_members + 1, dtype=np.int64)
    np.cumsum(np.bincount(members[starts], minlength=problem.num_members), out=entry_start[1:])
    generation = int(problem.generations.max(initial=-1)) + 1
    return dataclasses.replace(
        problem,
        owned_topics=tuple(problem.topics[t] for t in topics[starts].tolist()),
        owned_entry_start=frozen(entry_start),
        owned_start=frozen(np.append(starts, len(order)).astype(np.int64)),
        owned_indices=frozen(problem.partition_index[order].astype(np.int64)),
        generations=frozen(np.full(problem.num_members, generation, dtype=np.int64)),
        has_generation=(True,) * problem.num_members,
        notes=(),
    )


def revokes(problem: GroupProblem, output: np.ndarray) -> bool:
    """Whether a member's claims as it sent them are not all in its part of ``output``: its
    consumer then revokes them and rejoins (``ConsumerCoordinator.onJoinComplete``: revoked =
    owned - assigned), another rebalance, even when every partition already has its final owner
    (a claim on a deleted topic, or one a member of a newer generation won)."""
    entry_member = np.repeat(
        np.arange(problem.num_members, dtype=np.int64), np.diff(problem.owned_entry_start)
    )
    member = np.repeat(entry_member, np.diff(problem.owned_start))
    topic, index = problem.owned_claim_topic, problem.owned_indices
    counts = np.append(problem.partition_counts, 0)  # topic -1 (deleted): every claim stale
    if not bool((index < counts[topic]).all()):
        return True
    return bool((output[problem.topic_start[topic] + index] != member).any())


def assign(problem: GroupProblem) -> Result:
    """Kafka's ``CooperativeStickyAssignor`` round on ``problem``, completed by its follow-up rounds.

    Returns
    -------
    Result
        ``answer``: the completed assignment (judged on ``sticky``, on ``rack-aware`` with racks);
        ``shown``: the round's output; ``info["pending"]``: what each member receives afterwards.
    """
    first, full = round_output(problem)
    output, current, rounds = first, problem, 1
    while (not np.array_equal(output, full) or revokes(current, output)) and rounds < MAX_ROUNDS:
        current = follow_up(current, output)
        output, full = round_output(current)
        rounds += 1
    # After MAX_ROUNDS rounds still moving (never seen): the last round's full sticky assignment.
    output = full
    pending = np.where(output != first, output, -1)
    return Result(
        problem,
        "cooperative-sticky",
        output,
        shown=first,
        info={"pending": assignment_json(problem, pending), "rounds": rounds},
        objective_name=baseline_objective(problem),
    )
