"""The one Spark session factory.

Details: docs/harness.md.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import sys
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext, suppress
from typing import TYPE_CHECKING, TypeAlias

from problems import ProblemError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.connect.client import DefaultChannelBuilder
    from pyspark.sql.connect.session import SparkSession as ConnectSession

#: A session on local Spark or a cluster, or on a Spark Connect server.
Session: TypeAlias = "SparkSession | ConnectSession"

MASTER_VARIABLE = "REBALANCE_LAB_SPARK_MASTER"
#: A master URL with this scheme is a Spark Connect server.
CONNECT_SCHEME = "sc://"
#: A standalone master's URL scheme.
STANDALONE_SCHEME = "spark://"
#: Seconds to wait for a Spark Connect server or a standalone master to answer (as for Kafka).
ENDPOINT_TIMEOUT = 10.0
#: Retries of a Spark Connect request whose server is unavailable (backoff 0.05 s x 4^k: about 17 s
#: in all, where Spark's default of 15 waits about 10 minutes).
CONNECT_RETRIES = 5


def quiet_pyspark_warnings() -> None:
    """Ignore the pandas deprecation warnings that PySpark's own modules raise."""
    for category in (FutureWarning, DeprecationWarning):
        warnings.filterwarnings("ignore", category=category, module=r"pyspark(\.|$)")


def spark_session(
    master: str | None = None, app_name: str = "rebalance-lab", **config: str
) -> Session:
    """Get (or create) the Spark session.

    Parameters
    ----------
    master
        Spark master URL, e.g. ``local[2]`` or ``spark://host:7077``.
    app_name
        The application name shown in the Spark UI.
    **config
        Extra Spark settings (``spark.sql.shuffle.partitions="4"``, ...), with
        dots written as given.  Over Spark Connect (``sc://``) the server's own
        settings apply: ``app_name`` and ``config`` are not sent.

    Returns
    -------
    pyspark.sql.SparkSession
    """
    quiet_pyspark_warnings()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    master = resolved_master(master)
    if master is not None and master.startswith(CONNECT_SCHEME):
        return _connect_session(check_connect(master))
    launched_by_spark_submit = "PYSPARK_GATEWAY_PORT" in os.environ
    if master is None and not launched_by_spark_submit:
        master = "local[*]"
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    builder = (
        builder.config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.executorEnv.PYSPARK_PYTHON", os.environ["PYSPARK_PYTHON"])
    )
    if master is not None and master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = builder.config("spark.sql.shuffle.partitions", "4").config(
            "spark.driver.host", "127.0.0.1"
        )
    for key, value in config.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def resolved_master(master: str | None) -> str | None:
    """The master a session is built for: ``master``, else ``$REBALANCE_LAB_SPARK_MASTER`` (``None``:
    ``spark-submit``'s or ``local[*]``)."""
    return master or os.environ.get(MASTER_VARIABLE)


def _endpoint_error(master: str, message: str) -> ProblemError:
    return ProblemError("--master", message, master)


def check_connect(master: str, timeout: float | None = None) -> DefaultChannelBuilder:
    """The channel builder of the Spark Connect server ``master`` once it answered a request (its
    Spark version) within ``timeout`` seconds (default :data:`ENDPOINT_TIMEOUT`); its session id is
    the one the session then uses (so the request opens no second session on the server).

    Raises
    ------
    ProblemError
        A malformed URL, or no server answered in time (nothing listening, a listener that does not
        answer, a server that is no Spark Connect server).
    """
    import grpc
    from pyspark.errors import PySparkException
    from pyspark.sql.connect.client import DefaultChannelBuilder
    from pyspark.sql.connect.proto import base_pb2, base_pb2_grpc

    timeout = ENDPOINT_TIMEOUT if timeout is None else timeout
    try:
        builder = DefaultChannelBuilder(master)
        session_id = builder.session_id
        if session_id is None:
            session_id = str(uuid.uuid4())
            builder.set("session_id", session_id)
        channel = builder.toChannel()
    except (PySparkException, ValueError) as error:
        raise _endpoint_error(master, f"not a Spark Connect URL ({first_line(error)})") from None
    request = base_pb2.AnalyzePlanRequest(
        session_id=session_id, spark_version=base_pb2.AnalyzePlanRequest.SparkVersion()
    )
    request.user_context.user_id = (
        builder.userId or os.getenv("SPARK_USER", os.getenv("USER", "")) or ""
    )
    try:
        # grpc's generated service stubs carry no type information
        stub = base_pb2_grpc.SparkConnectServiceStub(channel)  # type: ignore[no-untyped-call]
        stub.AnalyzePlan(request, timeout=timeout, metadata=list(builder.metadata()))
    except grpc.RpcError as error:
        code = error.code().name if hasattr(error, "code") else type(error).__name__
        details = first_line(error.details() if hasattr(error, "details") else error)
        raise _endpoint_error(
            master,
            f"no Spark Connect server answered within {timeout:g} s ({code}: {details})",
        ) from None
    finally:
        channel.close()
    return builder


