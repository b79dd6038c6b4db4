"""The line protocol every Python driver of the live client matrix speaks (peers/client_matrix.py).

``key=value`` options on the command line; commands on stdin (``subscribe a,b``, ``stop``), read
by a thread into a queue the consumer's loop drains between polls; one JSON line per event on
stdout, stamped with the machine's monotonic clock in milliseconds.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time


def options() -> dict[str, str]:
    """The ``key=value`` options of the command line."""
    return dict(arg.split("=", 1) for arg in sys.argv[1:])


def emit(event: str, partitions=(), generation: int | None = None, **extra) -> None:
    """One event line: ``t`` (ms, CLOCK_MONOTONIC), ``event``, ``partitions`` [[topic, p]...]."""
    doc = {
        "t": time.clock_gettime(time.CLOCK_MONOTONIC) * 1000.0,
        "event": event,
        "partitions": [[t, p] for t, p in partitions],
    }
    if generation is not None:
        doc["generation"] = generation
    doc.update(extra)
    sys.stdout.write(json.dumps(doc) + "\n")
    sys.stdout.flush()


def commands() -> queue.Queue[str]:
    """The stdin commands as they arrive (``stop`` also when stdin closes)."""
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in sys.stdin:
            lines.put(line.strip())
        lines.put("stop")

    threading.Thread(target=read, daemon=True).start()
    return lines
