"""The report's plots (matplotlib): one question each, small multiples, captioned.

Every plot is a :class:`Plot` in :data:`PLOTS`: a title, a one-sentence
caption of what it shows, and ``draw(rows, gap_rows) -> Figure`` over the
Parquet rows of a run and their gaps (:func:`experiments.gap.gaps`).  The
rules they follow: one panel per objective (or per scenario) instead of one
crowded panel, at most :data:`MAX_SERIES` series per panel with distinct
colours and markers, legends outside the data, log axes labelled with their
units.  The notebook and the report call the same functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter  # noqa: E402

from experiments.gap import runtime_scaling  # noqa: E402
from experiments.scenarios import TWO_MOVE_LIMIT  # noqa: E402
from experiments.tables import heuristic_name, level_names  # noqa: E402
from experiments.trace_gap import cumulative_moves, trace_name  # noqa: E402
from models.registry import STRATEGIES, judged_strategies  # noqa: E402
from problems import READINGS  # noqa: E402

#: At most this many series in one panel (more would repeat colours or markers).
MAX_SERIES = 8
COLOURS = tuple(matplotlib.color_sequences["tab10"][:MAX_SERIES])
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
PANEL = (4.6, 3.0)  # inches per panel, before the legend column
T = TypeVar("T")


@dataclass(frozen=True)
class Plot:
    """A report figure: its title, a one-sentence caption, and how to draw it from the rows."""

    title: str
    caption: str
    draw: Callable[[pd.DataFrame, pd.DataFrame], Figure]

    def __call__(self, rows: pd.DataFrame, gap_rows: pd.DataFrame) -> Figure:
        return self.draw(rows, gap_rows)


def style(index: int) -> dict[str, Any]:
    """Colour and marker of the ``index``-th series of a panel (distinct for index < MAX_SERIES)."""
    return {"color": COLOURS[index % MAX_SERIES], "marker": MARKERS[index % MAX_SERIES]}


def panels(count: int, *, columns: int = 2, legend_width: float = 2.6) -> tuple[Figure, list[Axes]]:
    """A figure of ``count`` panels (``columns`` wide), room on the right of each for its legend."""
    count = max(count, 1)
    columns = min(columns, count)
    rows = math.ceil(count / columns)
    figure, grid = plt.subplots(
        rows,
        columns,
        figsize=(columns * (PANEL[0] + legend_width), rows * PANEL[1]),
        dpi=100,
        layout="constrained",
        squeeze=False,
    )
    axes = list(grid.ravel())
    for extra in axes[count:]:
        extra.set_visible(False)
    return figure, axes[:count]


def legend_outside(axes: Axes, **options: Any) -> None:
    """The panel's legend to the right of its data, never over it."""
    if axes.get_legend_handles_labels()[0]:
        axes.legend(
            loc="upper left",
            bbox_to_anchor=(1.02, 1.0),
            borderaxespad=0,
            fontsize=8,
            frameon=False,
            **options,
        )


def empty(text: str) -> Figure:
    """A one-panel figure saying why there is nothing to draw."""
    figure, (axes,) = panels(1, legend_width=0)
    axes.text(0.5, 0.5, text, ha="center", va="center", transform=axes.transAxes, color="grey")
    axes.set_xticks([])
    axes.set_yticks([])
    return figure


def log_axes(axes: Axes) -> None:
    """Log-log axes in plain numbers: ticks at powers of ten, or at 1, 2, 5 x 10^k over two decades or less.

    Call after drawing (the tick spacing follows the data's range).
    """
    for axis, scale, (low, high) in (
        (axes.xaxis, axes.set_xscale, axes.dataLim.intervalx),
        (axes.yaxis, axes.set_yscale, axes.dataLim.intervaly),
    ):
        scale("log")
        narrow = low > 0 and high / low <= 100
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if narrow else (1.0,)))
        axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.10g}"))
        axis.set_minor_formatter(NullFormatter())


