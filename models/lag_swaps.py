"""Swap descent on the largest member lag: a better starting answer for the exact lag-aware models.

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

import time

import numpy as np

from problems import GroupProblem, member_lags

#: Swaps are sought with the members of the least totals, this many of them.
PARTNERS = 8
#: Below this many (ours x topic) pairs every pair of the topic is tried instead.
FULL_SEARCH = 200_000


def improve(problem: GroupProblem, owner: np.ndarray, max_seconds: float = 2.0) -> np.ndarray:
    """``owner`` improved by swaps of the largest member (a copy; valid answers stay valid)."""
    owner = np.array(owner)
    if problem.lags is None or problem.num_members < 2:
        return owner
    lags = problem.lags
    if int(lags.max(initial=0)) * max(len(lags), 1) >= 2**62:  # totals beyond int64: leave it
        return owner
    lags = lags.astype(np.int64)
    totals = np.array(member_lags(problem, owner), dtype=np.int64)
    topic = problem.partition_topic
    start = problem.topic_start
    deadline = time.perf_counter() + max_seconds
    blocked = np.zeros(
        problem.num_members, dtype=bool
    )  # members without a swap at their current total
    while time.perf_counter() < deadline:
        candidates = np.flatnonzero(~blocked)
        if len(candidates) == 0:
            break
        a_member = int(candidates[np.argmax(totals[candidates])])
        if totals[a_member] < totals.max():  # the largest member is stuck: nothing lowers level 1
            break
        best: tuple[int, int, int] | None = None
        mine = np.flatnonzero(owner == a_member)
        partners = np.argsort(totals, kind="stable")[:PARTNERS]
        for t in np.unique(topic[mine]).tolist():
            ours = mine[topic[mine] == t]
            ours_lag = lags[ours]
            block = np.arange(start[t], start[t + 1])
            if len(ours) * len(block) <= FULL_SEARCH:  # small: every pair of the topic
                theirs = block[(owner[block] != a_member) & (owner[block] >= 0)]
                d = ours_lag[:, None] - lags[theirs][None, :]
                other = totals[owner[theirs]][None, :]
                ok = (d > 0) & (other + d < totals[a_member])
                if ok.any():
                    after = np.where(
                        ok, np.maximum(totals[a_member] - d, other + d), np.iinfo(np.int64).max
                    )
                    i, j = np.unravel_index(np.argmin(after), after.shape)
                    if best is None or after[i, j] < best[0]:
                        best = (int(after[i, j]), int(ours[i]), int(theirs[j]))
                continue
            for b_member in partners.tolist():
                if b_member == a_member:
                    continue
                theirs = block[owner[block] == b_member]
                if len(theirs) == 0:
                    continue
                theirs = theirs[np.argsort(lags[theirs], kind="stable")]
                their_lag = lags[theirs]
                # The best partner of each of ours: a lag near lag_a - (L_A - L_B) / 2.
                target = ours_lag - (totals[a_member] - totals[b_member]) // 2
                at = np.searchsorted(their_lag, target)
                for j in (np.clip(at - 1, 0, len(theirs) - 1), np.clip(at, 0, len(theirs) - 1)):
                    d = ours_lag - their_lag[j]
                    after = np.maximum(totals[a_member] - d, totals[b_member] + d)
                    ok = (d > 0) & (totals[b_member] + d < totals[a_member])
                    if not ok.any():
                        continue
                    k = int(np.argmin(np.where(ok, after, np.iinfo(np.int64).max)))
                    if best is None or after[k] < best[0]:
                        best = (int(after[k]), int(ours[k]), int(theirs[j[k]]))
        if best is None:
            blocked[a_member] = True
            break
        _, a, b = best
        b_member = int(owner[b])
        moved = int(lags[a] - lags[b])
        owner[a], owner[b] = b_member, a_member
        totals[a_member] -= moved
        totals[b_member] += moved
    return owner
