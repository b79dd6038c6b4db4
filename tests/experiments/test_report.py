"""Tests of experiments.report: every format's structure, the figures, summary.json, the report command."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

from experiments.cli import main
from experiments.experiment import suite
from experiments.plots import PLOTS
from experiments.report import build, default_folder, render_markdown, summary_json
from experiments.results import load_results
from experiments.tables import SEED
from support.result_rows import frame, row


def test_every_figure_is_written_as_png_and_svg(smoke_report):
    """Tests that each plot lands beside the report as a non-empty PNG and SVG."""
    assert len(PLOTS) == 5 and "replica_frontier" in PLOTS
    for name in PLOTS:
        assert (smoke_report / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        svg = (smoke_report / f"{name}.svg").read_text()
        assert svg.lstrip().startswith("<?xml") and "</svg>" in svg and len(svg) > 1000


def test_html_has_the_headline_tables_captioned_figures_and_a_disagreements_section(
    smoke_report, smoke_run
):
    """Tests the HTML page: one labelled table per objective, every figure embedded with a caption, sections."""
    page = (smoke_report / "report.html").read_text()
    assert str(smoke_run) in page
    for objective in (
        "lag-aware",
        "rack-aware",
        "share",
        "sticky",
        "sticky-replica",
        "stream-join",
        "streams-sticky",
    ):
        assert f"<h3>{objective}</h3>" in page
    assert (
        page.count("mean gap to optimum,") == 7
        and "[95% CI]" in page
        and "mean_rel_gap1" not in page
    )
    assert page.count("data:image/png;base64,") == len(PLOTS)
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", page, flags=re.S)
    assert len(captions) == len(PLOTS) and all(c.count(". ") <= 1 for c in captions)
    for name in PLOTS:
        assert f"href='{name}.png'" in page and f"href='{name}.svg'" in page
    assert "id='disagreements'" in page and "Runs that failed" in page


def test_markdown_has_a_table_per_objective_and_links_existing_images(smoke_report):
    """Tests the Markdown rendering: headings, pipe tables (one row per heuristic), image links that resolve."""
    text = (smoke_report / "report.md").read_text()
    assert text.startswith("# rebalance-lab comparison")
    sticky = text[text.index("### sticky\n") : text.index("### sticky-replica")]
    rows = [line for line in sticky.splitlines() if line.startswith("|")]
    # header, separator; cooperative-sticky, range, round robin, uniform, server-range, Kafka's,
    # KAFKA-12464, KAFKA-9987
    assert len(rows) == 2 + 8
    links = re.findall(r"!\[[^]]*\]\(([^)]+)\)", text)
    assert sorted(links) == sorted(f"{name}.png" for name in PLOTS)
    assert all((smoke_report / link).stat().st_size > 0 for link in links)
    assert "## Exact solvers that disagree" in text


def test_latex_document_has_booktabs_tables_and_compiles(smoke_report, tmp_path):
    """Tests the LaTeX rendering (one booktabs table per objective, one row per heuristic) and compiles it."""
    tex = (smoke_report / "report.tex").read_text()
    tables = (smoke_report / "tables.tex").read_text()
    assert r"\usepackage{booktabs}" in tex and tables in tex
    assert (
        tables.count(r"\begin{table}")
        == tables.count(r"\toprule")
        == tables.count(r"\bottomrule")
        == 7
    )
    assert r"\hline" not in tables
    sticky = tables[tables.index("label{tab:headline-sticky}") :]
    body = sticky[sticky.index(r"\midrule") : sticky.index(r"\bottomrule")].splitlines()[1:]
    assert [line.split(" & ")[0] for line in body] == [
        "Kafka's CooperativeStickyAssignor (completed)",
        "range",
        "round robin",
        "KIP-848 server range",
        "Kafka's StickyAssignor (4.x)",
        "KAFKA-12464 (KIP-54 when unequal)",
        "KAFKA-9987",
        "KIP-848 uniform (UniformAssignor)",
    ]
    assert r"[95\% CI]" in tables and not re.search(r"\d%", tables)
    pdflatex = shutil.which("pdflatex")
    assert pdflatex, (
        "pdflatex is missing: `make test` installs it (Debian texlive-latex-recommended)"
    )
    shutil.copytree(smoke_report, tmp_path / "tex")
    done = subprocess.run(
        [pdflatex, "-interaction=nonstopmode", "-halt-on-error", "report.tex"],
        cwd=tmp_path / "tex",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "tex" / "report.pdf").read_bytes()[:5] == b"%PDF-"


def test_summary_json_holds_the_headline_numbers_reproducibly(smoke_report, smoke_run):
    """Tests summary.json: one entry per objective and heuristic, fractions, the same CI computed again."""
    summary = json.loads((smoke_report / "summary.json").read_text())
    assert summary["scenarios"] == len(suite("smoke")) and summary["run_ids"] == ["test"]
    assert summary["disagreements"] == 0 and summary["failed_runs"] == 0
    entries = {(e["judged_on"], e["heuristic"]): e for e in summary["headline"]}
    # 5 lag-aware, 8 sticky (uniform, server-range, cooperative-sticky), 6 rack-aware (KIP-881
    # sticky, range, round robin, cooperative-sticky, uniform, server-range), 2 replica, 2
    # stream-join heuristics, 2 share (Kafka's SimpleAssignor, uniform), 3 streams (KIP-1071's
    # sticky, Kafka Streams' high-availability, KIP-924's sticky)
    assert len(entries) == 28
    share = entries[("share", "share")]
    assert share["name"] == "Kafka's SimpleAssignor (KIP-932)" and share["proven_optimal"] == 1
    assert entries[("share", "uniform")]["valid"] == 0  # six members, four partitions: two idle
    kip169 = entries[("lag-aware", "lag-aware")]
    assert kip169["proven_optimal"] + kip169["bounded"] <= kip169["scenarios"]
    assert kip169["ci95_low"] <= kip169["mean_gap1"] <= kip169["ci95_high"] < 1
    content, _ = build(load_results(smoke_run), "again")
    assert json.loads(json.dumps(summary_json(content, SEED)))["headline"] == summary["headline"]


def test_report_goes_where_compare_puts_it(smoke_run, tmp_path):
    """Tests the default folder: OUT/report/<suite>-<run> for a run folder, else RESULTS_DIR/report."""
    assert (
        default_folder(smoke_run, "smoke", "test")
        == smoke_run.parents[2].resolve() / "report" / "smoke-test"
    )
    assert default_folder(tmp_path, "smoke", "test") == tmp_path / "report"


def test_report_command_rejects_what_is_not_one_run(smoke_run, tmp_path, capsys):
    """Tests exit 2 and one error line for a missing folder, a folder without rows, and two runs at once."""
    two_runs = tmp_path / "two"
    shutil.copytree(smoke_run.parent, two_runs / "suite=smoke")
    shutil.copytree(smoke_run, two_runs / "suite=smoke" / "run_id=other")
    (tmp_path / "empty").mkdir()
    for folder, problem in (
        (tmp_path / "missing", "is not a folder"),
        (tmp_path / "empty", "no result rows"),
        (two_runs, "run_id: holds 2 runs"),
    ):
        assert main(["report", str(folder)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"error: {folder}: ") and problem in err[0]


def test_disagreeing_exact_solvers_are_listed_with_labels():
    """Tests the disagreements section: both 'optimal' rows of a scenario whose levels differ,
    with why, counted in JSON."""
    rows = frame(
        row("a", "sticky", "heuristic", "heuristic", [100, 9]),
        row("a", "sticky", "flow", "optimal", [100, 2]),
        row("a", "sticky", "mip", "optimal", [100, 1_752]),
        row("b", "sticky", "heuristic", "heuristic", [100, 0]),
        row("b", "sticky", "flow", "optimal", [100, 0]),
    )
    content, _ = build(rows, "hand-made rows")
    assert content.disagreements.to_dict("records") == [
        {
            "scenario": "a",
            "strategy": "sticky",
            "solver": "flow",
            "status": "optimal",
            "reason": "another optimal row differs",
            "level 1": "100",
            "level 2": "2",
        },
        {
            "scenario": "a",
            "strategy": "sticky",
            "solver": "mip",
            "status": "optimal",
            "reason": "beaten by sticky/flow [100, 2]",
            "level 1": "100",
            "level 2": "1,752",
        },
    ]
    assert summary_json(content, SEED)["disagreements"] == 1
    assert "so the claim is false (a bug)" in render_markdown(content)
