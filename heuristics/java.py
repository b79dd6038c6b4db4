"""Java's behaviours that Kafka's assignors depend on, written once for every heuristic.

Kafka's output depends on how Java orders and hashes strings and on how its collections iterate:

* strings compare by UTF-16 code units (:func:`java_order_key`) and hash as ``String.hashCode``
  (:func:`java_string_hash`, :func:`java_string_hashes`);
* a ``HashMap`` / ``HashSet`` iterates bucket by bucket, each bucket in insertion order, its table
  sized by Java's capacity rules (:func:`table_size_for`, :func:`from_collection_capacity`) and
  grown at 3/4 full or when a bucket of a small table reaches 9 entries: :func:`hash_map_order`,
  :func:`hash_table_order`, :func:`hash_set_order`, :func:`spread_set_order`,
  :func:`grouped_hash_order` (many tables at once) and :class:`JavaHashSet` (under adds, removes
  and ``computeIfAbsent``);
* a ``PriorityQueue`` with a comparator is OpenJDK's binary heap, its ties broken by the heap's
  layout (:class:`JavaPriorityQueue`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, TypeVar

import numpy as np

T = TypeVar("T")


def java_order_key(text: str) -> bytes:
    """Sort key that orders strings as Java's ``String.compareTo`` does.

    Java compares UTF-16 code units; Python compares code points.  The two
    disagree only when a character above U+FFFF meets one in U+E000..U+FFFF,
    and comparing the UTF-16-BE bytes reproduces Java exactly.
    """
    return text.encode("utf-16-be")


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units, 32-bit signed)."""
    h = 0
    units = text.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def java_string_hashes(texts: Iterable[str]) -> np.ndarray:
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


def table_size_for(capacity: int) -> int:
    """``HashMap.tableSizeFor``: the power of two at least ``capacity`` (at least 1)."""
    return 1 if capacity <= 1 else 1 << (capacity - 1).bit_length()


def from_collection_request(size: int) -> int:
    """``new HashSet<>(collection)``'s capacity request: ``max((int) (size / .75f) + 1, 16)``."""
    return max(int(np.float32(size) / np.float32(0.75)) + 1, 16)


def from_collection_capacity(size: int) -> int:
    """Buckets of ``new HashSet<>(collection)`` of ``size`` elements on Java 17 (the JVM of the peers):
    ``new HashMap<>(Math.max((int) (size / .75f) + 1, 16))``, rounded up to a power of two."""
    return table_size_for(from_collection_request(size))


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


def hash_table_order(hashes: Iterable[int], capacity: int = 16) -> np.ndarray:
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


def hash_set_order(hashes: list[int], capacity: int = 16) -> list[int]:
    """Positions of keys (given by their ``hashCode``, in insertion order) in the iteration order
    of a Java ``HashMap``/``HashSet`` that started with ``capacity`` buckets (no removals)."""
    return [int(i) for i in hash_table_order(hashes, capacity)]


def spreads(hashes: Sequence[int]) -> list[int]:
    """``HashMap.hash`` of each ``hashCode``: the high half folded into the low (unsigned)."""
    return [(h & 0xFFFFFFFF) ^ ((h & 0xFFFFFFFF) >> 16) for h in hashes]


def spread_set_order(
    keys: Sequence[int], hashes: Sequence[int], spread: Sequence[int], capacity: int = 16
) -> list[int]:
    """``keys`` (distinct, in insertion order) in the iteration order of a Java ``HashSet`` that
    started with ``capacity`` buckets, ``hashes[key]`` being each key's ``hashCode`` and
    ``spread[key]`` its ``HashMap.hash`` (:func:`spreads`).

    As :func:`hash_set_order`: bucket by bucket at the table's final size, insertion order within
    a bucket.  Only a table of 9 to 48 keys that started under 64 buckets can have grown early
    (a bucket of 9 under 64 buckets); when one of its first buckets holds 9 keys its size is
    worked out key by key; any other table's size follows from the key count alone."""
    n = len(keys)
    if n < 2:
        return list(keys)
    if 9 <= n <= 48 and capacity < 64:
        # buckets only split as the table grows: no bucket of 9 at the first size, none ever
        crowd = [0] * capacity
        for k in keys:
            crowd[spread[k] & (capacity - 1)] += 1
        if max(crowd) >= 9:
            return [keys[i] for i in hash_set_order([hashes[k] for k in keys], capacity)]
    while n > capacity * 3 // 4:
        capacity *= 2
    mask = capacity - 1
    buckets = [spread[k] & mask for k in keys]
    if all(a <= b for a, b in zip(buckets, buckets[1:])):
        return list(keys)  # already in bucket order
    return [keys[i] for i in sorted(range(n), key=buckets.__getitem__)]


