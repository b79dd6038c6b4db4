"""Tests of experiments.plots: the rules every figure follows, checked on the smoke suite's rows."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_hex

from experiments.gap import gaps
from experiments.plots import MAX_SERIES, PLOTS
from experiments.results import load_results


@pytest.fixture(scope="module")
def figures(smoke_run):
    rows = load_results(smoke_run)
    gap_rows = gaps(rows)
    drawn = {name: plot(rows, gap_rows) for name, plot in PLOTS.items()}
    for figure in drawn.values():
        figure.canvas.draw()
    yield drawn
    plt.close("all")


def _series(axes):
    """(colour, marker) of each labelled line or point set of a panel."""
    out = []
    for line in axes.get_lines():
        if not line.get_label().startswith("_"):
            out.append((to_hex(line.get_color()), line.get_marker()))
    for points in axes.collections:
        if not points.get_label().startswith("_"):
            out.append((to_hex(points.get_facecolor()[0]), "scatter"))
    return out


def test_captions_are_one_sentence(figures):
    """Tests that every plot has a title and a caption of one sentence."""
    for plot in PLOTS.values():
        assert plot.title and plot.caption.endswith(".") and plot.caption.count(". ") == 0


def test_small_multiples_with_few_distinct_series(figures):
    """Tests at most eight series per panel, each with its own colour and marker, and several panels."""
    for name, figure in figures.items():
        panels = [a for a in figure.axes if a.get_visible()]
        assert len(panels) >= 2, name
        for axes in panels:
            series = _series(axes)
            assert len(series) <= MAX_SERIES, (name, axes.get_title())
            lines = [s for s in series if s[1] != "scatter"]
            assert len(set(lines)) == len(lines), (name, axes.get_title(), lines)


def test_legends_sit_outside_the_data(figures):
    """Tests that no legend overlaps a panel's plotting area."""
    for name, figure in figures.items():
        renderer = figure.canvas.get_renderer()
        legends = [(a.get_legend(), a) for a in figure.axes if a.get_legend()] + [
            (g, None) for g in figure.legends
        ]
        for legend, _ in legends:
            box = legend.get_window_extent(renderer)
            for axes in figure.axes:
                if axes.get_visible():
                    assert not box.overlaps(axes.get_window_extent(renderer)), (
                        name,
                        axes.get_title(),
                    )


def test_log_axes_are_labelled_with_units(figures):
    """Tests that every logarithmic axis says what it measures and in which unit."""
    for name, figure in figures.items():
        for axes in figure.axes:
            for scale, text in (
                (axes.get_xscale(), axes.get_xlabel()),
                (axes.get_yscale(), axes.get_ylabel()),
            ):
                if scale == "log":
                    assert "(" in text and text.endswith(")"), (name, text)


def test_two_move_case_is_framed_first(figures):
    """Tests the replica frontier: one panel per scenario, PR 18903's two-move case first and highlighted."""
    panels = [a for a in figures["replica_frontier"].axes if a.get_visible()]
    titles = [a.get_title() for a in panels]
    assert titles[0] == "PR 18903 two-move case" and len(set(titles)) == len(titles) == 2
    assert panels[0].spines["left"].get_linewidth() > panels[1].spines["left"].get_linewidth()
