"""Tests of experiment files: expansion (crossing order, zip, exclude, run factors), the one-line
errors of bad files, `experiment show`, and an experiment's settings honoured by the runs."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from experiments.cli import main
from experiments.experiment import load_experiment
from experiments.experiment_cli import plan
from experiments.runs import scenario_frame, solve_frame

HEAD = 'name = "trial"\ndescription = "a test experiment"\ntime_limit = 2\n'


def write(tmp_path: Path, text: str, name: str = "trial.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_factors_cross_in_the_order_written_the_last_fastest(tmp_path):
    """Tests the crossing order, the defaults of factors left out, and the collapse of levels that do not apply."""
    path = write(
        tmp_path,
        HEAD
        + """
[[scenarios]]
judged_on = ["sticky", "lag-aware"]
churn = ["fresh", "member-joins"]
size = [12, 3, 2]
seed = [1, 2]
lags = ["uniform", "zipf"]
""",
    )
    experiment = load_experiment(path)
    ids = [s.scenario_id for s in experiment.scenarios]
    # sticky draws no lags: its two lag levels are one scenario, kept once
    assert ids == [
        "sticky/fresh/equal-zero/p12-m3-t2/s1",
        "sticky/fresh/equal-zero/p12-m3-t2/s2",
        "sticky/member-joins/equal-zero/p12-m3-t2/s1",
        "sticky/member-joins/equal-zero/p12-m3-t2/s2",
        "lag-aware/fresh/equal-uniform/p12-m3-t2/s1",
        "lag-aware/fresh/equal-zipf/p12-m3-t2/s1",
        "lag-aware/fresh/equal-uniform/p12-m3-t2/s2",
        "lag-aware/fresh/equal-zipf/p12-m3-t2/s2",
        "lag-aware/member-joins/equal-uniform/p12-m3-t2/s1",
        "lag-aware/member-joins/equal-zipf/p12-m3-t2/s1",
        "lag-aware/member-joins/equal-uniform/p12-m3-t2/s2",
        "lag-aware/member-joins/equal-zipf/p12-m3-t2/s2",
    ]
    assert experiment.varied == ["judged_on", "churn", "seed", "lags"]
    assert len(experiment.digest) == 16 and experiment.name == "trial"


def test_zip_and_exclude(tmp_path):
    """Tests that zipped factors advance together and an exclude rule drops exactly what it names."""
    path = write(
        tmp_path,
        HEAD
        + """
[[scenarios]]
judged_on = "sticky"
churn = ["fresh", "member-leaves"]
size = [[12, 3, 2], [24, 4, 3], [60, 7, 4]]
seed = [1, 2, 3]
zip = [["size", "seed"]]
exclude = [{churn = "member-leaves", size = [60, 7, 4]}]
""",
    )
    ids = [s.scenario_id for s in load_experiment(path).scenarios]
    assert ids == [
        "sticky/fresh/equal-zero/p12-m3-t2/s1",
        "sticky/fresh/equal-zero/p24-m4-t3/s2",
        "sticky/fresh/equal-zero/p60-m7-t4/s3",
        "sticky/member-leaves/equal-zero/p12-m3-t2/s1",
        "sticky/member-leaves/equal-zero/p24-m4-t3/s2",
    ]


def test_varied_run_factors_are_in_the_ids_and_honoured_by_the_runs(tmp_path):
    """Tests that time limits and solver options crossed are scenarios of their own, solved as set."""
    path = write(
        tmp_path,
        HEAD
        + """
