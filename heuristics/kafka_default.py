"""The placement ``kafka-reassign-partitions --generate`` proposes (Kafka up to 4.0).

Step by step, with its sources and where it follows Kafka: docs/strategies/replica-placement.md.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

import numpy as np

from heuristics.java import java_order_key
from problems import PlacementProblem, Result


def _rack_alternated(broker_ids: Iterable[int], racks: Sequence[str | None]) -> list[int]:
    """Kafka's ``getRackAlternatedBrokerList``: one broker per rack in turn.

    Racks in Java string order, each rack's brokers by ascending id.
    """
    by_rack: dict[str, list[int]] = {}
    for broker, rack in zip(broker_ids, racks):
        assert rack is not None  # a rack-aware placement: every broker has a rack
        by_rack.setdefault(rack, []).append(int(broker))
    queues = [sorted(by_rack[rack]) for rack in sorted(by_rack, key=java_order_key)]
    result: list[int] = []
    for turn in range(max(map(len, queues), default=0)):
        result += [queue[turn] for queue in queues if turn < len(queue)]
    return result


def _next_index(first: int, shift: int, j: int, n: int) -> int:
    """Kafka's ``AdminUtils.replicaIndex``."""
    return (first + 1 + (shift + j) % (n - 1)) % n


def _first_and_shift(i: int, lowest: int, start: int, shift: int, n: int) -> tuple[int, int]:
    """Partition ``i``'s first-replica index and shift, Kafka's loop run from ``lowest``.

    Kafka adds one to the shift at every partition id ``> 0`` divisible by ``n``
    that its loop (from ``startPartitionId``) passes.
    """
    passed = i // n - (max(lowest, 1) - 1) // n
    return (i + start) % n, shift + passed


def _rack_unaware(brokers: list[int], factor: int, first: int, shift: int) -> list[int]:
    n = len(brokers)
    return [brokers[first]] + [brokers[_next_index(first, shift, j, n)] for j in range(factor - 1)]


def _rack_aware(
    brokers: list[int], rack_of: dict[int, str], num_racks: int, factor: int, first: int, shift: int
) -> list[int]:
    n = len(brokers)
    replicas = [brokers[first]]
    racks_used, brokers_used = {rack_of[brokers[first]]}, {brokers[first]}
    k = 0
    for _ in range(factor - 1):
        while True:
            broker = brokers[_next_index(first, shift * num_racks, k, n)]
            rack = rack_of[broker]
            k += 1
            if (rack not in racks_used or len(racks_used) == num_racks) and (
                broker not in brokers_used or len(brokers_used) == n
            ):
                replicas.append(broker)
                racks_used.add(rack)
                brokers_used.add(broker)
                break
    return replicas


def assign(
    problem: PlacementProblem, seed: int | None = None, start_index: int | None = None
) -> Result:
    """Place every topic's replicas as ``kafka-reassign-partitions --generate`` does.

    Parameters
    ----------
    problem
        The cluster; current replicas are ignored except for each partition's
        replication factor, as in Kafka.
    seed
        Seed of the random start index and replica shift (two draws per topic,
        topics in order of first appearance); ``None`` draws fresh randomness,
        like Kafka.
    start_index
        Fixes both the start index and the shift (Kafka's ``fixedStartIndex``);
        takes precedence over ``seed``.

    Returns
    -------
    Result
        Status ``"heuristic"``; judged on the replica objective.
    """
    if start_index is not None and start_index < 0:
        raise ValueError("start_index must be >= 0")
    rng = random.Random(seed)
    ids = problem.broker_ids.tolist()
    if problem.rack_aware:
        brokers = _rack_alternated(ids, problem.broker_racks)
        rack_of = dict(zip(ids, problem.broker_racks))
        num_racks = len(problem.rack_names)
    else:
        brokers = ids
    n = len(brokers)
    start = problem.replica_start
    factors = problem.replication_factors
    replicas = np.array(problem.replica_brokers, dtype=np.int64)
    by_topic: dict[str, list[int]] = {}
    for p, topic in enumerate(problem.topics):
        by_topic.setdefault(topic, []).append(p)
    for members in by_topic.values():
        if n == 0:
            continue
        first, shift = (
            (start_index, start_index)
            if start_index is not None
            else (rng.randrange(n), rng.randrange(n))
        )
        lowest = int(min(problem.partitions[members]))
        for p in members:
            leader, step = _first_and_shift(int(problem.partitions[p]), lowest, first, shift, n)
            factor = int(factors[p])
            if problem.rack_aware:
                chosen = _rack_aware(brokers, rack_of, num_racks, factor, leader, step)
            else:
                chosen = _rack_unaware(brokers, factor, leader, step)
            replicas[start[p] : start[p + 1]] = chosen[:factor]
    return Result(problem, "kafka-default", replicas, objective_name="replica")
