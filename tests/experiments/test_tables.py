"""Tests of experiments.tables: the numbers, their formatting, and each rendering's structure."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from experiments.gap import gaps
from experiments.tables import (
    bootstrap_ci,
    headline_caption,
    headline_numbers,
    headline_tables,
    latex_escape,
    number,
    percent,
    to_latex,
    to_markdown,
)
from support.result_rows import frame, row


@pytest.mark.parametrize(
    "fraction, text",
    [
        (0.0, "0%"),
        (0.0003, "0.03%"),
        (0.0029, "0.29%"),
        (0.091, "9.1%"),
        (0.4170, "41.7%"),
        (1.0, "100%"),
        (12.5, "1,250%"),
        (-0.26, "-26%"),
        (math.nan, "-"),
        (math.inf, "∞"),
    ],
)
def test_percentages_have_sensible_precision(fraction, text):
    """Tests percentages: no trailing .0, two significant digits below 1%, thousands separators."""
    assert percent(fraction) == text


def test_numbers_have_thousands_separators():
    """Tests counts and level values: separators, a sign where asked, one decimal only below 100."""
    assert number(10_230_000_000) == "10,230,000,000"
    assert number(6_123_456.7, signed=True) == "+6,123,457"
    assert number(-26.3, signed=True) == "-26.3"
    assert number(0, signed=True) == "0"
    assert number(17.0, signed=True) == "+17"
    assert number(math.nan) == "-"


def test_bootstrap_interval_is_seeded_and_holds_the_mean():
    """Tests that the 95% bootstrap interval is reproducible, keyed per row, and brackets the mean."""
    values = np.array([0.0, 0.0, 0.1, 0.3, 0.05, 0.0, 0.2, 0.0])
    low, high = bootstrap_ci(values, key="sticky/range")
    assert (low, high) == bootstrap_ci(values, key="sticky/range")
    assert low <= values.mean() <= high and 0 <= low < high <= values.max()
    assert bootstrap_ci(values, key="sticky/roundrobin") != (low, high)
    assert bootstrap_ci(np.array([0.25]), key="x") == (0.25, 0.25)
    assert all(math.isnan(v) for v in bootstrap_ci(np.array([]), key="x"))


def _two_scenarios_one_bounded() -> pd.DataFrame:
    return frame(
        row("a", "sticky", "heuristic", "heuristic", [110, 5]),
        row("a", "sticky", "flow", "optimal", [100, 2]),
        row("b", "sticky", "heuristic", "heuristic", [100, 4]),
        row("b", "sticky", "flow", "optimal", [100, 1]),
        row("c", "sticky", "heuristic", "heuristic", [120, 0]),
        row("c", "sticky", "cpsat", "feasible", [110, 3], bound=[95]),
    )


def test_headline_splits_proven_and_bounded_scenarios():
    """Tests that only proven optima enter the mean gap, bounded ones are counted apart, level 2 needs a tie."""
    numbers = headline_numbers(gaps(_two_scenarios_one_bounded())).iloc[0]
    assert (numbers["scenarios"], numbers["proven_optimal"], numbers["bounded"]) == (3, 2, 1)
    assert numbers["mean_gap1"] == pytest.approx(0.05)  # (10% + 0%) / 2; c is only an interval
    assert numbers["ci95_low"] == 0.0 and numbers["ci95_high"] == pytest.approx(0.1)
    assert (numbers["level1_ties"], numbers["mean_extra2"]) == (
        1,
        3.0,
    )  # b only: a's level 1 differs
    assert numbers["share_optimal"] == 0.0


def test_headline_table_has_human_labels():
    """Tests the formatted table: labels naming the levels, percentages, counts, no raw column names."""
    table = headline_tables(headline_numbers(gaps(_two_scenarios_one_bounded())))["sticky"]
    assert list(table.columns) == [
        "heuristic",
        "scenarios: proven optimum",
        "scenarios: bounded",
        "mean gap to optimum, partition balance [95% CI]",
        "p95 gap",
        "max gap",
        "mean extra moves where partition balance ties (scenarios)",
        "optimal on every level",
    ]
    assert table.iloc[0].tolist() == [
        "Kafka's StickyAssignor (4.x)",
        "2",
        "1",
        "5% [0%, 10%]",
        "9.5%",
        "10%",
        "+3 (1)",
        "0%",
    ]


def _awkward() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "heuristic": ["KIP-169 & co", "under_score #1", "50% {x}"],
            "mean gap [95% CI]": ["9.1% [6%, 12%]", "0%", "∞"],
        }
    )


def test_latex_table_has_booktabs_rules_escaped_text_one_row_per_heuristic():
    """Tests the LaTeX rendering: booktabs rules in order, every special character escaped, one row each."""
    latex = to_latex(_awkward(), caption="Gaps: 100% & more_", label="tab:x")
    assert latex.index(r"\toprule") < latex.index(r"\midrule") < latex.index(r"\bottomrule")
    assert r"\hline" not in latex
    body = (
        latex[latex.index(r"\midrule") + len(r"\midrule") : latex.index(r"\bottomrule")]
        .strip()
        .splitlines()
    )
    assert len(body) == 3 and all(line.endswith(r"\\") for line in body)
    assert body[0].startswith(r"KIP-169 \& co & 9.1\% [6\%, 12\%]")
    assert body[1].startswith(r"under\_score \#1 & 0\%") and body[2].startswith(
        r"50\% \{x\} & $\infty$"
    )
    assert r"mean gap [95\% CI]" in latex and r"\caption{Gaps: 100\% \& more\_}" in latex
    assert not re.search(r"(?<!\\)[%&_#](?![^$]*\$)", latex.replace(" & ", " ").replace(r"\\", ""))


def test_latex_escape_covers_the_ten_specials():
    """Tests the caption escaper on every LaTeX special character."""
    assert latex_escape(r"\&%$#_{}~^") == (
        r"\textbackslash{}\&\%\$\#\_\{\}\textasciitilde{}"
        r"\textasciicircum{}"
    )


def test_markdown_table_is_a_pipe_table():
    """Tests the Markdown rendering: header, separator, one row per heuristic, pipes in cells escaped."""
    table = _awkward().assign(heuristic=["a|b", "c", "d"])
    lines = to_markdown(table).splitlines()
    assert len(lines) == 2 + 3
    assert lines[0].startswith("| heuristic") and set(lines[1]) <= set("|-: ")
    assert r"a\|b" in lines[2] and all(line.count("|") - line.count(r"\|") == 3 for line in lines)


def _streams_with_a_zero_optimum() -> pd.DataFrame:
    """Three streams scenarios whose optimal restore cost is 0 on two (the heuristic restores 40
    and 0 there) and 100 on the third (it restores 150)."""
    rows = []
    for scenario, optimum, found in (("a", 0, 40), ("b", 0, 0), ("c", 100, 150)):
        rows += [
            row(scenario, "streams-ha", "heuristic", "heuristic", [found, 5]),
            row(scenario, "streams-sticky", "flow", "optimal", [optimum, 5], bound=[optimum, 5]),
        ]
    return frame(*rows).assign(judged_on="streams-sticky")


def test_a_headline_where_an_optimum_is_0_is_in_the_levels_units(recwarn):
    """Tests the streams headline where an optimal restore cost is 0 (a relative gap is infinite):
    every gap of that objective in restore cost (not ``∞ [-, -]``), the caption saying so, and no
    numpy warning from a percentile over infinite gaps."""
    numbers = headline_numbers(gaps(_streams_with_a_zero_optimum()))
    record = numbers.iloc[0]
    assert record["units"] == "absolute"
    assert record["mean_gap1"] == pytest.approx(30.0) and record["max_gap1"] == 50.0
    table = headline_tables(numbers)["streams-sticky"]
    column = "mean extra restore cost over the optimum [95% CI]"
    assert column in table.columns and "∞" not in " ".join(table.iloc[0].astype(str))
    assert table.iloc[0][column].startswith("30 [") and table.iloc[0]["max gap"] == "50"
    assert "in its units" in headline_caption("streams-sticky", absolute=True)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
    # Where no optimum is 0, the gaps stay relative.
    relative = headline_numbers(gaps(_two_scenarios_one_bounded()))
    assert set(relative["units"]) == {"relative"}
