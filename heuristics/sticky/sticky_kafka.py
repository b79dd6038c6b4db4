"""Apache Kafka 4.x's ``StickyAssignor`` (``AbstractStickyAssignor``), output for output.

Step by step, with its sources and where it follows Kafka: docs/strategies/client-assignors.md.
"""

from __future__ import annotations

import numpy as np

from heuristics.java import hash_map_order
from heuristics.kafka_orders import member_id_rank
from heuristics.sticky.sticky_general import general_assign
from heuristics.sticky.sticky_quotas import (
    keep_owned,
    one_each,
    owned_in_order,
    partitions,
    phase_one,
    quotas,
    round_robin,
)
from heuristics.sticky.sticky_racks import RackInfo, rack_info, rack_round_robin
from problems import GroupProblem


def assign(problem: GroupProblem) -> tuple[np.ndarray, str]:
    """Kafka's ``StickyAssignor.assign``; returns ``(owner, path)``, path ``"constrained"`` or ``"general"``."""
    owner, path, _ = assign_with_transfers(problem)
    return owner, path


def assign_with_transfers(problem: GroupProblem) -> tuple[np.ndarray, str, np.ndarray]:
    """As :func:`assign`, plus which partitions Kafka's ``CooperativeStickyAssignor`` leaves out
    (``partitionsTransferringOwnership``, a boolean array).

    Constrained path: a partition not kept in phase 1 that goes to another member than the one
    whose claim survived (the claim dropped off its racks or beyond its quota), or that was claimed
    twice in one generation (``assignNewPartition``).  General path
    (``computePartitionsTransferringOwnership``): a partition its new owner did not claim while some
    member claimed it (raw claims: any generation, any subscription).
    """
    order = hash_map_order(list(problem.members))
    position = np.empty(problem.num_members, dtype=np.int64)
    position[order] = np.arange(problem.num_members)
    id_rank = member_id_rank(problem)
    kept, doubly = resolve_claims(problem, position)
    live = live_topics(problem)
    racks = rack_info(problem, live)
    if subscriptions_equal(problem):
        kept[doubly] = -1
        claim = kept.copy()
        if racks is not None:
            kept[racks.mismatch(kept)] = -1
        owner = constrained(problem, kept, order, id_rank, racks)
        transfers = (owner >= 0) & (((claim >= 0) & (claim != owner)) | doubly)
        return owner, "constrained", transfers
    claimed = kept >= 0
    subscribed = np.zeros(problem.num_partitions, dtype=bool)
    subscribed[claimed] = problem.subscribes[kept[claimed], problem.partition_topic[claimed]]
    dropped = ~subscribed
    if racks is not None:
        dropped |= racks.mismatch(kept)
    revocation = bool((claimed & dropped).any())
    kept[dropped] = -1
    prev = earlier_owners(problem, position)
    owner = general_assign(problem, kept, prev, revocation, id_rank, live, racks)
    members, partitions = problem.owned_claims
    someone = np.zeros(problem.num_partitions, dtype=bool)
    someone[partitions] = True
    itself = np.zeros(problem.num_partitions, dtype=bool)
    itself[partitions[owner[partitions] == members]] = True
    return owner, "general", (owner >= 0) & someone & ~itself


def live_topics(problem: GroupProblem) -> np.ndarray:
    """Kafka's ``partitionsPerTopic``: topics with partitions that somebody subscribes."""
    return (problem.partition_counts > 0) & problem.subscribes.any(axis=0)


def subscriptions_equal(problem: GroupProblem) -> bool:
    """``allSubscriptionsEqual``: the raw lists compared as sets (see the module docstring).

    Kafka fills its reference set from the first non-empty list in map order,
    so members with an empty list met before it pass as equal and then get
    partitions of topics they do not subscribe; here they make the group unequal.
    """
    first = problem.subscriptions[0]
    reference = set(first)
    itself = len(first) == len(
        reference
    )  # members sharing the first one's tuple (as loaded): no set test each
    return all(
        itself
        if topics is first
        else len(topics) == len(reference) and reference.issuperset(topics)
        for topics in problem.subscriptions
    )


