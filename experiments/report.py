"""The comparison report: plots (matplotlib) and tables in one self-contained HTML file.

Every number in the report comes from the Parquet rows of a run (the tables
are computed by :mod:`experiments.gap`; the plots draw those rows), and the
report names the results folder it was built from.  PNG files are written
beside the HTML too, for slides and READMEs.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from experiments.gap import gaps, headline, label, runtime_scaling, summary  # noqa: E402


def _figure() -> tuple[plt.Figure, plt.Axes]:
    figure, axes = plt.subplots(figsize=(8, 4.5), dpi=100)
    return figure, axes


def _empty(axes: plt.Axes, text: str) -> None:
    axes.text(0.5, 0.5, text, ha="center", va="center", transform=axes.transAxes, color="grey")
    axes.set_xticks([])
    axes.set_yticks([])


def plot_gap_distribution(gap_rows: pd.DataFrame) -> plt.Figure:
    """Relative level-1 gap of every heuristic run, one box per objective/heuristic."""
    figure, axes = _figure()
    compared = gap_rows[gap_rows["rel_gap1"].notna() & np.isfinite(gap_rows["rel_gap1"].astype(float))]
    if compared.empty:
        _empty(axes, "no heuristic run has an exact reference yet")
    else:
        groups = sorted(compared.groupby(["objective", "heuristic"]), key=lambda g: g[0])
        axes.boxplot([g["rel_gap1"].astype(float) * 100 for _, g in groups], showfliers=True)
        axes.set_xticks(range(1, len(groups) + 1), [f"{o}\n{h}" for (o, h), _ in groups], fontsize=7, rotation=30)
        axes.set_ylabel("level-1 gap to optimum (%)")
    axes.set_title("Gap distribution per heuristic (level 1, relative)")
    figure.tight_layout()
    return figure


def plot_runtime(rows: pd.DataFrame) -> plt.Figure:
    """Median runtime against size, log-log, heuristic (solid) and exact (dashed)."""
    figure, axes = _figure()
    scaling = runtime_scaling(rows)
    scaling = scaling[scaling["median_runtime_s"] > 0]
    if scaling.empty:
        _empty(axes, "no runtimes yet")
    else:
        for (objective, run, role), series in scaling.groupby(["objective", "run", "role"]):
            series = series.sort_values("size")
            axes.plot(series["size"], series["median_runtime_s"], "-" if role == "heuristic" else "--",
                      marker="o", markersize=3, label=f"{objective}: {run}")
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_xlabel("size (partitions, or replicas for placements)")
        axes.set_ylabel("median runtime (s)")
        axes.legend(fontsize=6, ncol=2)
    axes.set_title("Runtime against size")
    figure.tight_layout()
    return figure


def plot_moves_per_churn(gap_rows: pd.DataFrame, rows: pd.DataFrame) -> plt.Figure:
    """Mean moves (sticky objective, level 2) per churn event: each heuristic and the exact optimum."""
    figure, axes = _figure()
    sticky = rows[(rows["objective"] == "sticky") & rows["valid"]].copy()
    if sticky.empty:
        _empty(axes, "no sticky-objective rows yet")
    else:
        sticky["run"] = np.where(sticky["role"] == "exact", "optimum (" + sticky["solver"] + ")", label(sticky))
        table = sticky.groupby(["churn", "run"])["level2"].mean().unstack("run")
        table.plot.bar(ax=axes, width=0.8)
        axes.set_ylabel("mean moves")
        axes.set_xlabel("churn event")
        axes.legend(fontsize=7)
        axes.tick_params(axis="x", labelrotation=30, labelsize=7)
    axes.set_title("Moves per churn event (KAFKA-9987 vs KAFKA-12464, sticky vs range)")
    figure.tight_layout()
    return figure


def plot_replica_frontier(rows: pd.DataFrame) -> plt.Figure:
    """The exact moves/quality frontier (levels 1 and 2 within k moves), heuristics as points.

    One line per small placement scenario (rows with role ``frontier``); PR 18903's
    two-move case is drawn thick: nothing better at k = 1, the swap at k = 2.
    """
    figure, panels = plt.subplots(1, 2, figsize=(10, 4.5), dpi=100)
    frontier = rows[(rows["role"] == "frontier") & rows["valid"]]
    if frontier.empty:
        for axes in panels:
            _empty(axes, "no frontier rows yet")
    else:
        heuristics = rows[(rows["objective"] == "sticky-replica") & (rows["role"] == "heuristic") & rows["valid"]]
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for index, (scenario, series) in enumerate(sorted(frontier.groupby("scenario_id"))[:8]):
            series = series.assign(k=series["variant"].str.removeprefix("k=").astype(int)).sort_values("k")
            two_move = "two-move-limit" in scenario
            colour = colours[index % len(colours)]
            name = "PR 18903 two-move case" if two_move else scenario.split("/")[1] + " " + scenario.split("/")[3]
            for axes, level in zip(panels, ("level1", "level2")):
                axes.step(series["k"], series[level].astype(float), where="post", color=colour,
                          linewidth=3 if two_move else 1, label=f"optimum: {name}")
                points = heuristics[heuristics["scenario_id"] == scenario]
                for marker, (strategy, point) in zip("os", points.groupby("strategy")):
                    axes.scatter(point["level4"].astype(float), point[level].astype(float), marker=marker,
                                 color=colour, s=30, label=f"{strategy}: {name}")
        for axes, title in zip(panels, ("level 1: replicas per broker", "level 2: rack spread")):
            axes.set_xlabel("moves (budget k for the optimum)")
            axes.set_ylabel("sum of squares")
            axes.set_title(title, fontsize=9)
        panels[1].legend(fontsize=5, ncol=1)
    figure.suptitle("Replica placement: the moves/quality frontier (PR 18903's open question)")
    figure.tight_layout()
    return figure


def plot_lag_balance(rows: pd.DataFrame) -> plt.Figure:
    """Largest member lag (level 1 of lag-aware): each heuristic against the optimum, per scenario."""
    figure, axes = _figure()
    lag = gaps(rows[rows["objective"] == "lag-aware"]) if (rows["objective"] == "lag-aware").any() else None
    if lag is None or lag["ref_level1"].isna().all():
        _empty(axes, "no lag-aware rows with an exact reference yet")
    else:
        for name, series in lag.groupby("heuristic"):
            axes.scatter(series["ref_level1"], series["level1"], s=14, label=name, alpha=0.7)
        top = float(np.nanmax(lag[["ref_level1", "level1"]].astype(float).to_numpy()))
        axes.plot([0, top], [0, top], color="grey", linewidth=0.8, label="optimal")
        axes.set_xlabel("optimal max member lag")
        axes.set_ylabel("heuristic max member lag")
        axes.legend(fontsize=7)
    axes.set_title("Lag balance: KIP-169 (and range) against the optimum")
    figure.tight_layout()
    return figure


PLOTS = {
    "gap_distribution": lambda rows, g: plot_gap_distribution(g),
    "runtime_vs_size": lambda rows, g: plot_runtime(rows),
    "moves_per_churn": lambda rows, g: plot_moves_per_churn(g, rows),
    "replica_frontier": lambda rows, g: plot_replica_frontier(rows),
    "lag_balance": lambda rows, g: plot_lag_balance(rows),
}


def _png(figure: plt.Figure, path: Path) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    plt.close(figure)
    path.write_bytes(buffer.getvalue())
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _table(frame: pd.DataFrame) -> str:
    return frame.to_html(index=False, float_format=lambda v: f"{v:.4g}", na_rep="-", border=0, classes="t")


def write_report(rows: pd.DataFrame, folder: Path, source: str) -> Path:
    """Write ``report.html`` (plots embedded) and the PNGs and CSV tables into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    gap_rows = gaps(rows)
    images = {name: _png(plot(rows, gap_rows), folder / f"{name}.png") for name, plot in PLOTS.items()}
    head = headline(gap_rows)
    detail = summary(gap_rows)
    scaling = runtime_scaling(rows)
    head.to_csv(folder / "headline.csv", index=False)
    scaling.to_csv(folder / "runtime_scaling.csv", index=False)
    detail.to_csv(folder / "summary.csv", index=False)
    errors = rows[rows["status"] == "error"][["scenario_id", "strategy", "variant", "solver", "error"]]
    sections = [
        f"<h1>rebalance-lab comparison</h1><p>Rows: {len(rows)} from <code>{html.escape(source)}</code>; "
        f"scenarios: {rows['scenario_id'].nunique()}.</p>",
        "<h2>Headline: gap to optimum per heuristic</h2>", _table(head),
        *[f"<h2>{name.replace('_', ' ')}</h2><img src='data:image/png;base64,{data}'>" for name, data in images.items()],
        "<h2>By family, objective, heuristic, churn event and size</h2>", _table(detail),
        "<h2>Runtime by size (median seconds)</h2>", _table(scaling),
        "<h2>Runs that failed</h2>", _table(errors) if len(errors) else "<p>none</p>",
    ]
    style = ("body{font-family:sans-serif;margin:2em;max-width:1100px} table.t{border-collapse:collapse;font-size:12px}"
             " table.t td,table.t th{padding:2px 6px;border-bottom:1px solid #ddd} img{max-width:100%}")
    page = f"<!doctype html><html><head><meta charset='utf-8'><title>rebalance-lab report</title>" \
           f"<style>{style}</style></head><body>{''.join(sections)}</body></html>"
    path = folder / "report.html"
    path.write_text(page, encoding="utf-8")
    return path
