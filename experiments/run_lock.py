"""One writer per run: an exclusive lock on a run's results folder, and writable output checks.

Two ``compare`` processes writing the same run (same ``--out`` and
``--run-id``) would each solve the scenarios the other has not written yet and
duplicate their rows (measured: 49 of 98 rows written twice).  The writer holds an
``flock`` on ``<run folder>/.lock`` for the whole run; a second writer is
refused at once (:class:`problems.ProblemError`, exit 2) and nothing is solved.
The kernel drops the lock when its holder exits, however it exits (``kill -9``
included), so a killed run resumes without clearing anything by hand.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from problems import ProblemError

LOCK_NAME = ".lock"


def check_writable(folder: Path) -> None:
    """Create ``folder`` if needed and prove a file can be written there, or raise :class:`ProblemError`."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-check-"):
            pass
    except OSError as error:
        raise ProblemError(
            "", f"cannot write there ({error.strerror or error})", str(folder)
        ) from None


@contextmanager
def hold(folder: Path) -> Iterator[None]:
    """Hold the run folder's lock for the ``with`` block; :class:`ProblemError` when another process holds it."""
    check_writable(folder)
    path = Path(folder) / LOCK_NAME
    handle = open(path, "a+")
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise ProblemError(
                "run_id",
                f"is being written by {holder}; wait for it or pass another --run-id",
                str(folder),
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"process {os.getpid()}")
        handle.flush()
        yield
    finally:
        handle.close()
