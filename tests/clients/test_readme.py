"""The "Use it with a real cluster" commands of docs/live-clusters.md, run against the live KRaft cluster.

Every ``$ command`` of that section's code blocks runs in order (``$B`` is the test cluster's
address, ``$S`` its SASL_SSL listener's, ``$CA`` the certificate that listener presents;
``kafka`` is the README's own definition, Kafka's tools from the Maven-resolved release;
``rebalance-lab`` runs in this process; ``cat`` reads the file), exits 0 unless it prints an
``error:`` line (exit 2), and prints the lines the README shows under it.  The README's Python
block starts the live group ``shop`` (consumer ``east``, then ``west`` on rack ``r2`` once ``east``
owns every partition, as the README says).  What legitimately differs from run to run is
normalized on both sides before comparing: the address (``127.0.0.1:PORT``), kafka-python's
member ids' UUID suffixes, timings (``0.153 s``), the coordinator's order of members (JSON
``members`` lists are compared sorted by id), blank lines; a README line ``...`` stands for any
lines, a line ending in ``...`` for any line starting with the rest.  ``--verify`` is repeated
until Kafka reports the reassignment complete (up to 60 s), and so is a command after
``kafka-acls --add`` until it prints what the README shows: each broker applies the new ACLs from
the metadata log a moment after the tool returns.

Beyond the printed output: after the reassignment the replicas are where the plan says (order
included) and every message produced before is still readable.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import threading
import time
from pathlib import Path

import pytest

from support.kafka_support import run_cli
from support.kraft_cluster import JVM, ROOT

pytestmark = pytest.mark.kafka

PAGE = "docs/live-clusters.md"  # the page whose commands this test runs ("the README" below)
SECTION = "## Use it with a real cluster"
KAFKA = re.compile(r"""`(kafka\(\) \{ java -cp '([^']+)' "\$@"; \})`""")
_UUID = re.compile(r"-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_ADDRESS = re.compile(r"127\.0\.0\.1:[0-9]+")
_SECONDS = re.compile(r"\b[0-9]+\.[0-9]+ s\b")


def readme_blocks() -> list[tuple[str, str]]:
    """``(language, text)`` of every fenced code block of the README's cluster section."""
    text = (ROOT / PAGE).read_text()
    section = text[text.index(SECTION) :]
    ends = [i for i in (section.find("\n## ", 1), section.find("\n### ", 1)) if i > 0]
    section = section[: min(ends, default=len(section))]  # up to the next heading
    return re.findall(r"^```(\w*)\n(.*?)^```$", section, flags=re.M | re.S)


def steps(block: str) -> list[tuple[str, list[str]]]:
    """``(command, expected output lines)`` of every ``$ `` line of a shell block."""
    out: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        else:
            out[-1][1].append(line)
    return out


def _normal(line: str):
    """A printed line with what varies from run to run replaced; JSON as an object, ``members`` sorted."""
    line = _SECONDS.sub("T s", _UUID.sub("-UUID", _ADDRESS.sub("HOST:PORT", line.rstrip())))
    if line.startswith("{"):
        doc = json.loads(line)
        if isinstance(doc.get("members"), list):
            doc["members"] = sorted(doc["members"], key=lambda m: m["id"])
        return doc
    return line


def matches(expected: list[str], actual: list[str]) -> bool:
    """``actual`` lines are ``expected`` ones (normalized, blank lines dropped; ``...`` wildcards)."""
    want = [_normal(line) for line in expected if line.strip()]
    got = [_normal(line) for line in actual if line.strip()]

    def match(i: int, j: int) -> bool:
        if i == len(want):
            return j == len(got)
        if want[i] == "...":
            return any(match(i + 1, k) for k in range(j, len(got) + 1))
        if j == len(got):
            return False
        line = want[i]
        same = (
            got[j] == line
            or isinstance(line, str)
            and line.endswith("...")
            and isinstance(got[j], str)
            and got[j].startswith(line[:-3])
        )
        return same and match(i + 1, j + 1)

    return match(0, 0)


class Shop:
    """The README's live group: its Python block run for ``east``, then (rack ``r2``) for ``west``;
    each consumer polls in its own thread."""

    def __init__(self, code: str, bootstrap: str):
        self.code, self.bootstrap = code, bootstrap
        self.consumers: list = []
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []
        self.errors: list[BaseException] = []

    def start(self, name: str, rack: str) -> None:
        code = self.code.replace('"east"', f'"{name}"').replace('"r1"', f'"{rack}"')
        scope = {"B": self.bootstrap}
        exec(compile(code, "README.md", "exec"), scope)  # noqa: S102 - the README's own example
        consumer = scope["consumer"]
        self.consumers.append(consumer)

        def poll():
            try:
                while not self.stopping.is_set():
                    consumer.poll(timeout_ms=100)
            except BaseException as error:  # noqa: BLE001 - reported by wait()
                self.errors.append(error)

        thread = threading.Thread(target=poll, daemon=True)
        thread.start()
        self.threads.append(thread)

    def wait(self, sizes: list[int], seconds: float = 150) -> None:
        """Until the consumers (in start order) own ``sizes`` partitions and stay so for 1 s.

        kafka-python 3.0.12's group leader sometimes never reads its SyncGroup answer and comes
        back only when its session (the docs' consumers keep the default 45 s) expires and it
        joins again: the wait covers two such stalls.
        """
        deadline, since = time.monotonic() + seconds, None
        while time.monotonic() < deadline:
            assert not self.errors, self.errors
            owned = [len(c.assignment()) for c in self.consumers]
            if owned == sizes:
                since = since or time.monotonic()
                if time.monotonic() - since >= 1:
                    return
            else:
                since = None
            time.sleep(0.2)
        raise AssertionError(f"group shop: consumers own {owned} partitions, not {sizes}")

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(30)
        for consumer in self.consumers:
            consumer.close()


