"""The live client matrix: every client library's assignors through the canonical sequences.

On a fresh 3-broker KRaft cluster (tests/support/kraft_cluster.py; or ``--bootstrap`` for a
running one), each (client, assignor, protocol) of :data:`peers.client_matrix.CLIENTS` drives a
fresh group of six members on two topics of 12 partitions through each sequence of
:func:`peers.client_matrix.sequences` (rolling restarts of dynamic and of static members,
scale-out, scale-in, a crash found by the session timeout and the rejoin, partitions added, a
subscription change).  Every run is written as a recorded group trace (``--out``/traces/) and
judged on the sticky objective: valid steps, the balance gap to the per-step optimum, moves beside
the per-step and horizon optima, rounds and partition-seconds without an owner (from the members'
own callbacks).  ``--jobs`` groups run at once on the one cluster (each its own group id and
topics, the longest runs first); the runs are judged once every group is done.  One JSON line per
run in ``--out``/matrix.jsonl, the table as Markdown in ``--out``/matrix.md (docs/findings.md,
"Real clients") and a last line with the wall time, the machine's load, the scheduling delay at
the members' priority and ``target met``/``target MISSED`` against the project's 30 minutes.

    nice .venv/bin/python benchmarks/client_matrix.py --out results/client-matrix
    nice .venv/bin/python benchmarks/client_matrix.py --clients java,sarama --sequences crash
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from peers.client_matrix import (  # noqa: E402
    CLIENTS,
    DriverError,
    Outcome,
    judge,
    run_sequence,
    sequences,
)

#: The project's target for the whole matrix from one command (seconds).
TARGET_S = 30 * 60
#: Seconds a run takes per settled step, by client (measured; only orders the runs, longest first,
#: so that the concurrent groups finish together).
STEP_COST = {"java": 3.0, "kafkajs": 4.0, "kafka-python": 3.0, "sarama": 3.0}

COLUMNS = (
    ("client", "client"),
    ("assignor", "assignor"),
    ("protocol", "protocol"),
    ("sequence", "sequence"),
    ("valid", "valid steps"),
    ("balance_gap", "balance gap"),
    ("moves", "moves"),
    ("step_optimum_moves", "per-step optimum"),
    ("horizon_moves", "horizon optimum"),
    ("moves_above_horizon", "above horizon"),
    ("idle_steps", "steps with an idle member"),
    ("rounds", "rounds"),
    ("unowned_partition_s", "partition-s unowned"),
)


def markdown(rows: list[dict]) -> str:
    """The rows as a Markdown table."""
    lines = [
        "| " + " | ".join(title for _, title in COLUMNS) + " |",
        "| " + " | ".join("---" if i < 4 else "---:" for i in range(len(COLUMNS))) + " |",
    ]
    for row in rows:
        if "error" in row:
            cells = [str(row[k]) for k, _ in COLUMNS[:4]] + [f"error: {row['error']}"]
            cells += [""] * (len(COLUMNS) - len(cells))
        else:
            row = row | {"valid": f"{row['valid_steps']}/{row['steps']}"}
            cells = [str(row[k]) for k, _ in COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def table_only(out: Path) -> int:
    """matrix.md from the rows of matrix.jsonl (the valid and idle steps recounted from each
    trace)."""
    from models.trace.observed import observed_run
    from peers.client_matrix import doubled_steps, idle_steps
    from problems.trace import load_trace

    rows = []
    for line in (out / "matrix.jsonl").read_text().splitlines():
        row = json.loads(line)
        tag = f"{row['client']}-{row['assignor']}-{row['protocol']}-{row['sequence']}"
        path = out / "traces" / f"{tag}.json"
        if "error" not in row and path.exists():
            document = json.loads(path.read_text())
            row["idle_steps"] = idle_steps(document)
            seen = observed_run(load_trace(document), "sticky")
            valid = sum(
                1
                for s in seen.steps[1:]
                if s.result is not None
                and s.result.evaluation is not None
                and s.result.evaluation.valid
            )
            row["valid_steps"] = valid - doubled_steps(row["defects"])
        rows.append(row)
    (out / "matrix.md").write_text(markdown(rows))
    print(markdown(rows))
    return 0


def estimate(client: str, assignor: str, steps: int, crash: bool) -> float:
    """A run's expected seconds (its settles, the crash's session timeout)."""
    slow = 2.0 if (client == "sarama" and assignor == "cooperative-sticky") else 1.0
    return (steps + 1) * STEP_COST.get(client, 2.5) * slow + (6.0 if crash else 0.0)


def _judged(outcome: Outcome) -> dict:
    """The run's row (a worker process: judging does not share the live groups' CPU)."""
    return judge(outcome)


def _low_priority() -> None:
    os.nice(5)


#: A process at the members' priority that sleeps 20 ms at a time and, when stopped, prints how
#: late its wake-ups were (ms): the scheduling delay every member's callbacks suffered meanwhile.
PROBE = """
import signal, sys, time
late = []
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
try:
    while True:
        t = time.monotonic()
        time.sleep(0.02)
        late.append((time.monotonic() - t - 0.02) * 1000)
