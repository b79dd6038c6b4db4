"""The live client matrix: every client library's assignors through the canonical sequences.

On a fresh 3-broker KRaft cluster (tests/support/kraft_cluster.py; or ``--bootstrap`` for a
running one), each (client, assignor, protocol) of :data:`peers.client_matrix.CLIENTS` drives a
fresh group of six members on two topics of 12 partitions through each sequence of
:func:`peers.client_matrix.sequences` (rolling restarts of dynamic and of static members,
scale-out, scale-in, a crash found by the session timeout and the rejoin, partitions added, a
subscription change).  Every run is written as a recorded group trace (``--out``/traces/) and
judged on the sticky objective: valid steps, the balance gap to the per-step optimum, moves beside
the per-step and horizon optima, rounds and partition-seconds without an owner (from the members'
own callbacks).  One JSON line per run in ``--out``/matrix.jsonl and the table as Markdown in
``--out``/matrix.md (docs/findings.md, "Real clients").

    nice .venv/bin/python benchmarks/client_matrix.py --out results/client-matrix
    nice .venv/bin/python benchmarks/client_matrix.py --clients java,sarama --sequences crash
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from peers.client_matrix import CLIENTS, DriverError, judge, run_sequence, sequences  # noqa: E402

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
    """matrix.md from the rows of matrix.jsonl (the idle steps recounted from each trace)."""
    from peers.client_matrix import idle_steps

    rows = []
    for line in (out / "matrix.jsonl").read_text().splitlines():
        row = json.loads(line)
        tag = f"{row['client']}-{row['assignor']}-{row['protocol']}-{row['sequence']}"
        path = out / "traces" / f"{tag}.json"
        if "error" not in row and path.exists():
            row["idle_steps"] = idle_steps(json.loads(path.read_text()))
        rows.append(row)
    (out / "matrix.md").write_text(markdown(rows))
    print(markdown(rows))
    return 0


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
        help="rebalance-lab record watches every classic group too: its trace beside the run's, "
        "and in each row whether it saw the same rebalances with the same members",
    )
    parser.add_argument(
        "--table",
        action="store_true",
        help="only rebuild matrix.md from --out's matrix.jsonl and traces (a run cut short too)",
    )
    args = parser.parse_args()
    if args.table:
        return table_only(args.out)
    from kafka.admin import KafkaAdminClient

    cluster = None
    bootstrap = args.bootstrap
    if bootstrap is None:
        from support.kraft_cluster import KraftCluster

        cluster = KraftCluster(Path(tempfile.mkdtemp(prefix="client-matrix-"))).start()
        bootstrap = cluster.bootstrap
    (args.out / "traces").mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    rows: list[dict] = []
    chosen = sequences()
    wanted = set(args.assignors.split(",")) if args.assignors else None
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        # Sequence by sequence (the short ones first), every client and assignor through each.
        order = sorted(args.sequences.split(","), key=lambda s: len(chosen[s].steps))
        runs = [
            (seq_name, name, assignor, protocol)
            for seq_name in order
            for name in args.clients.split(",")
            for assignor, protocol in CLIENTS[name].combinations()
            if (wanted is None or assignor in wanted)
            and (CLIENTS[name].static or not chosen[seq_name].static)
            and (CLIENTS[name].resubscribe or seq_name != "subscription-change")
        ]
        with open(args.out / "matrix.jsonl", "w") as jsonl:
            for seq_name, name, assignor, protocol in runs:
                client, sequence = CLIENTS[name], chosen[seq_name]
                tag = f"{name}-{assignor}-{protocol}-{seq_name}"
                try:
                    outcome = run_sequence(
                        client,
                        assignor,
                        protocol,
                        sequence,
                        bootstrap,
                        admin,
                        log=args.out / "traces" / f"{tag}.log",
                        record=args.record and protocol == "classic",
                    )
                    (args.out / "traces" / f"{tag}.json").write_text(
                        json.dumps(outcome.document, indent=1)
                    )
                    row = judge(outcome)
                except (DriverError, AssertionError) as error:
                    row = {
                        "client": name,
                        "assignor": assignor,
                        "protocol": protocol,
                        "sequence": seq_name,
                        "error": str(error),
                    }
                rows.append(row)
                jsonl.write(json.dumps(row) + "\n")
                jsonl.flush()
                print(json.dumps(row), flush=True)
    finally:
        admin.close()
        if cluster is not None:
            cluster.stop()
    table = markdown(rows)
    (args.out / "matrix.md").write_text(table)
    print(table)
    print(f"{len(rows)} runs in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
