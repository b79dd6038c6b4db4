"""Orderings that Kafka's client assignors share.

Kept in one place because every assignor that mimics Kafka sorts members and
topics the same way, and a difference in either changes the output.
"""

from __future__ import annotations

import numpy as np

from problems import GroupProblem


def java_order_key(text: str) -> bytes:
    """Sort key that orders strings as Java's ``String.compareTo`` does.

    Java compares UTF-16 code units; Python compares code points.  The two
    disagree only when a character above U+FFFF meets one in U+E000..U+FFFF,
    and comparing the UTF-16-BE bytes reproduces Java exactly.
    """
    return text.encode("utf-16-be")


def member_rank(problem: GroupProblem) -> np.ndarray:
    """Each member's position in Kafka's member order (``int32``, length M).

    Kafka's ``AbstractPartitionAssignor.MemberInfo.compareTo``: members with a
    ``group.instance.id`` (static members) first, ordered by instance id, then
    the dynamic members ordered by member id.
    """
    keys = [
        (0, java_order_key(instance)) if instance is not None else (1, java_order_key(member))
        for member, instance in zip(problem.members, problem.instance_ids)
    ]
    order = sorted(range(problem.num_members), key=keys.__getitem__)
    rank = np.empty(problem.num_members, dtype=np.int32)
    rank[order] = np.arange(problem.num_members, dtype=np.int32)
    return rank


def member_id_rank(problem: GroupProblem) -> np.ndarray:
    """Each member's position when members are sorted by member id in Java order (``int64``, length M)."""
    order = sorted(range(problem.num_members), key=lambda m: java_order_key(problem.members[m]))
    rank = np.empty(problem.num_members, dtype=np.int64)
    rank[order] = np.arange(problem.num_members)
    return rank


def topics_in_name_order(problem: GroupProblem) -> list[int]:
    """Topic positions ordered by name as Java's ``TreeSet<String>`` orders them."""
    return sorted(range(problem.num_topics), key=lambda t: java_order_key(problem.topics[t]))


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units, 32-bit signed)."""
    h = 0
    units = text.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def java_string_hashes(texts) -> np.ndarray:
    """:func:`java_string_hash` of many strings at once (``int64`` array of the signed values).

    ``h = sum(c[i] * 31 ** (n - 1 - i))`` over the UTF-16 code units, modulo 2**32: every product
    is below 2**48, so the sums stay exact in ``uint64`` before the reduction.
    """
    texts = list(texts)
    if not texts:
        return np.zeros(0, dtype=np.int64)
    joined = "".join(texts).encode("utf-16-be", "surrogatepass")
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    if len(joined) != 2 * int(lengths.sum()):  # characters beyond U+FFFF: two code units each
        encoded = [t.encode("utf-16-be", "surrogatepass") for t in texts]
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)) // 2
    units = np.frombuffer(joined, dtype=">u2").astype(np.uint64)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    owner = np.repeat(np.arange(len(texts)), lengths)
    exponent = (starts + lengths)[owner] - 1 - np.arange(len(units))
    powers = np.ones(int(lengths.max(initial=0)) + 1, dtype=np.uint64)
    for e in range(1, len(powers)):
        powers[e] = (powers[e - 1] * np.uint64(31)) & np.uint64(0xFFFFFFFF)
    terms = units * powers[exponent]
    sums = np.zeros(len(texts), dtype=np.uint64)
    nonempty = lengths > 0
    if len(units):
        sums[nonempty] = np.add.reduceat(terms, starts[nonempty])
    h = (sums & np.uint64(0xFFFFFFFF)).astype(np.int64)
    return np.where(h >= 2**31, h - 2**32, h)


def java_spread(h: int) -> int:
    """``HashMap.hash``: the key's hash with its high half folded in (unsigned 32-bit result)."""
    h &= 0xFFFFFFFF
    return h ^ (h >> 16)


def hash_map_order(keys: list[str]) -> np.ndarray:
    """Positions of ``keys`` in the iteration order of a Java ``HashMap`` filled in list order.

    A ``HashMap`` iterates its table from bucket 0 up, each bucket in insertion
    order; the table starts at 16 buckets and doubles when the size passes 3/4
    of it, or when a bucket of a table under 64 buckets reaches 9 entries
    (``treeifyBin``).  A bucket of 9+ entries in a larger table becomes a
    red-black tree, whose order this does not reproduce (it needs thousands of
    colliding ids).  Kafka's consumer leader hands the assignor such a map of
    member id -> subscription, and the sticky assignor's tie-breaks follow it.
    """
    return grouped_hash_order(np.zeros(len(keys), dtype=np.int64), java_string_hashes(keys))


