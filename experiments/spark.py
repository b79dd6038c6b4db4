"""The one Spark session factory.

Details: docs/harness.md.
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
from contextlib import contextmanager

MASTER_VARIABLE = "REBALANCE_LAB_SPARK_MASTER"
#: A master URL with this scheme is a Spark Connect server.
CONNECT_SCHEME = "sc://"


def quiet_pyspark_warnings() -> None:
    """Ignore the pandas deprecation warnings that PySpark's own modules raise."""
    for category in (FutureWarning, DeprecationWarning):
        warnings.filterwarnings("ignore", category=category, module=r"pyspark(\.|$)")


def spark_session(master: str | None = None, app_name: str = "rebalance-lab", **config: str):
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

    master = master or os.environ.get(MASTER_VARIABLE)
    if master is not None and master.startswith(CONNECT_SCHEME):
        builder = SparkSession.builder.remote(master).config("spark.sql.session.timeZone", "UTC")
        return builder.config("spark.sql.execution.arrow.pyspark.enabled", "true").getOrCreate()
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


def default_parallelism(spark) -> int:
    """The session's default parallelism (Spark Connect: the server's ``spark.default.parallelism``, or 2)."""
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        return int(spark.conf.get("spark.default.parallelism", "2"))
    return spark.sparkContext.defaultParallelism


@contextmanager
def jvm_output_to_log():
    """Send what a JVM started inside the block writes to stderr (Spark's start-up banner, its log, its
    workers' tracebacks) to a log file instead of the terminal; yields the log's path.

    The JVM inherits file descriptor 2 when it starts: it is pointed at the log for the block
    and restored afterwards for Python, so a command's own errors stay one line on stderr.
    A JVM already running (a session created earlier in the process) is not affected.  The log
    is kept when the block raises (so that an error can point to it), removed otherwise.
    """
    log = tempfile.NamedTemporaryFile(prefix="rebalance-lab-spark-", suffix=".log", delete=False)
    sys.stderr.flush()
    saved = os.dup(2)
    os.dup2(log.fileno(), 2)
    try:
        yield log.name
    except BaseException:
        raise
    else:
        os.unlink(log.name)
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        log.close()
