"""The one objective evaluator of docs/design/objectives.md.

The objectives and how the evaluator scores them: docs/design/objectives.md.
"""

from __future__ import annotations

import numpy as np

from problems.arrays import sum_squares
from problems.group import GroupProblem
from problems.objectives import OBJECTIVES
from problems.ownership import number_owners, previous_number_owners, previous_owners
from problems.placement import PlacementProblem
from problems.share import owner_pairs, share_levels, share_shape_problem, share_validity
from problems.streams import StreamsAssignment, StreamsProblem, evaluate_streams
from problems.verdict import Evaluation, examples


# ============================================================ consumer group
def member_counts(problem: GroupProblem, owner: np.ndarray) -> np.ndarray:
    """Number of partitions each member gets."""
    return np.bincount(owner[owner >= 0], minlength=problem.num_members)


def member_topic_counts(problem: GroupProblem, owner: np.ndarray) -> np.ndarray:
    """Matrix ``[member, topic]`` of partition counts."""
    assigned = owner >= 0
    keys = owner[assigned].astype(np.int64) * problem.num_topics + problem.partition_topic[assigned]
    return np.bincount(keys, minlength=problem.num_members * problem.num_topics).reshape(
        problem.num_members, problem.num_topics
    )


def member_lags(problem: GroupProblem, owner: np.ndarray) -> list[int]:
    """Total lag of each member (exact integers); zeros when the problem has no lags."""
    if problem.lags is None:
        return [0] * problem.num_members
    assigned = owner >= 0
    # float64 sums are exact below 2**53.
    if int(problem.lags.max(initial=0)) * len(problem.lags) < 2**53:
        sums = np.bincount(
            owner[assigned], weights=problem.lags[assigned], minlength=problem.num_members
        )
        return [int(v) for v in sums]
    totals = [0] * problem.num_members
    for m, lag in zip(owner[assigned].tolist(), problem.lags[assigned].tolist()):
        totals[m] += lag
    return totals


def moves(previous: np.ndarray, owner: np.ndarray) -> int:
    """Validly owned items (``previous >= 0``) that end with a different owner."""
    had = previous >= 0
    return int(np.count_nonzero(owner[had] != previous[had]))


def is_kip54_balanced(problem: GroupProblem, owner: np.ndarray) -> bool:
    """KIP-54's balance condition.

    Either the members' partition counts differ by at most one, or no member
    A with 2+ fewer partitions than a member B could be given any of B's
    partitions (A does not subscribe the topics of B's partitions).
    """
    counts = member_counts(problem, owner)
    if counts.size == 0 or counts.max() - counts.min() <= 1:
        return True
    # For each topic, the fewest partitions any of its subscribers has.
    big = np.iinfo(np.int64).max
    per_member = np.where(problem.subscribes, counts[:, None], big)
    fewest = per_member.min(axis=0) if problem.num_members else np.full(problem.num_topics, big)
    assigned = owner >= 0
    holder = counts[owner[assigned]]
    return not bool(np.any(holder - fewest[problem.partition_topic[assigned]] >= 2))


def _group_validity(problem: GroupProblem, owner: np.ndarray) -> list[str]:
    """Every partition of a subscribed topic to exactly one subscriber; the rest unassigned."""
    problems: list[str] = []
    assignable = problem.assignable
    unassigned = assignable & (owner < 0)
    problems += examples(unassigned, lambda g: f"{problem.partition_name(g)} is not assigned")
    stray = ~assignable & (owner >= 0)
    problems += examples(
        stray, lambda g: f"{problem.partition_name(g)} has no subscriber but is assigned"
    )
    assigned = np.flatnonzero(owner >= 0)
    wrong = ~problem.subscribes[owner[assigned], problem.partition_topic[assigned]]
    problems += examples(
        wrong,
        lambda i: (
            f"{problem.partition_name(int(assigned[i]))} goes to "
            f"{problem.members[owner[assigned[i]]]}, who does not subscribe its topic"
        ),
    )
    return problems


def _lag_validity(problem: GroupProblem, owner: np.ndarray) -> list[str]:
    """Per topic, each subscriber gets the floor or the ceiling of its share."""
    counts = member_topic_counts(problem, owner)
    problems = []
    for t, subscribers in enumerate(problem.topic_subscribers):
        if len(subscribers) == 0:
            continue
        low = int(problem.partition_counts[t]) // len(subscribers)
        high = low + (problem.partition_counts[t] % len(subscribers) > 0)
        got = counts[subscribers, t]
        for m in subscribers[(got < low) | (got > high)][:3]:
            problems.append(
                f"{problem.members[m]} gets {counts[m, t]} partitions of {problem.topics[t]}, "
                f"not {low}" + ("" if high == low else f" or {high}")
            )
    return problems


