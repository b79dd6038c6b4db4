"""The comparison pipeline as a Spark job, resumable and atomic per batch.

Details: docs/harness.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
from tqdm import tqdm

from experiments.experiment import Experiment, load_suite
from experiments.experiment_plugins import Plugin, with_plugins
from experiments.results import (
    ALL_COLUMNS,
    done_scenarios,
    new_run_id,
    results_folder,
    write_batch,
)
from experiments.run_lock import hold
from experiments.runs import scenario_frame, solve_frame
from experiments.spark import (
    Session,
    cancel_jobs,
    default_parallelism,
    quiet_pyspark_warnings,
    spark_job,
)
from experiments.trace_runs import solve_trace_frame, trace_frame
from models.registry import register, registered
from problems import ProblemError

_SPARK_TYPES = {
    "string": "string",
    "bool": "boolean",
    "Int64": "bigint",
    "int64": "bigint",
    "float64": "double",
}
#: Spark tasks per core and batch; the default batch is one scenario per task.
TASKS_PER_CORE = 16
#: A long run is written in about this many batches (resuming repeats at most the unfinished one).
BATCHES = 20
MAX_BATCH = 2048
#: Batches in flight at once: Spark's FIFO scheduler gives the next batch's tasks the cores the
#: last, long tasks of the current batch leave idle (one batch at a time left a core idle at the
#: end of every batch).
BATCHES_IN_FLIGHT = 2
#: The run folder's subfolder that keeps the plugins' stderr (one file per plugin and worker).
PLUGIN_LOGS = "plugins"
#: The rows' Spark schema: the result columns, then the trace columns (missing on single rebalances).
RESULT_SCHEMA = ", ".join(f"`{name}` {_SPARK_TYPES[kind]}" for name, kind in ALL_COLUMNS.items())


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
    #: Trace scenarios: in the experiment, solved now, already done (``scenarios``, ``computed``
    #: and ``skipped`` count single rebalances).
    traces: int = 0
    traces_computed: int = 0
    traces_skipped: int = 0


def default_batch_size(pending: int, cores: int) -> int:
    """Scenarios per batch: one per task (:data:`TASKS_PER_CORE` per core), or, for a run of many
    scenarios, about :data:`BATCHES` batches (each a Spark job, whose start costs a fraction of a
    second) of at most :data:`MAX_BATCH` scenarios."""
    return max(TASKS_PER_CORE * cores, min(pending // BATCHES, MAX_BATCH))


def _solve_batches(
    time_limit: float, traces: bool = False, plugin_logs: str | None = None
) -> Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]]:
    # The strategies registered in this process beyond the product's own, registered on the
    # executors too (models.registry.register).
    added = registered()

    def solve(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        quiet_pyspark_warnings()
        register(*added)
        for batch in batches:
            if traces:
                yield solve_trace_frame(batch, time_limit)
            else:  # the trace columns, empty
                yield (
                    solve_frame(batch, time_limit, plugin_logs=plugin_logs)
                    .reindex(columns=list(ALL_COLUMNS))
                    .astype(ALL_COLUMNS)
                )

    return solve


def _check_same_file(folder: Path, experiment: Experiment) -> None:
    """A run resumed from another version of its experiment file is refused (its rows would mix)."""
    for path in sorted(folder.glob("*.parquet")):
        try:
            if "experiment_digest" not in pq.read_schema(path).names:
                return  # written before rows carried their experiment's digest
            found = set(pq.read_table(path, columns=["experiment_digest"]).column(0).to_pylist())
        except (OSError, ValueError):  # a damaged batch: the store sets it aside (results.py)
            continue
        found.discard(None)
        if found and found != {experiment.digest}:
            raise ProblemError(
                "",
                f"run {folder.name.partition('=')[2]} was made from another version of this file "
                f"(digest {found.pop()}, now {experiment.digest}); start a new run",
                experiment.source,
            )
        return


def _solve_on(
    spark: Session,
    frame: pd.DataFrame,
    cores: int,
    time_limit: float,
    traced: bool,
    plugin_logs: str,
) -> pd.DataFrame:
    """The rows of one batch of scenarios (or of trace scenarios) solved as one Spark job.

    Up to :data:`TASKS_PER_CORE` tasks per core (one scenario each in a default batch): Spark
    hands tasks to whichever core is free, so a long scenario does not hold back the short ones
    queued behind it; a large batch of small scenarios (an atlas) shares them out instead of
    paying a task's start per scenario.
    """
    tasks = spark.createDataFrame(frame).repartition(min(len(frame), TASKS_PER_CORE * cores))
    rows: pd.DataFrame = tasks.mapInPandas(
        _solve_batches(time_limit, traced, plugin_logs), schema=RESULT_SCHEMA
    ).toPandas()
    return rows


def run_suite(
    suite_name: str | Experiment,
    out: Path,
    *,
    run_id: str | None = None,
    master: str | None = None,
    batch_size: int | None = None,
    time_limit: float | None = None,
    limit: int | None = None,
    progress: bool = True,
    plugins: list[Plugin] | None = None,
) -> RunInfo:
    """Run (or resume) a suite or an experiment on Spark and write its rows under ``out``.

    Parameters
    ----------
    suite_name
        A shipped suite (:data:`experiments.scenarios.SUITES`) or an experiment file, read
        (:func:`experiments.experiment.load_experiment`).  Rows carry its name and digest.
    out
        Output folder; rows go to ``out/results/suite=<name>/run_id=.../*.parquet``.
    run_id
        Resume this run; a new id (UTC time stamp and random suffix) when omitted.
        A run another process is writing is refused (:mod:`experiments.run_lock`).
    master
        Spark master (``local[*]`` by default).
    batch_size
        Scenarios per atomically written batch (default: 16 per Spark core, or a twentieth of
        the pending scenarios up to 2,048 when that is more); a batch is shared out in up to 16
        Spark tasks per core (one scenario per task in a default batch).
    time_limit
        Seconds per exact solver and scenario where the experiment's blocks set none (default:
        the file's ``time_limit``, for the suites ``experiments.runs.TIME_LIMITS``).
    limit
        Solve at most this many pending scenarios in this invocation.
    progress
        Show a progress bar on stderr.
    plugins
        The researcher's strategies (:mod:`experiments.experiment_plugins`), run on the scenarios
        judged on their objective.
    """
    experiment = suite_name if isinstance(suite_name, Experiment) else load_suite(suite_name)
    suite_name = experiment.name
    run_id = run_id or new_run_id()
    folder = results_folder(out, suite_name, run_id)
    with hold(folder):  # one writer per run (a second one: ProblemError, exit 2)
        _check_same_file(folder, experiment)
        scenarios = with_plugins(experiment.scenarios, plugins or [])
        notes: list[str] = []
        done = done_scenarios(folder, notes)
        pending = [s for s in scenarios if s.scenario_id not in done]
        traces = [t for t in experiment.traces if t.scenario_id not in done]
        if limit is not None:
            pending = pending[:limit]
            traces = traces[: max(0, limit - len(pending))]
        time_limit = experiment.time_limit if time_limit is None else time_limit
        skipped = len(scenarios) - len([s for s in scenarios if s.scenario_id not in done])
        if pending or traces:
            # Spark's start or its job failing: one line naming Spark's log (exit 2); the progress
            # bar stays on the terminal.
            with spark_job(
                str(folder), master, f"rebalance-lab compare {suite_name}", quiet=False
            ) as spark:
                cores = default_parallelism(spark)
                batch_size = batch_size or default_batch_size(len(pending), cores)
                # Largest scenarios first, so the long tasks do not trail at the end.
                pending.sort(key=lambda s: -s.size)
                traces.sort(key=lambda t: -t.size * t.steps)
                total = len(scenarios) + len(experiment.traces)
                bar = tqdm(
                    total=total,
                    initial=total - len(pending) - len(traces),
                    desc=f"{suite_name} {run_id}",
                    unit="scenario",
                    disable=not progress,
                )
                batches = [
                    (scenario_frame(pending[start : start + batch_size]), False)
                    for start in range(0, len(pending), batch_size)
                ] + [
                    (trace_frame(traces[start : start + batch_size]), True)
                    for start in range(0, len(traces), batch_size)
                ]

                def solve_batch(frame: pd.DataFrame, traced: bool) -> None:
                    rows = _solve_on(
                        spark, frame, cores, time_limit, traced, str(folder / PLUGIN_LOGS)
                    )
                    write_batch(folder, experiment.stamp(rows))
                    bar.update(len(frame))

                with ThreadPoolExecutor(BATCHES_IN_FLIGHT) as pool:
                    jobs = [pool.submit(solve_batch, frame, traced) for frame, traced in batches]
                    try:
                        for job in as_completed(jobs):
                            job.result()
                    except BaseException:  # a failed batch or Ctrl-C: nothing more is solved
                        for job in jobs:
                            job.cancel()
                        cancel_jobs(spark)
                        raise
                bar.close()
        return RunInfo(
            folder,
            run_id,
            len(scenarios),
            len(pending),
            skipped,
            tuple(notes),
            traces=len(experiment.traces),
            traces_computed=len(traces),
            traces_skipped=len(experiment.traces)
            - len([t for t in experiment.traces if t.scenario_id not in done]),
        )
