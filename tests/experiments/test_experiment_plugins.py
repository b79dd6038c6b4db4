"""Tests of a researcher's assignors in the harness: the example plugin judged like the built-ins,
invalid answers and crashes as rows, entry point registration, bad --plugin as one line."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from experiments.cli import main
from experiments.experiment import suite
from experiments.experiment_plugins import ENTRY_POINT_GROUP, plugins_for, resolve, with_plugins
from experiments.gap import gaps, summary
from experiments.runs import scenario_frame, solve_frame

ROOT = Path(__file__).parents[2]


@pytest.fixture
def plugins_on_path(monkeypatch, tmp_path):
    """examples/plugins importable, and a module of misbehaving assignors beside it."""
    monkeypatch.syspath_prepend(str(ROOT / "examples" / "plugins"))
    (tmp_path / "misbehaving.py").write_text(
        "import numpy as np\n"
        "def to_a_stranger(problem):\n"
        "    return np.full(problem.num_partitions, problem.num_members)\n"
        "to_a_stranger.judged_on = 'sticky'\n"
        "def half(problem):\n"
        "    return np.zeros(problem.num_partitions // 2, dtype=int)\n"
        "half.judged_on = ('sticky', 'stream-join')\n"
        "def crashes(problem):\n"
        "    raise RuntimeError('no idea')\n"
        "crashes.judged_on = 'sticky'\n"
        "def words(problem):\n"
        "    return 'assign them all'\n"
        "words.judged_on = 'sticky'\n"
        "def unjudged(problem):\n"
        "    return None\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in ("least_loaded", "misbehaving"):
        sys.modules.pop(name, None)


def test_the_example_plugin_gets_gap_runtime_and_validity_like_the_built_ins(plugins_on_path):
    """Tests that least_loaded runs on every sticky scenario of the gate suite and is compared to the optimum."""
    scenarios = [s for s in suite("gate") if s.judged_on == "sticky" and s.partitions == 24][:6]
    plugins = plugins_for(["least_loaded:assign"], entry_points=False)
    assert plugins[0].name == "least-loaded" and plugins[0].judged_on == ("sticky",)
    rows = solve_frame(scenario_frame(with_plugins(scenarios, plugins)), time_limit=5)
    mine = rows[rows["strategy"] == "least-loaded"]
    assert len(mine) == len(scenarios)
    assert mine["valid"].all() and (mine["status"] == "heuristic").all()
    assert (mine["runtime_s"] >= 0).all() and mine["level1"].notna().all()
    stats = summary(gaps(rows), by=("heuristic",)).set_index("heuristic")
    assert stats.loc["least-loaded", "compared"] == len(scenarios)
    assert stats.loc["least-loaded", "mean_rel_gap1"] >= 0
    # The same scenarios' ids: a plugin adds rows, not scenarios.
    assert rows["scenario_id"].nunique() == len(scenarios)


def test_invalid_answers_and_crashes_are_rows_that_say_so(plugins_on_path):
    """Tests that a constraint-breaking answer, a wrong-sized one, a non-answer and a crash are rows."""
    scenario = suite("smoke")[1]  # sticky, member-leaves
    specs = [
        "misbehaving:to_a_stranger",
        "misbehaving:half",
        "misbehaving:crashes",
        "misbehaving:words",
    ]
    plugins = plugins_for(specs, entry_points=False)
    rows = solve_frame(scenario_frame(with_plugins([scenario], plugins)), time_limit=2)
    by = rows.set_index("strategy")
    assert not by.loc["to-a-stranger", "valid"]
    assert by.loc["to-a-stranger", "error"] == (
        "invalid: owner array holds positions that are not members"
    )
    assert not by.loc["half", "valid"] and "owners" in by.loc["half", "error"]
    assert by.loc["crashes", "status"] == "error" and "no idea" in by.loc["crashes", "error"]
    assert not by.loc["words", "valid"] and by.loc["words", "error"].startswith("invalid: ")
    assert (by.loc["sticky", "valid"] == True).all()  # noqa: E712 (the built-ins still ran)


def test_a_plugin_runs_only_on_the_scenarios_judged_on_its_objective(plugins_on_path):
    """Tests that judged_on picks the scenarios: a sticky plugin skips lag-aware and placements."""
    plugins = plugins_for(["misbehaving:half"], entry_points=False)
    marked = with_plugins(suite("smoke"), plugins)
    chosen = [s.judged_on for s in marked if s.settings]
    assert chosen == ["sticky", "sticky", "stream-join"]
    assert [s.scenario_id for s in marked] == [s.scenario_id for s in suite("smoke")]


def test_entry_point_plugins_are_found_by_name(plugins_on_path, monkeypatch):
    """Tests registration through the entry point group: an installed plugin runs by default."""
    dist = plugins_on_path / "least_loaded_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: least-loaded-plugin\nVersion: 1.0\n"
    )
    (dist / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nkeep-least = least_loaded:assign\n"
    )
    found = plugins_for([])
    assert [(p.name, p.target) for p in found] == [("keep-least", "least_loaded:assign")]
    assert resolve("keep-least").target == "least_loaded:assign"


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("nonesuch_module:f", "cannot import 'nonesuch_module'"),
        ("misbehaving:absent", "has no 'absent'"),
        ("misbehaving:unjudged", "needs an attribute judged_on"),
        ("sticky=least_loaded:assign", "'sticky' is a built-in strategy"),
        ("not-installed", "no plugin 'not-installed'"),
    ],
)
def test_a_bad_plugin_is_one_line(plugins_on_path, capsys, spec, problem):
    """Tests that a bad --plugin exits 2 with one line naming the option and the problem."""
    assert main(["experiment", "show", "smoke", "--plugin", spec]) == 2
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1
        and err.startswith("error: command line: --plugin: ")
        and problem in err
    )


def test_experiment_show_counts_plugin_rows(plugins_on_path, capsys):
    """Tests that `experiment show --plugin` counts one more row per scenario the plugin is judged on."""
    assert main(["experiment", "show", "smoke", "--json"]) == 0
    before = capsys.readouterr().out
    assert main(["experiment", "show", "smoke", "--json", "--plugin", "least_loaded:assign"]) == 0
    after = capsys.readouterr().out
    rows = [int(text.split('"rows": ')[1].split(",")[0]) for text in (before, after)]
    assert rows[1] - rows[0] == 2  # the two sticky scenarios of the smoke suite
    assert np.all(np.diff(rows) > 0)
