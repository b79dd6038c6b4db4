"""The results store: Parquet files of result rows, one folder per suite and run.

Rows live under ``OUT/results/suite=<suite>/run_id=<run id>/``, one file per
batch, each written atomically (a temporary name, then a rename), so a reader
never sees half a batch and a resumed run knows exactly which scenarios are
done.  Plain pyarrow and pandas: reading results needs no Spark.

Every batch is checked as it is read (:func:`read_batch`): a file that is not Parquet (truncated,
overwritten), or lacks a result column, or holds one of another type, or holds trace rows without
their trace columns, or misses a value where every row has one (a key, ``valid``, a size), or holds
a value no run writes (a negative level, moves or runtime, a runtime that is not a number, an
unknown status or role), is a :class:`problems.ProblemError` naming the batch.  A run is checked
as a whole when it is loaded (:func:`load_results`): rows of another experiment (name and file
digest) than the run's first batch's, and a row repeated in another batch with other results, are
refused naming the batch; a trace run whose per-trace row lacks its per-step rows is a note (it is
not compared).  Resuming a run (:func:`done_scenarios`) sets such a
batch aside (renamed ``<name>.damaged``) so that its scenarios are solved again.  A row is
identified by its run, scenario, strategy, variant and solver (:data:`ROW_KEY`; a trace's rows also
by their step, :data:`TRACE_COLUMNS`); a row repeated in another batch (the same batch copied under a
second name) is counted once, with a note.

Trace scenarios (:mod:`experiments.trace_runs`) write rows of the same store with the columns of
:data:`TRACE_COLUMNS` beside the result columns: one row per step and one per trace (``step``
missing).  The columns are optional: a batch written before traces were run has none, and reads as
rows whose trace columns are missing.
"""

from __future__ import annotations

import json
import os
import uuid
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from experiments.runs import RESULT_COLUMNS
from problems import LEVELS, ProblemError
from problems.result import STATUSES

