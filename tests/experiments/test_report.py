"""Tests of experiments.report: every plot drawn, one self-contained HTML page."""

from __future__ import annotations

from experiments.pipeline import scenario_frame
from experiments.report import PLOTS, write_report
from experiments.scenarios import suite
from experiments.solve import solve_frame


def test_report_has_every_plot_and_the_headline(tmp_path):
    """Tests that the report embeds all plots as images, writes PNGs and CSV tables, and names its source."""
    rows = solve_frame(scenario_frame(suite("smoke")), time_limit=2)
    path = write_report(rows, tmp_path / "report", source="in-memory smoke rows")
    page = path.read_text()
    assert page.count("data:image/png;base64,") == len(PLOTS) == 5
    assert "replica_frontier" in PLOTS
    assert "Headline" in page and "in-memory smoke rows" in page
    for name in PLOTS:
        png = tmp_path / "report" / f"{name}.png"
        assert png.read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "report" / "headline.csv").read_text().startswith("objective,heuristic")