# ----------------------------------------------------------- stream join
def _co_partitioning(problem: GroupProblem, owner: np.ndarray, numbers: np.ndarray) -> list[str]:
    """Co-partitioning violations of ``owner`` whose partition numbers' owners are ``numbers``."""
    count = len(numbers)
    problems: list[str] = []
    if count == 0:
        return problems
    lacking = numbers < 0
    problems += examples(lacking, lambda k: f"partition number {k} has no owner")
    # Each topic's (t, k) must go to the number's owner if it subscribes t, else stay unassigned.
    for t in np.flatnonzero(problem.subscribes.any(axis=0)).tolist():
        expected = np.where(problem.subscribes[np.maximum(numbers, 0), t] & ~lacking, numbers, -1)
        bad = owner[problem.topic_start[t] : problem.topic_start[t] + count] != expected
        topic = problem.topics[t]

        def apart(k: int, topic: str = topic) -> str:
            return f"{topic}-{k} is not with the owner of partition number {k} (not co-partitioned)"

        def beyond_k(i: int, topic: str = topic) -> str:
            return f"{topic}-{count + i} is assigned but {count + i} >= K = {count}"

        problems += examples(bad, apart)
        beyond = owner[problem.topic_start[t] + count : problem.topic_start[t + 1]] >= 0
        problems += examples(beyond, beyond_k)
    return problems


# ============================================================ replicas
def replica_levels(problem: PlacementProblem, replicas: np.ndarray) -> tuple[int, int, int, int]:
    """Levels 1-4 of the replica objective for a placement of live brokers."""
    index = problem.broker_index
    positions = np.array([index[int(b)] for b in replicas], dtype=np.int64)
    start = problem.replica_start
    rf = problem.replication_factors
    per_broker = np.bincount(positions, minlength=problem.num_brokers)
    owner_partition = np.repeat(np.arange(problem.num_partitions, dtype=np.int64), rf)
    racks = len(problem.rack_names)
    per_rack = np.bincount(owner_partition * racks + problem.broker_rack[positions])
    leaders = np.bincount(positions[start[:-1]], minlength=problem.num_brokers)
    return (
        sum_squares(per_broker),
        sum_squares(per_rack),
        sum_squares(leaders),
        replica_moves(problem, replicas),
    )


def replica_moves(problem: PlacementProblem, replicas: np.ndarray) -> int:
    """Replicas placed on a broker outside the partition's original replica set."""
    rf = problem.replication_factors
    owner_partition = np.repeat(np.arange(problem.num_partitions, dtype=np.int64), rf)
    before, after = _dense(problem.replica_brokers, np.asarray(replicas, dtype=np.int64))
    span = max(int(before.max(initial=0)), int(after.max(initial=0))) + 1
    return int(
        np.count_nonzero(~np.isin(owner_partition * span + after, owner_partition * span + before))
    )


def _dense(*ids: np.ndarray) -> list[np.ndarray]:
    """Broker ids as dense codes ``0 .. distinct - 1`` (shared by all ``ids``), so that keys
    ``partition * span + code`` stay far from int64 overflow whatever the ids."""
    codes = np.unique(np.concatenate(ids), return_inverse=True)[1].astype(np.int64)
    return np.split(codes, np.cumsum([len(a) for a in ids])[:-1])


def _replica_validity(problem: PlacementProblem, replicas: np.ndarray) -> list[str]:
    replicas = np.asarray(replicas)
    if replicas.shape != problem.replica_brokers.shape:
        return [
            f"answer has {replicas.size} replicas, the problem needs {problem.replica_brokers.size}"
        ]
    problems = []
    live = np.isin(replicas, problem.broker_ids)

    def name(p: int) -> str:
        return f"{problem.topics[p]}-{problem.partitions[p]}"

    owner_partition = np.repeat(np.arange(problem.num_partitions), problem.replication_factors)
    problems += examples(
        ~live,
        lambda i: (
            f"{name(owner_partition[i])} has a replica on broker {replicas[i]}, which is not live"
        ),
    )
    (codes,) = _dense(replicas.astype(np.int64))
    keys = owner_partition.astype(np.int64) * (int(codes.max(initial=0)) + 1) + codes
    _, first, counts = np.unique(keys, return_index=True, return_counts=True)
    problems += examples(
        counts > 1,
        lambda i: f"{name(owner_partition[first[i]])} has broker {replicas[first[i]]} twice",
    )
    return problems


