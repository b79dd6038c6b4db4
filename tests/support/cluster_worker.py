"""Every test that starts a cluster in one pytest-xdist worker (a pytest plugin, ``tests/conftest.py``).

The tests that start a Kafka cluster (``tests/clients/conftest.py``) or Spark (the ``spark``
fixture's local session, a standalone cluster, a Spark Connect server, ``compare`` and ``lags``)
form one group.  Under ``-n N --dist loadgroup`` (`make test`) the group runs in one worker, its
tests in the order collected, so the run starts one Kafka cluster and one Spark session as it does
without xdist (each worker would otherwise start its own, on the same cores); every other test is
shared out one by one.

pytest-xdist tells its scheduler a test's group by appending ``@group`` to the node id, which
pytest 9.2's structured node ids no longer allow (the suffix is dropped and the group silently
ignored).  So the workers also write the group's node ids to a file named after the run's id, and
the scheduler reads the group from there; with a pytest where the suffix works, the scheduler
finds it in the node id instead.
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest

#: The group's name (an ``xdist_group`` mark).
GROUP = "clusters"
#: Markers of the tests that start a cluster, and the fixtures that start one.
MARKERS = ("kafka", "spark", "spark_cluster")
FIXTURES = frozenset({"spark", "kafka_cluster"})


def starts_a_cluster(item: pytest.Item) -> bool:
    return bool(FIXTURES.intersection(getattr(item, "fixturenames", ()))) or any(
        item.get_closest_marker(name) for name in MARKERS
    )


def _group_file(run_id: str) -> Path:
    return Path(tempfile.gettempdir()) / f"rebalance-lab-tests-{run_id}-{GROUP}.json"


def pytest_configure(config: pytest.Config) -> None:
    # the controller of an xdist run: a run id that its workers receive (``workerinput``)
    if not hasattr(config, "workerinput") and hasattr(config.option, "testrunuid"):
        config.option.testrunuid = config.option.testrunuid or uuid.uuid4().hex


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    grouped = [item for item in items if starts_a_cluster(item)]
    for item in grouped:
        item.add_marker(pytest.mark.xdist_group(GROUP))
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and getattr(config.option, "loadgroup", False):  # a worker of one
        path = _group_file(workerinput["testrunuid"])
        written = path.with_name(f"{path.name}.{workerinput['workerid']}")
        written.write_text(json.dumps([item.nodeid for item in grouped]))
        os.replace(written, path)  # every worker collects the same tests: the same file


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class ClusterGroupScheduling(LoadGroupScheduling):
        """xdist's ``loadgroup`` with the cluster group read from the workers' file."""

        grouped: frozenset[str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.grouped is None:  # first called once every worker has collected
                path = _group_file(config.option.testrunuid)
                self.grouped = frozenset(json.loads(path.read_text()) if path.exists() else ())
            return GROUP if nodeid in self.grouped else super()._split_scope(nodeid)

    return ClusterGroupScheduling(config, log)


def pytest_unconfigure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput") and getattr(config.option, "testrunuid", None):
        _group_file(config.option.testrunuid).unlink(missing_ok=True)
