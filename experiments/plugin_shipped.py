"""Foreign strategies shipped with the lab, by name: other clients' assignors as plugins.

Each name stands for a plugin target (:mod:`experiments.plugin_runner`), so ``--plugin NAME`` and
an experiment file's ``plugins = ["NAME", ...]`` run it beside the built-in strategies:

* franz-go's group balancers (``franz-go-sticky``, ``franz-go-cooperative-sticky``,
  ``franz-go-range``, ``franz-go-roundrobin``): ``peers/franz_go``'s program in its serve mode;
* Sarama's balance strategies (``sarama-range``, ``sarama-roundrobin``, ``sarama-sticky``,
  ``sarama-cooperative-sticky``): ``peers/sarama``'s program;
* KafkaJS's round robin (``kafkajs-roundrobin``): ``peers/kafkajs/assigner.js`` on Node;
* Kafka's own Java classes through ``java:`` (``kafka-range``, ``kafka-roundrobin``,
  ``kafka-sticky``, ``kafka-cooperative-sticky``: the client assignors; ``kafka-uniform``,
  ``kafka-server-range``: KIP-848's; ``kafka-simple``: KIP-932's), of the release ``make peers``
  built, or of another release as ``kafka-VERSION-ASSIGNOR`` (``kafka-4.0.2-uniform``) from the
  folder ``make kafka-release KAFKA_VERSION=VERSION`` fills.

Each program is pinned to one release (``peers/franz_go/go.mod``, ``peers/sarama/go.mod``,
``peers/kafkajs/package-lock.json``, ``KAFKA_VERSION``) and built by ``make peers``.  What each
builds from a document, and where it follows its client: the programs' own comments and
docs/strategies/foreign.md.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

from experiments.plugin_java import PEERS_TARGET
from problems import ProblemError

PEERS = Path(__file__).resolve().parents[1] / "peers"
FRANZ_GO = PEERS / "franz_go" / "franz-go-peer"
SARAMA = PEERS / "sarama" / "sarama-peer"
KAFKAJS = PEERS / "kafkajs" / "assigner.js"

#: Kafka's assignor classes by the name after ``kafka-``.
KAFKA_CLASSES = {
    "range": "org.apache.kafka.clients.consumer.RangeAssignor",
    "roundrobin": "org.apache.kafka.clients.consumer.RoundRobinAssignor",
    "sticky": "org.apache.kafka.clients.consumer.StickyAssignor",
    "cooperative-sticky": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
    "uniform": "org.apache.kafka.coordinator.group.assignor.UniformAssignor",
    "server-range": "org.apache.kafka.coordinator.group.assignor.RangeAssignor",
    "simple": "org.apache.kafka.coordinator.group.assignor.SimpleAssignor",
}
GO_BALANCERS = ("sticky", "cooperative-sticky", "range", "roundrobin")
_RELEASE = re.compile(r"kafka-(\d+\.\d+\.\d+)-(.+)")


def names() -> tuple[str, ...]:
    """Every shipped name (``kafka-VERSION-ASSIGNOR`` besides, for any fetched release)."""
    return (
        *(f"franz-go-{b}" for b in GO_BALANCERS),
        *(f"sarama-{b}" for b in GO_BALANCERS),
        "kafkajs-roundrobin",
        *(f"kafka-{a}" for a in KAFKA_CLASSES),
    )


def _program(path: Path, *args: str) -> str:
    if not path.exists():
        raise ProblemError("", f"{path} is missing: run `make peers`")
    return "exec:" + shlex.join([str(path), *args])


def target(name: str) -> str | None:
    """The plugin target of the shipped strategy ``name`` (``None``: no such name; a
    :class:`ProblemError` when its program is not built or its release not fetched)."""
    if name.startswith("franz-go-") and name[9:] in GO_BALANCERS:
        return _program(FRANZ_GO, "-serve", name[9:])
    if name.startswith("sarama-") and name[7:] in GO_BALANCERS:
        return _program(SARAMA, name[7:])
    if name == "kafkajs-roundrobin":
        node = shutil.which("node")
        if node is None:
            raise ProblemError("", "kafkajs-roundrobin needs Node (node) on PATH")
        if not (PEERS / "kafkajs" / "node_modules" / "kafkajs").is_dir():
            raise ProblemError("", "peers/kafkajs/node_modules is missing: run `make peers`")
        return "exec:" + shlex.join([node, str(KAFKAJS)])
    if name.startswith("kafka-") and name[6:] in KAFKA_CLASSES:
        return f"java:{KAFKA_CLASSES[name[6:]]}"
    release = _RELEASE.fullmatch(name)
    if release and release[2] in KAFKA_CLASSES:
        folder = PEERS_TARGET / f"kafka-{release[1]}"
        if not folder.is_dir():
            raise ProblemError(
                "", f"{folder} is missing: run `make kafka-release KAFKA_VERSION={release[1]}`"
            )
        return f"java:{KAFKA_CLASSES[release[2]]}:{folder}"
    return None
