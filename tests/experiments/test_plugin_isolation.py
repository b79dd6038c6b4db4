"""Plugins cannot stop a run: compare on local Spark with plugins that crash, exit, abort, hang,
allocate, print and answer garbage or non-integers in turn (every row there, saying what
happened), and plugin modules that fail while imported (one line naming the plugin, exit 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from experiments import plugin_process
from experiments.cli import main
from experiments.results import load_results

ROOT = Path(__file__).parents[2]
DATA = ROOT / "tests" / "data" / "plugins"
PROGRAM = f"exec:{sys.executable} {DATA / 'misbehaving_program.py'}"
JS = "exec:node examples/plugins/least_loaded.js"  # relative: to the directory compare runs in
EXPERIMENT = f"""\
name = "misbehaving-plugins"
description = "Fresh groups of 3 to 12 members, each misbehaving plugin failing in its own way on each."
tier = "smoke"
time_limit = 1
plugins = ["misbehaving_functions:assign", {json.dumps(PROGRAM)}, {json.dumps("least-loaded-js=" + JS)}]

[[scenarios]]
judged_on = "sticky"
churn = "fresh"
partitions = 12
members = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
topics = 2
seed = 1
strategies = ["sticky"]
solvers = ["heuristic"]
"""
#: Members -> (status, start of error) of the Python function (tests/data/plugins/misbehaving_functions.py).
PYTHON = {
    3: ("heuristic", None),
    4: ("error", "the plugin called sys.exit(1)"),
    5: ("error", "exit: exited with status 0"),
    6: ("error", "signal: killed by SIGABRT"),
    7: ("error", "timeout: did not answer within 1 s; killed"),
    8: ("error", "MemoryError"),
    9: ("heuristic", "invalid: the plugin's answer: owner: must be a list of integers, holds 0.0"),
    10: (
        "heuristic",
        "invalid: the plugin's answer: owner: must be a list of integers, holds true",
    ),
    11: ("heuristic", None),
    12: ("error", "RuntimeError: no idea"),
}
#: The same for the program (tests/data/plugins/misbehaving_program.py).
PROGRAM_ROWS = {
    3: ("heuristic", None),
    4: ("error", "exit: exited with status 3: giving up"),
    5: ("error", "timeout: did not answer within 1 s; killed"),
    6: ("error", "garbage: the answer is not a JSON object: 'this is not JSON'"),
    7: ("heuristic", "invalid: the plugin's answer: nobody: not a member of the group"),
    8: ("error", "signal: killed by SIGABRT: a group of 8 members"),
    9: ("error", "exit: exited with status 1: MemoryError"),
    10: ("heuristic", "invalid: the plugin's answer: owner: must be a list of integers, holds 0.0"),
    11: ("error", "garbage: the answer is not a JSON object: 'debugging output'"),
    12: ("heuristic", None),
}


@pytest.mark.spark
def test_misbehaving_plugins_never_stop_a_run_nor_lose_a_row(tmp_path):
    """Tests compare on local Spark: exit 0, every scenario's built-in and plugin rows, each
    failure named in its row, the plugins' stderr in the run folder, nothing of theirs on stdout.

    One core (``local[1]``): one Python worker serves every scenario in turn, so a plugin that hung
    is certainly asked again by the same process (and restarted) unless its hang was the last call;
    the two plugins hang on different groups, so at least one restart after a timeout is in the
    logs.  With two workers the scheduler decides whether a hung plugin's process gets another
    scenario, and the restart line may be missing from a correct run."""
    path = tmp_path / "misbehaving.toml"
    path.write_text(EXPERIMENT)
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(DATA)])}
    finished = subprocess.run(
        [sys.executable, "-m", "experiments.cli", "compare", "--experiment", str(path)]
        + [
            "--out",
            str(out),
            "--run-id",
            "bad",
            "--master",
            "local[1]",
            "--no-progress",
            "--no-report",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "debugging output" not in finished.stdout and "giving up" not in finished.stdout
    folder = out / "results" / "suite=misbehaving-plugins" / "run_id=bad"
    rows = load_results(folder)
    counts = rows.groupby("strategy").size()
    assert counts[["misbehaving-py", "misbehaving", "least-loaded-js"]].tolist() == [10, 10, 10]
    assert counts["sticky"] == 30  # Kafka's and the two KIP-54 variants, every one still there
    rows = rows[rows["variant"] == ""]  # Kafka's sticky beside the plugins
    assert not rows.duplicated(["scenario_id", "strategy"]).any()
    by = rows.set_index(["members", "strategy"]).sort_index()
    for name, expected in (("misbehaving-py", PYTHON), ("misbehaving", PROGRAM_ROWS)):
        for members, (status, error) in expected.items():
            row = by.loc[(members, name)]
            assert row["status"] == status, (name, members, row["error"])
            if error is None:
                assert row["valid"] and row["level1"] == by.loc[(members, "sticky"), "level1"]
            else:
                assert not row["valid"] and row["error"].startswith(error), (name, members)
    assert by.xs("least-loaded-js", level="strategy")["valid"].all()
    assert (by.xs("sticky", level="strategy")["valid"]).all()
    logs = sorted((folder / "plugins").glob("*.log"))
    assert {log.name.split(".")[0] for log in logs} == {
        "misbehaving-py",
        "misbehaving",
        "least-loaded-js",
    }
    text = "".join(log.read_text() for log in logs)
    assert (
        "giving up" in text and "debugging output" in text and "restarted (after timeout)" in text
    )


@pytest.mark.parametrize(
    ("name", "module", "said"),
    [
        ("exits", "import sys\nsys.exit(0)\n", "importing exits:assign called sys.exit(0)"),
        (
            "raises",
            "raise RuntimeError('boom')\n",
            "importing raises:assign raised RuntimeError: boom",
        ),
        ("os_exit", "import os\nos._exit(0)\n", "exited with status 0"),
        ("aborts", "import os\nos.abort()\n", "killed by SIGABRT"),
        (
            "hangs",
            "import time\ntime.sleep(600)\n",
            "did not start and answer the describe request within 2 s",
        ),
        (
            "allocates",
            "hoard = bytearray(20 << 30)\n",
            "importing allocates:assign ran out of memory",
        ),
    ],
)
def test_a_plugin_module_failing_at_import_is_one_line(
    tmp_path, monkeypatch, capsys, name, module, said
):
    """Tests that compare (and experiment show) refuse such a plugin with one line naming it,
    exit 2, before any solving: never a traceback, a silent exit 0 or a hang."""
    (tmp_path / f"{name}.py").write_text(module + "def assign(problem):\n    return []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(plugin_process, "START_TIME_LIMIT", 2.0)
    out = tmp_path / "out"
    for command in (
        ["compare", "--suite", "smoke", "--out", str(out)],
        ["experiment", "show", "smoke"],
    ):
        assert main([*command, "--plugin", f"{name}:assign"]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.count("\n") == 1, captured.err
        assert captured.err.startswith("error: command line: --plugin: ") and said in captured.err
        assert name in captured.err
    assert not out.exists() or not list(out.rglob("*.parquet"))


def test_a_printing_plugin_leaves_experiment_show_json_intact(tmp_path, monkeypatch, capsys):
    """Tests that a plugin printing at import and when described keeps `experiment show --json` JSON."""
    (tmp_path / "chatty.py").write_text(
        "print('hello from the import')\n"
        "import numpy as np\n"
        "def assign(problem):\n"
        "    print('hello from assign')\n"
        "    return np.zeros(problem.num_partitions, dtype=int)\n"
        "assign.judged_on = 'sticky'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["experiment", "show", "smoke", "--json", "--plugin", "chatty:assign"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["rows"] > 0
