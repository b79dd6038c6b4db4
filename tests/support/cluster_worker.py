"""The tests that start a cluster, in two groups of one pytest-xdist worker each (a pytest plugin).

The tests that start a Kafka cluster (``tests/clients/conftest.py``, the ``kafka`` marker) form one
group; the tests that start Spark (the ``spark`` fixture's local session, a standalone cluster, a
Spark Connect server, ``compare`` and ``lags``) another.  Under ``-n N --dist loadgroup`` (`make
test`) each group runs in one worker, its tests in the order collected, so the run starts one Kafka
cluster and one Spark session as it does without xdist; every other test is shared out one by one.
The Kafka group spends most of its time waiting for consumers to rebalance (session timeouts, quiet
periods), so `make test` runs one worker more than the machine has cores: the other workers keep
the cores busy meanwhile.

pytest-xdist tells its scheduler a test's group by appending ``@group`` to the node id, which
pytest 9.2's structured node ids no longer allow (the suffix is dropped and the group silently
ignored).  So the workers also write each grouped node id's group to a file named after the run's
id, and the scheduler reads the groups from there; with a pytest where the suffix works, the
scheduler finds them in the node id instead.
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest

#: Each group's name (an ``xdist_group`` mark), the markers of its tests and the fixtures that
#: start its cluster; a test of both is the Kafka group's.
GROUPS = {
    "kafka-cluster": (("kafka",), frozenset({"kafka_cluster"})),
    "spark": (("spark", "spark_cluster"), frozenset({"spark"})),
}


def cluster_group(item: pytest.Item) -> str | None:
    """The group of a test that starts a cluster, ``None`` for every other test."""
    fixtures = getattr(item, "fixturenames", ())
    for group, (markers, started_by) in GROUPS.items():
        if started_by.intersection(fixtures) or any(item.get_closest_marker(m) for m in markers):
            return group
    return None


def starts_a_cluster(item: pytest.Item) -> bool:
    return cluster_group(item) is not None


def _group_file(run_id: str) -> Path:
    return Path(tempfile.gettempdir()) / f"rebalance-lab-tests-{run_id}-groups.json"


def pytest_configure(config: pytest.Config) -> None:
    # the controller of an xdist run: a run id that its workers receive (``workerinput``)
    if not hasattr(config, "workerinput") and hasattr(config.option, "testrunuid"):
        config.option.testrunuid = config.option.testrunuid or uuid.uuid4().hex


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    grouped = {item.nodeid: group for item in items if (group := cluster_group(item))}
    for item in items:
        if item.nodeid in grouped:
            item.add_marker(pytest.mark.xdist_group(grouped[item.nodeid]))
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and getattr(config.option, "loadgroup", False):  # a worker of one
        path = _group_file(workerinput["testrunuid"])
        written = path.with_name(f"{path.name}.{workerinput['workerid']}")
        written.write_text(json.dumps(grouped))
        os.replace(written, path)  # every worker collects the same tests: the same file


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class ClusterGroupScheduling(LoadGroupScheduling):
        """xdist's ``loadgroup`` with the cluster groups read from the workers' file."""

        grouped: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.grouped is None:  # first called once every worker has collected
                path = _group_file(config.option.testrunuid)
                self.grouped = json.loads(path.read_text()) if path.exists() else {}
            return self.grouped.get(nodeid) or super()._split_scope(nodeid)

    return ClusterGroupScheduling(config, log)


def pytest_unconfigure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput") and getattr(config.option, "testrunuid", None):
        _group_file(config.option.testrunuid).unlink(missing_ok=True)
