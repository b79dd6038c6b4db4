"""Benchmark: the small atlas of Kafka's assignor benchmark grid, and the harness's Spark throughput.

Two parts, each printing ``target met`` / ``target MISSED`` lines with its same-run numbers:

* throughput: a sample of the ``kafka-atlas`` suite (every k-th scenario, ``--sample`` of them) run
  from scratch on each master of ``--masters`` (``local[1]``, ``local[2]``, and ``standalone``: a
  Spark standalone cluster of two 1-core workers started here and stopped after), timed as a
  caller pays it (Spark's start included): instances per second;
* ``--full``: the whole suite (20,832 instances) on ``local[2]`` into ``--out`` (resumed there if
  stopped), against the target of at most 30 minutes with every instance certified (its exact row
  ``optimal``, or the row saying why not), then the atlas table (gap percentiles by assignor,
  Kafka event and topic sizes) as Markdown.

    .venv/bin/python benchmarks/atlas.py [--sample 4000] [--masters local[1] local[2] standalone]
    .venv/bin/python benchmarks/atlas.py --full [--out /tmp/atlas] [--masters]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from experiments.atlas_tables import atlas_table
from experiments.experiment import load_suite
from experiments.gap import gaps
from experiments.pipeline import run_suite
from experiments.results import load_results
from experiments.tables import to_markdown
from timing import load_average, target

ROOT = Path(__file__).resolve().parents[1]
SUITE = "kafka-atlas"
#: The targets: the whole small atlas within 30 minutes on local[2], every instance certified.
FULL_TARGET_S = 30 * 60
FULL_INSTANCES = 20_000


def _stop_spark() -> None:
    """A new master needs a new Spark session."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()


def _sample(size: int):
    experiment = load_suite(SUITE)
    step = max(1, len(experiment.scenarios) // size)
    return dataclasses.replace(experiment, scenarios=experiment.scenarios[::step][:size])


def _run(experiment, out: Path, master: str, run_id: str) -> tuple[float, pd.DataFrame]:
    started = time.perf_counter()
    info = run_suite(experiment, out, run_id=run_id, master=master, progress=True)
    wall = time.perf_counter() - started
    return wall, load_results(info.folder)


def throughput(size: int, masters: list[str]) -> None:
    experiment = _sample(size)
    print(f"throughput: {len(experiment.scenarios):,} instances of {SUITE}, load {load_average()}")
    print("| master | instances | rows | wall s | instances/s |")
    print("| --- | --- | --- | --- | --- |")
    for name in masters:
        with tempfile.TemporaryDirectory() as out:
            if name == "standalone":
                sys.path.insert(0, str(ROOT / "tests"))
                from support.spark_standalone import StandaloneCluster

                (Path(out) / "cluster").mkdir()
                cluster = StandaloneCluster(Path(out) / "cluster").start()
                try:
                    wall, rows = _run(experiment, Path(out), cluster.master, "bench")
                finally:
                    _stop_spark()
                    cluster.stop()
                label = "standalone (2 workers x 1 core)"
            else:
                wall, rows = _run(experiment, Path(out), name, "bench")
                _stop_spark()
                label = name
        instances = rows["scenario_id"].nunique()
        print(f"| {label} | {instances:,} | {len(rows):,} | {wall:.1f} | {instances / wall:.1f} |")
    print(f"load after: {load_average()}")


def full(out: Path) -> None:
    experiment = load_suite(SUITE)
    folder_rows_before = 0
    run_folder = out / "results" / f"suite={SUITE}" / "run_id=atlas"
    if run_folder.exists():
        folder_rows_before = len(load_results(run_folder))
    print(f"full atlas: {len(experiment.scenarios):,} instances, load {load_average()}")
    wall, rows = _run(experiment, out, "local[2]", "atlas")
    _stop_spark()
    exact = rows[rows["role"] == "exact"]
    certified = exact.loc[exact["status"] == "optimal", "scenario_id"].nunique()
    uncertified = exact[exact["status"] != "optimal"]
    print(f"load after: {load_average()}")
    print(
        f"{rows['scenario_id'].nunique():,} instances, {len(rows):,} rows, "
        f"{certified:,} certified optimal, wall {wall / 60:.1f} min on local[2]"
    )
    for row in uncertified.head(10).itertuples():
        print(f"  not certified: {row.scenario_id} {row.solver} {row.status} {row.error}")
    if folder_rows_before:
        print(
            f"(resumed: {folder_rows_before:,} rows were already in {run_folder}; no timing target)"
        )
    else:
        print(
            target(
                f"the small atlas (>= {FULL_INSTANCES:,} instances) within 30 min on local[2]",
                wall <= FULL_TARGET_S and rows["scenario_id"].nunique() >= FULL_INSTANCES,
                f"{rows['scenario_id'].nunique():,} instances in {wall / 60:.1f} min",
            )
        )
    print(
        target(
            "every instance certified optimal or its row says why",
            certified + uncertified["scenario_id"].nunique() == rows["scenario_id"].nunique()
            and uncertified["error"].fillna("").ne("").all(),
            f"{certified:,} certified, {uncertified['scenario_id'].nunique():,} not",
        )
    )
    print()
    print(to_markdown(atlas_table(gaps(rows))))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sample", type=int, default=4000, help="instances for the throughput")
    parser.add_argument(
        "--masters", nargs="*", default=["local[1]", "local[2]", "standalone"], help="throughput"
    )
    parser.add_argument("--full", action="store_true", help="run the whole atlas on local[2]")
    parser.add_argument(
        "--out", type=Path, default=Path("/tmp/atlas"), help="the full run's folder"
    )
    args = parser.parse_args()
    if args.masters:
        throughput(args.sample, args.masters)
    if args.full:
        full(args.out)


if __name__ == "__main__":
    main()
