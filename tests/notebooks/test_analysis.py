"""Tests that notebooks/analysis.ipynb executes on the smoke suite's output and draws the plots."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

from experiments.plots import PLOTS

NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "analysis.ipynb"


def test_notebook_runs_on_smoke_results(smoke_run, monkeypatch):
    """Tests that the notebook loads a smoke results folder without Spark, shows the headline and every plot,
    without errors."""
    monkeypatch.setenv("REBALANCE_LAB_RESULTS", str(smoke_run.parents[1]))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    notebook.cells.append(
        nbformat.v4.new_code_cell(
            "import sys\nprint('pyspark imported:', 'pyspark' in sys.modules)"
        )
    )
    NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    ).execute()
    outputs = [
        o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])
    ]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= len(PLOTS)
    text = "".join(o.get("text", "") for o in outputs)
    assert "scenarios, runs: ['test']" in text
    assert "pyspark imported: False" in text
    shown = "".join(o.get("data", {}).get("text/markdown", "") for o in outputs)
    # the report's captions, same functions; a headline table per objective
    assert all(plot.caption in shown for plot in PLOTS.values())
    assert shown.count("### ") >= 4 + len(PLOTS)
    # faceted by what the smoke rows vary (patterns, lags, racks, seeds), a table and a figure each
    assert "factors varied: pattern, lags, replication, seed" in text
    assert "### By subscription pattern" in shown
    assert len(images) >= len(PLOTS) + 4
