"""Java's orders where Kafka Streams' client-side task assignors depend on them.

Kafka Streams names a client (a process) by a ``java.util.UUID`` (its ``ProcessId``) and keeps
clients in ``TreeMap``s ordered by that UUID, tasks in ``TreeSet``s ordered by ``TaskId``
(subtopology, then partition), clients waiting for a task in ``java.util.PriorityQueue``s, and a
few things in ``HashMap``s / ``HashSet``s whose iteration order follows the keys' hash codes.  The
assignors' output depends on all of these, so this module reproduces them:

* :func:`process_uuid`: a process's UUID.  A process named by a UUID string is that UUID; any
  other name is ``UUID.nameUUIDFromBytes`` of its UTF-8 bytes (an MD5 name-based UUID), which
  the Java peer computes the same way.  Clients are then ordered as ``UUID.compareTo`` orders them
  (the two halves compared as *signed* 64-bit numbers), not by name.
* :class:`JavaPriorityQueue`: OpenJDK's binary heap (``siftUp``/``siftDown``/``removeAt``) with a
  comparator evaluated at every comparison, as Java's is: Kafka changes a client's load while the
  client sits in the queue, and ties of its task-movement queue are broken by the heap's layout.
* :func:`task_hash`: ``TaskId.hashCode`` (``Objects.hash(subtopology, partition, null)``), for the
  ``HashMap<TaskId, ...>`` orders (``heuristics.kafka_orders.hash_table_order`` lays them out).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T")

_MASK64 = (1 << 64) - 1


def _signed64(value: int) -> int:
    value &= _MASK64
    return value - (1 << 64) if value >> 63 else value


def _signed32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >> 31 else value


def process_uuid(name: str) -> tuple[int, int]:
    """The ``(mostSigBits, leastSigBits)`` of a process's ``java.util.UUID`` (signed 64-bit each)."""
    try:
        raw = uuid.UUID(name).bytes
    except ValueError:
        digest = bytearray(hashlib.md5(name.encode("utf-8")).digest())
        digest[6] = (digest[6] & 0x0F) | 0x30  # version 3
        digest[8] = (digest[8] & 0x3F) | 0x80  # IETF variant
        raw = bytes(digest)
    return (
        _signed64(int.from_bytes(raw[:8], "big")),
        _signed64(int.from_bytes(raw[8:], "big")),
    )


def uuid_text(msb: int, lsb: int) -> str:
    """``UUID.toString`` of ``(msb, lsb)``."""
    return str(uuid.UUID(int=((msb & _MASK64) << 64) | (lsb & _MASK64)))


def uuid_hash(msb: int, lsb: int) -> int:
    """``UUID.hashCode`` (signed 32-bit)."""
    hilo = (msb ^ lsb) & _MASK64
    return _signed32((hilo >> 32) ^ hilo)


def task_hash(subtopology: int, partition: int) -> int:
    """``TaskId.hashCode`` of a task without a named topology (signed 32-bit)."""
    return _signed32(31 * (31 * (31 + subtopology) + partition))


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