#: Columns renamed since rows were first written (old name -> new), renamed as they are read, so a
#: results folder written before keeps working: ``objective`` held the strategy a scenario is judged
#: on.
RENAMED_COLUMNS = {"objective": "judged_on"}
#: What identifies a result row within a run.
ROW_KEY = ["scenario_id", "strategy", "variant", "solver"]
#: The columns of trace rows (optional in a batch): the trace family (missing on a single
#: rebalance's row), its steps, the step of a per-step row (missing on the per-trace row), the trace
#: moves (of the step, or the total), a proven lower bound on the total moves (an exact run's
#: per-trace row) and the rebalance rounds a step took (cooperative-sticky; their sum per trace).
TRACE_COLUMNS = {
    "trace": "string",
    "steps": "Int64",
    "step": "Int64",
    "moves": "Int64",
    "moves_bound": "Int64",
    "rounds": "Int64",
    # What a recorded trace's ``observed`` run measured (the other runs leave them missing).
    "settle_ms": "Int64",
    "unowned_partition_ms": "Int64",
}
#: Every column a batch may hold, in order: the result columns, then the trace columns.
ALL_COLUMNS = {**RESULT_COLUMNS, **TRACE_COLUMNS}
#: The trace columns every trace row needs (the others, added later, read as missing).
NEEDED_TRACE_COLUMNS = ("trace", "steps", "step", "moves")
#: Columns every row holds a value in.
NOT_NULL = (
    "scenario_id",
    "family",
    "judged_on",
    "strategy",
    "solver",
    "role",
    "status",
    *(column for column, kind in RESULT_COLUMNS.items() if kind in ("bool", "int64")),
)
#: Columns whose values are never negative (counts, levels, moves, sizes, seconds, megabytes).
NON_NEGATIVE = (
    "partitions",
    "members",
    "topics",
    "replication",
    "size",
    "seed",
    *(f"level{i}" for i in range(1, LEVELS + 1)),
    "runtime_s",
    "peak_rss_mb",
    "time_limit_s",
    "steps",
    "step",
    "moves",
    "moves_bound",
    "rounds",
    "settle_ms",
    "unowned_partition_ms",
)
#: The largest seconds and megabytes a run may report (about 30 years; a petabyte).
AT_MOST = {"runtime_s": 1e9, "time_limit_s": 1e9, "peak_rss_mb": 1e9}
#: The values of the text columns that hold one of a few.
KNOWN_VALUES = {
    "status": (*STATUSES, "error"),
    "role": ("heuristic", "exact", "frontier", "observed"),
    "family": ("group", "placement"),
}
#: The columns whose values are a run's results: two copies of a row must agree on them (the
#: runtime, memory and versions may differ between two runs of the same scenario).
RESULT_VALUES = (
    "status",
    "valid",
    *(f"level{i}" for i in range(1, LEVELS + 1)),
    *(f"bound{i}" for i in range(1, LEVELS + 1)),
    "moves",
    "moves_bound",
)
#: The suffix a damaged batch is renamed with when a run resumes (no longer read as a batch).
DAMAGED_SUFFIX = ".damaged"
#: The Arrow types each result column's pandas type is read from (null: a column of missing values).
#: Result columns added after rows were first stored: a batch written before has none of them, and
#: reads as if each were missing in every row (levels 5 and 6 came with the six-level objectives,
#: ``topology`` with skewed topic sizes, ``assignor`` with Kafka's benchmark groups).
ADDED_COLUMNS = ("topology", "assignor", "level5", "level6", "bound5", "bound6")
_ADDED_TYPES = {"string": pa.string(), "Int64": pa.int64()}
_ARROW_TYPES = {
    "string": lambda t: pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_null(t),
    "Int64": lambda t: pa.types.is_integer(t) or pa.types.is_null(t),
    "int64": pa.types.is_integer,
    "bool": pa.types.is_boolean,
    "float64": lambda t: pa.types.is_floating(t) or pa.types.is_integer(t) or pa.types.is_null(t),
}


def results_folder(out: Path, suite_name: str, run_id: str) -> Path:
    return Path(out) / "results" / f"suite={suite_name}" / f"run_id={run_id}"


