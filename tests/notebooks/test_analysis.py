"""Tests that notebooks/analysis.ipynb executes on the smoke suite's output and draws the plots."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from experiments.pipeline import results_folder, scenario_frame, write_batch
from experiments.plots import PLOTS
from experiments.scenarios import suite
from experiments.solve import solve_frame

NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "analysis.ipynb"


def test_notebook_runs_on_smoke_results(tmp_path, monkeypatch):
    """Tests that the notebook loads a smoke results folder, shows the headline and every plot, without errors."""
    folder = results_folder(tmp_path, "smoke", "notebook")
    write_batch(folder, solve_frame(scenario_frame(suite("smoke")), time_limit=2))
    monkeypatch.setenv("REBALANCE_LAB_RESULTS", str(tmp_path / "results"))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= len(PLOTS)
    text = "".join(o.get("text", "") for o in outputs)
    assert "scenarios, runs: ['notebook']" in text
    shown = "".join(o.get("data", {}).get("text/markdown", "") for o in outputs)
    assert all(plot.caption in shown for plot in PLOTS.values())   # the report's captions, same functions
    assert shown.count("### ") >= 4 + len(PLOTS)                     # a headline table per objective
