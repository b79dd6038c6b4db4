"""The product's text speaks of the product, not of how it was built.

Code, comments, docstrings, tests, benchmarks, notebooks, examples, the README and the docs say what
the code does and why; they never cite the project's own issue numbers, work sessions or stops,
review findings, commits or git history.  Facts about Kafka are not history and stay: KIP numbers
(``KIP-848``), JIRA keys (``KAFKA-12464``) and Kafka's pull requests (``PR 18903``,
``apache/kafka PR 12345``), which are source documents of the heuristics.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: What marks build history, case-insensitive.
HISTORY = re.compile(
    r"\b(?:issue|stop|session|finding)s? ?#?\d+"  # one of these words, then a number
    r"|\bissue's\b"  # the example
    r"|\b(?:PR|pull request)s? ?#?\d+"  # a pull request of this project (Kafka's are allowed below)
    r"|\bcommit [0-9a-f]{7,40}\b"
    r"|\bgit history\b",
    re.IGNORECASE,
)
#: Kafka's own documents: its pull requests, named as sources.
KAFKA_FACTS = re.compile(r"\bPR 18903\b|\bapache/kafka PR \d+", re.IGNORECASE)

#: This file: it spells out the patterns and tries them on examples.
THIS_FILE = "tests/test_product_text.py"

GROUPS = {
    "README and docs": lambda path: (
        path == "README.md" or (path.startswith("docs/") and path.endswith(".md"))
    ),
    "Python files": lambda path: path.endswith(".py") and path != THIS_FILE,
    "notebooks and examples": lambda path: path.startswith(("notebooks/", "examples/")),
}


def tracked_files() -> list[str]:
    """Every file git tracks, relative to the repository's root."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    return sorted(path for path in listed.split("\0") if path)


def offences(lines: list[str], path: str) -> list[str]:
    """``path:line: text`` of every line of ``lines`` that cites build history."""
    found = []
    for number, line in enumerate(lines, start=1):
        if HISTORY.search(KAFKA_FACTS.sub("", line)):
            found.append(f"{path}:{number}: {line.strip()[:160]}")
    return found


def test_the_patterns_tell_history_from_kafka_facts():
    """Tests the patterns: history is found, Kafka's KIPs, JIRA keys and pull requests are not."""
    # The examples are built from a number so that this file's own text holds no history.
    n = 11
    history = [
        f"(issue {n} saw 49 of 98 rows twice)",
        f"# Issue {n}'s target: 0.1 s",
        "as the issue's example shows",
        f"stop {n} measured it",
        f"Session {n} left this out",
        f"Tests finding {n}: the hint",
        "see PR 42 of this project",
        "issue #12",
        "kept in commit b814e71",
        "the script is in git history",
    ]
    facts = [
        "KIP-848's server assignors",
        "KAFKA-12464 and KAFKA-9987",
        "the sticky reassignment of apache/kafka PR 18903",
        "PR 18903's property 2",
        "apache/kafka PR 12345",
        "phase 1 keeps C_c",
        "a Spark session",
        "no issue here",
    ]
    assert len(offences(history, "x.py")) == len(history)
    assert offences(facts, "x.py") == []
    assert offences(["a", "issue 3"], "pkg/m.py") == ["pkg/m.py:2: issue 3"]


@pytest.mark.parametrize("group", GROUPS)
def test_no_build_history_in_product_text(group):
    """Tests every tracked file of ``group``: no line cites build history (each offence listed)."""
    selected = [path for path in tracked_files() if GROUPS[group](path)]
    assert selected, f"no tracked files in {group}"
    found = []
    for path in selected:
        try:
            text = (ROOT / path).read_text(encoding="utf-8")
        except (FileNotFoundError, UnicodeDecodeError):  # deleted in the work tree, or binary
            continue
        found += offences(text.splitlines(), path)
    for line in found:
        print(line)
    assert not found, f"{len(found)} lines cite build history:\n" + "\n".join(found)
