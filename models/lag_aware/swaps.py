"""Swap descent on the largest member lag: a better starting answer for the exact lag-aware models.

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

import time
from itertools import combinations

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


#: Partners tried per step of :func:`balance`: the least loaded members sharing a topic, and this
#: many more drawn at random.
BALANCE_PARTNERS, RANDOM_PARTNERS = 24, 8
#: Single swaps combined into pairs of swaps (the largest differences, and random ones beyond).
COMBINED = 400
#: Partners (the least loaded first) whose combined swaps are searched when single ones leave excess.
DEEP_PARTNERS = 8
#: Single swaps (largest differences first) scanned for a chain of disjoint swaps.
CHAINED = 4000
#: Single swaps combined into triples (for exchanges of 5 and 6 swaps).
TRIPLED = 100
#: Random swaps among the members below the target when the largest member has no exchange.
SHAKES = 1000


def search_lags(problem: GroupProblem) -> np.ndarray | None:
    """The lags as int64 where the swap searches apply (lags, two members, member totals within
    62 bits), else ``None``."""
    if problem.lags is None or problem.num_members < 2:
        return None
    if int(problem.lags.max(initial=0)) * max(len(problem.lags), 1) >= 2**62:
        return None
    return problem.lags.astype(np.int64)


def balance(
    problem: GroupProblem,
    owner: np.ndarray,
    target: int,
    max_seconds: float = 2.0,
    seed: int = 0,
) -> np.ndarray:
    """``owner`` with the lag above ``target`` moved off its members (a copy; valid answers stay
    valid, level 1 never rises).

    Each step takes the member of the largest lag above ``target`` and, among members sharing one
    of its topics, the exchange of up to 4 same-topic partition swaps (or one move a topic's
    floor/ceiling share allows) that most lowers ``sum_m max(0, lag_m - target)^2`` over the pair:
    a difference inside ``[lag_a - target, target - lag_b]`` clears both, which a
    meet-in-the-middle search over sorted sums of swaps finds exactly when it exists.  It stops
    when no member is above ``target`` (level 1 meets it), no step helps, or time runs out.
    """
    owner = np.array(owner)
    search = _search(problem, owner, max_seconds, seed)
    if search is None:
        return owner
    lags, totals, rng, deadline = search
    subscribes = problem.subscribes.astype(np.int64)
    stuck: set[int] = set()
    shakes = 0
    best_owner, best_level = owner.copy(), int(totals.max())
    while time.perf_counter() < deadline:
        if int(totals.max()) < best_level:
            best_owner, best_level = owner.copy(), int(totals.max())
            if best_level <= target:
                break
        over = [m for m in np.flatnonzero(totals > target).tolist() if m not in stuck]
        if not over:
            break
        a = max(over, key=lambda m: int(totals[m]))
        others = np.flatnonzero(subscribes @ subscribes[a] > 0)
        others = others[others != a]
        others = others[np.argsort(totals[others], kind="stable")]
        partners = others[:BALANCE_PARTNERS].tolist()
        rest = others[BALANCE_PARTNERS:]
        if len(rest):
            partners += rng.choice(rest, min(RANDOM_PARTNERS, len(rest)), replace=False).tolist()
        best: tuple[int, list[int], list[int], int] | None = None  # (pair excess, ours, theirs, b)
        # Single swaps and moves with every partner first; up to 4 swaps with the least loaded
        # partners if none helps, then up to 6.
        for depth, tried in enumerate(
            (partners, partners[:DEEP_PARTNERS], partners[:DEEP_PARTNERS])
        ):
            for b in tried:
                if time.perf_counter() >= deadline:  # a step of deep exchanges takes seconds
                    break
                found = _exchange(problem, owner, lags, totals, a, b, target, rng, depth)
                gain = _excess(int(totals[a]), target) + _excess(int(totals[b]), target)
                if found is not None and found[0] < gain and (best is None or found[0] < best[0]):
                    best = (found[0], found[1], found[2], b)
                    if found[0] == 0:
                        break
            if best is not None:
                break
        if best is None and time.perf_counter() >= deadline:
            break
        before = _excess(int(totals[a]), target)
        if best is not None:
            before += _excess(int(totals[best[3]]), target)
        if best is None or best[0] >= before:
            # No exchange of a's helps: a random swap between two of a's partners (the best answer
            # seen is kept), then the descent again from there, a bounded number of times.
            if shakes < SHAKES and _shake(problem, owner, lags, totals, others, rng):
                shakes += 1
            else:
                stuck.add(a)
            continue
        _, ours, theirs, b = best
        _swap(owner, lags, totals, a, b, ours, theirs)
        stuck.clear()
    return owner if int(totals.max()) <= best_level else best_owner


def _search(
    problem: GroupProblem, owner: np.ndarray, max_seconds: float, seed: int
) -> tuple[np.ndarray, np.ndarray, np.random.Generator, float] | None:
    """A swap search's lags (:func:`search_lags`), ``owner``'s member totals, its random generator
    and its deadline; ``None`` where the searches do not apply."""
    lags = search_lags(problem)
    if lags is None:
        return None
    totals = np.array(member_lags(problem, owner), dtype=np.int64)
    return lags, totals, np.random.default_rng(seed), time.perf_counter() + max_seconds


def _swap(
    owner: np.ndarray,
    lags: np.ndarray,
    totals: np.ndarray,
    a: int,
    b: int,
    ours: list[int],
    theirs: list[int],
) -> None:
    """Member ``a``'s partitions ``ours`` to ``b`` and ``b``'s ``theirs`` to ``a``, in ``owner``
    and the member ``totals`` (in place)."""
    owner[ours] = b
    owner[theirs] = a
    moved = int(lags[ours].sum() - lags[theirs].sum())
    totals[a] -= moved
    totals[b] += moved


def _shake(
    problem: GroupProblem,
    owner: np.ndarray,
    lags: np.ndarray,
    totals: np.ndarray,
    partners: np.ndarray,
    rng: np.random.Generator,
) -> bool:
    """One random same-topic swap between two of ``partners``; whether one was made."""
    if len(partners) < 2:
        return False
    b, c = (int(m) for m in rng.choice(partners, 2, replace=False))
    topic = problem.partition_topic
    mine, theirs = np.flatnonzero(owner == b), np.flatnonzero(owner == c)
    x = np.repeat(mine, len(theirs))
    y = np.tile(theirs, len(mine))
    same = topic[x] == topic[y]
    x, y = x[same], y[same]
    d = lags[x] - lags[y]
    ok = d != 0
    if not ok.any():
        return False
    k = int(rng.choice(np.flatnonzero(ok)))
    owner[x[k]], owner[y[k]] = c, b
    totals[b] -= d[k]
    totals[c] += d[k]
    return True


def _excess(total: int, target: int) -> int:
    return max(0, total - target) ** 2


#: A candidate exchange: ``(pair excess after, a's partitions to b, b's partitions to a)``.
Found = tuple[float, list[int], list[int]]
#: Exchanges of ``k`` swaps: per swap the partitions of a and of b (arrays), and the differences.
Sums = tuple[list[np.ndarray], list[np.ndarray], np.ndarray]


def _exchange(
    problem: GroupProblem,
    owner: np.ndarray,
    lags: np.ndarray,
    totals: np.ndarray,
    a: int,
    b: int,
    target: int,
    rng: np.random.Generator,
    depth: int,
) -> tuple[int, list[int], list[int]] | None:
    """The best exchange between ``a`` and ``b``: ``(pair excess after, a's partitions to b, b's
    partitions to a)``, or ``None`` when they have nothing to exchange.

    ``depth`` 0: single swaps, moves and a chain of disjoint swaps; 1: up to 4 swaps; 2: up to 6
    swaps."""
    la, lb = int(totals[a]), int(totals[b])
    found = _singles(problem, owner, lags, a, b)
    if found is None:
        return None
    x, y, d, moves = found
    best = _Best(la, lb, target)
    best.consider(d, [x], [y])
    if moves:
        m = np.array(moves)
        best.consider(lags[m], [m], [])
    if depth == 0 and la > target and (best.found is None or best.found[0] > 0):
        best.chain(x, y, d)
    if depth == 0 or best.clears:
        return best.exact(lags)
    # Pairs of swaps over the (sampled) single swaps, then 3 and 4 swaps by meet in the middle.
    singles, pairs = _pairs(x, y, d, rng)
    if pairs is None:
        return best.exact(lags)
    best.consider(pairs[2], pairs[0], pairs[1])
    if best.clears:
        return best.exact(lags)
    searches = [(singles, pairs), (pairs, pairs)]
    if depth == 2 and len(singles[2]) > 2:  # triples of the first singles, for 5 and 6 swaps
        triples = _triples(singles)
        searches += [(pairs, triples), (triples, triples)]
    for half, other in searches:
        best.meet(half, other)
        if best.clears:
            break
    return best.exact(lags)


def _singles(
    problem: GroupProblem, owner: np.ndarray, lags: np.ndarray, a: int, b: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]] | None:
    """The single same-topic swaps between ``a`` and ``b`` that change the totals (``a``'s
    partition, ``b``'s, the difference ``d``), and ``a``'s partitions that may move to ``b``
    within their topic's floor/ceiling share; ``None`` when there are neither."""
    topic = problem.partition_topic
    mine, theirs = np.flatnonzero(owner == a), np.flatnonzero(owner == b)
    xs, ys = [], []
    moves: list[int] = []
    start = problem.topic_start
    for t in np.intersect1d(topic[mine], topic[theirs]).tolist():
        ours_t, theirs_t = mine[topic[mine] == t], theirs[topic[theirs] == t]
        xs.append(np.repeat(ours_t, len(theirs_t)))
        ys.append(np.tile(theirs_t, len(ours_t)))
    for t in np.unique(topic[mine]).tolist():
        if not problem.subscribes[b, t]:
            continue
        floor, extra = divmod(int(start[t + 1] - start[t]), len(problem.topic_subscribers[t]))
        count_a = int(np.count_nonzero(topic[mine] == t))
        count_b = int(np.count_nonzero(topic[theirs] == t))
        if count_a > floor and count_b < floor + (extra > 0):
            moves += mine[topic[mine] == t].tolist()
    if not xs and not moves:
        return None
    x = np.concatenate(xs) if xs else np.zeros(0, np.int64)
    y = np.concatenate(ys) if ys else np.zeros(0, np.int64)
    d = lags[x] - lags[y]
    keep = d != 0
    return x[keep], y[keep], d[keep], moves


class _Best:
    """The best exchange between a member of total ``la`` and one of ``lb`` seen so far: least
    pair excess over ``target``, ties nearest the ``centre`` of the differences that help most."""

    def __init__(self, la: int, lb: int, target: int) -> None:
        self.la, self.lb, self.target = la, lb, target
        if la - target <= target - lb:  # a difference in [la - target, target - lb] clears both
            self.centre = (la - target + target - lb) / 2
        else:  # both stay above: the most even split
            self.centre = (la - lb) / 2
        self.found: Found | None = None

    @property
    def clears(self) -> bool:
        """Whether the best exchange leaves neither member above the target."""
        return self.found is not None and self.found[0] == 0

    def consider(
        self, values: np.ndarray, parts: list[np.ndarray], theirs_parts: list[np.ndarray]
    ) -> None:
        """The best of the exchanges of differences ``values`` (per exchange, its partitions of a
        in ``parts`` and of b in ``theirs_parts``), kept if better than the best so far."""
        if len(values) == 0:
            return
        after = _pair_excess(self.la, self.lb, values.astype(np.float64), self.target)
        i = int(np.argmin(after - 1e-9 * np.abs(values - self.centre)))
        i = int(np.argmin(np.where(after == after[i], np.abs(values - self.centre), np.inf)))
        if self.found is None or after[i] < self.found[0]:
            self.found = (
                float(after[i]),
                [int(p[i]) for p in parts],
                [int(q[i]) for q in theirs_parts],
            )

    def chain(self, x: np.ndarray, y: np.ndarray, d: np.ndarray) -> None:
        """A chain of disjoint single swaps, largest differences first, up to the cap."""
        la, lb, target = self.la, self.lb, self.target
        lo = la - target
        cap = target - lb if lo <= target - lb else (la - lb) // 2
        used_x: set[int] = set()
        used_y: set[int] = set()
        chain_x: list[int] = []
        chain_y: list[int] = []
        moved = 0
        for k in np.argsort(-d, kind="stable")[:CHAINED].tolist():
            dk, xk, yk = int(d[k]), int(x[k]), int(y[k])
            if dk <= 0 or moved >= lo:
                break
            if moved + dk <= cap and xk not in used_x and yk not in used_y:
                used_x.add(xk)
                used_y.add(yk)
                chain_x.append(xk)
                chain_y.append(yk)
                moved += dk
        if len(chain_x) > 1:
            after = _excess(la - moved, target) + _excess(lb + moved, target)
            if self.found is None or after < self.found[0]:
                self.found = (float(after), chain_x, chain_y)

    def meet(self, half: Sums, other: Sums) -> None:
        """Exchanges of one of ``half`` and one of ``other`` (sorted by difference), disjoint:
        for each of ``half``, the few of ``other`` whose differences bring the sum nearest the
        centre (a binary search)."""
        qx, qy, qd = half
        tx, ty, td = other
        if len(td) == 0:
            return
        at = np.searchsorted(td, self.centre - qd)
        for shift in (-2, -1, 0, 1):
            k = np.clip(at + shift, 0, len(td) - 1)
            xs_all = qx + [c[k] for c in tx]
            ys_all = qy + [c[k] for c in ty]
            ok = np.ones(len(k), dtype=bool)
            for u in range(len(xs_all)):
                for v in range(u + 1, len(xs_all)):
                    ok &= (xs_all[u] != xs_all[v]) & (ys_all[u] != ys_all[v])
            if ok.any():
                self.consider((qd + td[k])[ok], [p[ok] for p in xs_all], [q[ok] for q in ys_all])

    def exact(self, lags: np.ndarray) -> tuple[int, list[int], list[int]] | None:
        """The best exchange with its pair excess recomputed in integers (``None``: none)."""
        return (
            None if self.found is None else _exact(self.la, self.lb, lags, self.found, self.target)
        )


def _pairs(
    x: np.ndarray, y: np.ndarray, d: np.ndarray, rng: np.random.Generator
) -> tuple[Sums, Sums | None]:
    """The single swaps (``COMBINED`` of them drawn at random beyond that many) and the disjoint
    pairs of them, sorted by difference (``None`` when there is no pair)."""
    if len(d) > COMBINED:
        pick = rng.choice(len(d), COMBINED, replace=False)
        x1, y1, d1 = x[pick], y[pick], d[pick]
    else:
        x1, y1, d1 = x, y, d
    singles: Sums = ([x1], [y1], d1)
    i, j = np.triu_indices(len(d1), 1)
    ok = (x1[i] != x1[j]) & (y1[i] != y1[j])
    i, j = i[ok], j[ok]
    if len(i) == 0:
        return singles, None
    d2 = d1[i] + d1[j]
    order = np.argsort(d2, kind="stable")
    i, j, d2 = i[order], j[order], d2[order]
    return singles, ([x1[i], x1[j]], [y1[i], y1[j]], d2)


def _triples(singles: Sums) -> Sums:
    """The disjoint triples of the first ``TRIPLED`` single swaps, sorted by difference."""
    (x1,), (y1,), d1 = singles
    n = min(len(d1), TRIPLED)
    ijk = np.array(list(combinations(range(n), 3)), dtype=np.int64).T
    ok = np.ones(ijk.shape[1], dtype=bool)
    for u, v in ((0, 1), (0, 2), (1, 2)):
        ok &= (x1[ijk[u]] != x1[ijk[v]]) & (y1[ijk[u]] != y1[ijk[v]])
    ijk = ijk[:, ok]
    d3 = d1[ijk[0]] + d1[ijk[1]] + d1[ijk[2]]
    order = np.argsort(d3, kind="stable")
    ijk, d3 = ijk[:, order], d3[order]
    return [x1[r] for r in ijk], [y1[r] for r in ijk], d3


def _pair_excess(la: int, lb: int, d: np.ndarray, target: int) -> np.ndarray:
    over_a = np.maximum(0.0, la - d - target)
    over_b = np.maximum(0.0, lb + d - target)
    return np.asarray(over_a * over_a + over_b * over_b)


def _exact(
    la: int, lb: int, lags: np.ndarray, found: tuple[float, list[int], list[int]], target: int
) -> tuple[int, list[int], list[int]]:
    _, ours, theirs = found
    moved = int(sum(int(lags[p]) for p in ours) - sum(int(lags[q]) for q in theirs))
    return _excess(la - moved, target) + _excess(lb + moved, target), ours, theirs


def even_out(
    problem: GroupProblem,
    owner: np.ndarray,
    target: int,
    max_seconds: float = 2.0,
    seed: int = 0,
) -> np.ndarray:
    """``owner`` with its sum of squared member lags lowered towards ``target`` (a copy; valid
    answers stay valid, level 1 never rises).

    Each sweep goes over the pairs of members sharing a topic, widest lag gap first, skipping
    those found stuck since neither member changed, and takes for each the exchange of
    :func:`balance` whose difference ``d`` comes nearest half the gap, when it helps: single
    swaps, moves within the topics' floor/ceiling shares and chains in one sweep, sums of up to
    4 swaps only in a sweep after one where no pair had a single exchange (most pairs of a
    skewed group have no exchange at all, and the sums cost the most).  With
    ``0 < d < lag_a - lag_b`` both new lags lie between the old ones, so the pair's squares fall
    and the largest lag does not rise.  It stops when the sum of squares meets ``target`` (a
    lower bound), no pair has an improving exchange, or time runs out.
    """
    owner = np.array(owner)
    search = _search(problem, owner, max_seconds, seed)
    if search is None:
        return owner
    lags, totals, rng, deadline = search
    shared = problem.subscribes.astype(np.int64) @ problem.subscribes.T.astype(np.int64) > 0
    stuck: set[tuple[int, int, int]] = set()  # (a, b, depth) without an exchange that helps
    while time.perf_counter() < deadline:
        if sum(int(v) ** 2 for v in totals.tolist()) <= target:
            break
        order = np.argsort(-totals, kind="stable").tolist()
        for depth in (0, 1):  # every pair's single swaps and moves before any pair's sums
            sweep = _EvenSweep(problem, owner, lags, totals, shared, stuck, target, rng)
            if sweep.run(order, depth, deadline):
                break
        else:
            break  # no pair has an exchange that helps
    return owner


class _EvenSweep:
    """One pass of :func:`even_out` over the pairs, widest gap first, taking every exchange that
    lowers a pair's sum of squares as it is found (``owner`` and ``totals`` change in place)."""

    def __init__(
        self,
        problem: GroupProblem,
        owner: np.ndarray,
        lags: np.ndarray,
        totals: np.ndarray,
        shared: np.ndarray,
        stuck: set[tuple[int, int, int]],
        target: int,
        rng: np.random.Generator,
    ) -> None:
        self.problem, self.owner, self.lags, self.totals = problem, owner, lags, totals
        self.shared, self.stuck, self.target, self.rng = shared, stuck, target, rng

    def run(self, order: list[int], depth: int, deadline: float) -> bool:
        """Whether an exchange was taken (pairs without one at ``depth`` join ``stuck``)."""
        owner, lags, totals, stuck = self.owner, self.lags, self.totals, self.stuck
        taken = False
        for a in order:
            for b in reversed(order):
                if time.perf_counter() >= deadline:
                    return taken
                if totals[a] - totals[b] < 2:
                    break
                if (a, b, depth) in stuck or not self.shared[a, b]:
                    continue
                before = int(totals[a]) ** 2 + int(totals[b]) ** 2
                found = _exchange(self.problem, owner, lags, totals, a, b, 0, self.rng, depth)
                if found is None or found[0] >= before:
                    stuck.add((a, b, depth))
                    continue
                _, ours, theirs = found
                _swap(owner, lags, totals, a, b, ours, theirs)
                taken = True
                for key in [key for key in stuck if a in key[:2] or b in key[:2]]:
                    stuck.discard(key)
                if sum(int(v) ** 2 for v in totals.tolist()) <= self.target:
                    return True
        return taken
