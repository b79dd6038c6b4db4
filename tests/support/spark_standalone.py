"""A Spark standalone cluster on loopback: a master and workers started from the installed PySpark.

Used by the harness's cluster test and by ``benchmarks/atlas.py``; stopped by whoever started it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from support.kraft_cluster import free_ports

ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT = 120.0


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


class StandaloneCluster:
    """``spark-class`` Master and two Workers (1 core, 1 GB each) on loopback; logs in ``folder``."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.port, self.ui, *self.worker_ui = free_ports(4)
        self.processes: list[subprocess.Popen] = []
        self.env = {
            **os.environ,
            "SPARK_HOME": str(_spark_home()),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_DAEMON_MEMORY": "256m",
            "SPARK_WORKER_DIR": str(folder / "work"),
            "SPARK_LOG_DIR": str(folder),
            "PYSPARK_PYTHON": sys.executable,
            # The executors' Python workers import this checkout, as the driver does.
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        }

    @property
    def master(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _daemon(self, name: str, *args: str) -> None:
        log = open(self.folder / f"{name}.log", "wb")
        command = [str(_spark_home() / "bin" / "spark-class"), *args]
        self.processes.append(
            subprocess.Popen(
                command,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        )
        log.close()

    def start(self) -> StandaloneCluster:
        started = time.perf_counter()
        try:
            self._daemon(
                "master",
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--webui-port",
                str(self.ui),
            )
            for i, ui in enumerate(self.worker_ui):
                self._daemon(
                    f"worker-{i}",
                    "org.apache.spark.deploy.worker.Worker",
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    "1",
                    "--memory",
                    "1g",
                    "--webui-port",
                    str(ui),
                    self.master,
                )
            self._wait_ready(started + READY_TIMEOUT)
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.perf_counter() - started
        return self

    def _wait_ready(self, deadline: float) -> None:
        state = "no answer"
        while time.perf_counter() < deadline:
            for process in self.processes:
                assert process.poll() is None, f"a Spark daemon exited; logs in {self.folder}"
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{self.ui}/json/", timeout=2
                ) as answer:
                    state = json.load(answer)
                if sum(w["state"] == "ALIVE" for w in state.get("workers", [])) == 2:
                    return
            except (OSError, ValueError) as error:
                state = repr(error)
            time.sleep(0.5)
        raise RuntimeError(
            f"the standalone cluster was not ready in {READY_TIMEOUT:g} s ({state}); logs in {self.folder}"
        )

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
