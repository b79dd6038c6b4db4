"""The comparison report: tables and plots of a results folder, as HTML, Markdown or LaTeX.

Every number comes from the Parquet rows of a run: the tables from
:mod:`experiments.tables` (over :mod:`experiments.gap`), the figures from
:mod:`experiments.plots`.  :func:`write_report` writes, into one folder, the
chosen renderings (``report.html``, self-contained; ``report.md``;
``report.tex``, a complete document, and ``tables.tex``, the headline tables
alone for ``\\input``), every figure as PNG and SVG, the tables as CSV and the
headline numbers as ``summary.json``.  ``rebalance-lab report RESULTS_DIR``
re-renders any results folder without solving anything again.

When the rows hold traces (:mod:`experiments.trace_runs`), the report adds their section: per
objective a table of each run's total trace moves against the horizon optimum, by trace family
(:mod:`experiments.trace_gap`), and the cumulative moves per step (:data:`experiments.plots.TRACE_PLOTS`);
``traces.csv`` and ``trace_gaps.csv`` hold their numbers.
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from experiments.atlas_tables import ATLAS_TITLE, atlas_table, is_atlas
from experiments.experiment_tables import facet_tables
from experiments.gap import disagreements, gaps, runtime_scaling, single, summary
from experiments.options import Subcommands
from experiments.plots import PLOTS, TRACE_PLOTS, Plot, save
from experiments.tables import (
    SEED,
    absolute_objectives,
    detail_table,
    headline_caption,
    headline_numbers,
    headline_tables,
    latex_escape,
    number,
    runtime_table,
    to_html,
    to_latex,
    to_markdown,
)
from experiments.trace_gap import trace_caption, trace_gaps, trace_numbers, trace_rows, trace_tables
from problems import LEVELS

FORMATS = ("html", "markdown", "latex")
FILES = {"html": "report.html", "markdown": "report.md", "latex": "report.tex"}

#: The columns of the "runs that failed" table.
ERROR_COLUMNS = ["scenario_id", "strategy", "variant", "solver", "error"]


@dataclass(frozen=True)
class Content:
    """What every rendering shows, computed once from the rows."""

    source: str
    rows: pd.DataFrame
    headline: dict[str, pd.DataFrame]
    numbers: pd.DataFrame
    disagreements: pd.DataFrame
    errors: pd.DataFrame
    detail: pd.DataFrame
    runtime: pd.DataFrame
    facets: dict[str, pd.DataFrame] = field(default_factory=dict)
    #: Per objective, the trace table (total moves against the horizon optimum; empty: no traces).
    traces: dict[str, pd.DataFrame] = field(default_factory=dict)
    trace_numbers: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: What reading the rows found odd (a repeated batch, a trace run without its steps), a line
    #: each (:func:`experiments.results.load_results`).
    notes: tuple[str, ...] = ()

    @property
    def scenarios(self) -> int:
        """Single-rebalance scenarios in the rows."""
        return int(single(self.rows)["scenario_id"].nunique())

    @property
    def trace_count(self) -> int:
        """Trace scenarios in the rows."""
        return int(trace_rows(self.rows)["scenario_id"].nunique())

    @property
    def figures(self) -> dict[str, Plot]:
        """The figures shown: every plot, and the trace figures when the rows hold traces."""
        return {**PLOTS, **(TRACE_PLOTS if self.trace_count else {})}

    @property
    def intro(self) -> str:
        runs = (
            ", ".join(sorted(str(r) for r in self.rows["run_id"].dropna().unique()))
            if "run_id" in self.rows
            else ""
        )
        return (
            f"{len(self.rows):,} result rows, {self.scenarios:,} scenarios"
            + (f", {self.trace_count:,} traces" if self.trace_count else "")
            + (f", run {runs}" if runs else "")
            + f", from {self.source}."
        )


def build(
    rows: pd.DataFrame, source: str, *, seed: int = SEED, notes: tuple[str, ...] = ()
) -> tuple[Content, pd.DataFrame]:
    """The report's content and the gap rows it is computed from (``notes``: what reading the
    rows found odd, shown in the report)."""
    gap_rows = gaps(rows)
    numbers = headline_numbers(gap_rows, seed=seed)
    traced = trace_numbers(trace_gaps(rows), seed=seed)
    content = Content(
        source=source,
        rows=rows,
        headline=headline_tables(numbers),
        numbers=numbers,
        disagreements=disagreement_table(disagreements(rows)),
        errors=rows.loc[rows["status"] == "error", [c for c in ERROR_COLUMNS if c in rows]],
        detail=detail_table(gap_rows),
        runtime=runtime_table(runtime_scaling(rows)),
        facets=(
            {ATLAS_TITLE: atlas_table(gap_rows), **facet_tables(gap_rows)}
            if is_atlas(rows)
            else facet_tables(gap_rows)
        ),
        traces=trace_tables(traced),
        trace_numbers=traced,
        notes=tuple(notes),
    )
    return content, gap_rows


def disagreement_table(found: pd.DataFrame) -> pd.DataFrame:
    """Exact rows that claim ``optimal`` but disagree (:func:`experiments.gap.disagreements`), labelled."""
    table = pd.DataFrame(
        {
            "scenario": found["scenario_id"],
            "strategy": found["strategy"],
            "solver": found["solver"],
            "status": found["status"],
            "reason": found["reason"] if "reason" in found else "",
        }
    )
    for level in range(1, LEVELS + 1):
        values = pd.to_numeric(found[f"level{level}"], errors="coerce").astype(float)
        if values.notna().any():
            table[f"level {level}"] = values.map(number)
    return table.reset_index(drop=True)


# ---------------------------------------------------------------- summary.json
def _plain(value: object) -> object:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def summary_json(content: Content, seed: int) -> dict[str, Any]:
    """The headline numbers for scripts (fractions, not percentages; null where undefined)."""
    heuristics = [
        {key: _plain(value) for key, value in record.items()}
        for record in content.numbers.to_dict(orient="records")
    ]
    return {
        "source": content.source,
        "rows": int(len(content.rows)),
        "scenarios": content.scenarios,
        "traces": content.trace_count,
        "run_ids": sorted(str(r) for r in content.rows["run_id"].dropna().unique())
        if "run_id" in content.rows
        else [],
        "bootstrap": {"confidence": 0.95, "seed": seed, "statistic": "mean relative level-1 gap"},
        "headline": heuristics,
        "disagreements": int(content.disagreements["scenario"].nunique())
        if len(content.disagreements)
        else 0,
        "failed_runs": int(len(content.errors)),
        "notes": list(content.notes),
        "trace_moves": [
            {key: _plain(value) for key, value in record.items()}
            for record in content.trace_numbers.to_dict(orient="records")
        ],
    }


# ------------------------------------------------------------------ renderers
def _caption(content: Content, objective: str) -> str:
    """The caption of an objective's headline table, in the units its gaps are given in."""
    return headline_caption(objective, objective in absolute_objectives(content.numbers))


