"""Tests of experiments.lags: the `rebalance-lab lags` command (one-line errors, --group, --out, no Spark banner)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.cli import main
from support.lag_snapshots import EARLIEST, HEADER, LATEST, SNAPSHOT


def test_command_line_error_is_one_line_and_exit_2(tmp_path, capsys):
    """Tests that `rebalance-lab lags` on a malformed file exits 2 with one stderr line naming file, line, field."""
    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER + "g,t,0,1,0,5,7\n")
    assert main(["lags", str(bad)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"error: {bad}: line 2: has 7 fields, the header has 6\n"


@pytest.mark.spark
def test_command_line_group_and_out(spark, tmp_path, capsys):
    """Tests `rebalance-lab lags --reset earliest --group g1 --out FILE` and the all-groups shape on stdout."""
    out = tmp_path / "lags.json"
    assert (
        main(["lags", str(SNAPSHOT), "--reset", "earliest", "--group", "g1", "--out", str(out)])
        == 0
    )
    assert json.loads(out.read_text()) == EARLIEST["g1"]
    assert main(["lags", str(SNAPSHOT)]) == 0
    assert json.loads(capsys.readouterr().out) == LATEST
    assert main(["lags", str(SNAPSHOT), "--group", "nope"]) == 2
    assert capsys.readouterr().err.endswith(
        "--group: group 'nope' is not in the snapshot (groups: g1, g2)\n"
    )


@pytest.mark.spark
def test_command_line_prints_no_spark_banner(tmp_path):
    """Tests that a real `rebalance-lab lags` process shows no JVM banner or Spark log on stderr
    (they go to a temporary log file), only the command's own warning lines."""
    import subprocess
    import sys

    root = Path(__file__).parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "experiments.cli", "lags", str(SNAPSHOT), "--master", "local[1]"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == LATEST
    assert all(line.startswith("warning: ") for line in done.stderr.splitlines()), done.stderr