# ============================================================ entry point
def evaluate(
    problem: GroupProblem | PlacementProblem | StreamsProblem,
    answer: np.ndarray | StreamsAssignment,
    objective: str,
) -> Evaluation:
    """Check ``answer`` against the hard constraints of ``objective`` and score it.

    Parameters
    ----------
    problem
        The problem the answer is for.
    answer
        An ``owner`` array (consumer group), ``(member, partition)`` pairs (share group; an
        ``owner`` array is judged as the pairs of its owned partitions), a ``replicas`` array
        (placement) or a :class:`~problems.streams.StreamsAssignment` (streams group).
    objective
        A key of :data:`problems.objectives.OBJECTIVES`; it selects the hard constraints and
        the levels.  The objective a strategy is judged on is its record's
        (:meth:`models.registry.Strategy.objective_on`).

    Returns
    -------
    Evaluation
        Validity, violations and the objective levels.  An invalid group answer
        is still scored (as far as it can be), so that a report can show it.
    """
    kind = objective
    if kind not in OBJECTIVES:
        raise ValueError(f"{kind!r} is not an objective (objectives: {', '.join(OBJECTIVES)})")
    names = OBJECTIVES[kind]
    if kind == "streams":  # problems/streams/objective.py
        assert isinstance(problem, StreamsProblem), "streams strategies take a streams group"
        return evaluate_streams(problem, answer)
    assert not isinstance(answer, StreamsAssignment), "a streams answer needs a streams strategy"
    answer = np.asarray(answer)
    if kind == "replica":
        assert isinstance(problem, PlacementProblem), "replica strategies take a placement problem"
        violations = _replica_validity(problem, answer)
        levels: tuple[int, ...] = replica_levels(problem, answer) if not violations else ()
        return Evaluation(not violations, tuple(violations), tuple(levels), names)

    assert isinstance(problem, GroupProblem), "group strategies take a consumer-group problem"
    if kind == "share":  # (member, partition) pairs: a partition may have several members
        if answer.ndim == 1 and answer.shape == (problem.num_partitions,):
            answer = owner_pairs(answer)  # a consumer-group answer: one member per partition
        shape = share_shape_problem(problem, answer)
        if shape is not None:
            return Evaluation(False, (shape,), (), names)
        violations = share_validity(problem, answer)
        return Evaluation(not violations, tuple(violations), share_levels(problem, answer), names)
    if answer.shape != (problem.num_partitions,):
        shape = (
            f"answer has {answer.size} owners, the problem has {problem.num_partitions} partitions"
        )
        return Evaluation(False, (shape,), (), names)
    if np.any((answer < -1) | (answer >= problem.num_members)):
        return Evaluation(False, ("owner array holds positions that are not members",), (), names)
    if kind == "stream-join":
        violations, levels = _stream_join_verdict(problem, answer)
    else:
        violations, levels = _group_verdict(problem, answer, kind)
    return Evaluation(not violations, tuple(violations), tuple(int(v) for v in levels), names)


def _stream_join_verdict(
    problem: GroupProblem, answer: np.ndarray
) -> tuple[list[str], tuple[int, ...]]:
    """The violations and levels of a stream-join answer (co-partitioning: by partition number)."""
    numbers = number_owners(problem, answer)
    violations = _co_partitioning(problem, answer, numbers)
    assigned = np.flatnonzero(answer >= 0)
    wrong_topic = np.zeros(len(answer), dtype=bool)
    wrong_topic[assigned] = ~problem.subscribes[answer[assigned], problem.partition_topic[assigned]]
    violations += examples(
        wrong_topic, lambda g: f"{problem.partition_name(g)} goes to a non-subscriber"
    )
    counts = np.bincount(numbers[numbers >= 0], minlength=problem.num_members)
    return violations, (sum_squares(counts), moves(previous_number_owners(problem), numbers))


def _group_verdict(
    problem: GroupProblem, answer: np.ndarray, kind: str
) -> tuple[list[str], tuple[int, ...]]:
    """The violations and levels of a partition-by-partition answer on objective ``kind``."""
    violations = _group_validity(problem, answer)
    if kind == "lag-aware":
        violations += _lag_validity(problem, answer)
        lags = member_lags(problem, answer)
        return violations, (max(lags, default=0), sum(v * v for v in lags))
    balance = sum_squares(member_counts(problem, answer))
    moved = moves(previous_owners(problem), answer)
    if kind == "rack-aware":
        return violations, (balance, int(np.count_nonzero(problem.rack_mismatches(answer))), moved)
    return violations, (balance, moved)