def by_objective(
    frame: pd.DataFrame, **options: Any
) -> tuple[Figure, list[tuple[Axes, str, pd.DataFrame]]]:
    """Small multiples: one panel per objective of ``frame``, each with the objective's rows."""
    objectives = sorted(frame["judged_on"].unique())
    figure, axes_list = panels(len(objectives), **options)
    return figure, [
        (axes, objective, frame[frame["judged_on"] == objective])
        for axes, objective in zip(axes_list, objectives)
    ]


def _first(items: list[T], limit: int = MAX_SERIES) -> list[T]:
    return items[:limit]


# -------------------------------------------------------------------- plots
def draw_gap_distribution(rows: pd.DataFrame, gap_rows: pd.DataFrame) -> Figure:
    """Level-1 relative gap per heuristic (proven-optimal scenarios), one panel per objective."""
    proven = gap_rows[(gap_rows["ref_status"].astype(object) == "optimal")].copy()
    proven["gap_percent"] = pd.to_numeric(proven["rel_gap1"], errors="coerce").astype(float) * 100
    proven = proven[np.isfinite(proven["gap_percent"])]
    if proven.empty:
        return empty("no heuristic run has a proven optimum to compare with")
    figure, panel_data = by_objective(proven, legend_width=0.4)
    rng = np.random.default_rng(0)  # jitter of the dots only
    for axes, objective, data in panel_data:
        names = _first(sorted(data["heuristic"].unique()))
        values = [data.loc[data["heuristic"] == name, "gap_percent"].to_numpy() for name in names]
        axes.boxplot(
            values,
            orientation="horizontal",
            widths=0.5,
            showfliers=False,
            medianprops={"color": "black"},
        )
        for index, vals in enumerate(values):
            axes.scatter(
                vals,
                index + 1 + rng.uniform(-0.15, 0.15, len(vals)),
                s=10,
                alpha=0.6,
                **style(index),
                zorder=3,
            )
        axes.set_yticks(range(1, len(names) + 1), [heuristic_name(n) for n in names], fontsize=8)
        axes.invert_yaxis()
        top = max(1.0, float(np.max(np.concatenate(values))) if len(values) else 1.0)
        axes.set_xlim(-0.03 * top, 1.05 * top)
        axes.set_xlabel(f"gap to optimum, {level_names(objective)[0]} (%)")
        axes.set_title(objective, fontsize=10)
    return figure


def draw_runtime(rows: pd.DataFrame, gap_rows: pd.DataFrame) -> Figure:
    """Median runtime against size, log-log, one panel per objective (heuristics solid, exact dashed)."""
    scaling = runtime_scaling(rows[rows["role"] != "frontier"])
    scaling = scaling[scaling["median_runtime_s"] > 0]
    if scaling.empty:
        return empty("no runtimes yet")
    figure, panel_data = by_objective(scaling)
    for axes, objective, data in panel_data:
        runs = (
            data[["run", "role"]]
            .drop_duplicates()
            .sort_values(["role", "run"], ascending=[False, True])
        )
        for index, (run, role) in enumerate(_first(list(runs.itertuples(index=False, name=None)))):
            series = data[data["run"] == run].sort_values("size")
            strategy, solver = run.rsplit("/", 1)
            name = heuristic_name(strategy) if role == "heuristic" else f"exact: {solver}"
            axes.plot(
                series["size"],
                series["median_runtime_s"],
                linestyle="-" if role == "heuristic" else "--",
                markersize=4,
                linewidth=1.2,
                label=name,
                **style(index),
            )
        log_axes(axes)
        axes.set_xlabel("size (partitions; replicas for placements)")
        axes.set_ylabel("median runtime (s)")
        axes.set_title(objective, fontsize=10)
        legend_outside(axes)
    return figure


def moves_levels() -> dict[str, int]:
    """The level that counts moves on the scenarios judged on each strategy with a moves panel
    (:attr:`models.registry.Judging.moves_panel`; :attr:`problems.objectives.Reading.moves`)."""
    return {
        record.name: moves
        for record in judged_strategies()
        if record.judging is not None
        and record.judging.moves_panel
        and (moves := READINGS[record.objective].moves) is not None
    }


