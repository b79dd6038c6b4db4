"""``rebalance-lab gate --plugin``: an assignor plugin recorded and judged like a built-in.

End to end on real code: a baseline recorded from Kafka's ``UniformAssignor`` (the class loaded
from the jar of the release ``make peers`` built, through ``java:``) passes against itself, and
``tests/data/plugins/UniformForgetsOnJoin.java`` (compiled here with javac: ``UniformAssignor``
forgetting every current assignment when a member has joined) fails it, the failure naming the
event (``member-joins``) and how much worse the moves got.  The experiment is
``tests/data/plugins/gate_plugin.toml`` (24 sticky scenarios, optima by min-cost flow).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from experiments import plugin_java
from experiments.cli import main

DATA = Path(__file__).parents[1] / "data" / "plugins"
UNIFORM = "org.apache.kafka.coordinator.group.assignor.UniformAssignor"
NAME = "uniform-under-test"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, Path]:
    """The baseline recorded from Kafka's UniformAssignor, and the folder of the compiled wrapper."""
    assert plugin_java.PROGRAM_JAR.exists(), f"{plugin_java.PROGRAM_JAR}: run `make peers`"
    folder = tmp_path_factory.mktemp("gate-plugins")
    classes = folder / "classes"
    javac = shutil.which("javac")
    assert javac is not None, "javac (JDK 17+) is needed to compile the test's assignor"
    subprocess.run(
        [
            javac,
            "-d",
            str(classes),
            "-cp",
            str(plugin_java.LIBRARIES / "*"),
            str(DATA / "UniformForgetsOnJoin.java"),
        ],
        check=True,
    )
    baseline = folder / "baseline.json"
    assert main([*_gate(baseline), "--plugin", f"{NAME}=java:{UNIFORM}", "--update"]) == 0
    return baseline, classes


def _gate(baseline: Path) -> list[str]:
    return [
        "gate",
        "--experiment",
        str(DATA / "gate_plugin.toml"),
        "--baseline",
        str(baseline),
        "--no-progress",
        "--processes",
        "1",
    ]


def test_baseline_records_the_plugin_by_event(recorded):
    """Tests that the baseline holds the plugin's statistics, overall and for each churn event."""
    document = json.loads(recorded[0].read_text())
    assert document["suite"] == "gate-plugin"
    assert document["heuristics"][f"sticky/{NAME}"]["valid"] == 1.0
    assert set(document["events"][f"sticky/{NAME}"]) == {"fresh", "member-joins", "member-leaves"}


def test_the_recorded_class_passes_against_itself(recorded, capsys):
    """Tests that UniformAssignor gated against its own baseline passes."""
    baseline, _ = recorded
    assert main([*_gate(baseline), "--plugin", f"{NAME}=java:{UNIFORM}"]) == 0
    assert "gate: passed" in capsys.readouterr().err


def test_dropping_stickiness_on_joins_fails_naming_the_event(recorded, capsys):
    """Tests that the wrapper that forgets assignments when a member joins fails the gate, the
    failure naming member-joins and the mean moves beyond the optimum before and after."""
    baseline, classes = recorded
    before = json.loads(baseline.read_text())["events"][f"sticky/{NAME}"]["member-joins"]
    spec = f"{NAME}=java:UniformForgetsOnJoin"
    assert main([*_gate(baseline), "--plugin", spec, "--classpath", str(classes)]) == 1
    report = capsys.readouterr().err
    assert "FAILED" in report
    by_event = report.split("by event:")[1]
    rows = [line.split() for line in by_event.strip().splitlines()[1:]]
    assert {row[1] for row in rows} == {"member-joins"}, by_event
    moves = next(row for row in rows if row[2] == "mean_gap2")
    assert float(moves[3]) == pytest.approx(before["mean_gap2"], rel=1e-5)
    assert float(moves[4]) > float(moves[3]) + 5  # many more moves than the release's


def test_assign_takes_the_class_and_its_classpath(recorded, capsys):
    """Tests that assign --plugin java:CLASS --classpath DIR answers with the compiled class."""
    _, classes = recorded
    example = Path(__file__).parents[2] / "examples" / "group" / "kip-54-three-consumers.json"
    spec = "forgets=java:UniformForgetsOnJoin"
    assert main(["assign", "--plugin", spec, "--classpath", str(classes), str(example)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed["assignment"]) == {"C0", "C1", "C2"} and printed["status"] == "heuristic"
