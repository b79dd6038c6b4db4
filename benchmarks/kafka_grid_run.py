"""Benchmark: Kafka's benchmark grid solved to proven optima on Spark, and Kafka's gaps on it.

The ``kafka-benchmark-grid`` suite's 8,064 benchmark groups (4,032 per assignor: the groups
``ConsumerAssignorBenchmark`` hands RANGE and UNIFORM, each holding the assignor's own previous
output; judged on sticky without racks and on rack-aware with them), or every ``--every``-th of them
(a sample that crosses every factor), run through the harness on ``local[2]``: the assignor (the
lab's faithful copy) and the class network (:mod:`models.common.class_network`) on each.  Prints the wall
time, the throughput, the certification, and Kafka's gaps to the optimum (balance, rack mismatches,
moves) by event, subscription, distribution and size with the worst cells; then, with
``--throughput N``, the same first N sampled groups on ``local[2]`` and on a Spark standalone
cluster of two 1-core workers (started and stopped here), instances per second per core.  Each
run prints its CPU seconds (driver, JVMs, Python workers) beside its wall time; a sample runs in
the whole grid's batches and projects the whole grid's time from its rate after Spark's start.
With ``--in-process``, the groups are solved in this process without Spark (the CPU a group costs).
Targets (``met`` / ``MISSED``): the whole grid within 60 minutes on local[2]; every group proven
optimal; the standalone cluster's throughput per core within 20% of local[2]'s.

    nice .venv/bin/python benchmarks/kafka_grid_run.py [--every 1] [--out /tmp/grid] [--throughput 120]
    nice .venv/bin/python benchmarks/kafka_grid_run.py --every 49 --in-process
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
# This checkout's modules in the driver and in Spark's Python workers, wherever it is run from.
sys.path.insert(0, str(ROOT))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))

from experiments.experiment import load_suite  # noqa: E402
from experiments.pipeline import default_batch_size, run_suite  # noqa: E402
from experiments.results import load_results  # noqa: E402
from experiments.tables import to_markdown  # noqa: E402
from timing import load_average, target  # noqa: E402

# Spark's JVMs here (local[2]'s driver; the standalone cluster's daemons, driver and executors)
# compile with C1 only and collect with the serial GC, as the test run's do (tests/conftest.py):
# they schedule and move rows while the Python workers do the work, and C2's compiler threads and
# the parallel GC's took a third of the run's CPU on a 2-core machine (measured: 20.8 -> 11.5 CPU
# seconds for the driver JVM of a 3-group run).  A value the caller set is kept.
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
os.environ.setdefault("SPARK_SUBMIT_OPTS", QUICK_JVM)
os.environ.setdefault("SPARK_DAEMON_JAVA_OPTS", QUICK_JVM)
os.environ.setdefault(
    "PYSPARK_SUBMIT_ARGS", f"--conf 'spark.executor.extraJavaOptions={QUICK_JVM}' pyspark-shell"
)
SUITE = "kafka-benchmark-grid"
GRID_GROUPS = 8064
TARGET_S = 60 * 60
ASSIGNOR = {"uniform": "UNIFORM", "server-range": "RANGE"}
EVENT = {
    "fresh": "FULL",
    "stable": "STABLE",
    "member-joins": "JOIN_ONE",
    "join-many": "JOIN_MANY",
    "member-leaves": "LEAVE_ONE",
    "leave-many": "LEAVE_MANY",
    "partitions-grow": "PARTITIONS_ADDED",
}


def grid(every: int, offset: int = 0):
    """The benchmark groups of the suite (every ``every``-th from ``offset``), as an experiment.

    The suite crosses partitions fastest, then topics, then members (3 x 4 x 4 levels): a step
    prime to 12 and 48, such as 7, visits every size."""
    experiment = load_suite(SUITE)
    groups = [s for s in experiment.scenarios if s.assignor]
    return dataclasses.replace(experiment, scenarios=groups[offset::every])


def _stop_spark() -> None:
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()


def tree_cpu_seconds() -> float:
    """CPU seconds (user and system) of this process and every live descendant (Spark's JVMs, its
    Python workers), read from ``/proc``."""
    tick = os.sysconf("SC_CLK_TCK")
    parent, cpu = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        parent[int(entry)] = int(fields[1])
        cpu[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    tree, grown = {os.getpid()}, True
    while grown:
        found = {pid for pid, up in parent.items() if up in tree} - tree
        tree |= found
        grown = bool(found)
    return sum(cpu.get(pid, 0.0) for pid in tree)


@dataclasses.dataclass
class Timed:
    """One run: its wall seconds, of which Spark's start, and the CPU seconds it took."""

    wall: float
    start: float
    cpu: float
    rows: pd.DataFrame


