"""The results store: Parquet files of result rows, one folder per suite and run.

Rows live under ``OUT/results/suite=<suite>/run_id=<run id>/``, one file per
batch, each written atomically (a temporary name, then a rename), so a reader
never sees half a batch and a resumed run knows exactly which scenarios are
done.  Plain pyarrow and pandas: reading results needs no Spark.
"""

from __future__ import annotations

import os
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from experiments.runs import RESULT_COLUMNS

#: Columns renamed since rows were first written (old name -> new), renamed as they are read, so a
#: results folder written before keeps working: ``objective`` held the strategy a scenario is judged
#: on.
RENAMED_COLUMNS = {"objective": "judged_on"}


def results_folder(out: Path, suite_name: str, run_id: str) -> Path:
    return Path(out) / "results" / f"suite={suite_name}" / f"run_id={run_id}"


def new_run_id() -> str:
    """A UTC time stamp and a random suffix: unique even for runs started in the same second."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6]


def done_scenarios(folder: Path) -> set[str]:
    """Scenario ids whose rows are already written in ``folder`` (temporary files removed)."""
    done: set[str] = set()
    if not folder.exists():
        return done
    for leftover in folder.glob("*.tmp"):
        leftover.unlink()
    for path in sorted(folder.glob("*.parquet")):
        done.update(pq.read_table(path, columns=["scenario_id"]).column("scenario_id").to_pylist())
    return done


def write_batch(folder: Path, rows: pd.DataFrame) -> Path:
    """Write one batch of rows atomically; returns the Parquet file."""
    folder.mkdir(parents=True, exist_ok=True)
    name = f"batch-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S%f')}-{uuid.uuid4().hex[:8]}.parquet"
    final = folder / name
    temporary = folder / (name + ".tmp")
    table = pa.Table.from_pandas(rows.astype(RESULT_COLUMNS), preserve_index=False)
    pq.write_table(table, temporary)
    with open(temporary, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(temporary, final)
    return final


def load_results(folder: Path) -> pd.DataFrame:
    """All rows under a results folder (a run, a suite or everything), with suite and run id columns.

    Rows written before a column was renamed get its new name (:data:`RENAMED_COLUMNS`).
    """
    folder = Path(folder)
    frames = []
    for path in sorted(folder.rglob("*.parquet")):
        frame = pq.read_table(path).to_pandas()
        frame = frame.rename(
            columns={old: new for old, new in RENAMED_COLUMNS.items() if new not in frame}
        )
        for part in path.relative_to(folder).parts[:-1]:
            key, _, value = part.partition("=")
            if value:
                frame[key] = value
        for key, _, value in (p.partition("=") for p in folder.parts):
            if value and key in ("suite", "run_id"):
                frame[key] = value
        frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=[*RESULT_COLUMNS, "suite", "run_id"])
    return pd.concat(frames, ignore_index=True)