def _read_counts(bootstrap: str, topic: str, partitions: int) -> list[int]:
    """How many messages each partition of ``topic`` gives when read from the beginning."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, fetch_max_wait_ms=50
    )
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    ends = consumer.end_offsets(tps)
    counts = [0] * partitions
    deadline = time.monotonic() + 60
    while any(consumer.position(tp) < ends[tp] for tp in tps) and time.monotonic() < deadline:
        for tp, records in consumer.poll(timeout_ms=200).items():
            counts[tp.partition] += len(records)
    consumer.close()
    return counts


def test_readme_cluster_commands(kafka_cluster, admin, capsys, tmp_path, monkeypatch):
    server = kafka_cluster.bootstrap
    readme = (ROOT / PAGE).read_text()
    definition = KAFKA.search(readme)
    assert definition, "the README defines `kafka() { java -cp '...' \"$@\"; }`"
    jars = str(ROOT / definition.group(2))
    shell = (
        f"""kafka() {{ java {" ".join(JVM)} -cp '{jars}' "$@"; }}; B={server}; """
        f"S={kafka_cluster.secure_bootstrap}; CA={kafka_cluster.ca_file}; "
    )
    monkeypatch.chdir(tmp_path)
    blocks = readme_blocks()
    assert [language for language, _ in blocks] == ["", "", "python", "", "", ""]
    shop = Shop(blocks[2][1], server)
    variables = {"$B": server, "$S": kafka_cluster.secure_bootstrap}
    ran: list[str] = []
    differences: list[str] = []  # every command whose output differs, reported together
    settling = False  # after kafka-acls: the ACLs reach the brokers a moment later
    try:
        for language, block in blocks:
            if language == "python":
                shop.start("east", "r1")
                shop.wait([6])
                shop.start("west", "r2")
                shop.wait([3, 3])
                continue
            for command, expected in steps(block):
                settling = settling or "AclCommand" in command
                started = time.monotonic()
                deadline = started + 60
                while True:
                    status, printed = _run(command, shell, variables, capsys, tmp_path)
                    if (
                        matches(expected, printed)
                        or not ("--verify" in command or settling)
                        or time.monotonic() > deadline
                    ):
                        break
                    time.sleep(1)  # the reassignment or the ACLs are still on their way
                if status != (
                    2 if any(line.startswith("error:") for line in expected) else 0
                ) or not matches(expected, printed):
                    differences.append(
                        f"$ {command}\nexit status {status}; README:\n"
                        + "\n".join(expected)
                        + "\nprinted:\n"
                        + "\n".join(printed)
                    )
                ran.append(f"{time.monotonic() - started:5.1f} s  $ {command}")
    finally:
        shop.stop()
    assert not differences, "\n\n".join(differences) + "\n\nseconds per command:\n" + "\n".join(ran)
    assert sum(" $ kafka " in line or " $ rebalance-lab " in line for line in ran) >= 12

    plan = json.loads((tmp_path / "plan.json").read_text())
    placed = {
        p["partition_index"]: p["replica_nodes"]
        for p in admin.describe_topics(["orders"])[0]["partitions"]
    }
    assert placed == {entry["partition"]: entry["replicas"] for entry in plan["partitions"]}
    assert _read_counts(server, "orders", 6) == [100] * 6  # every message still readable


def _run(
    command: str, shell: str, variables: dict[str, str], capsys, folder: Path
) -> tuple[int, list[str]]:
    """Exit status and printed lines (stderr, then stdout unless redirected) of one README command
    (``variables``: ``$B`` and ``$S``, the cluster's addresses)."""
    if command.startswith("rebalance-lab "):
        for name, value in variables.items():
            command = command.replace(name, value)
        argv = shlex.split(command)[1:]
        target = None
        if ">" in argv:
            argv, target = argv[: argv.index(">")], argv[argv.index(">") + 1]
        status, out, err = run_cli(capsys, *argv)
        if target:
            (folder / target).write_text(out)
            out = ""
        return status, (err + out).splitlines()
    if command.startswith("cat "):
        return 0, (folder / command[4:]).read_text().splitlines()
    done = subprocess.run(
        ["bash", "-c", shell + command], capture_output=True, text=True, timeout=120, cwd=folder
    )
    return done.returncode, (done.stderr + done.stdout).splitlines()
