"""KIP-848's ``UniformAssignor``: the broker-side default assignor of Kafka 4 consumer groups.

Step by step, with its sources and where it follows Kafka: docs/strategies/kip848.md.
"""

from __future__ import annotations

import numpy as np

from heuristics.java import grouped_hash_order
from heuristics.server_input import (
    claims_in_map_order,
    current_claims,
    homogeneous,
    member_order,
    subscription_order,
    topic_hashes,
    topic_signatures,
)
from problems import GroupProblem, Result, baseline_objective

#: ``UniformHeterogeneousAssignmentBuilder.MAX_ITERATION_COUNT``: passes of the balancing phase.
MAX_ITERATION_COUNT = 16


def assign(problem: GroupProblem) -> Result:
    """Assign partitions as Kafka 4's ``UniformAssignor`` does.

    Returns
    -------
    Result
        Status ``"heuristic"``; judged on the sticky objective (rack-aware when racks are known).
    """
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    if problem.num_members:
        order = member_order(problem)
        if homogeneous(problem):
            _homogeneous(problem, order, owner)
        else:
            _heterogeneous(problem, order, owner)
    return Result(problem, "uniform", owner, objective_name=baseline_objective(problem))


# ------------------------------------------------------------------ homogeneous


def _homogeneous(problem: GroupProblem, order: np.ndarray, owner: np.ndarray) -> None:
    first = int(order[0])
    topics = np.array(subscription_order(problem, first), dtype=np.int64)
    topics = topics[
        grouped_hash_order(
            np.zeros(len(topics), dtype=np.int64),
            topic_hashes(problem)[topics],
            from_collection=True,
            sizes=np.array([len(problem.subscriptions[first])]),
        )
    ]
    counts = problem.partition_counts[topics]
    members = len(order)
    total = int(counts.sum())
    minimum, extra = divmod(total, members)

    rank = np.empty(members, dtype=np.int64)
    rank[order] = np.arange(members)
    claim_member, claim_partition = current_claims(problem)
    subscribed = np.zeros(problem.num_topics, dtype=bool)
    subscribed[topics] = True
    keep = subscribed[problem.partition_topic[claim_partition]]
    claim_member, claim_partition = claim_member[keep], claim_partition[keep]
    claimed = np.zeros(problem.num_partitions, dtype=bool)
    claimed[claim_partition] = True

    owned = np.bincount(rank[claim_member], minlength=members)
    kept, remaining = _quotas(owned, minimum, extra)
    # A member keeping everything it owns keeps it whatever the order; only the claims of members
    # above their quota are put in the order the revocation visits them (member, map, set order).
    over = (kept < owned)[rank[claim_member]]
    owner[claim_partition[~over]] = claim_member[~over]
    claim_member, claim_partition = claim_member[over], claim_partition[over]
    sequence = claims_in_map_order(problem, claim_member, claim_partition, rank)
    claim_member, claim_partition = claim_member[sequence], claim_partition[sequence]
    claim_rank = rank[claim_member]
    first_claim = np.searchsorted(claim_rank, np.arange(members))
    within = np.arange(len(claim_rank)) - first_claim[claim_rank]
    stays = within < kept[claim_rank]
    owner[claim_partition[stays]] = claim_member[stays]

    start = problem.topic_start
    ranges = [np.arange(start[t], start[t + 1]) for t in topics.tolist()]
    fresh = np.concatenate(ranges) if ranges else np.zeros(0, dtype=np.int64)
    unassigned = np.concatenate([fresh[~claimed[fresh]], claim_partition[~stays]])
    if int(remaining.sum()) < len(unassigned):
        raise RuntimeError("Partitions were left unassigned")  # Kafka's PartitionAssignorException
    receivers = np.repeat(order, remaining)[: len(unassigned)]
    owner[unassigned] = receivers


def _quotas(owned: np.ndarray, minimum: int, extra: int) -> tuple[np.ndarray, np.ndarray]:
    """Per member (in member order): partitions kept, and partitions still to receive.

    ``maybeRevokePartitions``: member ``i`` may hold ``minimum + 1`` while extras remain; it keeps
    up to that; one that keeps fewer than ``minimum + 1`` gives the extra up unless only as many
    members as extras remain (then every remaining member must take one).
    """
    members = len(owned)
    full = owned >= minimum + 1
    # Before the forced regime, the extras go to the full members in order.
    takers_before = np.minimum(np.concatenate(([0], np.cumsum(full)[:-1])), extra)
    left_before = extra - takers_before
    forced = (members - np.arange(members)) <= left_before
    start = int(np.argmax(forced)) if forced.any() else members
    takes = full & (left_before > 0)
    takes[start:] = True
    if start < members:  # from here on every member takes one of the extras left
        takes[start + int(left_before[start]) :] = False
    quota = minimum + takes.astype(np.int64)
    # A member above its quota keeps the quota; an unforced member below it gave the extra up.
    kept = np.minimum(owned, np.where(left_before > 0, minimum + 1, minimum))
    return kept, quota - kept