def draw_moves_per_churn(rows: pd.DataFrame, gap_rows: pd.DataFrame) -> Figure:
    """Mean moves per churn event: each heuristic and the exact reference, one panel per objective."""
    moves_level = moves_levels()
    valid = gap_rows[gap_rows["valid"].astype(bool) & gap_rows["judged_on"].isin(list(moves_level))]
    if valid.empty:
        return empty("no objective with a moves level in these rows")
    figure, panel_data = by_objective(valid)
    for axes, objective, data in panel_data:
        level = f"level{moves_level[objective]}"
        events = sorted(data["churn"].unique())
        means = {
            heuristic_name(h): data[data["heuristic"] == h].groupby("churn")[level].mean()
            for h in sorted(data["heuristic"].unique())
        }
        reference = data.drop_duplicates("scenario_id")
        reference = reference[reference["ref_status"].astype(object) == "optimal"]
        if len(reference):
            means["exact optimum"] = reference.groupby("churn")[f"ref_{level}"].mean()
        for index, (name, series) in enumerate(_first(list(means.items()))):
            series = pd.to_numeric(series.reindex(events), errors="coerce").astype(float)
            axes.plot(
                series.to_numpy(),
                np.arange(len(events)),
                linestyle="none",
                markersize=7,
                alpha=0.85,
                label=name,
                **style(index),
            )
        axes.set_yticks(range(len(events)), events, fontsize=8)
        axes.invert_yaxis()
        axes.set_xlabel(
            "mean " + READINGS[STRATEGIES[objective].objective].moves_label + " per scenario"
        )
        axes.grid(axis="y", color="#eee")
        axes.set_title(objective, fontsize=10)
        legend_outside(axes)
    return figure


def draw_replica_frontier(rows: pd.DataFrame, gap_rows: pd.DataFrame) -> Figure:
    """The exact moves/quality frontier, one panel per scenario, the heuristics as points.

    PR 18903's two-move case comes first and is framed: nothing better at
    k = 1, the swap at k = 2.
    """
    frontier = rows[(rows["role"] == "frontier") & rows["valid"].astype(bool)]
    if frontier.empty:
        return empty("no frontier rows (small placement scenarios) in these rows")
    scenarios = sorted(
        frontier["scenario_id"].unique(), key=lambda s: (TWO_MOVE_LIMIT not in s, s)
    )[:MAX_SERIES]
    heuristics = rows[
        (rows["role"] == "heuristic")
        & rows["valid"].astype(bool)
        & rows["scenario_id"].isin(scenarios)
    ]
    figure, axes_list = panels(len(scenarios), columns=4, legend_width=0.0)
    strategies = sorted(heuristics["strategy"].unique())
    for axes, scenario in zip(axes_list, scenarios):
        series = frontier[frontier["scenario_id"] == scenario]
        series = series.assign(k=series["variant"].str.removeprefix("k=").astype(int)).sort_values(
            "k"
        )
        points = heuristics[heuristics["scenario_id"] == scenario]
        _frontier_panel(axes, scenario, series, points, strategies)
    handles, labels = axes_list[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=2, fontsize=8, frameon=False)
    return figure


def _frontier_panel(
    axes: Axes,
    scenario: str,
    series: pd.DataFrame,
    points: pd.DataFrame,
    strategies: list[str],
) -> None:
    """One scenario's panel: the optimum within k moves per level, the heuristics as points."""
    levels = (("level1", "broker balance"), ("level2", "rack spread"))
    for index, (column, name) in enumerate(levels):
        axes.step(
            series["k"],
            series[column].astype(float),
            where="post",
            color=COLOURS[index],
            linewidth=2,
            label=f"optimum within k moves: {name}",
        )
        for offset, strategy in enumerate(strategies, start=1):
            point = points[points["strategy"] == strategy]
            axes.scatter(
                point["level4"].astype(float),
                point[column].astype(float),
                s=45,
                color=COLOURS[index],
                marker=MARKERS[offset],
                edgecolors="black",
                linewidths=0.5,
                zorder=3,
                label=f"{heuristic_name(strategy)}: {name}",
            )
    parts = scenario.split("/")
    if TWO_MOVE_LIMIT in scenario:
        axes.set_title("PR 18903 two-move case", fontsize=9, fontweight="bold", color="#b00")
        for spine in axes.spines.values():
            spine.set_edgecolor("#b00")
            spine.set_linewidth(2.5)
    else:
        axes.set_title(f"{parts[1]}, {parts[3]}, seed {parts[4].removeprefix('s')}", fontsize=9)
    axes.set_xlabel("replica moves (k)")
    axes.set_ylabel("sum of squares")
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))


