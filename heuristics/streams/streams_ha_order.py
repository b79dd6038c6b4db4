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
  ``HashMap<TaskId, ...>`` orders (``heuristics.java.hash_table_order`` lays them out).
"""

from __future__ import annotations

import hashlib
import uuid
from typing import TypeVar

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
