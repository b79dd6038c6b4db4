"""A live 3-broker KRaft cluster on loopback, from the Maven-resolved Kafka release (test support).

``make peers`` resolves the release ``peers/java/pom.xml`` pins into ``peers/java/target/lib/``
(the broker ``kafka_2.13``, the tools, their runtime dependencies) and slf4j-simple into
``target/broker-lib/`` (the brokers' logging; ``slf4j-nop`` is left off their classpath).

Each node runs in combined mode (``process.roles=broker,controller``, a static quorum of the
three), with ``broker.rack`` ``r1``/``r2``/``r3``, free loopback ports, and its data, config and
log in a temporary folder.  Beside the PLAINTEXT listener each node has a SASL_SSL one
(``secure_bootstrap``: PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 for the users of :data:`USERS`,
the SCRAM ones created by the storage format; a self-signed certificate made by Java's
``keytool``, ``ca.pem`` for the clients) and the StandardAuthorizer (``admin`` and the PLAINTEXT
listeners' ``ANONYMOUS`` are super users, ``reader`` has only the ACLs a test grants).
Settings keep it light and quick for tests: a 256 MB heap per JVM, the serial collector,
C1 only, 4 partitions of ``__consumer_offsets`` with replication 1, no initial rebalance delay,
no topic auto-creation.

:meth:`KraftCluster.start` formats the storage (Kafka's ``StorageTool``), starts the nodes and waits
until the three brokers are registered and unfenced and the group coordinator answers
(kafka-python's admin client; that creates ``__consumer_offsets``); it stops whatever it started
when that fails.  :meth:`KraftCluster.tool` runs one of Kafka's command-line tools
(``kafka-reassign-partitions`` is ``org.apache.kafka.tools.reassign.ReassignPartitionsCommand``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET = ROOT / "peers" / "java" / "target"
#: The JVM options of every node and tool: small heap, quick start-up.
JVM = [
    "-Xmx256m",
    "-Xms64m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Djava.awt.headless=true",
]
RACKS = ("r1", "r2", "r3")
#: The SASL users of the SASL_SSL listener, ``{name: password}``, each for PLAIN, SCRAM-SHA-256 and
#: SCRAM-SHA-512: ``admin`` is a super user, ``reader`` may do only what ACLs grant it.
USERS = {"admin": "admin-secret", "reader": "reader-secret"}
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
#: The brokers' PKCS12 keystore password (their self-signed certificate is ``ca.pem``).
STORE_PASSWORD = "broker-store-secret"
#: Seconds to wait for the three brokers (measured: 28-72 s on 2 cores shared with other work).
READY_TIMEOUT = 150.0


def classpath() -> str:
    """The release's jars, with slf4j-simple instead of slf4j-nop."""
    jars = sorted(p for p in (TARGET / "lib").glob("*.jar") if not p.name.startswith("slf4j-nop"))
    logging = sorted((TARGET / "broker-lib").glob("*.jar"))
    if not any(p.name.startswith("kafka_2.13-") for p in jars) or not logging:
        raise RuntimeError(f"the Kafka release is not in {TARGET}: run `make peers`")
    return os.pathsep.join(str(p) for p in [*logging, *jars])


