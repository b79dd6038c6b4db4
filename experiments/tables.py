"""The report's tables: headline numbers with labels, counts and uncertainty, in HTML, Markdown and LaTeX.

:func:`headline_numbers` computes, per objective and heuristic, the numbers a
reader cites: how many scenarios have a proven optimum and how many only an
interval (a feasible incumbent and its bound), the mean level-1 gap to the
proven optimum with a seeded 95% bootstrap confidence interval, its p95 and
maximum, the mean extra level 2 over the scenarios whose level 1 ties
(:func:`experiments.gap.tied_gap`: a level-2 gap below an unequal level 1
means nothing), and the share of scenarios where the heuristic is optimal on
every level.  :func:`headline_tables` turns them into one table per objective
with human labels and formatted numbers; :func:`to_html`, :func:`to_markdown`
and :func:`to_latex` render a table (LaTeX: booktabs rules, escaped text).
"""

from __future__ import annotations

import math
import zlib
from typing import Any

import numpy as np
import pandas as pd

from experiments.gap import summary, tied_gap
from models.registry import STRATEGIES
from problems import READINGS
from problems.objectives import Reading

#: Bootstrap resamples and seed of the confidence intervals (fixed: the report is reproducible).
RESAMPLES = 2000
SEED = 20261123


def heuristic_name(label: str) -> str:
    """The human name of a heuristic run label such as ``lag-aware[cumulative]`` (its strategy's
    record, :attr:`models.registry.Strategy.display`); a label of no strategy is shown as it is."""
    name, bracket, variant = label.partition("[")
    record = STRATEGIES.get(name)
    if record is None or (bracket and not variant.endswith("]")):
        return label
    return record.label_display(variant[:-1] if bracket else None)


def reading(judged_on: str) -> Reading | None:
    """How the report reads the levels of the objective scenarios judged on ``judged_on`` are
    judged on (``None`` for a name no scenario is judged on)."""
    record = STRATEGIES.get(judged_on)
    if record is None or record.judging is None:
        return None
    return READINGS.get(record.objective)


def level_names(objective: str) -> tuple[str, str]:
    """What levels 1 and 2 measure on the scenarios judged on ``objective`` (a strategy's name)."""
    found = reading(objective)
    return ("level 1", "level 2") if found is None else found.columns