def new_run_id() -> str:
    """A UTC time stamp and a random suffix: unique even for runs started in the same second."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6]


def batch_files(folder: Path) -> list[Path]:
    """The batch files under ``folder`` (a run, a suite or everything), in name order (written order)."""
    return sorted(path for path in Path(folder).rglob("*.parquet") if path.is_file())


def _renamed(table: pa.Table) -> pa.Table:
    """``table`` with :data:`RENAMED_COLUMNS` renamed, in its columns and its pandas types."""
    names = table.column_names
    renames = {
        old: new for old, new in RENAMED_COLUMNS.items() if old in names and new not in names
    }
    if not renames:
        return table
    metadata = dict(table.schema.metadata or {})
    try:
        info = json.loads(metadata[b"pandas"])
        for column in info["columns"]:
            if column.get("field_name") in renames:
                column["name"] = column["field_name"] = renames[column["field_name"]]
        metadata[b"pandas"] = json.dumps(info).encode()
    except (KeyError, TypeError, ValueError):  # no pandas types recorded: pyarrow's defaults
        metadata.pop(b"pandas", None)
    return table.rename_columns(
        [renames.get(name, name) for name in names]
    ).replace_schema_metadata(metadata)


def read_batch(path: Path) -> pa.Table:
    """The rows of one batch file as an Arrow table, with every result column (:data:`RENAMED_COLUMNS`
    renamed, :data:`ADDED_COLUMNS` missing from older batches added as nulls).

    Raises
    ------
    ProblemError
        Naming the batch: it cannot be read as Parquet, or it lacks a result column, or a column holds
        values of another type.
    """
    try:
        with pq.ParquetFile(path) as batch:  # one file: a third of read_table's cost (no dataset)
            table = batch.read()
    except (pa.ArrowException, OSError, ValueError, EOFError, MemoryError) as error:
        raise _unreadable(error, "cannot be read as a batch of result rows", str(path)) from None
    table = _renamed(table)
    types = dict(zip(table.column_names, table.schema.types))
    for column, kind in ALL_COLUMNS.items():
        if column not in types and column in ADDED_COLUMNS:
            table = table.append_column(column, pa.nulls(len(table), _ADDED_TYPES[kind]))
            continue
        if column not in types:
            if column in TRACE_COLUMNS:  # optional: a batch without trace rows may lack them
                continue
            raise ProblemError(column, "missing column (a damaged batch)", str(path))
        found = types[column]
        if not _ARROW_TYPES[kind](found):
            raise ProblemError(
                column, f"holds {found} values, not {kind} (a damaged batch)", str(path)
            )
    _check_values(table, str(path))
    return table


def _check_values(table: pa.Table, source: str) -> None:
    """Trace rows with their trace columns, no missing value where every row has one, no value a
    run never writes (:data:`NOT_NULL`, :data:`NON_NEGATIVE`, :data:`KNOWN_VALUES`)."""
    names = set(table.column_names)
    traced = [
        c for c in NEEDED_TRACE_COLUMNS if c in names and table.column(c).null_count < len(table)
    ]
    if traced:  # trace rows: every trace column they need is there
        for column in NEEDED_TRACE_COLUMNS:
            if column not in names:
                raise ProblemError(
                    column, "missing column beside trace rows (a damaged batch)", source
                )
    for column in NOT_NULL:
        missing = table.column(column).null_count
        if missing:
            raise ProblemError(column, f"{missing} rows hold no value (a damaged batch)", source)
    for column in NON_NEGATIVE:
        if column not in names or not len(table):
            continue
        values = table.column(column)
        if pa.types.is_null(values.type):
            continue
        if pa.types.is_floating(values.type):
            finite = pc.is_finite(values)
            if pc.any(pc.invert(finite)).as_py():  # nulls are missing values, not infinite ones
                bad = values.filter(pc.invert(finite))[0].as_py()
                raise ProblemError(
                    column,
                    f"holds {bad!r}, not a number of seconds or megabytes (a damaged batch)",
                    source,
                )
        smallest, largest = pc.min_max(values).values()
        if smallest.as_py() is not None and smallest.as_py() < 0:
            raise ProblemError(
                column, f"holds {smallest.as_py()!r}, below 0 (a damaged batch)", source
            )
        if column in AT_MOST and largest.as_py() is not None and largest.as_py() > AT_MOST[column]:
            raise ProblemError(
                column,
                f"holds {largest.as_py()!r}, more than {AT_MOST[column]:g} (a damaged batch)",
                source,
            )
    for column, known in KNOWN_VALUES.items():
        values = table.column(column)
        if not len(values) or pa.types.is_null(values.type):
            continue
        unknown = values.filter(pc.invert(pc.is_in(values, pa.array(known, values.type))))
        if len(unknown):
            raise ProblemError(
                column,
                f"holds {unknown[0].as_py()!r}, not one of {', '.join(known)} (a damaged batch)",
                source,
            )


def done_scenarios(folder: Path, notes: list[str] | None = None) -> set[str]:
    """Scenario ids whose rows are already written in ``folder``: what resuming a run skips.

    Temporary files (a batch being written when its process was killed) are removed.  A damaged batch
    (:func:`read_batch` refuses it) is renamed ``<name>.damaged``, kept for inspection but no longer
    read, so its scenarios are solved again; ``notes``, when given, receives a line saying so.
    """
    done: set[str] = set()
    if not Path(folder).exists():
        return done
    for leftover in Path(folder).glob("*.tmp"):
        leftover.unlink()
    for path in batch_files(folder):
        try:
            ids = read_batch(path).column("scenario_id").drop_null()
        except ProblemError as error:
            aside = path.with_name(path.name + DAMAGED_SUFFIX)
            os.replace(path, aside)
            if notes is not None:
                notes.append(f"{error}; set aside as {aside.name}, its scenarios are solved again")
            continue
        done.update(str(value) for value in ids.to_pylist())
    return done


def write_batch(folder: Path, rows: pd.DataFrame) -> Path:
    """Write one batch of rows atomically; returns the Parquet file."""
    folder.mkdir(parents=True, exist_ok=True)
    name = f"batch-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S%f')}-{uuid.uuid4().hex[:8]}.parquet"
    final = folder / name
    temporary = folder / (name + ".tmp")
    types = {**RESULT_COLUMNS, **{c: t for c, t in TRACE_COLUMNS.items() if c in rows}}
    table = pa.Table.from_pandas(rows.astype(types), preserve_index=False)
    pq.write_table(table, temporary)
    with open(temporary, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(temporary, final)
    return final


def load_results(folder: Path, notes: list[str] | None = None) -> pd.DataFrame:
    """All rows under a results folder (a run, a suite or everything), with suite and run id columns.

    Rows written before a column was renamed get its new name (:data:`RENAMED_COLUMNS`).  A row whose
    run, :data:`ROW_KEY` and step an earlier batch already holds, with the same results, is counted
    once (the earlier batch's); ``notes``, when given, receives a line saying how many and where,
    and one naming the trace runs whose per-trace row has no per-step rows (not compared).

    Raises
    ------
    ProblemError
        A damaged batch (:func:`read_batch`), named; a batch of another experiment than the run's
        first batch, named; a row repeated with other results (:data:`RESULT_VALUES`), both
        batches named.
    """
    folder = Path(folder)
    tables = []
    for path in batch_files(folder):
        table = read_batch(path)
        labels = {
            key: value
            for key, _, value in (
                part.partition("=") for part in path.relative_to(folder).parts[:-1]
            )
            if value
        }
        labels.update(
            (key, value)
            for key, _, value in (p.partition("=") for p in folder.parts)
            if value and key in ("suite", "run_id")
        )
        for key, value in {**labels, "_batch": str(path.relative_to(folder))}.items():
            column = pa.array([value] * len(table), pa.string())
            if key in table.column_names:
                table = table.set_column(table.column_names.index(key), key, column)
            else:
                table = table.append_column(key, column)
        tables.append(table)
    if not tables:
        return pd.DataFrame(columns=[*RESULT_COLUMNS, "suite", "run_id"])
    try:  # one conversion to pandas (it costs per column, not per row), to the pandas types written
        rows: pd.DataFrame = (
            pa.concat_tables(tables, promote_options="permissive")
            .replace_schema_metadata(tables[0].schema.metadata)
            .to_pandas()
        )
    except (pa.ArrowException, ValueError, TypeError, KeyError) as error:
        raise _unreadable(error, "its batches cannot be read together", str(folder)) from None
    # Trace columns missing from every batch read are added (empty), each in its type.
    missing = pd.Series(pd.NA, index=rows.index, dtype=object)
    rows = rows.assign(**{c: missing for c in TRACE_COLUMNS if c not in rows})
    rows = rows.astype({c: t for c, t in TRACE_COLUMNS.items()})
    _check_one_experiment(rows, folder)
    row_key = [c for c in ("suite", "run_id") if c in rows] + ROW_KEY + ["step"]
    repeated = rows.duplicated(row_key, keep="first")
    if repeated.any():
        earliest = rows.groupby(row_key, dropna=False, sort=False)["_batch"].transform("first")
        _check_repeats_agree(rows, row_key, folder)
        if notes is not None:
            first_row = rows[repeated].iloc[0]
            original = earliest[repeated].iloc[0]
            notes.append(
                f"{folder}: {int(repeated.sum())} rows repeat a row of an earlier batch (the same "
                f"scenario, strategy, variant and solver; first: {first_row['_batch']} repeats "
                f"{original}); each is counted once"
            )
        rows = rows[~repeated].reset_index(drop=True)
    if notes is not None:
        notes.extend(_trace_notes(rows, folder))
    return rows.drop(columns="_batch")


def _check_one_experiment(rows: pd.DataFrame, folder: Path) -> None:
    """Rows of one run come from one experiment file: a batch of another (name or digest) than the
    run's first batch is refused, named."""
    if "experiment" not in rows:
        return
    stamped = rows[rows["experiment"].notna()]
    if stamped.empty:
        return
    runs = stamped.groupby("run_id", sort=False) if "run_id" in stamped else [(None, stamped)]
    for _, run in runs:
        marks = run["experiment"].astype(str) + "@" + run["experiment_digest"].astype(str)
        other = marks != marks.iloc[0]
        if other.any():
            batch = run["_batch"][other].iloc[0]
            name, _, digest = marks[other].iloc[0].partition("@")
            first, _, first_digest = marks.iloc[0].partition("@")
            raise ProblemError(
                "experiment",
                f"rows of experiment {name!r} (digest {digest}) in a run of {first!r} (digest "
                f"{first_digest}, {run['_batch'].iloc[0]}); a run's rows come from one file",
                str(folder / batch),
            )


def _check_repeats_agree(rows: pd.DataFrame, key: list[str], folder: Path) -> None:
    """A row repeated in another batch must hold the same results (:data:`RESULT_VALUES`): which
    copy is right cannot be told, so two that differ are refused, both batches named."""
    columns = [c for c in RESULT_VALUES if c in rows]
    signature = pd.util.hash_pandas_object(rows[columns], index=False)
    groups = pd.Series(
        pd.util.hash_pandas_object(rows[key], index=False).to_numpy(), index=rows.index
    )
    first = signature.groupby(groups, sort=False).transform("first")
    conflicting = (signature != first).to_numpy()
    if not conflicting.any():
        return
    at = int(np.flatnonzero(conflicting)[0])
    here = rows.iloc[at]
    there = rows.loc[(groups == groups.iloc[at]).to_numpy()].iloc[0]
    column = next(c for c in columns if str(here[c]) != str(there[c]))
    raise ProblemError(
        "",
        f"{int(conflicting.sum())} rows repeat rows of {there['_batch']} with other results "
        f"(first: {here['scenario_id']} {here['strategy']}/{here['solver']}, {column} "
        f"{there[column]} there, {here[column]} here); keep one of the two",
        str(folder / here["_batch"]),
    )


def _trace_notes(rows: pd.DataFrame, folder: Path) -> list[str]:
    """A trace run that answered but whose per-trace row has no per-step rows beside it: said,
    it is not compared (its levels cannot be checked step by step)."""
    traced = rows[rows["trace"].astype(object).fillna("").astype(str) != ""]
    if traced.empty:
        return []
    run = ["scenario_id", "strategy", "variant", "solver"]
    keys = traced[run].astype(object).fillna("").astype(str).agg("/".join, axis=1)
    with_steps = set(keys[traced["step"].notna()])
    totals = traced["step"].isna() & ~traced["status"].isin(["error", "unknown", "infeasible"])
    bare = keys[totals & ~keys.isin(with_steps)]
    if bare.empty:
        return []
    where = traced.loc[bare.index[0], "_batch"]
    return [
        f"{folder}: {len(bare)} trace runs have a per-trace row without their per-step rows "
        f"(first: {bare.iloc[0]} in {where}); they are not compared"
    ]


def _unreadable(error: Exception, what: str, where: str) -> ProblemError:
    """The one line refusing ``where``: ``what``, with the error's kind and first line."""
    first = next((line for line in str(error).splitlines() if line.strip()), "")
    return ProblemError("", f"{what} ({type(error).__name__}: {first})", where)
