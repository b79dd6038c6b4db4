"""Kafka's sticky assignor: Kafka 4.x's own by default, the seeds' algorithms as variants.

Sources: ``shared/seeds/002`` (KIP-54, with the KIP-341 generation fix),
``shared/seeds/000`` (KAFKA-12464, which quotes the four phases of KAFKA-9987)
and Apache Kafka 4.1's ``AbstractStickyAssignor``.

Default: Kafka's ``StickyAssignor``, output for output
    :mod:`heuristics.sticky_kafka` (member order, which path, claims, the
    constrained path) and :mod:`heuristics.sticky_general` (the general path).
    ``info["algorithm"]`` is ``"kafka-constrained"`` or ``"kafka-general"``.
    KIP-881 racks (``partition_racks`` and members' ``rack``) switch on exactly
    when Kafka's do: :mod:`heuristics.sticky_racks`.
    README, "Where rebalance-lab differs from Kafka", lists how it differs from
    the variants below and from the seeds' text.

``variant="kafka-12464"`` and ``variant="kafka-9987"``: the seeds' algorithms
    for equal subscriptions (equal here: the same *existing* topics); unequal
    subscriptions run Kafka's general path as the default does.

Previous ownership of the variants (KIP-341)
    :func:`problems.previous_owners`: claims on deleted or unsubscribed topics
    are dropped, the highest generation wins, equal generations keep neither
    claim, a member without a generation counts as generation -1.

Equal subscriptions, ``variant="kafka-12464"``: the seed's two phases
    The seed's two-phase pseudo-code, literally: ``C_f = P // N``,
    ``C_c = ceil(P / N)``, ``C_r = P % N``.  Phase 1 visits the members sorted
    by member id; a member owning fewer than ``C_f`` partitions keeps them all
    and becomes *unfilled*; one owning ``C_c`` or more keeps its first ``C_c``
    while fewer than ``C_r`` members hold ``C_c``; any other keeps its first
    ``C_f``.  Phase 2 sorts the unassigned partitions in the seed's partition
    order ``t0p0, t1p0, t2p0, ..., t0p1, t1p1, ...`` (partition index first,
    then topic name) and, for each unfilled member by member id, pops the first
    ``C_c - n`` partitions while fewer than ``C_r`` members hold ``C_c``, else
    ``C_f - n``.  "First" owned partitions are also taken in that order.

    *The gap in the seed's pseudo-code*: a member that keeps exactly ``C_f``
    is never unfilled, so when one member leaves a balanced group (every
    survivor at ``C_f``, ``C_r > 0``) the pseudo-code leaves partitions
    unassigned.  As Apache Kafka does (``unfilledMembersWithExactlyMinQuotaPartitions``),
    members that keep exactly ``C_f`` in phase 1, while fewer than ``C_r``
    members hold ``C_c`` (the list is emptied once ``C_r`` is reached), are
    remembered; partitions left after phase 2 go one each to them, by member id.

    With equal subscriptions this is exactly optimal on both levels of the
    sticky objective (checked against the min-cost-flow solver in the tests):
    the counts are ``C_f``/``C_c`` (the sum-of-squares minimum), and a quota of
    ``C_c`` instead of ``C_f`` keeps one more owned partition only for a member
    owning ``C_c`` or more, which is whom phase 1 gives it to first, so no
    assignment with these counts keeps more.

Equal subscriptions, ``variant="kafka-9987"``: the four phases it replaced
    1. each member (by member id) keeps its first ``min(owned, C_c)``
       partitions; fewer than ``C_f`` owned: unfilled, else it joins the
       *min-capacity* queue if it keeps ``C_f`` and the *max-capacity* queue
       if it keeps ``C_c`` (both when ``C_f == C_c``);
    2. the unfilled members (by member id) are filled round-robin, one
       partition per member per pass, up to ``C_f`` (Apache Kafka's loop),
       taking the unassigned partitions in Kafka's order of that version (topic
       name, then index); a member reaching ``C_f`` joins the min queue;
    3. if partitions ran out, each still-unfilled member steals one partition
       at a time from the head of the max queue (which leaves the queue): the
       last partition that member kept, as in the seed's worked example (C0
       gives up ``t1p3``);
    4. otherwise every remaining partition goes to the head of the min queue.

Members are sorted by member id in Java's string order (``group.instance.id``
plays no part in Kafka's sticky assignor).
"""

from __future__ import annotations

import numpy as np

import heuristics.sticky_kafka as kafka
from heuristics.sticky_quotas import owned_in_order, partitions, phase_one, quotas
from problems import GroupProblem, Result, previous_owners

VARIANTS = ("kafka-12464", "kafka-9987")


def assign(problem: GroupProblem, variant: str | None = None) -> Result:
    """Assign partitions as Kafka's sticky assignor does.

    Parameters
    ----------
    problem
        The consumer group, with previous ownership in ``owned`` / ``generation``.
    variant
        ``None`` (Kafka 4.x's ``StickyAssignor``), ``"kafka-12464"`` (the seed's
        two-phase pseudo-code) or ``"kafka-9987"`` (the four phases it
        replaced); the variants change the algorithm for equal subscriptions
        only.

    Returns
    -------
    Result
        Status ``"heuristic"``; ``info["algorithm"]`` names the algorithm run.
    """
    if variant not in (None, *VARIANTS):
        raise ValueError(f"unknown sticky variant {variant!r} (choose from {', '.join(VARIANTS)})")
    subscribes = problem.subscribes
    if problem.num_members == 0:
        owner, algorithm = np.full(problem.num_partitions, -1, dtype=np.int32), "none"
    elif variant is not None and (subscribes == subscribes[0]).all():
        if variant == "kafka-9987":
            owner, algorithm = _four_phase(problem, previous_owners(problem)), "kafka-9987"
        else:
            owner, algorithm = _constrained(problem, previous_owners(problem)), "kafka-12464"
    else:
        owner, path = kafka.assign(problem)
        algorithm = f"kafka-{path}"
    return Result(problem, "sticky", owner, info={"algorithm": algorithm})


