"""The one exhaustive reference: the optimum by enumerating answers, each scored by :func:`problems.evaluate`.

Tiny problems only: the answers are enumerated one by one and the evaluator (the
one truth) judges each, so a reference shares nothing with the models it checks
(no classes, no symmetry breaking, no aggregation).  The families enumerate:

* :func:`group_answers`: every map of the assignable partitions to their topics' subscribers;
* :func:`number_answers`: every map of KIP-315's partition numbers to members (eligible
  or not: the evaluator rejects what is invalid), ``(t, k)`` following number ``k``'s
  owner where it subscribes ``t`` (:func:`problems.topic_partitions`);
* :func:`placement_answers`: every set of each partition's replication factor of
  live brokers, with each of its brokers as the leader.

Two exceptions, for speed: :func:`lag_aware_optimum` searches lag-aware's (larger) answer
space with numpy, its winner scored by the evaluator; and :mod:`support.replica_exhaustive`
reaches 12-partition placements by dynamic programming over broker counts (it is itself
checked against :func:`placement_answers`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator

import numpy as np

from models.registry import STRATEGIES
from problems import (
    GroupProblem,
    PlacementProblem,
    evaluate,
    join_partition_count,
    previous_owners,
    topic_partitions,
)


def group_answers(problem: GroupProblem) -> Iterator[np.ndarray]:
    """Every ``owner`` array giving each assignable partition to a subscriber of its topic."""
    parts = np.flatnonzero(problem.assignable)
    choices = [problem.topic_subscribers[problem.partition_topic[g]] for g in parts]
    for combo in itertools.product(*choices):
        owner = np.full(problem.num_partitions, -1, dtype=np.int32)
        owner[parts] = combo
        yield owner


def number_answers(problem: GroupProblem) -> Iterator[np.ndarray]:
    """Every ``owner`` array of a map from KIP-315 partition numbers to members."""
    for numbers in itertools.product(
        range(problem.num_members), repeat=join_partition_count(problem)
    ):
        yield topic_partitions(problem, np.asarray(numbers, dtype=np.int32))


def _replica_lists(live: list[int], factor: int) -> list[tuple[int, ...]]:
    """Each set of ``factor`` live brokers once per leader (followers in ascending order: their
    order scores nothing)."""
    return [
        (leader, *(b for b in chosen if b != leader))
        for chosen in itertools.combinations(live, factor)
        for leader in chosen
    ] or [()]


def placement_answers(problem: PlacementProblem) -> Iterator[np.ndarray]:
    """Every ``replicas`` array: per partition, a set of its replication factor of live brokers and a leader."""
    live = sorted(int(b) for b in problem.broker_ids)
    factors = np.diff(problem.replica_start).tolist()
    for combo in itertools.product(*(_replica_lists(live, f) for f in factors)):
        yield np.asarray([b for chosen in combo for b in chosen], dtype=np.int64)


def answers(problem, strategy: str) -> Iterable[np.ndarray]:
    """The family's enumeration: placements, KIP-315's numbers (``stream-join``), or group answers."""
    if isinstance(problem, PlacementProblem):
        return placement_answers(problem)
    return number_answers(problem) if strategy == "stream-join" else group_answers(problem)


def count(problem) -> int:
    """How many group answers :func:`group_answers` enumerates (to keep a test's problems tiny)."""
    parts = np.flatnonzero(problem.assignable)
    return int(
        np.prod(
            [len(problem.topic_subscribers[problem.partition_topic[g]]) for g in parts], dtype=float
        )
    )


def optimum(
    problem,
    strategy: str,
    candidates: Iterable[np.ndarray] | None = None,
    key: Callable | None = None,
) -> tuple[int, ...] | None:
    """The lexicographically best objective of ``strategy`` over the valid ``candidates`` (``None``: none valid).

    ``candidates`` default to the family's enumeration (:func:`answers`); ``key(answer, objective)``
    may rank by something else than the objective (e.g. level 1, then moves).
    """
    best = None
    for answer in answers(problem, strategy) if candidates is None else candidates:
        verdict = evaluate(problem, answer, STRATEGIES[strategy].objective_on(problem))
        if verdict.valid:
            value = verdict.objective if key is None else key(answer, verdict.objective)
            best = value if best is None or value < best else best
    return best


def lag_aware_optimum(problem: GroupProblem, sticky: bool = False) -> tuple[int, int]:
    """The lag-aware optimum (level 2: moves when ``sticky``), searched with numpy over every valid answer.

    Every answer is enumerated at once (the search); the best one is then scored
    by :func:`problems.evaluate` (the one truth).
    """
    partitions = np.flatnonzero(problem.assignable)
    choices = [problem.topic_subscribers[problem.partition_topic[p]] for p in partitions]
    if not choices:  # nothing to assign: the one answer is empty
        owners = np.zeros((1, 0), dtype=np.int64)
    else:
        picks = np.indices([len(c) for c in choices]).reshape(len(choices), -1).T
        owners = np.stack([c[picks[:, i]] for i, c in enumerate(choices)], axis=1)
    valid = np.ones(len(owners), dtype=bool)
    for t, subscribers in enumerate(problem.topic_subscribers):
        columns = problem.partition_topic[partitions] == t
        floor, extra = divmod(int(columns.sum()), max(len(subscribers), 1))
        for m in subscribers:
            count = (owners[:, columns] == m).sum(axis=1)
            valid &= (count >= floor) & (count <= floor + (extra > 0))
    lags = problem.lags[partitions]
    totals = (
        np.stack([(owners == m) @ lags for m in range(problem.num_members)], axis=1)
        if problem.num_members
        else np.zeros((len(owners), 1), dtype=np.int64)
    )
    if sticky:
        previous = previous_owners(problem)[partitions]
        second = ((owners != previous) & (previous >= 0)).sum(axis=1)
    else:
        second = (totals**2).sum(axis=1)
    candidates = np.flatnonzero(valid)
    best = candidates[np.lexsort((second[candidates], totals.max(axis=1)[candidates]))[0]]
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    owner[partitions] = owners[best]
    verdict = evaluate(problem, owner, "lag-aware")
    assert verdict.valid, verdict.violations
    return verdict.objective[0], evaluate(problem, owner, "sticky").objective[
        1
    ] if sticky else verdict.objective[1]