def draw_lag_balance(rows: pd.DataFrame, gap_rows: pd.DataFrame) -> Figure:
    """Max member lag of each lag-aware heuristic against the proven optimum, one panel per heuristic."""
    lag = gap_rows[
        (gap_rows["judged_on"] == "lag-aware")
        & (gap_rows["ref_status"].astype(object) == "optimal")
    ]
    lag = lag.assign(
        optimum=pd.to_numeric(lag["ref_level1"], errors="coerce").astype(float),
        heuristic_lag=pd.to_numeric(lag["level1"], errors="coerce").astype(float),
    )
    lag = lag[(lag["optimum"] > 0) & (lag["heuristic_lag"] > 0)]
    if lag.empty:
        return empty("no lag-aware scenario with a proven optimum and non-zero lags")
    names = _first(sorted(lag["heuristic"].unique()))
    figure, axes_list = panels(len(names), legend_width=0.6)
    low = float(lag[["optimum", "heuristic_lag"]].min().min()) / 1.5
    high = float(lag[["optimum", "heuristic_lag"]].max().max()) * 1.5
    for index, (axes, name) in enumerate(zip(axes_list, names)):
        data = lag[lag["heuristic"] == name]
        axes.plot([low, high], [low, high], color="grey", linewidth=0.8)
        axes.scatter(data["optimum"], data["heuristic_lag"], s=14, alpha=0.7, **style(index))
        log_axes(axes)
        axes.set_xlim(low, high)
        axes.set_ylim(low, high)
        axes.set_xlabel("optimal max member lag (messages)")
        axes.set_ylabel("heuristic max member lag (messages)")
        axes.set_title(heuristic_name(name), fontsize=10)
    return figure


PLOTS: dict[str, Plot] = {
    "gap_distribution": Plot(
        "How far each heuristic is from the optimum",
        "Each box is one heuristic's relative level-1 gap to the proven optimum across scenarios (box: quartiles, "
        "whiskers: 1.5 IQR, dots: scenarios), one panel per objective; 0% means it matched the optimum.",
        draw_gap_distribution,
    ),
    "runtime_vs_size": Plot(
        "Runtime against size",
        "Median wall-clock time of each heuristic (solid) and exact solver (dashed) against problem size, one "
        "panel per objective on log-log axes; exact solvers are capped by the suite's time limit.",
        draw_runtime,
    ),
    "moves_per_churn": Plot(
        "Moves per churn event",
        "Mean partitions (or, for placements, replicas) moved per churn event by each heuristic and by the exact "
        "optimum, one panel per objective; fewer moves at equal balance is better.",
        draw_moves_per_churn,
    ),
    "replica_frontier": Plot(
        "Replica placement: moves against quality",
        "The best broker balance and rack spread reachable within k replica moves (steps) against where each "
        "heuristic ends up (points), one panel per small placement scenario; in the framed PR 18903 two-move "
        "case nothing improves at k = 1 and the swap at k = 2 lowers the rack spread.",
        draw_replica_frontier,
    ),
    "lag_balance": Plot(
        "Lag balance against the optimum",
        "The largest member lag each lag-aware heuristic leaves against the proven optimum, one dot per scenario "
        "on log-log axes (messages); dots on the grey diagonal are optimal, dots above it are not.",
        draw_lag_balance,
    ),
}


# ------------------------------------------------------------------- traces
#: Panels of the trace figure: one per trace family, at most this many.
TRACE_PANELS = 12
#: How the exact trace runs are drawn: the horizon optimum as the reference line.
REFERENCE_STYLE: dict[str, dict[str, Any]] = {
    "horizon": {"color": "black", "linestyle": "--", "linewidth": 2.4, "zorder": 4},
    "step-optimal": {"color": "grey", "linestyle": ":", "linewidth": 2.0, "zorder": 3},
}