[[scenarios]]
judged_on = "sticky"
churn = "member-leaves"
size = [12, 3, 2]
seed = 1
time_limit = [1, 3]
options = [{cpsat = {workers = 1}}, {cpsat = {workers = 2}}]
strategies = ["sticky", "range"]
solvers = ["heuristic", "cpsat"]
""",
    )
    experiment = load_experiment(path)
    assert [s.tag for s in experiment.scenarios] == [
        "~time_limit=1~options=cpsat.workers:1",
        "~time_limit=1~options=cpsat.workers:2",
        "~time_limit=3~options=cpsat.workers:1",
        "~time_limit=3~options=cpsat.workers:2",
    ]
    rows = solve_frame(scenario_frame(experiment.scenarios[1:3]), time_limit=9)
    # sticky (documented and its variants), range; cpsat only
    assert set(zip(rows["strategy"], rows["solver"])) == {
        ("sticky", "heuristic"),
        ("range", "heuristic"),
        ("sticky", "cpsat"),
    }
    assert sorted(rows["time_limit_s"].unique()) == [1.0, 3.0]
    cpsat = rows[rows["solver"] == "cpsat"]
    assert [json.loads(o)["cpsat"]["workers"] for o in cpsat["options"]] == [2, 1]
    assert (cpsat["status"] == "optimal").all()


def test_a_thousand_scenarios_expand_and_validate_within_two_seconds(tmp_path):
    """Tests the target: a 1,000-scenario file is read, expanded, checked and counted in <= 2 s."""
    path = write(
        tmp_path,
        HEAD
        + """
[[scenarios]]
judged_on = "sticky"
churn = ["fresh", "member-joins", "member-leaves", "several-leave", "topic-added",
         "topic-deleted", "partitions-added", "zombie"]
