"""franz-go's sticky group balancer (``peers/franz_go``, a Go program) on a group (tests and benchmarks only).

The program (built by ``make peers``) reads the group document, builds every member's JoinGroup
metadata with kgo's own ``StickyBalancer().JoinGroupMetadata``, sorts the members as a kgo leader
does and balances through kgo's public group-balancer API, timing each run inside Go; see
``peers/franz_go/main.go``.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from problems import GroupProblem, owner_from_assignment

PROGRAM = Path(__file__).resolve().parent / "franz_go" / "franz-go-peer"


def franz_go_version() -> str:
    """The franz-go release go.mod pins."""
    for line in (PROGRAM.parent / "go.mod").read_text().splitlines():
        parts = line.split()
        if parts[:1] == ["github.com/twmb/franz-go"]:
            return parts[1]
    raise RuntimeError("franz-go is not in peers/franz_go/go.mod")


def balance(
    problem: GroupProblem, document: dict, repeat: int = 1, cooperative: bool = False
) -> tuple[np.ndarray, list[float]]:
    """franz-go's answer to ``document`` (the JSON of ``problem``) as an ``owner`` array, and the
    seconds of each of ``repeat`` runs measured inside Go."""
    if not PROGRAM.exists():
        raise RuntimeError(f"{PROGRAM} is missing: run `make peers`")
    with tempfile.NamedTemporaryFile("w", suffix=".json") as handle:
        json.dump(document, handle)
        handle.flush()
        command = (
            [str(PROGRAM), "-repeat", str(repeat)]
            + (["-cooperative"] if cooperative else [])
            + [handle.name]
        )
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"franz-go-peer failed ({done.returncode}): {done.stderr.strip()}")
    out = json.loads(done.stdout)
    return owner_from_assignment(problem, out["assignment"]), [float(s) for s in out["seconds"]]