# ------------------------------------------------------------------ heterogeneous


def _heterogeneous(problem: GroupProblem, order: np.ndarray, owner: np.ndarray) -> None:
    members = len(order)
    rank = np.empty(members, dtype=np.int64)
    rank[order] = np.arange(members)
    # Each topic's subscribers as member indices, ascending: one array per distinct set of
    # subscription classes (a column of the [class, topic] matrix), shared by its topics.
    member_class, matrix = problem.subscription_classes
    index_class = member_class[order]
    signature, first = topic_signatures(matrix)
    subscribers = [np.flatnonzero(matrix[index_class, t]) for t in first.tolist()]
    subscriber_count = np.array([len(s) for s in subscribers], dtype=np.int64)[signature]
    counts = problem.partition_counts
    start = problem.topic_start

    # Members keep what they still subscribe (owners by member index).
    index_owner = np.full(problem.num_partitions, -1, dtype=np.int64)
    claim_member, claim_partition = current_claims(problem)
    claim_index = rank[claim_member]
    keep = matrix[member_class[claim_member], problem.partition_topic[claim_partition]]
    index_owner[claim_partition[keep]] = claim_index[keep]
    sizes = np.bincount(claim_index[keep], minlength=members).astype(np.int64)

    topics = np.flatnonzero(subscriber_count)
    if not len(topics):
        return
    # Topics by (-partitions per subscriber, subscribers, topic id): the builder's TreeSet order.
    most, least = problem.topic_uuids
    shared = subscriber_count[topics]
    by_key = topics[np.lexsort((least[topics], most[topics], shared, -(counts[topics] / shared)))]

    # Each topic's unowned partitions to its least-loaded subscribers, topic by topic; a run of
    # topics with one subscriber each at once (their sole subscriber takes them, whatever the sizes).
    narrow = np.uint16 if problem.num_partitions < 1 << 16 else np.int64
    sole = np.array([s[0] if len(s) == 1 else -1 for s in subscribers], dtype=np.int64)[signature]
    alone = sole[by_key] >= 0
    for run in np.split(by_key, np.flatnonzero(alone[1:] != alone[:-1]) + 1):
        if sole[run[0]] >= 0:
            in_run = np.zeros(problem.num_topics, dtype=bool)
            in_run[run] = True
            free = np.flatnonzero(in_run[problem.partition_topic] & (index_owner < 0))
            receivers = sole[problem.partition_topic[free]]
            index_owner[free] = receivers
            sizes += np.bincount(receivers, minlength=members)
            continue
        for t in run.tolist():
            lo, hi = int(start[t]), int(start[t + 1])
            free = np.flatnonzero(index_owner[lo:hi] < 0) + lo
            if len(free):
                index_owner[free] = _water_fill(subscribers[signature[t]], sizes, len(free), narrow)

    balanced_topics = by_key[subscriber_count[by_key] >= 2].tolist()
    topic_signature = signature.tolist()
    balancer = _Balancer(sizes)
    # Whether the subscribers of a signature differ by at most one (nothing to balance on any of
    # its topics), known until the next move changes the sizes.
    even: dict[int, bool] = {}
    last = -1
    for _ in range(MAX_ITERATION_COUNT):
        done = False
        for position, t in enumerate(balanced_topics):
            if position == last:
                done = True
                break
            s = topic_signature[t]
            if s not in even:
                loads = sizes[subscribers[s]]
                even[s] = int(loads.max()) - int(loads.min()) <= 1
            moved = 0
            if not even[s]:
                moved = _balance_topic(
                    t, subscribers[s], index_owner, int(start[t]), int(counts[t]), balancer
                )
                if moved:
                    even.clear()
            if moved > 0 or last == -1:
                last = position
        if done:
            break

    assigned = index_owner >= 0
    owner[assigned] = order[index_owner[assigned]]