def free_ports(count: int) -> list[int]:
    """``count`` distinct free loopback ports (bound together, then released)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


class KraftCluster:
    """Three combined broker/controller nodes, ids 1-3 on racks :data:`RACKS`."""

    def __init__(self, folder: Path):
        self.folder = Path(folder).absolute()
        self.ids = (1, 2, 3)
        self.racks = dict(zip(self.ids, RACKS))
        self.classpath = classpath()
        self.processes: dict[int, subprocess.Popen] = {}
        self.ports: dict[int, int] = {}
        self.secure_ports: dict[int, int] = {}
        self.start_seconds: float | None = None

    @property
    def bootstrap(self) -> str:
        """``host:port`` of broker 1 (any broker bootstraps a client)."""
        return f"127.0.0.1:{self.ports[1]}"

    @property
    def secure_bootstrap(self) -> str:
        """``host:port`` of broker 1's SASL_SSL listener (users :data:`USERS`, CA :attr:`ca_file`)."""
        return f"127.0.0.1:{self.secure_ports[1]}"

    @property
    def ca_file(self) -> Path:
        """The PEM certificate the SASL_SSL listener presents (self-signed: trust it)."""
        return self.folder / "ca.pem"

    def client_properties(self, user: str = "admin", mechanism: str = "SCRAM-SHA-512") -> Path:
        """A Kafka client properties file for the SASL_SSL listener as ``user`` (written once)."""
        module = "plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule"
        path = self.folder / f"{user}-{mechanism.lower()}.properties"
        path.write_text(
            "security.protocol=SASL_SSL\n"
            f"sasl.mechanism={mechanism}\n"
            "ssl.truststore.type=PEM\n"
            f"ssl.truststore.location={self.ca_file}\n"
            f"sasl.jaas.config=org.apache.kafka.common.security.{module} required "
            f'username="{user}" password="{USERS[user]}";\n'
        )
        return path

    def _keystore(self) -> None:
        """The brokers' key and self-signed certificate (127.0.0.1, localhost), by Java's keytool:
        ``broker.p12`` for the brokers, its certificate as ``ca.pem`` for the clients."""
        store = ["-keystore", "broker.p12", "-storetype", "PKCS12", "-storepass", STORE_PASSWORD]
        for args in (
            ["-genkeypair", "-alias", "broker", "-keyalg", "EC", "-groupname", "secp256r1"]
            + ["-dname", "CN=localhost", "-ext", "SAN=ip:127.0.0.1,dns:localhost"]
            + ["-validity", "7", *store],
            ["-exportcert", "-rfc", "-alias", "broker", "-file", "ca.pem", *store],
        ):
            done = subprocess.run(
                ["keytool", *args], capture_output=True, text=True, cwd=self.folder, timeout=120
            )
            if done.returncode != 0:
                raise RuntimeError(f"keytool {args[0]} failed: {done.stderr or done.stdout}")

    def _config(self, node: int, controllers: dict[int, int]) -> Path:
        voters = ",".join(f"{i}@127.0.0.1:{port}" for i, port in controllers.items())
        plain = " ".join(f'user_{user}="{password}"' for user, password in USERS.items())
        secure = {
            "listener.name.secure.sasl.enabled.mechanisms": ",".join(MECHANISMS),
            "listener.name.secure.plain.sasl.jaas.config": (
                f"org.apache.kafka.common.security.plain.PlainLoginModule required {plain};"
            ),
            **{
                f"listener.name.secure.{m.lower()}.sasl.jaas.config": (
                    "org.apache.kafka.common.security.scram.ScramLoginModule required;"
                )
                for m in MECHANISMS[1:]
            },
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": self.folder / "broker.p12",
            "ssl.keystore.password": STORE_PASSWORD,
            "ssl.key.password": STORE_PASSWORD,
            # ACLs apply to the SASL users; the PLAINTEXT listeners' ANONYMOUS (clients, brokers,
            # controllers) is a super user, as is "admin".
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": "User:ANONYMOUS;User:admin",
        }
        settings = {
            "process.roles": "broker,controller",
            "node.id": node,
            "controller.quorum.voters": voters,
            "listeners": f"PLAINTEXT://127.0.0.1:{self.ports[node]},"
            f"SECURE://127.0.0.1:{self.secure_ports[node]},"
            f"CONTROLLER://127.0.0.1:{controllers[node]}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.ports[node]},"
            f"SECURE://127.0.0.1:{self.secure_ports[node]}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SECURE:SASL_SSL,CONTROLLER:PLAINTEXT",
            **secure,
            "log.dirs": self.folder / f"data-{node}",
            "broker.rack": self.racks[node],
            "num.partitions": 1,
            "auto.create.topics.enable": "false",
            "offsets.topic.replication.factor": 1,
            "offsets.topic.num.partitions": 4,
            "transaction.state.log.replication.factor": 1,
            "transaction.state.log.min.isr": 1,
            "share.coordinator.state.topic.replication.factor": 1,
            "share.coordinator.state.topic.min.isr": 1,
            "group.initial.rebalance.delay.ms": 0,
            "group.min.session.timeout.ms": 1000,
            # The consumer protocol's (KIP-848) session and heartbeat, set by the broker: short,
            # so that a crashed member is noticed and reconciliation moves in seconds.
            "group.consumer.min.session.timeout.ms": 1000,
            "group.consumer.session.timeout.ms": 6000,
            "group.consumer.min.heartbeat.interval.ms": 500,
            "group.consumer.heartbeat.interval.ms": 1000,
            "num.network.threads": 2,
            "num.io.threads": 2,
            "log.flush.interval.messages": 1 << 30,
            # The log cleaner's offset map is 128 MiB by default, half the test JVM's heap: a
            # broker then dies at start (OutOfMemoryError in LogCleaner) when the heap is busy.
            # The test cluster's compacted topics are tiny.
            "log.cleaner.dedupe.buffer.size": 8 << 20,
        }
        path = self.folder / f"node-{node}.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        return path

    def _java(self, main: str, *args: str, log: Path | None = None, **kwargs) -> subprocess.Popen:
        out = open(log, "ab") if log else subprocess.PIPE
        command = [
            "java",
            *JVM,
            "-Dorg.slf4j.simpleLogger.showDateTime=true",
            "-cp",
            self.classpath,
            main,
            *args,
        ]
        try:
            return subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.folder,
                **kwargs,
            )
        finally:
            if log:
                out.close()

    def start(self) -> KraftCluster:
        """Format, start and wait for the three brokers; stops them again when that fails."""
        started = time.perf_counter()
        self.folder.mkdir(parents=True, exist_ok=True)
        ports = free_ports(3 * len(self.ids))
        count = len(self.ids)
        self.ports = dict(zip(self.ids, ports))
        controllers = dict(zip(self.ids, ports[count : 2 * count]))
        self.secure_ports = dict(zip(self.ids, ports[2 * count :]))
        configs = {node: self._config(node, controllers) for node in self.ids}
        cluster_id = _kafka_uuid()
        scram = [  # the SCRAM users, written into the metadata log by the format
            arg
            for m in MECHANISMS[1:]
            for user, password in USERS.items()
            for arg in ("--add-scram", f"{m}=[name={user},password={password}]")
        ]
        formats = [
            self._java(
                "kafka.tools.StorageTool",
                "format",
                "-t",
                cluster_id,
                "-c",
                str(configs[node]),
                *scram,
                log=self.folder / f"format-{node}.log",
            )
            for node in self.ids
        ]
        try:
            self._keystore()  # while the storage is formatted
            for node, process in zip(self.ids, formats):
                if process.wait(timeout=120) != 0:
                    raise RuntimeError(
                        f"formatting node {node} failed: {self._tail(f'format-{node}.log')}"
                    )
            for node in self.ids:
                self.processes[node] = self._java(
                    "kafka.Kafka", str(configs[node]), log=self.folder / f"node-{node}.log"
                )
            self._wait_ready(started + READY_TIMEOUT)
        except BaseException:
            for process in formats:
                if process.poll() is None:
                    process.kill()
            self.stop()
            raise
        self.start_seconds = time.perf_counter() - started
        return self

    def _wait_ready(self, deadline: float) -> None:
        from kafka.admin import KafkaAdminClient
        from kafka.errors import KafkaError

        last = "no answer"
        while time.perf_counter() < deadline:
            for node, process in self.processes.items():
                if process.poll() is not None:
                    raise RuntimeError(
                        f"node {node} exited ({process.returncode}): {self._tail(f'node-{node}.log')}"
                    )
            try:
                with socket.create_connection(("127.0.0.1", self.ports[1]), timeout=1):
                    pass
                admin = KafkaAdminClient(
                    bootstrap_servers=self.bootstrap,
                    request_timeout_ms=3000,
                    bootstrap_timeout_ms=3000,
                )
                try:
                    brokers = admin.describe_cluster()["brokers"]
                    live = sorted(b["broker_id"] for b in brokers if not b.get("is_fenced"))
                    if live == list(self.ids):
                        # The group coordinator answers once __consumer_offsets exists: created
                        # here.
                        admin.describe_groups(["rebalance-lab-warm-up"])
                        return
                    last = f"live brokers {live}"
                finally:
                    admin.close()
            except (OSError, KafkaError) as error:
                last = f"{type(error).__name__}: {error}"
            time.sleep(0.5)
        raise RuntimeError(
            f"the KRaft cluster was not ready in {READY_TIMEOUT:g} s ({last}); logs in {self.folder}"
        )

    def _tail(self, name: str, lines: int = 5) -> str:
        try:
            return " | ".join(
                (self.folder / name).read_text(errors="replace").splitlines()[-lines:]
            )
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        """Stop every node (SIGTERM, then SIGKILL after 5 s: the data is thrown away)."""
        for process in self.processes.values():
            if process.poll() is None:
                process.terminate()
        for process in self.processes.values():
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.processes.clear()

    def stop_node(self, node: int) -> None:
        """Stop one node (SIGTERM, SIGKILL after 30 s); :meth:`start_node` starts it again."""
        process = self.processes[node]
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def start_node(self, node: int, timeout: float = READY_TIMEOUT) -> None:
        """Start a stopped node on its data and wait until the three brokers are live again."""
        config = self.folder / f"node-{node}.properties"
        self.processes[node] = self._java(
            "kafka.Kafka", str(config), log=self.folder / f"node-{node}.log"
        )
        self._wait_ready(time.perf_counter() + timeout)

    def tool(self, main: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        """Run one of Kafka's command-line tools (class ``main``) against this cluster; output as text."""
        command = [
            "java",
            *JVM,
            "-cp",
            self.classpath,
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            main,
            *args,
        ]
        return subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, cwd=self.folder
        )


def _kafka_uuid() -> str:
    """A random cluster id in Kafka's form (base64url of 16 bytes, no padding)."""
    import base64

    while True:  # Kafka's own ids never start with "-" (it would read as an option)
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def main() -> None:
    """``python tests/support/kraft_cluster.py [FOLDER]``: start the test cluster, print its
    addresses, wait for Ctrl-C."""
    import signal
    import sys
    import tempfile

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stop the brokers on SIGTERM too
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="kraft-"))
    cluster = KraftCluster(folder).start()
    print(
        f"KRaft cluster: brokers 1-3 on racks {', '.join(RACKS)}; --bootstrap-server {cluster.bootstrap} "
        f"(started in {cluster.start_seconds:.0f} s; logs in {folder}); SASL_SSL: "
        f"--bootstrap-server {cluster.secure_bootstrap}, certificate {cluster.ca_file}, users "
        f"{', '.join(f'{u}/{p}' for u, p in USERS.items())}; Ctrl-C stops it",
        flush=True,
    )
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
