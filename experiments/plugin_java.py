"""JVM assignors by class name: ``java:CLASS`` (with ``--classpath``) as a plugin program.

A ``java:`` plugin is a process plugin (:mod:`experiments.plugin_runner`) whose program is the
lab's assignor program, ``rebalancelab.peers.AssignorServer`` (``peers/java``, built by ``make
peers``), on a JVM whose classpath is the user's jars and folders first, then Kafka's release
that ``make peers`` built.  The program builds the class's input from each document as Kafka's
client or group coordinator builds it and times the assignor inside the JVM; which input depends on
the interface the class implements (client ``ConsumerPartitionAssignor``, KIP-848
``ConsumerGroupPartitionAssignor``, KIP-932 ``ShareGroupPartitionAssignor``, KIP-1071's
streams-group ``TaskAssignor``, KIP-924's Kafka Streams ``TaskAssignor``).  Details:
docs/gate-ci.md and the program's own comment.

A target is ``CLASS`` or ``CLASS:CLASSPATH`` (class names hold no colon; the classpath is a list
separated by ``os.pathsep`` of jars and folders, a folder meaning its classes and every jar in it).
``--classpath`` adds a classpath to every ``java:`` plugin of the command line that has none
(:func:`with_classpath`).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from problems import ProblemError

#: The lab's assignor program and where ``make peers`` builds it.
PROGRAM_CLASS = "rebalancelab.peers.AssignorServer"
PEERS_TARGET = Path(__file__).resolve().parents[1] / "peers" / "java" / "target"
PROGRAM_JAR = PEERS_TARGET / "kafka-peers-1.jar"
#: Kafka's release ``make peers`` built, and the libraries the program needs (Jackson among them).
LIBRARIES = PEERS_TARGET / "lib"
#: The JVM's options: a deep stack (Kafka's sticky assignors recurse), the parallel collector (as
#: the peers' JVM), and a heap, class space and code cache sized to run under the address-space
#: limit every plugin process gets (experiments.plugin_process.MEMORY_LIMIT_MB, 2 GiB), with
#: glibc's malloc arenas bounded (each thread's arena reserves 64 MiB of address space otherwise).
JVM_OPTIONS = (
    "-Xss16m",
    "-XX:+UseParallelGC",
    "-XX:ParallelGCThreads=2",
    "-Xmx1200m",
    "-XX:CompressedClassSpaceSize=64m",
    "-XX:MaxMetaspaceSize=160m",
    "-XX:ReservedCodeCacheSize=64m",
)
ENVIRONMENT = ("MALLOC_ARENA_MAX=2",)
_CLASS_NAME = re.compile(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*")


def split_target(rest: str) -> tuple[str, list[str]]:
    """``(class name, classpath entries)`` of a ``java:`` target's text after ``java:``."""
    name, _, path = rest.partition(":")
    if not _CLASS_NAME.fullmatch(name):
        raise ProblemError(
            "", f"java:{rest}: java: needs a class name, e.g. java:com.example.MyAssignor"
        )
    return name, [entry for entry in path.split(os.pathsep) if entry]


def classpath_entries(text: str, where: str = "--classpath") -> list[str]:
    """The entries of a classpath given on the command line, made absolute (Spark's workers run
    elsewhere); one that does not exist is a :class:`ProblemError` naming ``where``."""
    entries = []
    for entry in (e for e in text.split(os.pathsep) if e):
        path = Path(entry.removesuffix("*")).expanduser()
        if not path.exists():
            raise ProblemError(where, f"{entry} does not exist")
        entries.append(str(path.resolve()))
    if not entries:
        raise ProblemError(where, "names no jar or folder")
    return entries


def with_classpath(spec: str, classpath: str | None, where: str = "--classpath") -> str:
    """``spec`` with ``classpath`` added when it is a ``java:`` plugin without a classpath of its own."""
    if classpath is None:
        return spec
    head, equals, target = spec.partition("=")
    if not equals or ":" in head:
        head, target = "", spec
    if not target.startswith("java:") or ":" in target.removeprefix("java:"):
        return spec
    joined = os.pathsep.join(classpath_entries(classpath, where))
    return f"{head}{'=' if head else ''}{target}:{joined}"


def jvm_classpath(entries: list[str]) -> str:
    """The JVM's classpath: the program, the user's entries (a folder: its classes and its jars),
    then the built release's libraries."""
    parts = [str(PROGRAM_JAR)]
    for entry in entries:
        path = Path(entry)
        parts += [entry, str(path / "*")] if path.is_dir() else [entry]
    parts.append(str(LIBRARIES / "*"))
    return os.pathsep.join(parts)


def java_argv(rest: str) -> list[str]:
    """The command that serves the ``java:`` plugin ``rest`` (a :class:`ProblemError` when the
    program is not built, Java is missing or a classpath entry does not exist)."""
    name, entries = split_target(rest)
    if not PROGRAM_JAR.exists() or not LIBRARIES.is_dir():
        raise ProblemError("", f"java:{name}: {PROGRAM_JAR} is missing: run `make peers`")
    for entry in entries:
        if not Path(entry).exists():
            raise ProblemError("", f"java:{name}: classpath entry {entry} does not exist")
    java, env = shutil.which("java"), shutil.which("env")
    if java is None or env is None:
        raise ProblemError("", f"java:{name}: no java on PATH (Java 17+)")
    return [
        env,
        *ENVIRONMENT,
        java,
        *JVM_OPTIONS,
        "-cp",
        jvm_classpath(entries),
        PROGRAM_CLASS,
        name,
    ]
