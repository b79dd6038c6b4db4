"""Sticky replica reassignment: apache/kafka PR 18903 (KAFKA-1792).

Source: seed 004 (the PR description), followed to the letter:

* three properties, in priority order, each scored as an integer sum of
  squares (no floats): 1) replicas per broker ``sum_b r_b^2``, 2) replicas of
  each partition per rack ``sum_p sum_k c_{p,k}^2``, 3) leaders (first
  replicas) per broker ``sum_b l_b^2``.  A rack-unaware cluster is one rack.
* **stage 1** assigns every unassigned replica (one on a broker missing from
  the broker list): its possible brokers (live, not already holding the
  partition) are ranked by the scores *of the new state*, property by
  property, and the best is taken - so it may worsen a property when nothing
  better exists.  Every replica assigned here counts as moved.
* **stage 2** repeatedly executes the best possible move of one replica to
  another broker, until none is possible.  A move is possible if it improves
  some property and worsens neither property 1 nor property 2 (property 3
  ranks moves but is not enforced).  Moves are ranked by their improvement
  scores (new state minus current state), compared property by property;
  moves of replicas already moved are preferred to all other moves
  ("1 -> 2 + 2 -> 3 reduces to 1 -> 3").  A moved replica keeps its place in
  the partition's list, so moving the first replica moves the leadership.

Where the seed is silent (documented choices): stage 1 takes the unassigned
replicas in input order (partitions as listed, replicas in list order);
"preferred" is read as a first ranking key (any possible move of a moved
replica before any other); remaining ties go to the replica listed first, then
to the broker listed first.  Reordering a partition's replicas is not a move of
the PR, so leaders change only when a first replica moves.

Each score is updated from its delta: moving one replica from broker ``a`` to
``b`` changes property 1 by ``2 (r_b - r_a) + 2``, property 2 by
``2 (c_{p,rack b} - c_{p,rack a}) + 2`` across racks (else 0), property 3 by
``2 (l_b - l_a) + 2`` for a first replica (else 0).  Each iteration scores all
(replica, broker) pairs at once with numpy, restricted to replicas on brokers
above the minimum count (no other move can keep property 1).
"""

from __future__ import annotations

import numpy as np

from problems import PlacementProblem, Result


class _State:
    """Counts of the current placement: r_b, l_b, c_{p,k} and which broker holds which partition."""

    def __init__(self, problem: PlacementProblem):
        self.problem = problem
        brokers, partitions = problem.num_brokers, problem.num_partitions
        self.rack = problem.broker_rack.astype(np.int64)
        self.part = np.repeat(np.arange(partitions, dtype=np.int64), problem.replication_factors)
        self.lead = np.zeros(len(self.part), dtype=bool)
        self.lead[problem.replica_start[:-1][problem.replication_factors > 0]] = True
        self.pos = problem.replica_positions.astype(np.int64).copy()
        self.moved = self.pos < 0
        live = self.pos >= 0
        self.r = np.bincount(self.pos[live], minlength=brokers).astype(np.int64)
        self.l = np.bincount(self.pos[live & self.lead], minlength=brokers).astype(np.int64)
        self.c = np.zeros((partitions, len(problem.rack_names)), dtype=np.int64)
        np.add.at(self.c, (self.part[live], self.rack[self.pos[live]]), 1)
        self.has = np.zeros((partitions, brokers), dtype=bool)
        self.has[self.part[live], self.pos[live]] = True

    def put(self, i: int, b: int) -> None:
        """Place replica slot ``i`` on broker ``b`` (taking it off its current broker, if live)."""
        p, a = self.part[i], self.pos[i]
        if a >= 0:
            self.r[a] -= 1
            self.l[a] -= self.lead[i]
            self.c[p, self.rack[a]] -= 1
            self.has[p, a] = False
        self.r[b] += 1
        self.l[b] += self.lead[i]
        self.c[p, self.rack[b]] += 1
        self.has[p, b] = True
        self.pos[i] = b
        self.moved[i] = True

    def answer(self) -> np.ndarray:
        return self.problem.broker_ids[self.pos]


def _assign_unassigned(state: _State) -> int:
    """Stage 1: each unassigned replica to the broker with the best new-state scores."""
    slots = np.flatnonzero(state.pos < 0)
    for i in slots.tolist():
        p = state.part[i]
        # New-state score minus a constant: (r_b, c_{p,rack b}, l_b if a leader) ranks as the new state does.
        keys = (state.r, state.c[p, state.rack], state.l * state.lead[i])
        order = np.lexsort((np.arange(len(state.r)), *reversed(keys)))
        b = next(int(b) for b in order if not state.has[p, b])
        state.put(i, b)
    return len(slots)


def _best_move(state: _State) -> tuple[int, int] | None:
    """Stage 2's best possible move ``(replica slot, broker)``, or ``None``."""
    source_count = state.r[state.pos]
    rows = np.flatnonzero(source_count > state.r.min())  # others cannot keep property 1
    if len(rows) == 0:
        return None
    src, part, lead = state.pos[rows], state.part[rows], state.lead[rows]
    d1 = 2 * (state.r[None, :] - state.r[src][:, None]) + 2
    c_part = state.c[part]
    c_target = c_part[:, state.rack]
    c_source = c_part[np.arange(len(rows)), state.rack[src]][:, None]
    same_rack = state.rack[None, :] == state.rack[src][:, None]
    d2 = np.where(same_rack, 0, 2 * (c_target - c_source) + 2)
    d3 = lead[:, None] * (2 * (state.l[None, :] - state.l[src][:, None]) + 2)
    possible = ~state.has[part] & (d1 <= 0) & (d2 <= 0) & ((d1 < 0) | (d2 < 0) | (d3 < 0))
    row, broker = np.nonzero(possible)
    if len(row) == 0:
        return None
    fresh = ~state.moved[rows[row]]
    best = np.lexsort((broker, row, d3[row, broker], d2[row, broker], d1[row, broker], fresh))[0]
    return int(rows[row[best]]), int(broker[best])


def assign(problem: PlacementProblem) -> Result:
    """Reassign replicas with PR 18903's two stages.

    Parameters
    ----------
    problem
        The cluster and its current placement; replicas on brokers missing
        from ``brokers`` are placed again.

    Returns
    -------
    Result
        Status ``"heuristic"``; ``info`` holds ``placed`` (stage 1) and
        ``moved`` (stage 2 iterations).
    """
    state = _State(problem)
    placed = _assign_unassigned(state)
    iterations = 0
    while (move := _best_move(state)) is not None:
        state.put(*move)
        iterations += 1
    return Result(problem, "sticky-replica", state.answer(), info={"placed": placed, "moved": iterations})
