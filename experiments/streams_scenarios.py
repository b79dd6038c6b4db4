"""Streams-group scenarios (KIP-1071 task assignment): the documents of the harness's streams family.

A streams scenario is a :class:`experiments.scenarios.Scenario` judged on :data:`JUDGED_ON`, its
fields read as

* ``partitions``: tasks in total, spread over ``topics`` subtopologies (the first ones one more);
* ``members``: Kafka Streams clients after the churn event, one member per process;
* ``replication``: ``num_standby_replicas`` (0-2);
* ``pattern`` (:data:`PATTERNS`): the topology and the clients: every subtopology stateless, every
  one stateful, alternating (``mixed``), mixed with 1-4 threads per client (``uneven-threads``),
  or mixed with racks (``racked``: clients on rack ``m mod 3``, each task's source partitions on
  2 of the 3 racks, KIP-925's ``min_traffic``);
* ``lags`` (:data:`experiments.scenarios.LAGS`): the lag of a process on a task whose state it
  holds (a previous active or standby): ``zero`` (caught up), ``uniform``, ``zipf`` (skewed) or
  ``hot`` (one process far behind on one task); a process holding nothing has no state (-1);
* ``churn`` (:data:`CHURN`): what happened since the previous assignment: nothing held yet
  (``fresh``), one client joined, one or several left, or KIP-441's scale-out (half as many new
  clients again, holding no state).

The previous assignment is dealt round robin over the clients before the event (task ``i``
active on client ``i mod n``, its standbys on the next clients), so that a scenario's document
depends on the scenario alone, not on any assignor.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from models.registry import judged_strategies

#: The strategy streams scenarios are judged on (its objective: ``streams``): the streams strategy
#: whose record judges scenarios (:func:`models.registry.judged_strategies`).
JUDGED_ON = next(record.name for record in judged_strategies() if record.family == "streams")
#: What happened since the previous assignment.
CHURN = ("fresh", "member-joins", "member-leaves", "several-leave", "scale-out")
#: Topology and client shapes.
PATTERNS = ("stateless", "stateful", "mixed", "uneven-threads", "racked")
#: The largest ``num_standby_replicas`` of a scenario.
MAX_STANDBYS = 2
#: Racks of a racked scenario.
RACKS = 3
#: ``acceptable.recovery.lag`` of every scenario (Kafka's default).
ACCEPTABLE_RECOVERY_LAG = 10_000


def is_streams(judged_on: str) -> bool:
    """Whether a scenario judged on ``judged_on`` is a streams group."""
    return judged_on == JUDGED_ON


def scenario_detail(pattern: str, lags: str, standbys: int) -> str:
    """The part of a streams scenario's id that names its shape (``mixed-zipf-sb1``)."""
    return f"{pattern}-{lags}-sb{standbys}"


