import itertools

import numpy as np

from heuristics import sticky_replica as heuristic

BITS = 4  # one count per field: at most 15 partitions per broker


def _digits(keys: np.ndarray, fields: int, offset: int = 0) -> np.ndarray:
    shifts = BITS * (offset + np.arange(fields, dtype=np.int64))
    return (keys[:, None] >> shifts) & (2**BITS - 1)


def _fill_bound(counts: np.ndarray, total: int) -> np.ndarray:
    """Per row, the least sum of squares of a count vector >= the row (componentwise) summing to ``total``."""
    counts = counts.copy()
    rows = np.arange(len(counts))
    for _ in range(total - int(counts[0].sum()) if len(counts) else 0):
        counts[rows, counts.argmin(axis=1)] += 1
    return (counts**2).sum(axis=1)


def _distinct(keys: np.ndarray) -> np.ndarray:
    """Sorted distinct values (a sort: numpy's hashing ``unique`` is slow on these packed keys)."""
    keys = np.sort(keys)
    return keys[np.r_[True, np.diff(keys) != 0]] if len(keys) else keys


def _lookup(keys: np.ndarray, values: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """``values`` of ``wanted`` in the sorted ``keys`` (inf where absent)."""
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return np.where(keys[at] == wanted, values[at], np.inf)


def exhaustive(problem) -> tuple[int, int, int, int]:
    """The lexicographic optimum (levels 1-4) over every placement, by dynamic programming (no flow, no solver).

    Partitions are placed one by one; a state is the brokers' replica counts ``r`` (then with the
    leader counts ``l``), packed in one integer.  Pass 1 keeps the ``r`` that can still end at level
    1 <= a heuristic answer's; pass 2 (backward) gives each ``r`` the least rack spread to a
    level-1-optimal end; pass 3 walks only the level-1/2-optimal transitions, with every leader,
    keeping the fewest moves per state.
    """
    brokers = problem.num_brokers
    assert (
        brokers <= 7 and problem.num_partitions < 2**BITS and sum(problem.replication_factors) < 64
    )
    rack = problem.broker_rack.tolist()
    factors = problem.replication_factors.tolist()
    positions = problem.replica_positions.tolist()
    start = problem.replica_start.tolist()
    unit = 2 ** (
        BITS * np.arange(2 * brokers, dtype=np.int64)
    )  # r_b at field b, l_b at field B + b
    options = []  # per partition: (r delta, [r + l delta per leader], spread, moves)
    for p, factor in enumerate(factors):
        original = set(positions[start[p] : start[p + 1]])
        options.append(
            [
                (
                    int(unit[list(chosen)].sum()),
                    [int(unit[list(chosen)].sum() + unit[brokers + b]) for b in chosen] or [0],
                    sum(v * v for v in np.bincount([rack[b] for b in chosen]).tolist())
                    if chosen
                    else 0,
                    sum(b not in original for b in chosen),
                )
                for chosen in itertools.combinations(range(brokers), factor)
            ]
        )
    total = sum(factors)
    upper = heuristic.assign(problem).objective[0]  # any valid placement bounds level 1
    reach = [np.zeros(1, dtype=np.int64)]
    for choices in options:
        keys = _distinct(
            (reach[-1][:, None] + np.array([c[0] for c in choices], dtype=np.int64)).ravel()
        )
        reach.append(keys[_fill_bound(_digits(keys, brokers), total) <= upper])
    squares = (_digits(reach[-1], brokers) ** 2).sum(axis=1)
    level1 = int(squares.min())
    rests = [np.where(squares == level1, 0.0, np.inf)]
    for k in range(len(options) - 1, -1, -1):
        rests.insert(
            0,
            np.min(
                [
                    spread + _lookup(reach[k + 1], rests[0], reach[k] + delta)
                    for delta, _, spread, _ in options[k]
                ],
                axis=0,
            ),
        )
    level2 = int(rests[0][0])
    keys, moved = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    rmask = int(unit[:brokers].sum()) * (2**BITS - 1)
    for k, choices in enumerate(options):
        counts = keys & rmask
        done = level2 - _lookup(reach[k], rests[k], counts)
        new_keys, new_moved = [], []
        for delta, with_leader, spread, m in choices:
            tight = done + spread + _lookup(reach[k + 1], rests[k + 1], counts + delta) == level2
            for d in with_leader:
                new_keys.append(keys[tight] + d)
                new_moved.append(moved[tight] + m)
        packed = _distinct(
            np.concatenate(new_keys) * 64 + np.concatenate(new_moved)
        )  # moves < 64: sorted by both
        first = np.r_[True, np.diff(packed >> 6) != 0]  # the fewest moves of each state
        keys, moved = packed[first] >> 6, packed[first] & 63
    level3 = (_digits(keys, brokers, brokers) ** 2).sum(axis=1)
    best = np.lexsort((moved, level3))[0]
    return level1, level2, int(level3[best]), int(moved[best])
