"""A plugin's child process: one request line in, one answer line out, each under a time limit.

A :class:`PluginProcess` starts a program (``argv``), greets it with the describe request of the
plugin protocol (docs/plugins.md) and then sends one request per call, reading one answer line
back within the call's time limit.  The program runs in its own session, with an address-space
limit (``RLIMIT_AS``) and the parent's death signal (it is killed when its parent dies), and its
stderr is appended to a log file.  Whatever goes wrong is a :class:`PluginFailure` naming what
happened: the program could not start, exited or was killed by a signal (the last line of its
stderr quoted), did not answer within the limit (it is killed), or wrote a line that is not a
JSON object.  After a failure the process is gone and the next call starts a new one.  Reading
and writing never block past the deadline: a program that does not read its request is a
program that did not answer in time.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fcntl
import os
import resource
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

#: The describe request, the first line a plugin program reads after it starts.
DESCRIBE = b'{"describe":true}'
#: Address-space limit of a plugin's process (``RLIMIT_AS``), in MiB.
MEMORY_LIMIT_MB = 2048
#: Seconds a program has to start and answer the describe request.
START_TIME_LIMIT = 60.0
#: The longest answer line read (bytes); a longer one is garbage.
MAX_ANSWER_BYTES = 256 * 1024 * 1024
#: Seconds a program has to exit after its stdin is closed before it is killed.
EXIT_GRACE = 1.0
_CHUNK = 1 << 20
#: The pipes' capacity asked for (Linux's F_SETPIPE_SZ, up to /proc/sys/fs/pipe-max-size, 1 MiB by
#: default): a large request or answer crosses in one or two hand-overs between the processes, not
#: one per 64 KiB.
_PIPE_BYTES = 1 << 20
_F_SETPIPE_SZ = 1031
_PR_SET_PDEATHSIG = 1


class PluginFailure(Exception):
    """A call that got no answer line: ``kind`` is ``start``, ``exit``, ``signal``, ``timeout`` or
    ``garbage``; ``detail`` says the rest (an exit status, the stderr's last line, the line read)."""

    def __init__(self, kind: str, detail: str):
        self.kind = kind
        self.detail = detail
        super().__init__(f"{kind}: {detail}")


def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl`` (looked up once, before any fork), or ``None`` where there is none."""
    name = ctypes.util.find_library("c")
    return None if name is None else getattr(ctypes.CDLL(name, use_errno=True), "prctl", None)


_PRCTL = _prctl()


def _child_setup(memory_bytes: int | None) -> Callable[[], None]:
    """What runs in the child between fork and exec: the memory limit and the death signal."""

    def setup() -> None:
        if memory_bytes is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        if _PRCTL is not None:
            _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)

    return setup


def last_line(path: Path | None, limit: int = 4096) -> str:
    """The last non-empty line of the log at ``path`` (at most ``limit`` bytes read), or ``""``."""
    if path is None:
        return ""
    try:
        with open(path, "rb") as log:
            log.seek(0, os.SEEK_END)
            size = log.tell()
            log.seek(max(0, size - limit))
            tail = log.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    if not lines or lines[-1].startswith(_HEADER):
        return ""
    return lines[-1][:200]


_HEADER = "--- rebalance-lab:"


@dataclass
class PluginProcess:
    """A long-lived plugin program, started on the first call and after every failure.

    Parameters
    ----------
    name
        The plugin's name (in messages and the log's header lines).
    argv
        The program and its arguments.
    log
        File the program's stderr is appended to (``None``: this process's stderr).
    memory_mb
        Address-space limit of the program (``None``: none).
    env
        The program's environment (``None``: this process's).
    """

    name: str
    argv: list[str]
    log: Path | None = None
    memory_mb: int | None = MEMORY_LIMIT_MB
    env: dict[str, str] | None = None
    #: What the program answered to the describe request when it last started.
    description: dict[str, Any] = field(default_factory=dict)
    #: How many times the program was started.
    starts: int = 0
    #: Why the program is not running (written in the log when it starts again).
    stopped_because: str = ""
    #: Starts in a row that failed before the describe answer (kept by the caller).
    start_failures: int = 0
    _process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _buffer: bytearray = field(default_factory=bytearray, repr=False)
    _log_file: IO[bytes] | None = field(default=None, repr=False)
    _selector: selectors.BaseSelector | None = field(default=None, repr=False)

    # ------------------------------------------------------------- life cycle
    @property
    def pid(self) -> int | None:
        """The program's process id while it runs."""
        return None if self._process is None else self._process.pid

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self, why: str = "") -> dict[str, Any]:
        """Start the program and exchange the describe request; its answer (a JSON object)."""
        self.stop()
        stderr: IO[bytes] | None = None
        if self.log is not None:
            try:
                self.log.parent.mkdir(parents=True, exist_ok=True)
                self._log_file = stderr = open(self.log, "ab", buffering=0)
            except OSError:  # a folder this machine cannot write (a cluster's driver's)
                self.log = None
        if stderr is not None:
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            what = "restarted" if self.starts else "started"
            note = f" ({why})" if why else ""
            stderr.write(
                f"{_HEADER} {self.name}: {' '.join(self.argv)} {what}{note} {stamp}\n".encode()
            )
        memory = None if self.memory_mb is None else self.memory_mb * 1024 * 1024
        try:
            self._process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=self.env,
                start_new_session=True,
                preexec_fn=_child_setup(memory),  # noqa: PLW1509 (setrlimit and prctl only)
                bufsize=0,
            )
        except OSError as error:
            self._release()
            raise PluginFailure("start", f"cannot run {self.argv[0]!r}: {error.strerror}") from None
        self.starts += 1
        self._buffer.clear()
        for stream in (self._process.stdin, self._process.stdout):
            assert stream is not None
            os.set_blocking(stream.fileno(), False)
            try:
                fcntl.fcntl(
                    stream.fileno(), getattr(fcntl, "F_SETPIPE_SZ", _F_SETPIPE_SZ), _PIPE_BYTES
                )
            except OSError:  # another system, or a lower limit: the default capacity
                pass
        self._selector = selectors.DefaultSelector()
        assert self._process.stdout is not None
        self._selector.register(self._process.stdout, selectors.EVENT_READ)
        line = self.exchange(DESCRIBE, START_TIME_LIMIT, starting=True)
        try:
            described = orjson.loads(line)
        except orjson.JSONDecodeError:
            described = None
        if not isinstance(described, dict):
            self.stop()
            raise PluginFailure("garbage", f"answered the describe request with {_shown(line)}")
        self.description = described
        return described

    def stop(self) -> None:
        """Close the program's stdin, give it :data:`EXIT_GRACE` seconds to exit, then kill it."""
        process, self._process = self._process, None
        if process is not None:
            try:
                if process.stdin is not None:
                    process.stdin.close()
            except OSError:
                pass
            try:
                process.wait(EXIT_GRACE)
            except subprocess.TimeoutExpired:
                _kill(process)
            if process.stdout is not None:
                process.stdout.close()
        self._release()

    def kill(self) -> None:
        """Kill the program (and everything in its session) at once."""
        process, self._process = self._process, None
        if process is not None:
            _kill(process)
            for stream in (process.stdin, process.stdout):
                try:
                    if stream is not None:
                        stream.close()
                except OSError:
                    pass
        self._release()

    def _release(self) -> None:
        if self._selector is not None:
            self._selector.close()
            self._selector = None
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None

    # ------------------------------------------------------------------ calls
    def exchange(self, request: bytes, time_limit: float, starting: bool = False) -> bytes:
        """Write ``request`` and a newline, read one line back within ``time_limit`` seconds."""
        process = self._process
        assert process is not None and process.stdin is not None and process.stdout is not None
        deadline = time.monotonic() + time_limit
        self._discard_unread()
        pending = self._write(memoryview(request + b"\n"))
        selector = self._selector
        assert selector is not None
        if pending:
            selector.register(process.stdin, selectors.EVENT_WRITE)
        try:
            while True:
                newline = self._buffer.find(b"\n") if not pending else -1
                if newline >= 0:
                    line = bytes(self._buffer[:newline])
                    del self._buffer[: newline + 1]
                    return line.rstrip(b"\r")
                if len(self._buffer) > MAX_ANSWER_BYTES:
                    self.kill()
                    raise PluginFailure(
                        "garbage", f"wrote more than {MAX_ANSWER_BYTES} bytes without a newline"
                    )
                left = deadline - time.monotonic()
                if left <= 0:
                    self.kill()
                    what = "start and answer the describe request" if starting else "answer"
                    raise PluginFailure(
                        "timeout", f"did not {what} within {time_limit:g} s; killed"
                    )
                for key, _ in selector.select(left):
                    if key.fileobj is process.stdin:
                        pending = self._write(pending)
                        if not pending:
                            selector.unregister(process.stdin)
                    else:
                        try:
                            chunk = os.read(process.stdout.fileno(), _CHUNK)
                        except BlockingIOError:
                            continue
                        if not chunk:
                            raise self._ended()
                        self._buffer += chunk
        finally:
            if pending and self._selector is not None and self._process is process:
                self._selector.unregister(process.stdin)

    def _write(self, pending: memoryview) -> memoryview:
        """Write what the pipe takes now of ``pending``; what is left."""
        process = self._process
        assert process is not None and process.stdin is not None
        while pending:
            try:
                sent = os.write(process.stdin.fileno(), pending[:_CHUNK])
            except BrokenPipeError:
                raise self._ended() from None
            except BlockingIOError:
                break
            pending = pending[sent:]
        return pending

    def _discard_unread(self) -> None:
        """Drop what the program wrote after its last answer (it answers one line per request)."""
        process = self._process
        assert process is not None and process.stdout is not None
        extra = len(self._buffer)
        self._buffer.clear()
        while True:
            try:
                chunk = os.read(process.stdout.fileno(), _CHUNK)
            except BlockingIOError:
                break
            if not chunk:
                break
            extra += len(chunk)
        if extra and self._log_file is not None:
            self._log_file.write(
                f"{_HEADER} {extra} bytes written to stdout after an answer were dropped\n".encode()
            )

    def _ended(self) -> PluginFailure:
        """The failure of a program whose stdout closed (or stdin broke): how it exited."""
        process = self._process
        assert process is not None
        try:
            code = process.wait(EXIT_GRACE)
        except subprocess.TimeoutExpired:
            self.kill()
            return PluginFailure("exit", "closed its stdout; killed")
        self._process = None
        for stream in (process.stdin, process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        said = last_line(self.log)
        self._release()
        said = f": {said}" if said else ""
        if code < 0:
            name = _signal_name(-code)
            return PluginFailure("signal", f"killed by {name}{said}")
        return PluginFailure("exit", f"exited with status {code}{said}")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Kill ``process``'s session (its process group, led by it: not yet reaped) and reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError as error:
        if error.errno != errno.ESRCH:
            raise
    process.wait()


def _shown(line: bytes, limit: int = 80) -> str:
    text = line.decode("utf-8", errors="replace")
    return repr(text[:limit] + ("..." if len(text) > limit else ""))