def streams_document(
    tasks: int,
    clients: int,
    subtopologies: int,
    seed: int,
    *,
    churn: str = "fresh",
    pattern: str = "mixed",
    lags: str = "zero",
    standbys: int = 0,
) -> dict[str, Any]:
    """The streams-group document (DESIGN.md section 2) of one scenario; deterministic."""
    if churn not in CHURN:
        raise ValueError(f"unknown streams churn {churn!r} (choose from {', '.join(CHURN)})")
    if pattern not in PATTERNS:
        raise ValueError(f"unknown streams pattern {pattern!r} (choose from {', '.join(PATTERNS)})")
    if not 0 <= standbys <= MAX_STANDBYS:
        raise ValueError(f"standbys must be 0 to {MAX_STANDBYS}, not {standbys}")
    rng = np.random.default_rng(seed)
    counts = np.full(subtopologies, tasks // subtopologies, dtype=np.int64)
    counts[: tasks % subtopologies] += 1
    names = [f"s{i}" for i in range(subtopologies)]
    stateful = [
        pattern == "stateful" or (pattern != "stateless" and i % 2 == 0)
        for i in range(subtopologies)
    ]
    subs: dict[str, dict[str, Any]] = {
        n: {"partitions": int(c), "stateful": s}
        for n, c, s in zip(names, counts.tolist(), stateful)
    }
    ids = [f"client{m:04d}" for m in range(clients)]
    threads = (
        rng.integers(1, 5, size=clients).tolist() if pattern == "uneven-threads" else [1] * clients
    )
    before = _clients_before(ids, churn)
    members: list[dict[str, Any]] = []
    for m, (name, count) in enumerate(zip(ids, threads)):
        member: dict[str, Any] = {"id": name, "process": f"process{m:04d}", "threads": int(count)}
        if pattern == "racked":
            member["rack"] = f"rack{m % RACKS}"
        members.append(member)
    held = _previous(names, counts, stateful, before, standbys) if churn != "fresh" else {}
    by_id = {m["id"]: m for m in members}
    for name, (active, standby) in held.items():
        holder = by_id.get(name)
        if holder is None:  # a client that left
            continue
        if active:
            holder["active"] = active
        if standby:
            holder["standby"] = standby
    for member in members:
        member["lags"] = _lags(member, names, counts, stateful, lags, rng)
    doc: dict[str, Any] = {
        "kind": "streams-group",
        "subtopologies": subs,
        "members": members,
        "configs": {
            "num_standby_replicas": standbys,
            "acceptable_recovery_lag": ACCEPTABLE_RECOVERY_LAG,
            "max_warmup_replicas": 2,
            "rack_aware_assignment_strategy": "min_traffic" if pattern == "racked" else "none",
        },
    }
    if pattern == "racked":  # KIP-925: each task's source partition on 2 of the 3 racks
        for n, c in zip(names, counts.tolist()):
            firsts = rng.integers(RACKS, size=int(c)).tolist()
            subs[n]["partition_racks"] = {
                f"{n}-source": [[f"rack{(f + j) % RACKS}" for j in range(2)] for f in firsts]
            }
    return doc


def _clients_before(ids: list[str], churn: str) -> list[str]:
    """The clients that held the previous assignment."""
    if churn == "member-joins":
        return ids[:-1]
    if churn == "scale-out":  # KIP-441: new instances, no state; the old ones held everything
        return ids[: max(1, -(-2 * len(ids) // 3))]
    if churn == "member-leaves":
        return [*ids, "left000"]
    if churn == "several-leave":
        return [*ids, *(f"left{i:03d}" for i in range(max(2, len(ids) // 4)))]
    return list(ids)


def _previous(
    names: list[str],
    counts: np.ndarray,
    stateful: list[bool],
    before: list[str],
    standbys: int,
) -> dict[str, tuple[dict[str, list[int]], dict[str, list[int]]]]:
    """Round robin over ``before``: task ``i`` active on client ``i mod n``, its standbys (stateful
    subtopologies) on the next ``standbys`` clients."""
    held: dict[str, tuple[dict[str, list[int]], dict[str, list[int]]]] = {
        c: ({}, {}) for c in before
    }
    n = len(before)
    i = 0
    for name, count, keeps in zip(names, counts.tolist(), stateful):
        for partition in range(count):
            held[before[i % n]][0].setdefault(name, []).append(partition)
            if keeps:
                for j in range(1, min(standbys, n - 1) + 1):
                    held[before[(i + j) % n]][1].setdefault(name, []).append(partition)
            i += 1
    return held


def _lags(
    member: dict[str, Any],
    names: list[str],
    counts: np.ndarray,
    stateful: list[bool],
    lags: str,
    rng: np.random.Generator,
) -> dict[str, list[int]]:
    """The process's lag per task of each stateful subtopology: 0 where it ran the task, drawn
    where it kept a standby, -1 (no state) elsewhere."""
    out: dict[str, list[int]] = {}
    ran = {(s, p) for s, ps in member.get("active", {}).items() for p in ps}
    kept = {(s, p) for s, ps in member.get("standby", {}).items() for p in ps}
    for name, count, keeps in zip(names, counts.tolist(), stateful):
        if not keeps:
            continue
        if lags == "zero":
            drawn = np.zeros(count, dtype=np.int64)
        elif lags == "uniform":
            drawn = rng.integers(0, 100_000, size=count)
        elif lags == "zipf":
            drawn = np.minimum(rng.zipf(1.5, size=count), 10**4) * 100
        elif lags == "hot":
            drawn = rng.integers(0, 1_000, size=count)
            drawn[int(rng.integers(count))] = 10**6
        else:
            raise ValueError(f"unknown lag distribution {lags!r}")
        out[name] = [
            0 if (name, p) in ran else int(v) if (name, p) in kept else -1
            for p, v in enumerate(drawn.tolist())
        ]
    return out
