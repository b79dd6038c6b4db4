"""Fixtures of the experiments tests: the smoke run's report rendered once (the run: ``tests/conftest.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

import experiments.runs
from experiments.cli import main
from experiments.report import FORMATS


def _refuse(*args, **kwargs):
    raise AssertionError("`rebalance-lab report` solved something")


@pytest.fixture(scope="session")
def smoke_report(smoke_run, tmp_path_factory) -> Path:
    """The smoke run's report in every format, rendered by the `report` command, which must not solve."""
    out = tmp_path_factory.mktemp("report")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(experiments.runs, "solve_frame", _refuse)
        assert (
            main(
                [
                    "report",
                    str(smoke_run),
                    "--out",
                    str(out),
                    *[a for f in FORMATS for a in ("--format", f)],
                ]
            )
            == 0
        )
    return out