size = [[12, 3, 2], [24, 4, 3], [60, 7, 4], [200, 10, 5], [400, 20, 8]]
seed = [1, 2, 3, 4, 5]
pattern = ["equal", "random-subsets", "few-topics", "one-odd", "buckets"]
""",
    )
    started = time.perf_counter()
    summary = plan(load_experiment(path), [])
    assert time.perf_counter() - started <= 2.0
    assert summary["scenarios"] == 1000
    assert summary["rows"] == 1000 * 12  # 8 heuristic runs (variants included) + 4 exact each


def test_experiment_show_counts_the_default_suite_as_its_run_did(capsys):
    """Tests `experiment show default`: the 396 scenarios and 3,603 rows the default run wrote,
    plus the aggregate solver on its 254 sticky and rack-aware scenarios, 140 share groups of 5
    runs each (Kafka's SimpleAssignor, uniform, three exact solvers; the 56 largest of them against
    the flow alone: 3 runs) and 72 streams groups of 6 (three streams heuristics, three exact
    solvers)."""
    assert main(["experiment", "show", "default", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    share_rows = 84 * 5 + 56 * 3
    assert (shown["scenarios"], shown["rows"]) == (
        396 + 140 + 72,
        3603 + 254 + share_rows + 72 * 6,
    )
    assert set(shown["varied"]) >= {"judged_on", "churn", "size", "pattern", "lags", "racks"}


@pytest.mark.parametrize(
    ("body", "field", "problem"),
    [
        (
            "[[scenarios]]\njudged_on = 'sticky'\nchurn = 'fresh'\nsize = [12, 3, 2]\nseed = 1\n"
            "colour = 'red'\n",
            "scenarios[0].colour",
            "unknown key",
        ),
        (
            "[[scenarios]]\njudged_on = 'sticky'\nchurn = 'fresh'\nsize = [12, 3, 2]\nseed = '1'\n",
            "scenarios[0].seed[0]",
            "must be an integer >= 0, got a string",
        ),
        (
            "[[scenarios]]\njudged_on = 'sticky'\nchurn = 'fresh'\nsize = [12, 3]\nseed = 1\n",
            "scenarios[0].size[0]",
            "must be [partitions, members, topics]",
        ),
        (
            "[[scenarios]]\njudged_on = 'sticky'\nchurn = 'exploded'\nsize = [12, 3, 2]\nseed = 1\n",
            "scenarios[0].churn[0]",
            "must be one of fresh",
        ),
        (
            "[[scenarios]]\njudged_on = 'sticky'\nchurn = 'fresh'\nsize = [12, 3, 2]\nseed = []\n",
            "scenarios[0].seed",
            "has no levels",
        ),
        (
            "[[scenarios]]\njudged_on = 'sticky'\nchurn = 'fresh'\nsize = [12, 3, 2]\nseed = 1\n"
            "exclude = [{churn = 'fresh'}]\n",
            "scenarios[0]",
            "the crossing is empty",
        ),
        (
            "[[scenarios]]\njudged_on = 'sticky'\nchurn = 'fresh'\nsize = [12, 3, 2]\nseed = [1, 2]\n"
            "zip = [['seed', 'churn']]\n",
            "scenarios[0].zip[0]",
            "as many levels",
        ),
        (
            "[[scenarios]]\njudged_on = 'sticky'\nchurn = 'fresh'\nsize = [12, 3, 2]\nseed = 1\n"
            "options = {cpsat = {threads = 2}}\n",
            "scenarios[0].options[0].cpsat.threads",
            "not a solver option",
        ),
        (
            "[[scenarios]]\njudged_on = 'sticky-replica'\nchurn = 'broker-added'\n"
            "size = [12, 4, 2, 2]\nseed = 1\npattern = 'equal'\n",
            "scenarios[0].pattern",
            "consumer-group factor",
        ),
        (
            "[[scenarios]]\njudged_on = 'sticky'\nchurn = 'fresh'\nsize = [12, 3, 2]\nseed = 1\n"
            "strategies = ['sticky', 'nonesuch']\n",
            "scenarios[0].strategies[1]",
            "not a strategy",
        ),
        ("[[scenarios]\njudged_on = 'sticky'\n", "", "not valid TOML"),
        ("", "scenarios", "at least one [[scenarios]] block"),
    ],
)
def test_a_bad_file_is_one_line_naming_file_field_and_problem(
    tmp_path, capsys, body, field, problem
):
    """Tests that a bad experiment file exits 2 with one line: the file, the field and the problem."""
    path = write(tmp_path, HEAD + body)
    for command in (["experiment", "show", str(path)], ["compare", "--experiment", str(path)]):
        assert main([*command, "--no-progress"] if command[0] == "compare" else command) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err
        assert err.startswith(f"error: {path}: {field}{': ' if field else ''}")
        assert problem in err


def test_missing_name_and_a_missing_file(tmp_path, capsys):
    """Tests the top-level checks: a file without a name, a file that is not there."""
    path = write(tmp_path, 'description = "x"\n')
    assert main(["experiment", "show", str(path)]) == 2
    assert capsys.readouterr().err == f"error: {path}: name: is required\n"
    assert main(["experiment", "show", str(tmp_path / "absent.toml")]) == 2
    assert "absent.toml: cannot read the file" in capsys.readouterr().err


def test_partitions_members_and_topics_as_factors_of_their_own(tmp_path, capsys):
    """Tests the group sizes as three factors (a benchmark grid), and the Kafka grid file's size."""
    path = write(
        tmp_path,
        HEAD
        + """
[[scenarios]]
judged_on = "sticky"
churn = "fresh"
members = [3, 5]
topics = [2, 4]
partitions = 12
seed = 1
""",
    )
    ids = [s.scenario_id for s in load_experiment(path).scenarios]
    assert ids == [
        "sticky/fresh/equal-zero/p12-m3-t2/s1",
        "sticky/fresh/equal-zero/p12-m3-t4/s1",
        "sticky/fresh/equal-zero/p12-m5-t2/s1",
        "sticky/fresh/equal-zero/p12-m5-t4/s1",
    ]
    path.write_text(path.read_text().replace("partitions = 12", "partitions = 3"))
    assert main(["experiment", "show", str(path)]) == 2
    assert "scenarios[0]: more topics (4) than partitions (3)" in capsys.readouterr().err
    path.write_text(path.read_text().replace("partitions = 3", "size = [12, 3, 2]"))
    assert main(["experiment", "show", str(path)]) == 2
    assert "scenarios[0].members: give size, or partitions, members and topics" in (
        capsys.readouterr().err
    )
    assert main(["experiment", "show", "kafka-benchmark-grid", "--json"]) == 0
    grid = json.loads(capsys.readouterr().out)
    # Kafka's consumer grid, then 6 streams groups at StreamsAssignmentScaleTest's sizes
    assert (grid["tier"], grid["scenarios"], grid["largest_size"]) == ("scale", 2 * 4032 + 6, 20000)