_NO_DISAGREEMENT = (
    "None: every pair of exact solvers that proved optimality agrees on every level, and no answer "
    "beats a proven optimum."
)
_DISAGREEMENT = (
    "These exact runs claim a proven optimum that another row contradicts (another optimum with "
    "different levels, or a valid answer that beats it; see the reason column), so the claim is "
    "false (a bug); the gaps above measure these scenarios against the lexicographically best claim."
)


def render_html(content: Content, images: dict[str, bytes]) -> str:
    """One self-contained page (figures embedded as PNG; PNG and SVG files linked)."""
    parts = [
        "<h1>rebalance-lab comparison</h1>",
        f"<p>{html.escape(content.intro)}</p>",
    ]
    if content.notes:
        items = "".join(f"<li>{html.escape(note)}</li>" for note in content.notes)
        parts.append(f"<h2 id='notes'>Notes on the rows</h2><ul>{items}</ul>")
    parts += [
        "<h2>Headline: each heuristic's gap to the optimum</h2>",
    ]
    for objective, table in content.headline.items():
        parts += [
            f"<h3>{html.escape(objective)}</h3>",
            to_html(table),
            f"<p class='caption'>{html.escape(_caption(content, objective))}</p>",
        ]
    parts += [
        "<h2 id='disagreements'>Exact solvers that disagree</h2>",
        f"<p>{html.escape(_DISAGREEMENT)}</p>" + to_html(content.disagreements)
        if len(content.disagreements)
        else f"<p>{html.escape(_NO_DISAGREEMENT)}</p>",
    ]
    if content.traces:
        parts.append("<h2 id='traces'>Over a trace: total moves against the horizon optimum</h2>")
        for objective, table in content.traces.items():
            parts += [
                f"<h3>{html.escape(objective)}</h3>",
                to_html(table),
                f"<p class='caption'>{html.escape(trace_caption(objective))}</p>",
            ]
    for name, plot in content.figures.items():
        data = base64.b64encode(images[name]).decode("ascii")
        parts.append(
            f"<h2>{html.escape(plot.title)}</h2><figure id='{name}'>"
            f"<img src='data:image/png;base64,{data}' alt='{html.escape(plot.title)}'>"
            f"<figcaption>{html.escape(plot.caption)} "
            f"(<a href='{name}.png'>PNG</a>, <a href='{name}.svg'>SVG</a>)</figcaption></figure>"
        )
    parts += [
        "<h2>Runs that failed</h2>",
        to_html(content.errors) if len(content.errors) else "<p>None.</p>",
        "<details><summary>By objective, heuristic, churn event and size (scenarios with a proven optimum)</summary>",
        to_html(content.detail),
        "</details>",
        "<details><summary>Median runtime by size</summary>",
        to_html(content.runtime),
        "</details>",
    ]
    for factor, table in content.facets.items():  # the factors the experiment varies
        parts += [
            f"<details><summary>By {html.escape(factor)}</summary>",
            to_html(table),
            "</details>",
        ]
    style = (
        "body{font-family:sans-serif;margin:2em auto;max-width:1200px;color:#222}"
        "table.t{border-collapse:collapse;font-size:13px;margin:.5em 0}"
        "table.t td,table.t th{padding:3px 8px;border-bottom:1px solid #ddd;vertical-align:top}"
        "table.t th{text-align:left;background:#f4f4f4}table.t td{text-align:right}"
        "table.t td:first-child{text-align:left}img{max-width:100%}"
        "figure{margin:0 0 2em}figcaption,.caption{color:#555;font-size:14px;max-width:900px}"
    )
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>rebalance-lab report</title>"
        f"<style>{style}</style></head><body>{''.join(parts)}</body></html>"
    )