def _water_fill(members: np.ndarray, sizes: np.ndarray, count: int, narrow: type) -> np.ndarray:
    """The receivers of ``count`` partitions handed one by one to the least-loaded of ``members``
    (ascending member indices), added to ``sizes``.

    ``MemberAssignmentBalancer.nextLeastLoadedMember`` after ``initialize``: the members sorted by
    (size, index); at each level, starting at the smallest size, one partition to every member
    whose size was at most that level, in sorted order; then the level rises by one.
    """
    loads = sizes[members]
    low = int(loads.min())
    lowest = np.flatnonzero(loads == low)
    if len(lowest) >= count:  # the first round, at the lowest size, is enough
        receivers = members[lowest[:count]]
        sizes[receivers] += 1
        return receivers
    by_load = np.argsort(loads.astype(narrow), kind="stable")  # ties in index order
    ordered = members[by_load]
    levels = loads[by_load]
    # Rounds until count is reached: round r covers the members with size <= low + r.
    rounds = 1
    while True:
        ends = np.searchsorted(levels, low + np.arange(rounds), side="right")
        if int(ends.sum()) >= count or rounds > count:
            break
        rounds *= 2
    ends = ends[: int(np.searchsorted(np.cumsum(ends), count)) + 1]
    ends[-1] -= int(ends.sum()) - count  # the last round stops at count
    offsets = np.repeat(np.cumsum(ends) - ends, ends)
    # Each member of ``ordered`` gets one partition per round reaching past its position.
    received = np.cumsum(np.bincount(ends, minlength=len(ordered) + 1)[::-1])[::-1][1:]
    sizes[ordered] += received
    return ordered[np.arange(count) - offsets]


class _Balancer:
    """``MemberAssignmentBalancer``: the least- and most-loaded ranges of one topic's subscribers,
    sorted by (size, member index), read against the live sizes."""

    def __init__(self, sizes: np.ndarray):
        self.sizes = sizes

    def initialize(self, members: np.ndarray) -> int:
        sizes = self.sizes
        self.sorted: list[int] = members[np.lexsort((members, sizes[members]))].tolist()
        n = len(self.sorted)
        self.least_end = 0
        self.least_level = int(sizes[self.sorted[0]]) - 1
        self.next_least = 0
        self.most_start = n
        self.most_end = n
        self.most_level = int(sizes[self.sorted[-1]]) + 1
        self.next_most = n - 1
        return int(sizes[self.sorted[-1]] - sizes[self.sorted[0]])

    def next_least_loaded(self) -> int:
        sizes, ordered = self.sizes, self.sorted
        if self.next_least >= self.least_end:
            self.least_level += 1
            while (
                self.least_end < len(ordered) and sizes[ordered[self.least_end]] == self.least_level
            ):
                self.least_end += 1
            self.next_least = 0
        member = ordered[self.next_least]
        self.next_least += 1
        return member

    def next_most_loaded(self) -> int:
        sizes, ordered = self.sizes, self.sorted
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                self.most_level = int(sizes[ordered[self.most_start - 1]])
            else:
                self.most_level -= 1
            while self.most_start > 0 and sizes[ordered[self.most_start - 1]] == self.most_level:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = ordered[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        ordered = self.sorted
        member = ordered[self.next_most + 1]
        ordered[self.next_most + 1] = ordered[self.most_end - 1]
        ordered[self.most_end - 1] = member
        self.most_end -= 1

    def is_balanced(self) -> bool:
        return self.most_level - self.least_level <= 1


def _balance_topic(
    topic: int,
    members: np.ndarray,
    index_owner: np.ndarray,
    lo: int,
    count: int,
    balancer: _Balancer,
) -> int:
    """``balanceTopic``: move the topic's partitions from its most to its least loaded subscribers."""
    sizes = balancer.sizes
    loads = sizes[members]
    if loads.max() - loads.min() <= 1:  # what initialize would return: nothing to balance
        return 0
    balancer.initialize(members)
    owners = index_owner[lo : lo + count]
    partitions = np.lexsort((np.arange(count), owners))
    grouped = owners[partitions]
    present = np.unique(grouped)
    first = dict(zip(present.tolist(), np.searchsorted(grouped, present, side="left").tolist()))
    end = dict(zip(present.tolist(), np.searchsorted(grouped, present, side="right").tolist()))
    partitions = partitions.tolist()
    moved = 0
    while not balancer.is_balanced():
        while True:
            most = balancer.next_most_loaded()
            if most == -1:
                break
            if most not in end or end[most] - first[most] <= 0:
                balancer.exclude_most_loaded()
                continue
            break
        if most == -1:
            break
        end[most] -= 1
        partition = partitions[end[most]]
        least = balancer.next_least_loaded()
        if balancer.is_balanced():
            break
        index_owner[lo + partition] = least
        sizes[most] -= 1
        sizes[least] += 1
        moved += 1
    return moved
