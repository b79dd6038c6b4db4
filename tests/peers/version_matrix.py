"""Which Kafka releases each strategy's output equals: tests/peers run against several releases.

``python tests/peers/version_matrix.py 4.0.2 4.1.2 4.2.2 4.3.1 4.4.0`` (from the repository root,
with the project's ``.venv``): for each release, ``make peers KAFKA_VERSION=...`` builds Kafka's
Java peer against it, then ``pytest tests/peers`` runs every equality test against that build
(``--junitxml`` per release, in ``--work``); ``--tests tests/peers tests/clients`` adds the
live-cluster tests (their brokers from the same release), run under ``flock /tmp/cluster.lock``.
Each test is filed under the strategy it checks (:func:`strategy_of`; the live-cluster tests in
one row); a strategy equals a release when every one of its tests passes there.
Prints a Markdown table, one row per strategy and one column per release (``equal``, or the
failed tests' count with their names below the table), for docs/kafka-versions.md.  The build
left behind is the last release named: end the list with the default (4.4.0).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: (substring of a test's node id, strategy), first match wins.
RULES = (
    ("test_streams_sticky", "streams-sticky (KIP-1071)"),
    ("test_streams_ha", "streams-ha (KIP-441, KIP-708, KIP-925)"),
    ("test_streams_kip924", "streams-kip924-sticky (KIP-924)"),
    ("test_cooperative", "cooperative-sticky"),
    ("kafka_default", "kafka-default"),
    ("share", "share"),
    ("uniform", "uniform (KIP-848)"),
    ("test_server_assignors.py::test_kafka_range", "server range (KIP-848)"),
    ("server_range", "server range (KIP-848)"),
    ("kip848_server_assignors_give_valid_assignments[range]", "server range (KIP-848)"),
    ("sticky", "sticky"),
    ("roundrobin", "roundrobin"),
    ("range", "range"),
    ("franz_go", "franz-go (not Kafka's Java)"),
)
PLUMBING = "peer plumbing (version, hash orders, JSON)"


def strategy_of(nodeid: str) -> str:
    """The strategy a tests/peers test checks, from its node id."""
    if nodeid.startswith("tests/clients/"):
        return "live KRaft cluster (tests/clients)"
    for needle, strategy in RULES:
        if needle in nodeid:
            return strategy
    return PLUMBING


def run_release(version: str, work: Path, tests: list[str]) -> dict[str, str]:
    """Build the peer against ``version``, run ``tests``; ``{node id: passed|failed|skipped}``."""
    subprocess.run(["make", "-s", "peers", f"KAFKA_VERSION={version}"], cwd=ROOT, check=True)
    report = work / f"peers-{version}.xml"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests]
    if any(t.startswith("tests/clients") for t in tests):  # one live cluster at a time
        command = ["flock", "/tmp/cluster.lock", *command]
    subprocess.run([*command, f"--junitxml={report}"], cwd=ROOT, check=False)
    outcomes: dict[str, str] = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        path = case.get("classname", "").replace(".", "/")
        nodeid = f"{path}.py::{case.get('name')}"
        if case.find("skipped") is not None:
            outcomes[nodeid] = "skipped"
        elif case.find("failure") is not None or case.find("error") is not None:
            outcomes[nodeid] = "failed"
        else:
            outcomes[nodeid] = "passed"
    return outcomes


def table(results: dict[str, dict[str, str]]) -> str:
    """The Markdown matrix of strategies x releases, then the failed and skipped tests."""
    versions = list(results)
    strategies: dict[str, dict[str, list[str]]] = {}
    counts: dict[str, int] = {}
    for version, outcomes in results.items():
        for nodeid, outcome in outcomes.items():
            strategy = strategy_of(nodeid)
            per = strategies.setdefault(strategy, {v: [] for v in versions})
            if version == versions[-1]:
                counts[strategy] = counts.get(strategy, 0) + 1
            if outcome != "passed":
                per[version].append(f"{nodeid} ({outcome})")
    lines = [
        "| strategy | tests | " + " | ".join(versions) + " |",
        "| --- | ---: | " + " | ".join("---" for _ in versions) + " |",
    ]
    notes = []
    for strategy in sorted(strategies):
        cells = []
        for version in versions:
            bad = strategies[strategy][version]
            cells.append("equal" if not bad else f"{len(bad)} differ")
            notes += [f"- {version}: {n}" for n in bad]
        lines.append(f"| {strategy} | {counts.get(strategy, 0)} | " + " | ".join(cells) + " |")
    if notes:
        lines += ["", "Tests that did not pass:", "", *notes]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="+", help="Kafka releases, e.g. 4.0.2 4.4.0")
    parser.add_argument("--work", type=Path, default=Path("/tmp"), help="where the reports go")
    parser.add_argument("--tests", nargs="+", default=["tests/peers"], help="pytest paths")
    args = parser.parse_args()
    results = {version: run_release(version, args.work, args.tests) for version in args.versions}
    print(table(results))


if __name__ == "__main__":
    main()
