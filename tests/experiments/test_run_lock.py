"""One writer per run, unique run ids, and --out checked before any solving."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from experiments.results import new_run_id, results_folder
from experiments.run_lock import hold
from problems import ProblemError

ROOT = Path(__file__).parents[2]


def compare(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "experiments.cli",
            "compare",
            "--suite",
            "smoke",
            "--no-progress",
            *args,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_run_ids_started_in_the_same_second_differ():
    """Tests that two runs started together get different ids (both were the same time stamp)."""
    ids = {new_run_id() for _ in range(50)}
    assert len(ids) == 50


def test_a_second_writer_of_the_same_run_is_refused(tmp_path):
    """Tests the lock in one process (flock locks open files, so a second open conflicts), then released."""
    folder = results_folder(tmp_path, "smoke", "r1")
    with hold(folder):
        with pytest.raises(ProblemError, match="is being written by process"):
            with hold(folder):
                pass
    with hold(folder):  # released: a resume may take it
        pass


def test_compare_refuses_a_run_being_written_with_exit_2(tmp_path):
    """Tests `compare --out X --run-id R` while another process writes run R: exit 2, one line, no rows."""
    folder = results_folder(tmp_path, "smoke", "busy")
    with hold(folder):
        done = compare("--out", str(tmp_path), "--run-id", "busy")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"error: {folder}: run_id: is being written by process"
    )
    assert not list(folder.glob("*.parquet"))


def test_compare_checks_out_before_solving(tmp_path):
    """Tests `compare --out` into a path that cannot be a folder: exit 2 with one line, at once."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    done = compare("--out", str(blocker / "results"))
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"error: {blocker / 'results'}: cannot write there"
    ), lines