finally:
    late.sort()
    q = lambda f: late[min(len(late) - 1, int(f * len(late)))] if late else 0.0
    print(f"{len(late)} {q(0.5):.1f} {q(0.99):.1f} {q(0.999):.1f} {late[-1] if late else 0:.1f}")
"""


def start_probe(nice: int) -> subprocess.Popen:
    """The scheduling-delay probe, niced as the members are (``nice -n`` under this process)."""
    return subprocess.Popen(
        ["nice", "-n", str(nice), sys.executable, "-c", PROBE], stdout=subprocess.PIPE, text=True
    )


def stop_probe(probe: subprocess.Popen) -> str:
    """The probe's wake-up delays: median, 99th and 99.9th percentiles and worst (ms)."""
    probe.terminate()
    out, _ = probe.communicate(timeout=30)
    n, p50, p99, p999, worst = out.split()
    return (
        f"scheduling delay at the members' priority: median {p50} ms, p99 {p99} ms, "
        f"p99.9 {p999} ms, worst {worst} ms ({n} wake-ups)"
    )


def load() -> str:
    """The machine's load averages (1, 5, 15 min)."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "client-matrix")
    parser.add_argument("--bootstrap", help="a running cluster (default: start the test cluster)")
    parser.add_argument("--clients", default=",".join(CLIENTS))
    parser.add_argument("--sequences", default=",".join(sequences()))
    parser.add_argument("--assignors", help="only these assignors (comma-separated)")
    parser.add_argument(
        "--record",
        action="store_true",
        help="rebalance-lab record watches every group too (either protocol): its trace beside the run's, "
        "and in each row whether it saw the same rebalances with the same members",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=4,
        help="groups driven at once on the one cluster (each its own group id and topics)",
    )
    parser.add_argument(
        "--member-nice",
        type=int,
        default=0,
        help="how much nicer than this process the members run (default 0: run the benchmark "
        "itself under nice; members at a lower priority than the machine's other jobs are "
        "scheduled late and their callbacks with them)",
    )
    parser.add_argument(
        "--table",
        action="store_true",
        help="only rebuild matrix.md from --out's matrix.jsonl and traces (a run cut short too)",
    )
    args = parser.parse_args()
    if args.table:
        return table_only(args.out)
    started = time.monotonic()
    cluster = None
    bootstrap = args.bootstrap
    if bootstrap is None:
        from support.kraft_cluster import KraftCluster

        cluster = KraftCluster(Path(tempfile.mkdtemp(prefix="client-matrix-"))).start()
        bootstrap = cluster.bootstrap
    (args.out / "traces").mkdir(parents=True, exist_ok=True)
    live_started = time.monotonic()
    load_before = load()
    probe = start_probe(args.member_nice)
    chosen = sequences()
    wanted = set(args.assignors.split(",")) if args.assignors else None
    runs = [
        (seq_name, name, assignor, protocol)
        for seq_name in args.sequences.split(",")
        for name in args.clients.split(",")
        for assignor, protocol in CLIENTS[name].combinations()
        if (wanted is None or assignor in wanted)
        and (CLIENTS[name].static or not chosen[seq_name].static)
        and (CLIENTS[name].resubscribe or seq_name != "subscription-change")
    ]
    # Longest first, so that the concurrent groups end together.
    runs.sort(
        key=lambda r: (
            -estimate(
                r[1],
                r[2],
                len(chosen[r[0]].steps),
                any(s.action == "crash" for s in chosen[r[0]].steps),
            )
        )
    )
    todo: queue.Queue = queue.Queue()
    for run in runs:
        todo.put(run)
    outcomes: list[tuple[tuple[str, str, str, str], Outcome | str]] = []
    lock = threading.Lock()

    def worker() -> None:
        from kafka.admin import KafkaAdminClient

        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
        try:
            while True:
                try:
                    run = todo.get_nowait()
                except queue.Empty:
                    return
                seq_name, name, assignor, protocol = run
                tag = f"{name}-{assignor}-{protocol}-{seq_name}"
                result: Outcome | str
                try:
                    result = run_sequence(
                        CLIENTS[name],
                        assignor,
                        protocol,
                        chosen[seq_name],
                        bootstrap,
                        admin,
                        log=args.out / "traces" / f"{tag}.log",
                        record=args.record,
                        nice=args.member_nice,
                    )
                    (args.out / "traces" / f"{tag}.json").write_text(
                        json.dumps(result.document, indent=1)
                    )
                    note = f"{result.seconds:.1f} s" + (
                        f", {result.defects}" if result.defects else ""
                    )
                except (DriverError, AssertionError) as error:
                    result = str(error)
                    note = f"error: {error}"
                except Exception as error:  # noqa: BLE001 - the run's row says what failed
                    result = f"{type(error).__name__}: {error}"
                    note = f"error: {result}"
                with lock:
                    outcomes.append((run, result))
                    print(
                        f"[{len(outcomes)}/{len(runs)}] {tag}: {note}", file=sys.stderr, flush=True
                    )
        finally:
            admin.close()

    try:
        threads = [threading.Thread(target=worker) for _ in range(max(1, args.jobs))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        if cluster is not None:
            cluster.stop()
    live = time.monotonic() - live_started
    load_after = load()
    delays = stop_probe(probe)
    # Judged once every group is done (CP-SAT's per-step and horizon optima), in the table's order.
    clients = list(CLIENTS)
    outcomes.sort(
        key=lambda o: (
            list(chosen).index(o[0][0]),
            clients.index(o[0][1]),
            CLIENTS[o[0][1]].combinations().index((o[0][2], o[0][3])),
        )
    )
    rows: list[dict] = []
    with ProcessPoolExecutor(max_workers=2, initializer=_low_priority) as pool:
        judged = {
            i: pool.submit(_judged, result)
            for i, (_, result) in enumerate(outcomes)
            if not isinstance(result, str)
        }
        for i, (run, result) in enumerate(outcomes):
            seq_name, name, assignor, protocol = run
            if isinstance(result, str):
                row = {
                    "client": name,
                    "assignor": assignor,
                    "protocol": protocol,
                    "sequence": seq_name,
                    "error": result,
                }
            else:
                row = judged[i].result()
            rows.append(row)
    with open(args.out / "matrix.jsonl", "w") as jsonl:
        for row in rows:
            jsonl.write(json.dumps(row) + "\n")
    table = markdown(rows)
    (args.out / "matrix.md").write_text(table)
    print(table)
    total = time.monotonic() - started
    verdict = "target met" if total <= TARGET_S else "target MISSED"
    summary = (
        f"{len(rows)} runs ({args.jobs} groups at once): {total:.0f} s in all "
        f"({total / 60:.1f} min; cluster start {live_started - started:.0f} s, live runs {live:.0f} s, "
        f"judging {total - (live_started - started) - live:.0f} s); load {load_before} before the "
        f"runs, {load_after} after; {delays}; {verdict} (<= {TARGET_S // 60} min)"
    )
    print(summary, file=sys.stderr)
    (args.out / "summary.txt").write_text(summary + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