def render_markdown(content: Content) -> str:
    """The report as Markdown (figures as links to the PNGs beside it)."""
    parts = [
        "# rebalance-lab comparison",
        content.intro,
    ]
    if content.notes:
        parts += ["## Notes on the rows", "\n".join(f"- {note}" for note in content.notes)]
    parts += [
        "## Headline: each heuristic's gap to the optimum",
    ]
    for objective, table in content.headline.items():
        parts += [f"### {objective}", to_markdown(table), _caption(content, objective)]
    parts += [
        "## Exact solvers that disagree",
        _DISAGREEMENT + "\n\n" + to_markdown(content.disagreements)
        if len(content.disagreements)
        else _NO_DISAGREEMENT,
    ]
    if content.traces:
        parts.append("## Over a trace: total moves against the horizon optimum")
        for objective, table in content.traces.items():
            parts += [f"### {objective} (traces)", to_markdown(table), trace_caption(objective)]
    for name, plot in content.figures.items():
        parts += [
            f"## {plot.title}",
            f"![{plot.title}]({name}.png)",
            f"*{plot.caption}* ([SVG]({name}.svg))",
        ]
    parts += [
        "## Runs that failed",
        to_markdown(content.errors) if len(content.errors) else "None.",
        "## By objective, heuristic, churn event and size (scenarios with a proven optimum)",
        to_markdown(content.detail),
    ]
    for factor, table in content.facets.items():  # the factors the experiment varies
        parts += [f"## By {factor} (scenarios with a proven optimum)", to_markdown(table)]
    return "\n\n".join(parts) + "\n"


def latex_tables(content: Content) -> str:
    """The headline tables alone, one ``table`` per objective (needs booktabs and array)."""
    return "\n".join(
        to_latex(table, caption=_caption(content, objective), label=f"tab:headline-{objective}")
        for objective, table in content.headline.items()
    )


def render_latex(content: Content) -> str:
    """A complete LaTeX document: the headline tables (booktabs) and the figures (PNG) with captions."""
    figures = "\n".join(
        "\\begin{figure}[htbp]\n\\centering\n"
        f"\\includegraphics[width=\\linewidth,height=0.8\\textheight,keepaspectratio]{{{name}.png}}\n"
        f"\\caption{{{latex_escape(plot.caption)}}}\n\\label{{fig:{name}}}\n\\end{{figure}}"
        for name, plot in content.figures.items()
    )
    traces = "\n".join(
        to_latex(table, caption=trace_caption(objective), label=f"tab:traces-{objective}")
        for objective, table in content.traces.items()
    )
    return (
        "\\documentclass{article}\n\\usepackage[a4paper,landscape,margin=1.5cm]{geometry}\n"
        "\\usepackage{booktabs}\n\\usepackage{array}\n\\usepackage{graphicx}\n"
        "\\begin{document}\n\\section*{rebalance-lab comparison}\n"
        f"{latex_escape(content.intro)}\n\n{latex_tables(content)}\n{traces}\n{figures}\n"
        "\\end{document}\n"
    )


