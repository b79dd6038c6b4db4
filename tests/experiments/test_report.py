"""Tests of experiments.report: every format's structure, the figures, summary.json, the report command."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import experiments.solve
from experiments.cli import main
from experiments.pipeline import load_results, results_folder, scenario_frame, write_batch
from experiments.plots import PLOTS
from experiments.report import FORMATS, build, default_folder, summary_json
from experiments.tables import SEED
from experiments.scenarios import suite
from experiments.solve import solve_frame


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> Path:
    """The smoke suite solved once, written as a run folder OUT/results/suite=smoke/run_id=test."""
    out = tmp_path_factory.mktemp("out")
    folder = results_folder(out, "smoke", "test")
    write_batch(folder, solve_frame(scenario_frame(suite("smoke")), time_limit=2))
    return folder


def _refuse(*args, **kwargs):
    raise AssertionError("`rebalance-lab report` solved something")


@pytest.fixture(scope="module")
def report(smoke_run, tmp_path_factory) -> Path:
    """The smoke run's report in every format, rendered by the `report` command, which must not solve."""
    out = tmp_path_factory.mktemp("report")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(experiments.solve, "solve_frame", _refuse)
        assert main(["report", str(smoke_run), "--out", str(out),
                     *[a for f in FORMATS for a in ("--format", f)]]) == 0
    return out


def test_every_figure_is_written_as_png_and_svg(report):
    """Tests that each plot lands beside the report as a non-empty PNG and SVG."""
    assert len(PLOTS) == 5 and "replica_frontier" in PLOTS
    for name in PLOTS:
        assert (report / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        svg = (report / f"{name}.svg").read_text()
        assert svg.lstrip().startswith("<?xml") and "</svg>" in svg and len(svg) > 1000


def test_html_has_the_headline_tables_captioned_figures_and_a_disagreements_section(report, smoke_run):
    """Tests the HTML page: one labelled table per objective, every figure embedded with a caption, sections."""
    page = (report / "report.html").read_text()
    assert str(smoke_run) in page
    for objective in ("lag-aware", "sticky", "sticky-replica", "stream-join"):
        assert f"<h3>{objective}</h3>" in page
    assert page.count("mean gap to optimum,") == 4 and "[95% CI]" in page and "mean_rel_gap1" not in page
    assert page.count("data:image/png;base64,") == len(PLOTS)
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", page, flags=re.S)
    assert len(captions) == len(PLOTS) and all(c.count(". ") <= 1 for c in captions)
    for name in PLOTS:
        assert f"href='{name}.png'" in page and f"href='{name}.svg'" in page
    assert "id='disagreements'" in page and "Runs that failed" in page


def test_markdown_has_a_table_per_objective_and_links_existing_images(report):
    """Tests the Markdown rendering: headings, pipe tables (one row per heuristic), image links that resolve."""
    text = (report / "report.md").read_text()
    assert text.startswith("# rebalance-lab comparison")
    sticky = text[text.index("### sticky\n"):text.index("### sticky-replica")]
    rows = [line for line in sticky.splitlines() if line.startswith("|")]
    assert len(rows) == 2 + 4   # header, separator; range, round robin, KAFKA-12464, KAFKA-9987
    links = re.findall(r"!\[[^]]*\]\(([^)]+)\)", text)
    assert sorted(links) == sorted(f"{name}.png" for name in PLOTS)
    assert all((report / link).stat().st_size > 0 for link in links)
    assert "## Exact solvers that disagree" in text


def test_latex_document_has_booktabs_tables_and_compiles(report, tmp_path):
    """Tests the LaTeX rendering (one booktabs table per objective, one row per heuristic) and compiles it."""
    tex = (report / "report.tex").read_text()
    tables = (report / "tables.tex").read_text()
    assert r"\usepackage{booktabs}" in tex and tables in tex
    assert tables.count(r"\begin{table}") == tables.count(r"\toprule") == tables.count(r"\bottomrule") == 4
    assert r"\hline" not in tables
    sticky = tables[tables.index("label{tab:headline-sticky}"):]
    body = sticky[sticky.index(r"\midrule"):sticky.index(r"\bottomrule")].splitlines()[1:]
    assert [line.split(" & ")[0] for line in body] == ["range", "round robin", "KAFKA-12464 (KIP-54 when unequal)",
                                                       "KAFKA-9987"]
    assert r"[95\% CI]" in tables and not re.search(r"\d%", tables)
    pdflatex = shutil.which("pdflatex")
    assert pdflatex, "pdflatex is missing: `make test` installs it (Debian texlive-latex-recommended)"
    shutil.copytree(report, tmp_path / "tex")
    done = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "report.tex"],
                          cwd=tmp_path / "tex", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "tex" / "report.pdf").read_bytes()[:5] == b"%PDF-"


def test_summary_json_holds_the_headline_numbers_reproducibly(report, smoke_run):
    """Tests summary.json: one entry per objective and heuristic, fractions, the same CI computed again."""
    summary = json.loads((report / "summary.json").read_text())
    assert summary["scenarios"] == len(suite("smoke")) and summary["run_ids"] == ["test"]
    assert summary["disagreements"] == 0 and summary["failed_runs"] == 0
    entries = {(e["objective"], e["heuristic"]): e for e in summary["headline"]}
    assert len(entries) == 12
    kip169 = entries[("lag-aware", "lag-aware")]
    assert kip169["proven_optimal"] + kip169["bounded"] <= kip169["scenarios"]
    assert kip169["ci95_low"] <= kip169["mean_gap1"] <= kip169["ci95_high"] < 1
    content, _ = build(load_results(smoke_run), "again")
    assert json.loads(json.dumps(summary_json(content, SEED)))["headline"] == summary["headline"]


def test_report_goes_where_compare_puts_it(smoke_run, tmp_path):
    """Tests the default folder: OUT/report/<suite>-<run> for a run folder, else RESULTS_DIR/report."""
    assert default_folder(smoke_run, "smoke", "test") == smoke_run.parents[2].resolve() / "report" / "smoke-test"
    assert default_folder(tmp_path, "smoke", "test") == tmp_path / "report"


def test_report_command_rejects_what_is_not_one_run(smoke_run, tmp_path, capsys):
    """Tests exit 2 and one error line for a missing folder, a folder without rows, and two runs at once."""
    two_runs = tmp_path / "two"
    shutil.copytree(smoke_run.parent, two_runs / "suite=smoke")
    shutil.copytree(smoke_run, two_runs / "suite=smoke" / "run_id=other")
    (tmp_path / "empty").mkdir()
    for folder, problem in ((tmp_path / "missing", "is not a folder"), (tmp_path / "empty", "no result rows"),
                            (two_runs, "run_id: holds 2 runs")):
        assert main(["report", str(folder)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"error: {folder}: ") and problem in err[0]
