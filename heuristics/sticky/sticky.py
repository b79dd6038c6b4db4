"""Kafka's sticky assignor: Kafka 4.x's own by default, the seeds' algorithms as variants.

Step by step, with its sources and where it follows Kafka: docs/strategies/client-assignors.md.
"""

from __future__ import annotations

import numpy as np

import heuristics.sticky.sticky_kafka as kafka
from heuristics.sticky.sticky_quotas import claims, keep_owned, one_each, phase_one, quotas
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
    return Result(problem, "sticky", owner, info={"algorithm": algorithm}, objective_name="sticky")


# --------------------------------------------------------- KAFKA-12464
def _constrained(
    problem: GroupProblem, previous: np.ndarray, phases: list[np.ndarray] | None = None
) -> np.ndarray:
    """KAFKA-12464's two phases (plus Kafka's exactly-``C_f`` fill); see the module docstring.
    ``phases``: as :func:`_snapshot` fills it."""
    parts, grouped, owner_of, rank, owned, by_id = claims(problem, previous, index_first=True)
    c_f, c_c, c_r = quotas(len(parts), problem.num_members)
    # Phase 1, members by id: the first C_r members owning >= C_c keep C_c.
    keep, fill, exactly_min = phase_one(owned, by_id, c_f, c_c, c_r)
    at_max = int((keep == c_c).sum()) if c_r else 0  # under-filled members keep fewer than C_f
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    keep_owned(owner, grouped, owner_of, rank, keep)
    _snapshot(phases, owner)
    # Phase 2: unfilled members by id, up to C_c while fewer than C_r hold C_c.
    unassigned = parts[owner[parts] < 0]
    targets = np.where(np.arange(len(fill)) < c_r - at_max, c_c, c_f)
    dealt = np.repeat(fill, targets - owned[fill])
    owner[unassigned[: len(dealt)]] = dealt
    left = unassigned[len(dealt) :]
    one_each(owner, left, exactly_min, "KAFKA-12464: more partitions left than members at C_f")
    _snapshot(phases, owner)
    return owner


# ---------------------------------------------------------- KAFKA-9987
def _four_phase(
    problem: GroupProblem, previous: np.ndarray, phases: list[np.ndarray] | None = None
) -> np.ndarray:
    """KAFKA-9987's four phases; see the module docstring.  ``phases``: as :func:`_snapshot`
    fills it."""
    parts, grouped, owner_of, rank, owned, by_id = claims(problem, previous, index_first=False)
    c_f, c_c, _ = quotas(len(parts), problem.num_members)
    # Phase 1: keep up to C_c owned partitions.
    keep = np.minimum(owned, c_c)
    owner = np.full(problem.num_partitions, -1, dtype=np.int32)
    kept = keep_owned(owner, grouped, owner_of, rank, keep)
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
    one_each(
        owner, unassigned, min_queue, "KAFKA-9987: partitions left but all members at max capacity"
    )
    _snapshot(phases, owner)
    return owner


def _snapshot(phases: list[np.ndarray] | None, owner: np.ndarray) -> None:
    """``phases``, when a caller gives it, receives a copy of the owner array after each phase."""
    if phases is not None:
        phases.append(owner.copy())