# ------------------------------------------------------------------ numbers
def bootstrap_ci(
    values: np.ndarray,
    *,
    key: str,
    seed: int = SEED,
    resamples: int = RESAMPLES,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values``, seeded by ``seed`` and ``key``.

    The key (e.g. ``objective/heuristic``) gives every table row its own
    stream of resamples, so a row's interval does not depend on which other
    rows the report holds.  NaN for no values; the value itself for one.
    """
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return (math.nan, math.nan)
    if len(values) == 1 or np.all(values == values[0]):
        return (float(values[0]), float(values[0]))
    rng = np.random.default_rng([seed, zlib.crc32(key.encode())])
    means = values[rng.integers(0, len(values), size=(resamples, len(values)))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return (float(low), float(high))


#: The columns of :func:`headline_numbers`, in order.
HEADLINE_COLUMNS = [
    "judged_on",
    "heuristic",
    "name",
    "scenarios",
    "proven_optimal",
    "bounded",
    "valid",
    "mean_gap1",
    "ci95_low",
    "ci95_high",
    "p95_gap1",
    "max_gap1",
    "level1_ties",
    "mean_extra2",
    "share_optimal",
    "units",
]
#: The level-1 gap's units in a headline row: relative to the optimum, or in the level's own units
#: where an optimum's level 1 is 0 (a relative gap is infinite there: a restore cost with every
#: task on a caught-up process), for every heuristic of that objective alike.
RELATIVE, ABSOLUTE = "relative", "absolute"


def headline_numbers(gap_rows: pd.DataFrame, *, seed: int = SEED) -> pd.DataFrame:
    """One row per objective and heuristic: counts, level-1 gap statistics with CI, tied level 2;
    the level-1 gap in the level's units (``units``: :data:`ABSOLUTE`) for an objective where a
    proven optimum's level 1 is 0."""
    proven = gap_rows[gap_rows["ref_status"].astype(object) == "optimal"]
    zero = pd.to_numeric(proven["ref_level1"], errors="coerce") == 0
    absolute = set(proven.loc[zero.fillna(False).to_numpy(dtype=bool), "judged_on"])
    records = [
        _headline_record(str(objective), str(heuristic), group, seed, objective in absolute)
        for (objective, heuristic), group in gap_rows.groupby(["judged_on", "heuristic"], sort=True)
    ]
    return pd.DataFrame.from_records(records, columns=HEADLINE_COLUMNS)


def _headline_record(
    objective: str, heuristic: str, group: pd.DataFrame, seed: int, absolute: bool = False
) -> dict[str, Any]:
    """The :func:`headline_numbers` row of one heuristic's gap rows on one objective."""
    status = group["ref_status"].astype(object)
    proven = group[status == "optimal"]
    column = "gap1" if absolute else "rel_gap1"
    gap1 = pd.to_numeric(proven[column], errors="coerce").astype(float).to_numpy()
    gap1 = gap1[~np.isnan(gap1)]
    extra2 = tied_gap(proven, 2).dropna().to_numpy()
    low, high = bootstrap_ci(gap1, key=f"{objective}/{heuristic}", seed=seed)
    return {
        "judged_on": objective,
        "heuristic": heuristic,
        "name": heuristic_name(heuristic),
        "scenarios": int(group["scenario_id"].nunique()),
        "proven_optimal": int(proven["scenario_id"].nunique()),
        "bounded": int(group.loc[status == "feasible", "scenario_id"].nunique()),
        "valid": float(group["valid"].mean()),
        "mean_gap1": float(gap1.mean()) if len(gap1) else math.nan,
        "ci95_low": low,
        "ci95_high": high,
        "p95_gap1": float(np.percentile(gap1, 95)) if len(gap1) else math.nan,
        "max_gap1": float(gap1.max()) if len(gap1) else math.nan,
        "level1_ties": int(len(extra2)),
        "mean_extra2": float(extra2.mean()) if len(extra2) else math.nan,
        "share_optimal": float(proven["heuristic_optimal"].mean()) if len(proven) else math.nan,
        "units": ABSOLUTE if absolute else RELATIVE,
    }


# --------------------------------------------------------------- formatting
def percent(fraction: float) -> str:
    """A fraction as a percentage with sensible precision: 0%, 0.03%, 9.1%, 100%."""
    if fraction is None or (isinstance(fraction, float) and math.isnan(fraction)):
        return "-"
    if math.isinf(fraction):
        return "∞" if fraction > 0 else "-∞"
    value = fraction * 100
    if value == 0:
        return "0%"
    if abs(value) < 1:
        return f"{value:.2g}%"
    text = f"{value:,.1f}"
    return (text[:-2] if text.endswith(".0") else text) + "%"


def number(value: float, *, signed: bool = False) -> str:
    """A count or level value with thousands separators (one decimal below 100)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    sign = "+" if signed and value != 0 else ""
    if abs(value) >= 100 or float(value).is_integer():
        return f"{value:{sign},.0f}"
    return f"{value:{sign},.1f}"


def absolute_objectives(numbers: pd.DataFrame) -> set[str]:
    """The objectives whose headline gives the level-1 gap in the level's units
    (:func:`headline_numbers`)."""
    if "units" not in numbers:
        return set()
    return set(numbers.loc[numbers["units"] == ABSOLUTE, "judged_on"])


def headline_caption(objective: str, absolute: bool = False) -> str:
    """One sentence under an objective's headline table: what is compared, and the level names."""
    found = reading(objective)
    definition = "levels as in docs/design/objectives.md" if found is None else found.definition
    gap = (
        f"extra {level_names(objective)[0]} over the optimum, in its units (an optimum's level 1 "
        "is 0 in some scenarios, where a relative gap is infinite),"
        if absolute
        else "relative gap in level 1"
    )
    return (
        f"Heuristics against the exact optimum on the {objective} objective: {gap} over the "
        f"scenarios with a proven optimum, seeded 95% bootstrap interval of the mean; level 2 compared only where "
        f"level 1 ties ({definition})."
    )


def headline_tables(numbers: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """One labelled, formatted table per objective (one row per heuristic), for every output format."""
    tables: dict[str, pd.DataFrame] = {}
    absolute = absolute_objectives(numbers)
    for objective, group in numbers.groupby("judged_on", sort=True):
        level1, level2 = level_names(str(objective))
        shown = number if objective in absolute else percent
        gap = (
            f"mean extra {level1} over the optimum [95% CI]"
            if objective in absolute
            else f"mean gap to optimum, {level1} [95% CI]"
        )
        tables[str(objective)] = pd.DataFrame(
            {
                "heuristic": group["name"],
                "scenarios: proven optimum": group["proven_optimal"].map(number),
                "scenarios: bounded": group["bounded"].map(number),
                gap: [
                    f"{shown(m)} [{shown(lo)}, {shown(hi)}]" if not math.isnan(m) else "-"
                    for m, lo, hi in zip(group["mean_gap1"], group["ci95_low"], group["ci95_high"])
                ],
                "p95 gap": group["p95_gap1"].map(shown),
                "max gap": group["max_gap1"].map(shown),
                f"mean extra {level2} where {level1} ties (scenarios)": [
                    f"{number(m, signed=True)} ({number(n)})" if n else "-"
                    for m, n in zip(group["mean_extra2"], group["level1_ties"])
                ],
                "optimal on every level": group["share_optimal"].map(percent),
            }
        ).reset_index(drop=True)
    return tables


def detail_table(gap_rows: pd.DataFrame) -> pd.DataFrame:
    """:func:`experiments.gap.summary` by objective, heuristic, churn event and size, labelled.

    Like the headline, over the scenarios with a proven optimum only.
    """
    detail = summary(gap_rows[gap_rows["ref_status"].astype(object) == "optimal"])
    return pd.DataFrame(
        {
            "judged on": detail["judged_on"],
            "heuristic": detail["heuristic"].map(heuristic_name),
            "churn event": detail["churn"],
            "size": detail["size"].map(number),
            "scenarios: proven optimum": detail["scenarios"].map(number),
            "valid answers": detail["valid"].map(percent),
            "mean gap, level 1": detail["mean_rel_gap1"].map(percent),
            "p95 gap, level 1": detail["p95_rel_gap1"].map(percent),
            "max gap, level 1": detail["max_rel_gap1"].map(percent),
            "mean extra level 2 where level 1 ties": detail["mean_gap2"].map(
                lambda v: number(v, signed=True)
            ),
            "optimal on every level": detail["share_optimal"].map(percent),
            "mean runtime (s)": detail["mean_runtime_s"].map(lambda v: f"{v:.3g}"),
        }
    )


def runtime_table(scaling: pd.DataFrame) -> pd.DataFrame:
    """:func:`experiments.gap.runtime_scaling` with labels."""
    return pd.DataFrame(
        {
            "judged on": scaling["judged_on"],
            "run (strategy/solver)": scaling["run"],
            "role": scaling["role"],
            "size": scaling["size"].map(number),
            "median runtime (s)": scaling["median_runtime_s"].map(lambda v: f"{v:.3g}"),
        }
    )


# ---------------------------------------------------------------- renderers
def to_html(table: pd.DataFrame) -> str:
    """An HTML table (text escaped, no index)."""
    return table.to_html(index=False, escape=True, border=0, classes="t", na_rep="-")


def to_markdown(table: pd.DataFrame) -> str:
    """A GitHub Markdown pipe table (``|`` in a cell escaped)."""
    safe = table.rename(columns=lambda c: str(c).replace("|", r"\|"))
    safe = safe.apply(lambda column: column.astype(str).str.replace("|", r"\|", regex=False))
    markdown: str = safe.to_markdown(index=False, tablefmt="github")
    return markdown


def to_latex(table: pd.DataFrame, *, caption: str, label: str) -> str:
    """A LaTeX ``table`` with booktabs rules and every cell and header escaped.

    Needs ``\\usepackage{booktabs}`` and ``\\usepackage{array}`` (the numeric
    columns are right-aligned paragraph columns so the long labels wrap).
    """
    columns = "l" + r">{\raggedleft\arraybackslash}p{2.1cm}" * (table.shape[1] - 1)
    styler = (
        table.style.hide(axis="index").format(escape="latex").format_index(escape="latex", axis=1)
    )
    text = styler.to_latex(
        hrules=True,
        column_format=columns,
        environment="table",
        position="htbp",
        caption=latex_escape(caption),
        label=label,
        position_float="centering",
    )
    return text.replace("∞", r"$\infty$")


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    """Plain text (a caption, a paragraph) with LaTeX's ten special characters escaped."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)