def _trace_panel_scenarios(moves: pd.DataFrame) -> list[str]:
    """One trace per family: of the objective the rows have it on with the lowest panel rank
    (:attr:`models.registry.Judging.trace_panel`), the longest, then the largest, then by id."""
    scenarios = moves.groupby("scenario_id").agg(
        judged_on=("judged_on", "first"), trace=("trace", "first"), steps=("step", "max")
    )
    scenarios["size"] = [
        int(part[1:]) if part[:1] == "p" else 0
        for part in (sid.split("/")[4].split("-")[0] for sid in scenarios.index)
    ]
    order = {
        record.name: record.judging.trace_panel
        for record in judged_strategies()
        if record.judging is not None and record.judging.trace_panel is not None
    }
    scenarios = scenarios.reset_index()
    scenarios["rank"] = scenarios["judged_on"].map(order).fillna(len(order))
    scenarios = scenarios.sort_values(
        ["trace", "rank", "steps", "size", "scenario_id"],
        ascending=[True, True, False, False, True],
    )
    chosen = scenarios.drop_duplicates(["trace"])["scenario_id"]
    return list(chosen)[:TRACE_PANELS]


def draw_trace_moves(rows: pd.DataFrame, gap_rows: pd.DataFrame) -> Figure:
    """Cumulative trace moves per step: each run's line, the horizon optimum as the reference,
    one panel per trace family (runs whose lines coincide share one)."""
    moves = cumulative_moves(rows)
    if moves.empty:
        return empty("no trace rows in these rows")
    scenarios = _trace_panel_scenarios(moves)
    figure, axes_list = panels(len(scenarios), columns=2, legend_width=3.2)
    for axes, scenario in zip(axes_list, scenarios):
        data = moves[moves["scenario_id"] == scenario]
        curves: dict[tuple[float, ...], list[str]] = {}
        for run, series in data.groupby("run", sort=True):
            curves.setdefault(tuple(series.sort_values("step")["moves"]), []).append(str(run))
        heuristics = [
            (curve, names)
            for curve, names in curves.items()
            if not set(names) & set(REFERENCE_STYLE)
        ]
        for index, (curve, names) in enumerate(heuristics[: MAX_SERIES - len(REFERENCE_STYLE)]):
            shown = [trace_name(n) for n in names]
            text = shown[0] + (f" (+{len(shown) - 1} identical)" if len(shown) > 1 else "")
            axes.plot(
                range(len(curve)), curve, markersize=4, linewidth=1.3, label=text, **style(index)
            )
        for run, look in REFERENCE_STYLE.items():
            series = data[data["run"] == run].sort_values("step")
            if len(series):
                same = [trace_name(n) for n in curves[tuple(series["moves"])] if n != run]
                text = trace_name(run) + (f" (+{len(same)} identical)" if same else "")
                axes.plot(series["step"], series["moves"], label=text, **look)
        parts = scenario.split("/")
        axes.set_title(f"{parts[1]}: {parts[2]} ({parts[4]})", fontsize=9)
        axes.set_xlabel("step")
        axes.set_ylabel("cumulative moves")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.set_ylim(bottom=0)
        legend_outside(axes)
    return figure


#: The trace figures, drawn when the rows hold traces.
TRACE_PLOTS: dict[str, Plot] = {
    "trace_moves": Plot(
        "Moves over a trace",
        "Partitions (replicas for placements) moved so far at each step of a trace by each run, "
        "the horizon optimum (dashed black) as the reference and each step optimal alone (dotted "
        "grey), one panel per trace family; a line above the dashed one moves more than the trace "
        "needs, a line below it misses the optimum of the levels above moves at some step.",
        draw_trace_moves,
    ),
}


def save(figure: Figure, folder: Path, name: str) -> tuple[Path, Path]:
    """Write ``name.png`` and ``name.svg`` into ``folder`` and close the figure."""
    png, svg = folder / f"{name}.png", folder / f"{name}.svg"
    figure.savefig(png, format="png")
    figure.set_layout_engine(
        "none"
    )  # keep the layout the PNG computed (constrained layout is costly)
    figure.savefig(svg, format="svg", metadata={"Date": None})
    plt.close(figure)
    return png, svg
