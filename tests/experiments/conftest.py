"""Fixtures of the experiments tests: the smoke suite solved once, and its report rendered once."""

from __future__ import annotations

from pathlib import Path

import pytest

import experiments.solve
from experiments.cli import main
from experiments.pipeline import results_folder, scenario_frame, write_batch
from experiments.report import FORMATS
from experiments.scenarios import suite
from experiments.solve import solve_frame


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory) -> Path:
    """The smoke suite solved once, written as a run folder OUT/results/suite=smoke/run_id=test."""
    out = tmp_path_factory.mktemp("out")
    folder = results_folder(out, "smoke", "test")
    write_batch(folder, solve_frame(scenario_frame(suite("smoke")), time_limit=2))
    return folder


def _refuse(*args, **kwargs):
    raise AssertionError("`rebalance-lab report` solved something")


@pytest.fixture(scope="session")
def smoke_report(smoke_run, tmp_path_factory) -> Path:
    """The smoke run's report in every format, rendered by the `report` command, which must not solve."""
    out = tmp_path_factory.mktemp("report")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(experiments.solve, "solve_frame", _refuse)
        assert main(["report", str(smoke_run), "--out", str(out),
                     *[a for f in FORMATS for a in ("--format", f)]]) == 0
    return out