def hash_table_order(hashes, capacity: int = 16) -> np.ndarray:
    """As :func:`hash_map_order`, for keys given by their Java ``hashCode`` values (in insertion order),
    the table starting at ``capacity`` buckets (``new HashMap<>(n)`` / ``new
    HashSet<>(collection)``:
    :func:`from_collection_capacity`)."""
    spread = [java_spread(int(h)) for h in hashes]
    sizes: dict[int, int] = {}
    for i, h in enumerate(spread):
        bucket = h & (capacity - 1)
        sizes[bucket] = sizes.get(bucket, 0) + 1
        grow = sizes[bucket] >= 9 and capacity < 64
        if grow or i + 1 > capacity * 3 // 4:
            capacity *= 2
            if grow and i + 1 > capacity * 3 // 4:
                capacity *= 2
            sizes = {}
            for g in spread[: i + 1]:
                sizes[g & (capacity - 1)] = sizes.get(g & (capacity - 1), 0) + 1
    buckets = np.array([h & (capacity - 1) for h in spread], dtype=np.int64)
    return np.argsort(buckets, kind="stable")


def from_collection_capacity(size: int) -> int:
    """Buckets of ``new HashSet<>(collection)`` of ``size`` elements on Java 17 (the JVM of the peers):
    ``new HashMap<>(Math.max((int) (size / .75f) + 1, 16))``, rounded up to a power of two."""
    wanted = max(int(np.float32(size) / np.float32(0.75)) + 1, 16)
    return 1 << (wanted - 1).bit_length()


def uuid_hashes(msb: np.ndarray, lsb: np.ndarray) -> np.ndarray:
    """Kafka's ``Uuid.hashCode`` of ids ``(msb, lsb)`` (signed 64-bit arrays), as unsigned 32-bit ``int64``:
    ``h = msb ^ lsb; (int) (h >> 32) ^ (int) h``."""
    h = np.bitwise_xor(np.asarray(msb, dtype=np.int64), np.asarray(lsb, dtype=np.int64)).view(
        np.uint64
    )
    return ((h >> np.uint64(32)) ^ (h & np.uint64(0xFFFFFFFF))).astype(np.int64)


def grouped_hash_order(
    group: np.ndarray,
    hashes: np.ndarray,
    from_collection: bool = False,
    sizes: np.ndarray | None = None,
) -> np.ndarray:
    """The iteration order of many small Java hash tables at once.

    Element ``i`` is put into table ``group[i]`` (each table filled one element at a time, in
    array order, from Java's default 16 buckets, or with ``from_collection`` from the buckets
    ``new HashSet<>(collection)`` starts with: :func:`from_collection_capacity`); ``hashes`` are
    the keys' ``hashCode`` values; ``sizes``: the size of each table's source collection, when it
    differs from the number of keys put (``new HashSet<>(topicIds)`` of a ``TopicIds`` view, whose
    size counts names missing from the cluster).
    Returns the permutation that lists the elements table by table (``group`` ascending), each
    table in its iteration order: bucket ascending at the table's final size, insertion order
    within a bucket.  A table whose bucket reached 9 entries while under 64 buckets grew
    earlier than its size alone says (``treeifyBin``): those tables are redone one by one with
    :func:`hash_table_order`.
    """
    group = np.asarray(group, dtype=np.int64)
    n = len(group)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    h = np.asarray(hashes, dtype=np.int64) & 0xFFFFFFFF
    spread = h ^ (h >> 16)
    declared = sizes
    sizes = np.bincount(group)
    # smallest power of two >= 16 with size <= 3/4 of it
    needed = np.maximum(16, (sizes * 4 + 2) // 3)
    capacity = 1 << np.ceil(np.log2(np.maximum(needed, 1))).astype(np.int64)
    capacity = np.where(capacity * 3 // 4 < sizes, capacity * 2, capacity)
    if from_collection:  # (int) (size / .75f) + 1, at least 16, rounded up to a power of two
        collection = (
            sizes
            if declared is None
            else np.maximum(np.asarray(declared, dtype=np.int64)[: len(sizes)], sizes)
        )
        wanted = np.maximum(
            (collection.astype(np.float32) / np.float32(0.75)).astype(np.int64) + 1, 16
        )
        capacity = np.maximum(capacity, 1 << np.ceil(np.log2(wanted)).astype(np.int64))
    bucket = spread & (capacity[group] - 1)
    order = np.argsort(group * int(capacity.max()) + bucket, kind="stable")
    small = capacity < 64
    if small.any():
        g, b = group[order], bucket[order]
        same = (g[8:] == g[:-8]) & (b[8:] == b[:-8])  # 9 in a row: a bucket of 9 or more
        crowded = np.unique(g[8:][same])
        crowded = crowded[small[crowded]]
        if len(crowded):
            starts = np.concatenate(([0], np.cumsum(sizes)))
            for t in crowded.tolist():
                members = np.flatnonzero(group == t)
                initial = int(capacity[t]) if from_collection else 16
                order[starts[t] : starts[t + 1]] = members[
                    hash_table_order(h[members].tolist(), initial)
                ]
    return order
