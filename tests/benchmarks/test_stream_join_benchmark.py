"""benchmarks/stream_join.py at a tiny size: both parts run and every solver answers every event."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_solver_answers_every_churn_event():
    """Part 2 calls each solver by its own name: the heuristic, CP-SAT, the MIP and the flow each
    give one row per churn event, and the three exact solvers agree on the optimum."""
    completed = subprocess.run(
        [sys.executable, "benchmarks/stream_join.py", "--numbers", "20", "--topics", "2"]
        + ["--members", "3", "--sizes", "40", "--repeat", "1", "--time-limit", "10"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "benchmarks")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in completed.stdout.splitlines()
        if line.startswith("| ")
        and line.count("|") == 8
        and "load s" not in line
        and "---" not in line
    ]
    events = sorted({row[0] for row in rows})
    assert len(events) >= 3
    for event in events:
        answers = {row[2]: row for row in rows if row[0] == event}
        assert sorted(answers) == ["cpsat", "flow", "heuristic", "mip (highs)"]
        exact = {
            (answers[s][3], answers[s][4], answers[s][5]) for s in ("cpsat", "mip (highs)", "flow")
        }
        assert len(exact) == 1 and next(iter(exact))[0] == "optimal"