# --------------------------------------------------------------------- writing
def write_report(
    rows: pd.DataFrame,
    folder: Path,
    source: str,
    *,
    formats: tuple[str, ...] = FORMATS,
    seed: int = SEED,
    notes: tuple[str, ...] = (),
) -> Path:
    """Write the report of ``rows`` into ``folder``; returns the path of the first format's file
    (``notes``: what reading the rows found odd, a line each in the report)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    content, gap_rows = build(rows, source, seed=seed, notes=notes)
    images = {}
    for name, plot in content.figures.items():
        png, _ = save(plot(rows, gap_rows), folder, name)
        images[name] = png.read_bytes()
    if content.trace_count:
        content.trace_numbers.to_csv(folder / "traces.csv", index=False)
        trace_gaps(rows).to_csv(folder / "trace_gaps.csv", index=False)
    content.numbers.to_csv(folder / "headline.csv", index=False)
    summary(gap_rows).to_csv(folder / "summary.csv", index=False)
    runtime_scaling(rows).to_csv(folder / "runtime_scaling.csv", index=False)
    (folder / "summary.json").write_text(
        json.dumps(summary_json(content, seed), indent=2) + "\n", encoding="utf-8"
    )
    written = []
    for fmt in formats:
        path = folder / FILES[fmt]
        if fmt == "html":
            path.write_text(render_html(content, images), encoding="utf-8")
        elif fmt == "markdown":
            path.write_text(render_markdown(content), encoding="utf-8")
        else:
            path.write_text(render_latex(content), encoding="utf-8")
            (folder / "tables.tex").write_text(latex_tables(content), encoding="utf-8")
        written.append(path)
    return written[0]


# ------------------------------------------------------------ `report` command
def register(subcommands: Subcommands) -> None:
    """Add the ``report`` subcommand to the command line."""
    parser = subcommands.add_parser(
        "report",
        help="re-render the report of a results folder (no solving)",
        description="Re-render the report of a results folder that `rebalance-lab compare` wrote (one run: "
        "OUT/results/suite=S/run_id=R, or a folder holding exactly one run) as HTML, Markdown and/or LaTeX, "
        "with PNG and SVG figures, CSV tables and summary.json. Nothing is solved again.",
    )
    parser.add_argument(
        "results", metavar="RESULTS_DIR", help="a results folder (a run, or a folder holding one)"
    )
    parser.add_argument(
        "--format",
        action="append",
        choices=FORMATS,
        dest="formats",
        help="output format; repeat for several (default: html)",
    )
    parser.add_argument(
        "--out",
        help="report folder (default: OUT/report/<suite>-<run id> for a run folder "
        "under OUT/results/, else RESULTS_DIR/report)",
    )
    parser.set_defaults(handler=command)


def default_folder(results: Path, suite: str, run_id: str) -> Path:
    """Where ``compare`` puts the report of a run: ``OUT/report/<suite>-<run id>``."""
    parts = results.resolve().parts
    if (
        len(parts) >= 3
        and parts[-1].startswith("run_id=")
        and parts[-2].startswith("suite=")
        and parts[-3] == "results"
    ):
        return Path(*parts[:-3]) / "report" / f"{suite}-{run_id}"
    return results / "report"


def command(args: argparse.Namespace) -> int:
    from experiments.results import batch_files, load_results
    from experiments.run_lock import check_writable
    from problems import ProblemError

    results = Path(args.results)
    if not results.is_dir():
        raise ProblemError("", "is not a folder", str(results))
    notes: list[str] = []
    rows = load_results(results, notes)  # a damaged batch: exit 2 naming it
    if rows.empty:
        batches = len(batch_files(results))
        raise ProblemError(
            "",
            f"the run has no rows ({batches} batch file{'s' * (batches != 1)}, every one empty)"
            if batches
            else "holds no result rows (no *.parquet files under it)",
            str(results),
        )
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    runs = sorted(rows["run_id"].dropna().unique()) if "run_id" in rows else []
    if len(runs) > 1:
        raise ProblemError(
            "run_id",
            f"holds {len(runs)} runs ({', '.join(runs[:3])}{', ...' if len(runs) > 3 else ''});"
            " pass one run's folder",
            str(results),
        )
    suite = (
        str(rows["suite"].dropna().iloc[0])
        if "suite" in rows and rows["suite"].notna().any()
        else "results"
    )
    folder = (
        Path(args.out) if args.out else default_folder(results, suite, runs[0] if runs else "run")
    )
    formats = tuple(dict.fromkeys(args.formats or ["html"]))
    check_writable(folder)  # a bad --out is one line, not a traceback after the figures
    write_report(rows, folder, str(results), formats=formats, notes=tuple(notes))
    for fmt in formats:
        print(f"report: {folder / FILES[fmt]}", file=sys.stderr)
    return 0