def resolve_claims(problem: GroupProblem, position: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each partition's kept previous owner (-1: none) and whether it was doubly claimed.

    ``position``: each member's place in the map order.
    """
    kept = np.full(problem.num_partitions, -1, dtype=np.int32)
    doubly = np.zeros(problem.num_partitions, dtype=bool)
    members, partitions = problem.owned_claims
    topics = live_topics(problem)
    if not topics.all():
        live = topics[problem.partition_topic[partitions]]
        members, partitions = members[live], partitions[live]
    if len(partitions) == 0:
        return kept, doubly
    kept[partitions] = members  # the last claim of each partition
    if np.array_equal(
        kept[partitions], members
    ):  # the common case: no partition claimed twice, nothing to sort
        return kept, doubly
    kept[:] = -1
    contested = np.bincount(partitions, minlength=problem.num_partitions)[partitions] > 1
    kept[partitions[~contested]] = members[~contested]
    members, partitions = (
        members[contested],
        partitions[contested],
    )  # usually few: only these are sorted
    order = np.lexsort((position[members], partitions))
    members, partitions = members[order], partitions[order]
    first = np.ones(len(partitions), dtype=bool)
    first[1:] = partitions[1:] != partitions[:-1]
    single = first.copy()
    single[:-1] &= first[1:]
    kept[partitions[single]] = members[single]
    generation = problem.generations
    starts = np.flatnonzero(first & ~single)
    ends = np.append(np.flatnonzero(first)[1:], len(partitions))
    ends = ends[np.searchsorted(np.flatnonzero(first), starts)]
    for s, e in zip(starts.tolist(), ends.tolist()):  # contested partitions only: few
        last, holder, twice = -1, -1, False
        for x in members[s:e].tolist():
            if last < 0 or generation[x] > generation[last]:
                holder = last = x
            elif generation[x] == generation[last]:
                holder, last, twice = -1, x, True
        kept[partitions[s]] = holder
        doubly[partitions[s]] = twice
    return kept, doubly


def earlier_owners(problem: GroupProblem, position: np.ndarray) -> np.ndarray:
    """Kafka's ``prevAssignment``: among claimants of a generation below the highest, the highest, first in map order.

    Every claim counts here, also on topics the member no longer subscribes.
    """
    prev = np.full(problem.num_partitions, -1, dtype=np.int32)
    members, partitions = problem.owned_claims
    top = int(problem.generations.max(initial=-1))
    older = problem.generations[members] < top
    members, partitions = members[older], partitions[older]
    if len(partitions) == 0:
        return prev
    order = np.lexsort((position[members], -problem.generations[members], partitions))
    members, partitions = members[order], partitions[order]
    first = np.ones(len(partitions), dtype=bool)
    first[1:] = partitions[1:] != partitions[:-1]
    prev[partitions[first]] = members[first]
    return prev


def constrained(
    problem: GroupProblem,
    kept: np.ndarray,
    order: np.ndarray,
    id_rank: np.ndarray,
    racks: RackInfo | None = None,
) -> np.ndarray:
    """``ConstrainedAssignmentBuilder`` (see the module docstring); ``kept``: valid owned partitions;
    ``racks``: Kafka's rack information when rack awareness is on."""
    # Every member subscribes the same topics: member 0's are the live ones (and empty topics).
    c_f, c_c, c_r = quotas(
        int(problem.partition_counts[problem.subscribes[0]].sum()), problem.num_members
    )
    owned = np.bincount(kept[kept >= 0], minlength=problem.num_members)
    keep, fill, exactly = phase_one(owned, order, c_f, c_c, c_r)
    # A member keeping all it owns keeps its claims as they are; only the others' claims are
    # ordered.
    owner = kept.astype(np.int32)  # a copy
    if (keep < owned).any():
        trimmed = np.append(keep < owned, False)[kept]  # kept -1 -> the appended False
        owner[trimmed] = -1
        grouped, owner_of, rank, _ = owned_in_order(
            np.where(trimmed, kept, -1), partitions(problem, index_first=True), problem.num_members
        )
        keep_owned(owner, grouped, owner_of, rank, keep)
    # Phase 2: round robin over the under-filled members (by id) up to C_f.
    by_topic = partitions(problem, index_first=False)
    unassigned = by_topic[owner[by_topic] < 0] if owner.max(initial=-1) >= 0 else by_topic
    fill = fill[np.argsort(id_rank[fill], kind="stable")]
    exactly = exactly[np.argsort(id_rank[exactly], kind="stable")]
    counts = keep.copy()  # what each member holds after phase 1
    if racks is not None:  # sorted by members on the replica racks, dealt within racks first
        unassigned = unassigned[np.argsort(racks.rack_consumers(unassigned), kind="stable")]
        over = int((keep == c_c).sum()) if c_r else 0
        under, at_floor = fill.tolist(), exactly.tolist()
        rest, _ = rack_round_robin(
            racks, unassigned.tolist(), counts, under, at_floor, over, c_r, c_f, c_c, owner
        )
        unassigned = np.array(rest, dtype=np.int64)
        fill, exactly = np.array(under, dtype=np.int64), np.array(at_floor, dtype=np.int64)
    deficit = c_f - counts[fill]
    dealt = round_robin(deficit, fill.astype(np.int32), step=0)  # one per member per round
    owner[unassigned[: len(dealt)]] = dealt
    # The exactly-C_f list: sorted by id, then the filled members as they reached C_f: in the
    # round of their last partition (deficit - 1), by id within a round.
    queue = np.concatenate((exactly, fill[np.argsort(deficit, kind="stable")]))
    left = unassigned[len(dealt) :]
    one_each(
        owner, left, queue, "Kafka's constrained assignment: partitions left, no member under C_c"
    )
    return owner