class JavaHashSet:
    """The iteration order of a ``java.util.HashSet`` (or a ``HashMap``'s keys).

    A table of buckets (a power of two of them, at first ``requested`` rounded up, or 16 for the
    default constructor) iterated bucket by bucket, each bucket a chain; an entry's bucket is its
    spread hash (``h ^ h >>> 16``) modulo the table size.  :meth:`add` (``put``) appends to the
    chain and doubles the table once the size passes 3/4 of it; :meth:`compute_if_absent`
    (``HashMap.computeIfAbsent``) puts the entry at the head of its chain and doubles the table
    before inserting when the size already passed 3/4.  A resize splits each chain in two,
    keeping its order.  A chain reaching 9 (``put``) or 8 (``computeIfAbsent``) entries in a
    table under 64 buckets doubles the table (``treeifyBin``); in a larger table it becomes a
    tree, whose order this does not reproduce (it needs many colliding keys).
    """

    def __init__(self, requested: int | None = None) -> None:
        self.initial = 16 if requested is None else table_size_for(requested)
        self.table: list[list[Any]] = []
        self.spread: dict[Any, int] = {}

    def __len__(self) -> int:
        return len(self.spread)

    def __contains__(self, key: object) -> bool:
        return key in self.spread

    def _resize(self) -> None:
        if not self.table:
            self.table = [[] for _ in range(self.initial)]
            return
        size = 2 * len(self.table)
        table: list[list[Any]] = [[] for _ in range(size)]
        for chain in self.table:
            for key in chain:
                table[self.spread[key] & (size - 1)].append(key)
        self.table = table

    def _chain(self, key: Any, hash_code: int) -> list[Any]:
        self.spread[key] = java_spread(hash_code)
        return self.table[self.spread[key] & (len(self.table) - 1)]

    def add(self, key: Any, hash_code: int) -> bool:
        """``add`` / ``put``: False when ``key`` is already in."""
        if key in self.spread:
            return False
        if not self.table:
            self._resize()
        chain = self._chain(key, hash_code)
        chain.append(key)
        if len(chain) >= 9 and len(self.table) < 64:
            self._resize()
        if len(self.spread) > len(self.table) * 3 // 4:
            self._resize()
        return True

    def compute_if_absent(self, key: Any, hash_code: int) -> bool:
        """``HashMap.computeIfAbsent``: False when ``key`` is already in."""
        if key in self.spread:
            return False
        if not self.table or len(self.spread) > len(self.table) * 3 // 4:
            self._resize()
        chain = self._chain(key, hash_code)
        chain.insert(0, key)
        if len(chain) >= 8 and len(self.table) < 64:
            self._resize()
        return True

    def remove(self, key: Any) -> bool:
        """``remove``: False when ``key`` is not in (the table never shrinks)."""
        spread = self.spread.pop(key, None)
        if spread is None:
            return False
        self.table[spread & (len(self.table) - 1)].remove(key)
        return True

    def order(self) -> list[Any]:
        """The keys in iteration order."""
        return [key for chain in self.table for key in chain]


class JavaPriorityQueue(Generic[T]):
    """``java.util.PriorityQueue`` with a comparator: the same array, the same sifts.

    ``compare(a, b)`` returns a negative number, zero or a positive number, and is called
    whenever Java's would be, on the elements' state at that moment.
    """

    __slots__ = ("_compare", "_queue")

    def __init__(self, compare: Callable[[T, T], int]) -> None:
        self._compare = compare
        self._queue: list[T] = []

    def __len__(self) -> int:
        return len(self._queue)

    def __contains__(self, item: object) -> bool:
        return item in self._queue

    def offer(self, item: T) -> None:
        self._queue.append(item)
        self._sift_up(len(self._queue) - 1, item)

    add = offer  # ``add``: the same as ``offer`` in Java

    def offer_all(self, items: Iterable[T]) -> None:
        for item in items:
            self.offer(item)

    def poll(self) -> T | None:
        queue = self._queue
        if not queue:
            return None
        result = queue[0]
        last = queue.pop()
        if queue:
            self._sift_down(0, last)
        return result

    def remove(self, item: T) -> bool:
        """``remove(Object)``: the first element equal to ``item`` in array order."""
        try:
            i = self._queue.index(item)
        except ValueError:
            return False
        self._remove_at(i)
        return True

    def _remove_at(self, i: int) -> None:
        queue = self._queue
        last_index = len(queue) - 1
        if last_index == i:
            queue.pop()
            return
        moved = queue.pop()
        self._sift_down(i, moved)
        if queue[i] is moved or queue[i] == moved:
            self._sift_up(i, moved)

    def _sift_up(self, k: int, item: T) -> None:
        queue, compare = self._queue, self._compare
        while k > 0:
            parent = (k - 1) >> 1
            e = queue[parent]
            if compare(item, e) >= 0:
                break
            queue[k] = e
            k = parent
        queue[k] = item

    def _sift_down(self, k: int, item: T) -> None:
        queue, compare = self._queue, self._compare
        n = len(queue)
        half = n >> 1
        while k < half:
            child = 2 * k + 1
            c = queue[child]
            right = child + 1
            if right < n and compare(c, queue[right]) > 0:
                child = right
                c = queue[child]
            if compare(item, c) <= 0:
                break
            queue[k] = c
            k = child
        queue[k] = item