def _connect_session(builder: DefaultChannelBuilder) -> ConnectSession:
    """A Spark Connect session over ``builder`` (:func:`check_connect`), retrying a lost server
    :data:`CONNECT_RETRIES` times."""
    from pyspark.sql.connect.client.retries import DefaultPolicy
    from pyspark.sql.connect.session import SparkSession

    session = (
        SparkSession.builder.channelBuilder(builder)
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    session.client.set_retry_policies([DefaultPolicy(max_retries=CONNECT_RETRIES)])
    return session


def _standalone_addresses(master: str) -> list[tuple[str, int]]:
    """The (host, port) of each master of ``spark://HOST:PORT[,HOST:PORT...]`` (none when malformed:
    Spark names that)."""
    addresses = []
    for address in master.removeprefix(STANDALONE_SCHEME).split(","):
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            return []
        addresses.append((host.strip("[]"), int(port)))
    return addresses


def check_master(master: str | None, timeout: float | None = None) -> None:
    """Check, with a bounded wait, that the endpoint of ``master`` answers before Spark starts: a
    standalone master accepts a connection at one of its addresses; for a local master,
    ``$PYSPARK_PYTHON`` (the Python workers' interpreter, when set) can be run.  A Spark Connect
    server is checked as its session is built (:func:`spark_session`, :func:`check_connect`).

    Raises
    ------
    ProblemError
        One line naming the master (or ``PYSPARK_PYTHON``).
    """
    timeout = ENDPOINT_TIMEOUT if timeout is None else timeout
    master = resolved_master(master)
    if master is None and "PYSPARK_GATEWAY_PORT" in os.environ:  # spark-submit's master: not known
        return
    if master is None or master.startswith("local"):
        python = os.environ.get("PYSPARK_PYTHON")
        if python and shutil.which(python) is None:
            raise ProblemError(
                "PYSPARK_PYTHON",
                f"{python!r} is not a program that can be run (the Python workers' interpreter)",
                "<environment>",
            )
        return
    if master.startswith(STANDALONE_SCHEME):
        failures = []
        for host, port in _standalone_addresses(master):
            try:
                socket.create_connection((host, port), timeout=timeout).close()
                return
            except OSError as error:
                failures.append(f"{host}:{port}: {error.strerror or type(error).__name__}")
        if failures:
            raise _endpoint_error(
                master,
                f"no standalone master accepted a connection within {timeout:g} s "
                f"({'; '.join(failures)})",
            )


def first_line(error: object) -> str:
    """The first informative line of an error's text (Py4J's "An error occurred while calling ..."
    header skipped), at most 300 characters."""
    for line in str(error).splitlines():
        line = line.strip().removeprefix(": ").strip()
        if line and not line.startswith("An error occurred while calling"):
            return line if len(line) <= 300 else line[:297] + "..."
    return type(error).__name__


#: The line of a JVM's log that says why it stopped: an uncaught exception's message.
_JAVA_EXCEPTION = re.compile(r'(?:Exception in thread "[^"]*" )?[\w.$]+(?:Exception|Error): (.+)')


def _log_reason(log: str) -> str | None:
    """The message of the first exception a JVM wrote to its log, if any."""
    try:
        with open(log, encoding="utf-8", errors="replace") as text:
            for line in text:
                found = _JAVA_EXCEPTION.match(line.strip())
                if found:
                    return first_line(found[1])
    except OSError:
        pass
    return None


@contextmanager
def spark_job(
    source: str, master: str | None, app_name: str, *, quiet: bool = True
) -> Iterator[Session]:
    """A Spark session for the block's job, its endpoint checked first (:func:`check_master`).

    What the JVM writes to stderr (Spark's banner and log, its Python workers' tracebacks) goes to a
    log file: for the whole block when ``quiet``, else only while the session starts (the JVM keeps
    writing to the log; the block's own stderr, e.g. a progress bar, stays on the terminal).  A
    failure to start Spark or in its job becomes a :class:`ProblemError` naming ``source`` and the
    log, which is kept; the log is removed otherwise.
    """
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    check_master(master)
    failures: tuple[type[BaseException], ...] = (Py4JError, PySparkException)
    try:
        import grpc

        failures += (grpc.RpcError,)
    except ImportError:  # pragma: no cover - the connect extra is a dependency
        pass
    log = tempfile.NamedTemporaryFile(prefix="rebalance-lab-spark-", suffix=".log", delete=False)
    failed = False
    try:
        with _stderr_to(log.fileno()) if quiet else nullcontext():
            try:
                with nullcontext() if quiet else _stderr_to(log.fileno()):
                    session = spark_session(master, app_name=app_name)
                yield session
            except failures as error:
                failed = True
                reason = first_line(error)
                if "JAVA_GATEWAY_EXITED" in reason:  # the JVM said why in the log
                    reason = _log_reason(log.name) or reason
                raise ProblemError(
                    "", f"the Spark job failed: {reason} (Spark's log: {log.name})", source
                ) from None
    finally:
        log.close()
        if not failed:
            os.unlink(log.name)


@contextmanager
def _stderr_to(descriptor: int) -> Iterator[None]:
    """File descriptor 2 pointed at ``descriptor`` for the block (what a JVM started inside inherits)."""
    sys.stderr.flush()
    saved = os.dup(2)
    os.dup2(descriptor, 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def cancel_jobs(spark: Session) -> None:
    """Cancel the session's running jobs, if it still answers (a run stopped part-way)."""
    from pyspark.sql import SparkSession

    with suppress(Exception):  # a session whose JVM or server is gone has nothing to cancel
        if isinstance(spark, SparkSession):
            spark.sparkContext.cancelAllJobs()
        else:
            spark.interruptAll()


def default_parallelism(spark: Session) -> int:
    """The session's default parallelism (Spark Connect: the server's ``spark.default.parallelism``, or 2)."""
    from pyspark.sql import SparkSession

    if not isinstance(spark, SparkSession):  # a Spark Connect session
        return int(spark.conf.get("spark.default.parallelism", "2") or "2")
    parallelism: int = spark.sparkContext.defaultParallelism
    return parallelism
