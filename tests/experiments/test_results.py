"""Tests of experiments.results: the Parquet store is read without Spark."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_reading_results_needs_no_spark():
    """Tests that the results store, the gap analysis and the report load without importing pyspark."""
    code = "import sys, experiments.results, experiments.gap, experiments.report; print('pyspark' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
