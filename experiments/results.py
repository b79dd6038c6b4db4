"""The results store: Parquet files of result rows, one folder per suite and run.

Rows live under ``OUT/results/suite=<suite>/run_id=<run id>/``, one file per
batch, each written atomically (a temporary name, then a rename), so a reader
never sees half a batch and a resumed run knows exactly which scenarios are
done.  Plain pyarrow and pandas: reading results needs no Spark.

Every batch is checked as it is read (:func:`read_batch`): a file that is not Parquet (truncated,
overwritten), or lacks a result column, or holds one of another type, is a
:class:`problems.ProblemError` naming the batch.  Resuming a run (:func:`done_scenarios`) sets such a
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

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from experiments.runs import RESULT_COLUMNS
from problems import ProblemError

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
}
#: Every column a batch may hold, in order: the result columns, then the trace columns.
ALL_COLUMNS = {**RESULT_COLUMNS, **TRACE_COLUMNS}
#: The suffix a damaged batch is renamed with when a run resumes (no longer read as a batch).
DAMAGED_SUFFIX = ".damaged"
#: The Arrow types each result column's pandas type is read from (null: a column of missing values).
#: Result columns added after rows were first stored: a batch written before has none of them, and
#: reads as if each were missing in every row (levels 5 and 6 came with the six-level objectives,
#: ``topology`` with skewed topic sizes).
ADDED_COLUMNS = ("topology", "level5", "level6", "bound5", "bound6")
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
        first = next((line for line in str(error).splitlines() if line.strip()), "")
        raise ProblemError(
            "",
            f"cannot be read as a batch of result rows ({type(error).__name__}: {first})",
            str(path),
        ) from None
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
    return table


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
    run and :data:`ROW_KEY` an earlier batch already holds is counted once (the earlier batch's);
    ``notes``, when given, receives a line saying how many and where.

    Raises
    ------
    ProblemError
        A damaged batch (:func:`read_batch`), named.
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
        first = next((line for line in str(error).splitlines() if line.strip()), "")
        raise ProblemError(
            "",
            f"its batches cannot be read together ({type(error).__name__}: {first})",
            str(folder),
        ) from None
    # Trace columns missing from every batch read are added (empty), each in its type.
    missing = pd.Series(pd.NA, index=rows.index, dtype=object)
    rows = rows.assign(**{c: missing for c in TRACE_COLUMNS if c not in rows})
    rows = rows.astype({c: t for c, t in TRACE_COLUMNS.items()})
    row_key = [c for c in ("suite", "run_id") if c in rows] + ROW_KEY + ["step"]
    repeated = rows.duplicated(row_key, keep="first")
    if repeated.any():
        if notes is not None:
            earliest = rows.groupby(row_key, dropna=False, sort=False)["_batch"].transform("first")
            first_row = rows[repeated].iloc[0]
            original = earliest[repeated].iloc[0]
            notes.append(
                f"{folder}: {int(repeated.sum())} rows repeat a row of an earlier batch (the same "
                f"scenario, strategy, variant and solver; first: {first_row['_batch']} repeats "
                f"{original}); each is counted once"
            )
        rows = rows[~repeated].reset_index(drop=True)
    return rows.drop(columns="_batch")
