"""Random streams-group documents for the equality tests of Kafka Streams' client-side assignors.

One seed, one document: 1-7 processes of 1-2 members (1-3 threads each), 1-3 subtopologies of
1-8 tasks (stateful or not, one or two source topics), a previous assignment (active tasks,
standbys and warm-ups, some tasks unowned), lags of every kind (a running active, caught up,
behind, no state), client tags (two keys) on some groups, racks on most (a member without one,
a process whose members disagree, source partitions without racks, now and then), and configs
drawn around Kafka's defaults: 0-2 standbys, 1-3 warm-ups, acceptable lags from 0 to unbounded,
all three ``rack.aware.assignment.strategy`` values, the KIP-925 costs configured or not.
"""

from __future__ import annotations

from typing import Any

import numpy as np

RACKS = ("r0", "r1", "r2")
UNBOUNDED = (1 << 63) - 1


def streams_document(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    n_sub = int(rng.integers(1, 4))
    subtopologies: dict[str, Any] = {}
    with_racks = rng.random() < 0.75
    for s in range(n_sub):
        count = int(rng.integers(1, 9))
        sub: dict[str, Any] = {"partitions": count, "stateful": bool(rng.random() < 0.7)}
        if with_racks:
            topics = {}
            for k in range(int(rng.integers(1, 3))):
                listed = count if rng.random() < 0.95 else int(rng.integers(0, count))
                lists = []
                for _ in range(listed):
                    size = int(rng.integers(1, 3)) if rng.random() < 0.98 else 0
                    lists.append(sorted(rng.choice(RACKS, size=size, replace=False).tolist()))
                topics[f"in-{s}-{k}"] = lists
            sub["partition_racks"] = topics
        subtopologies[f"s{s}"] = sub
    names = list(subtopologies)
    n_proc = int(rng.integers(1, 8))
    tags_on = rng.random() < 0.4
    members: list[dict[str, Any]] = []
    process_of: list[int] = []
    for p in range(n_proc):
        rack = str(rng.choice(RACKS))
        tags = {}
        if tags_on:
            tags["zone"] = str(rng.choice(["a", "b", "c"]))
            if rng.random() < 0.8:
                tags["cluster"] = str(rng.choice(["k1", "k2"]))
        for k in range(int(rng.integers(1, 3))):
            member: dict[str, Any] = {"id": f"m{p}-{k}", "process": f"process-{p}"}
            if rng.random() < 0.6:
                member["threads"] = int(rng.integers(1, 4))
            if with_racks and rng.random() < 0.97:
                member["rack"] = rack if rng.random() < 0.97 else str(rng.choice(RACKS))
            if tags:
                member["client_tags"] = dict(tags)
            members.append(member)
            process_of.append(p)
    # previous assignment
    for name in names:
        sub = subtopologies[name]
        for task in range(sub["partitions"]):
            holders = rng.permutation(len(members)).tolist()
            used_processes: set[int] = set()
            if rng.random() < 0.75:
                m = holders.pop()
                members[m].setdefault("active", {}).setdefault(name, []).append(task)
                used_processes.add(process_of[m])
            if sub["stateful"]:
                for m in holders:
                    if process_of[m] in used_processes or rng.random() > 0.25:
                        continue
                    kind = "standby" if rng.random() < 0.8 else "warmup"
                    members[m].setdefault(kind, {}).setdefault(name, []).append(task)
                    used_processes.add(process_of[m])
    # lags, once per process (on its first member)
    first: dict[int, dict[str, Any]] = {}
    for m, p in enumerate(process_of):
        first.setdefault(p, members[m])
    for name in names:
        sub = subtopologies[name]
        if not sub["stateful"]:
            continue
        ends = [int(rng.choice([0, 50, 2_000, 20_000, 300_000])) for _ in range(sub["partitions"])]
        for member in first.values():
            if rng.random() < 0.15:
                continue  # no lags: no state for any task of the subtopology
            row = []
            for end in ends:
                r = rng.random()
                row.append(-1 if r < 0.3 else 0 if r < 0.5 else int(rng.integers(0, end + 1)))
            member.setdefault("lags", {})[name] = row
    configs: dict[str, Any] = {
        "num_standby_replicas": int(rng.integers(0, 3)),
        "acceptable_recovery_lag": int(rng.choice([0, 100, 10_000, UNBOUNDED])),
        "max_warmup_replicas": int(rng.integers(1, 4)),
        "rack_aware_assignment_strategy": str(
            rng.choice(["none", "min_traffic", "balance_subtopology"], p=[0.2, 0.4, 0.4])
        ),
    }
    if tags_on and rng.random() < 0.8:
        configs["rack_aware_assignment_tags"] = ["zone", "cluster"]
    if rng.random() < 0.7:
        configs["traffic_cost"] = int(rng.integers(1, 20))
    if rng.random() < 0.7:
        configs["non_overlap_cost"] = int(rng.integers(0, 20))
    return {
        "kind": "streams-group",
        "subtopologies": subtopologies,
        "members": members,
        "configs": configs,
    }