# ------------------------------------------------------------------ orders
_member_id_rank = kafka.member_id_rank


# --------------------------------------------------------- KAFKA-12464
def _constrained(
    problem: GroupProblem, previous: np.ndarray, phases: list | None = None
) -> np.ndarray:
    """KAFKA-12464's two phases (plus Kafka's exactly-``C_f`` fill); see the module docstring.

    ``phases``, when given, receives a copy of the owner array after each phase.
    """
    members = problem.num_members
    parts = partitions(problem, index_first=True)
    c_f, c_c, c_r = quotas(len(parts), members)
    grouped, owner_of, rank, owned = owned_in_order(previous, parts, members)
    by_id = np.argsort(_member_id_rank(problem))
    # Phase 1, members by id: the first C_r members owning >= C_c keep C_c.
    keep, fill, exactly_min = phase_one(owned, by_id, c_f, c_c, c_r)
    at_max = int((keep == c_c).sum()) if c_r else 0  # under-filled members keep fewer than C_f
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    kept = rank < keep[owner_of]
    owner[grouped[kept]] = owner_of[kept]
    _snapshot(phases, owner)
    # Phase 2: unfilled members by id, up to C_c while fewer than C_r hold C_c.
    unassigned = parts[owner[parts] < 0]
    targets = np.where(np.arange(len(fill)) < c_r - at_max, c_c, c_f)
    dealt = np.repeat(fill, targets - owned[fill])
    owner[unassigned[: len(dealt)]] = dealt
    left = unassigned[len(dealt) :]
    if len(left) > len(exactly_min):
        raise AssertionError(
            "KAFKA-12464: more partitions left than members at C_f"
        )  # pragma: no cover
    owner[left] = exactly_min[: len(left)]
    _snapshot(phases, owner)
    return owner


# ---------------------------------------------------------- KAFKA-9987
def _four_phase(
    problem: GroupProblem, previous: np.ndarray, phases: list | None = None
) -> np.ndarray:
    """KAFKA-9987's four phases; see the module docstring.

    ``phases``, when given, receives a copy of the owner array after each phase.
    """
    members = problem.num_members
    parts = partitions(problem, index_first=False)
    c_f, c_c, _ = quotas(len(parts), members)
    grouped, owner_of, rank, owned = owned_in_order(previous, parts, members)
    by_id = np.argsort(_member_id_rank(problem))
    # Phase 1: keep up to C_c owned partitions.
    keep = np.minimum(owned, c_c)
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    kept = rank < keep[owner_of]
    owner[grouped[kept]] = owner_of[kept]
    kept_lists = np.split(grouped[kept], np.cumsum(keep)[:-1])  # per member, Kafka order
    unfilled = by_id[owned[by_id] < c_f]
    settled = by_id[owned[by_id] >= c_f]
    min_queue = settled[keep[settled] == c_f].tolist()
    max_queue = settled[keep[settled] == c_c].tolist()
    _snapshot(phases, owner)
    # Phase 2: round-robin passes over the unfilled members, up to C_f.
    unassigned = parts[owner[parts] < 0]
    deficit = c_f - owned[unfilled]
    slot = np.repeat(np.arange(len(unfilled)), deficit)
    rounds = np.arange(len(slot)) - np.repeat(np.cumsum(deficit) - deficit, deficit)
    picks = np.lexsort((slot, rounds))[: len(unassigned)]
    owner[unassigned[: len(picks)]] = unfilled[slot[picks]]
    counts = np.bincount(slot[picks], minlength=len(unfilled))
    done = counts == deficit
    last_pick = np.full(len(unfilled), -1, dtype=np.int64)
    np.maximum.at(last_pick, slot[picks], np.arange(len(picks)))  # when each member reached C_f
    min_queue += unfilled[np.flatnonzero(done)[np.argsort(last_pick[done], kind="stable")]].tolist()
    unassigned = unassigned[len(picks) :]
    _snapshot(phases, owner)
    # Phase 3: steal from the max-capacity members, the last partition each kept.
    for slot_index in np.flatnonzero(~done):
        member = int(unfilled[slot_index])
        for _ in range(int(deficit[slot_index] - counts[slot_index])):
            if not max_queue:
                raise AssertionError(
                    "KAFKA-9987: under capacity but all partitions assigned"
                )  # pragma: no cover
            donor = max_queue.pop(0)
            stolen, kept_lists[donor] = kept_lists[donor][-1], kept_lists[donor][:-1]
            owner[stolen] = member
        min_queue.append(member)
    _snapshot(phases, owner)
    # Phase 4: one remaining partition each to the min-capacity members, in queue order.
    if len(unassigned) > len(min_queue):
        raise AssertionError(
            "KAFKA-9987: partitions left but all members at max capacity"
        )  # pragma: no cover
    owner[unassigned] = np.asarray(min_queue[: len(unassigned)], dtype=np.int32)
    _snapshot(phases, owner)
    return owner


def _snapshot(phases: list | None, owner: np.ndarray) -> None:
    if phases is not None:
        phases.append(owner.copy())