def _run(experiment, out: Path, master: str, run_id: str, batch_size: int | None = None) -> Timed:
    from experiments.spark import spark_job

    cpu = tree_cpu_seconds()
    began = time.perf_counter()
    # The session run_suite then uses, started first to time Spark's start apart.
    with spark_job(str(out), master, "rebalance-lab kafka grid"):
        started = time.perf_counter()
        info = run_suite(
            experiment, out, run_id=run_id, master=master, batch_size=batch_size, progress=False
        )
        wall = time.perf_counter() - began
        cpu = tree_cpu_seconds() - cpu  # Spark's Python workers live until the session stops
    _stop_spark()
    return Timed(wall, started - began, cpu, load_results(info.folder))


def paired(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per group: the assignor's levels and the optimum's (balance, mismatches, moves)."""
    rows = rows[rows["scenario_id"].str.contains("-after-")]
    heuristic = rows[rows["role"] == "heuristic"].set_index("scenario_id")
    exact = rows[rows["role"] == "exact"].set_index("scenario_id")
    racked = heuristic["judged_on"] == "rack-aware"
    out = pd.DataFrame(
        {
            "assignor": heuristic["strategy"].map(ASSIGNOR),
            "event": heuristic["churn"].map(EVENT),
            "subscription": heuristic["pattern"].map(
                {"equal": "HOMOGENEOUS", "disjoint": "DISJOINT", "nested": "NESTED"}
            ),
            "distribution": heuristic["topology"].str.upper(),
            "rack": np.where(racked, "PROVIDED", "NONE"),
            "members": heuristic["members"],
            "topics": heuristic["topics"],
            "partitions": heuristic["partitions"],
            "balance": heuristic["level1"].astype(float),
            "mismatches": np.where(racked, heuristic["level2"].astype(float), np.nan),
            "moves": np.where(racked, heuristic["level3"], heuristic["level2"]).astype(float),
            "valid": heuristic["valid"],
        }
    )
    ref = exact.reindex(out.index)
    ref_racked = ref["judged_on"] == "rack-aware"
    out["opt_balance"] = ref["level1"].astype(float)
    out["opt_mismatches"] = np.where(ref_racked, ref["level2"].astype(float), np.nan)
    out["opt_moves"] = np.where(ref_racked, ref["level3"], ref["level2"]).astype(float)
    out["status"] = ref["status"]
    out["exact_s"] = ref["runtime_s"]
    out["balance_gap"] = (out["balance"] - out["opt_balance"]) / out["opt_balance"]
    out["mismatch_gap"] = out["mismatches"] - out["opt_mismatches"]
    out["moves_gap"] = out["moves"] - out["opt_moves"]
    return out


def gap_table(pairs: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Kafka's gaps grouped by ``by``: how often the balance is off the optimum and by how much, the
    rack mismatches beyond the optimum's, and the moves beside the optimum's."""
    table = (
        pairs.groupby(["assignor", *by], sort=True)
        .agg(
            groups=("balance", "size"),
            balance_off=("balance_gap", lambda g: f"{(g > 0).mean():.1%}"),
            balance_gap_mean=("balance_gap", lambda g: f"{g.mean():.2%}"),
            balance_gap_max=("balance_gap", lambda g: f"{g.max():.2%}"),
            extra_mismatches_mean=(
                "mismatch_gap",
                lambda g: f"{g.mean():,.0f}" if g.notna().any() else "-",
            ),
            moves_mean=("moves", lambda g: f"{g.mean():,.0f}"),
            optimum_moves_mean=("opt_moves", lambda g: f"{g.mean():,.0f}"),
        )
        .reset_index()
    )
    return table


def worst(pairs: pd.DataFrame, column: str, count: int = 5) -> pd.DataFrame:
    shown = pairs.sort_values(column, ascending=False).head(count)
    return shown[
        [
            "assignor",
            "event",
            "subscription",
            "distribution",
            "rack",
            "members",
            "topics",
            "partitions",
            "balance",
            "opt_balance",
            "mismatches",
            "opt_mismatches",
            "moves",
            "opt_moves",
        ]
    ]


def in_process(experiment) -> None:
    """Solve the groups one after the other in this process (what a Spark task does, without
    Spark) and print the wall and CPU seconds they took."""
    from experiments.runs import scenario_frame, solve_frame

    print(f"{len(experiment.scenarios):,} groups in this process, load {load_average()}")
    frame = scenario_frame(experiment.scenarios)
    began, cpu = time.perf_counter(), time.process_time()
    rows = solve_frame(frame, experiment.time_limit)
    wall, cpu = time.perf_counter() - began, time.process_time() - cpu
    groups = rows["scenario_id"].nunique()
    print(
        f"load after {load_average()}; {groups:,} groups: {wall:.1f} s wall, {cpu:.1f} CPU s "
        f"({1000 * cpu / groups:.1f} CPU ms a group)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--every", type=int, default=1, help="every k-th group (1: the whole grid)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/kafka-grid"))
    parser.add_argument("--offset", type=int, default=0, help="the first group taken")
    parser.add_argument("--run-id", default="grid")
    parser.add_argument("--throughput", type=int, default=0, help="groups for local vs standalone")
    parser.add_argument("--skip-grid", action="store_true", help="the throughput comparison only")
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="solve the groups in this process, without Spark: the CPU a group costs",
    )
    args = parser.parse_args()
    experiment = grid(args.every, args.offset)
    if args.in_process:
        in_process(experiment)
        return
    if not args.skip_grid:
        print(
            f"{len(experiment.scenarios):,} of {GRID_GROUPS:,} benchmark groups on local[2], "
            f"load {load_average()}",
            flush=True,
        )
        # A sample in the whole grid's batches (tasks of as many groups as the grid's, about),
        # so that its rate carries the grid's share of Spark's cost per task.
        grid_batch = default_batch_size(GRID_GROUPS, 2)
        run = _run(experiment, args.out, "local[2]", args.run_id, grid_batch)
        wall = run.wall
        pairs = paired(run.rows)
        print(
            f"load after {load_average()}; wall {wall / 60:.1f} min (Spark's start {run.start:.0f} s); "
            f"{run.cpu:,.0f} CPU s (driver, JVM, Python workers)"
        )
        proven = int((pairs["status"] == "optimal").sum())
        whole = len(experiment.scenarios) == GRID_GROUPS
        if whole:
            measured = (
                f"{len(pairs):,} groups in {wall / 60:.1f} min, {len(pairs) / wall:.2f} groups/s"
            )
        else:  # Spark's start once, the rest at the sample's rate
            projected = run.start + (wall - run.start) * GRID_GROUPS / len(pairs)
            measured = (
                f"{len(pairs):,} groups in {wall / 60:.1f} min (a sample: every {args.every}th "
                f"group), {len(pairs) / (wall - run.start):.2f} groups/s after Spark's start: the "
                f"whole grid projects to {projected / 60:.0f} min"
            )
        print(
            target(
                "the whole grid proven within 60 min on local[2]",
                whole and wall <= TARGET_S,
                measured,
            )
        )
        print(
            target(
                "every group proven optimal",
                proven == len(pairs) == len(experiment.scenarios),
                f"{proven:,} of {len(experiment.scenarios):,} optimal; exact seconds median "
                f"{pairs['exact_s'].median():.3f}, largest {pairs['exact_s'].max():.3f}",
            )
        )
        print()
        for by in (
            ["rack", "event"],
            ["rack", "subscription", "distribution"],
            ["rack", "members", "topics"],
            ["rack", "partitions"],
        ):
            print(to_markdown(gap_table(pairs, by)))
            print()
        print("Worst balance gaps:")
        print(to_markdown(worst(pairs, "balance_gap")))
        print()
        print("Most rack mismatches beyond the optimum:")
        print(to_markdown(worst(pairs, "mismatch_gap")))
        pairs.to_csv(args.out / "pairs.csv")
    if args.throughput:
        sample = dataclasses.replace(experiment, scenarios=experiment.scenarios[: args.throughput])
        print()
        print(f"throughput: {len(sample.scenarios)} groups, load {load_average()}")
        print("| master | cores | groups | wall s | CPU s | groups/s per core |")
        print("| --- | --- | --- | --- | --- | --- |")
        rates = {}
        for name in ("local[2]", "standalone"):
            with tempfile.TemporaryDirectory() as out:
                if name == "standalone":
                    sys.path.insert(0, str(ROOT / "tests"))
                    from support.spark_standalone import StandaloneCluster

                    (Path(out) / "cluster").mkdir()
                    cluster = StandaloneCluster(Path(out) / "cluster").start()
                    try:
                        run = _run(sample, Path(out), cluster.master, "throughput")
                    finally:
                        cluster.stop()
                else:
                    run = _run(sample, Path(out), name, "throughput")
            groups = run.rows["scenario_id"].nunique()
            rates[name] = groups / run.wall / 2
            print(f"| {name} | 2 | {groups} | {run.wall:.1f} | {run.cpu:.0f} | {rates[name]:.3f} |")
        print(f"load after {load_average()}")
        ratio = rates["standalone"] / rates["local[2]"]
        print(
            target(
                "standalone throughput per core within 20% of local[2]'s",
                ratio >= 0.8,
                f"x{ratio:.2f} ({rates['standalone']:.3f} against {rates['local[2]']:.3f} groups/s "
                "per core)",
            )
        )


if __name__ == "__main__":
    main()
