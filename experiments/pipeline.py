"""The comparison pipeline as a Spark job, resumable and atomic per batch.

Details: docs/harness.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from experiments.results import done_scenarios, new_run_id, results_folder, write_batch
from experiments.run_lock import hold
from experiments.runs import RESULT_COLUMNS, TIME_LIMITS, scenario_frame, solve_frame
from experiments.scenarios import suite
from experiments.spark import default_parallelism, quiet_pyspark_warnings, spark_job

_SPARK_TYPES = {
    "string": "string",
    "bool": "boolean",
    "Int64": "bigint",
    "int64": "bigint",
    "float64": "double",
}
RESULT_SCHEMA = ", ".join(f"`{name}` {_SPARK_TYPES[kind]}" for name, kind in RESULT_COLUMNS.items())


@dataclass(frozen=True)
class RunInfo:
    """Where a run's rows are, and what this invocation did."""

    folder: Path
    run_id: str
    scenarios: int
    computed: int
    skipped: int
    #: What resuming found odd (damaged batches set aside), one line each.
    notes: tuple[str, ...] = ()


def _solve_batches(time_limit: float):
    def solve(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        quiet_pyspark_warnings()
        for batch in batches:
            yield solve_frame(batch, time_limit)

    return solve


def run_suite(
    suite_name: str,
    out: Path,
    *,
    run_id: str | None = None,
    master: str | None = None,
    batch_size: int | None = None,
    time_limit: float | None = None,
    limit: int | None = None,
    progress: bool = True,
) -> RunInfo:
    """Run (or resume) suite ``suite_name`` on Spark and write its rows under ``out``.

    Parameters
    ----------
    suite_name
        A suite of :mod:`experiments.scenarios`.
    out
        Output folder; rows go to ``out/results/suite=.../run_id=.../*.parquet``.
    run_id
        Resume this run; a new id (UTC time stamp and random suffix) when omitted.
        A run another process is writing is refused (:mod:`experiments.run_lock`).
    master
        Spark master (``local[*]`` by default).
    batch_size
        Scenarios per atomically written batch (default: 16 per Spark core); each
        scenario is one Spark task.
    time_limit
        Seconds per exact solver and scenario (default: ``TIME_LIMITS[suite_name]``).
    limit
        Solve at most this many pending scenarios in this invocation.
    progress
        Show a progress bar on stderr.
    """
    run_id = run_id or new_run_id()
    folder = results_folder(out, suite_name, run_id)
    with hold(folder):  # one writer per run (a second one: ProblemError, exit 2)
        scenarios = suite(suite_name)
        notes: list[str] = []
        done = done_scenarios(folder, notes)
        pending = [s for s in scenarios if s.scenario_id not in done]
        if limit is not None:
            pending = pending[:limit]
        time_limit = TIME_LIMITS[suite_name] if time_limit is None else time_limit
        if pending:
            # Spark's start or its job failing: one line naming Spark's log (exit 2); the progress
            # bar stays on the terminal.
            with spark_job(
                str(folder), master, f"rebalance-lab compare {suite_name}", quiet=False
            ) as spark:
                cores = default_parallelism(spark)
                batch_size = batch_size or 16 * cores
                # Largest scenarios first, so the long tasks do not trail at the end.
                pending.sort(key=lambda s: -s.size)
                bar = tqdm(
                    total=len(scenarios),
                    initial=len(done),
                    desc=f"{suite_name} {run_id}",
                    unit="scenario",
                    disable=not progress,
                )
                for start in range(0, len(pending), batch_size):
                    batch = pending[start : start + batch_size]
                    # One scenario per task: Spark hands tasks to whichever core is free, so a long
                    # scenario does not hold back the short ones queued behind it in the same task.
                    tasks = spark.createDataFrame(scenario_frame(batch)).repartition(len(batch))
                    rows = tasks.mapInPandas(
                        _solve_batches(time_limit), schema=RESULT_SCHEMA
                    ).toPandas()
                    write_batch(folder, rows)
                    bar.update(len(batch))
                bar.close()
        return RunInfo(folder, run_id, len(scenarios), len(pending), len(done), tuple(notes))
