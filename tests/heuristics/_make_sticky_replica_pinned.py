"""One-off: pin the outputs of PR 18903's heuristic as it was before the fast rewrite (issue 15).

Writes ``tests/data/sticky_replica_pinned.json``: 50 random clusters (documents)
with the old implementation's answers and info.  Run once, from the repository
root, while ``tests/_sticky_replica_old.py`` (the frozen old code)
still exists:

    PYTHONPATH=$PWD .venv/bin/python tests/heuristics/_make_sticky_replica_pinned.py
"""

from __future__ import annotations

import json
import sys

import numpy as np

sys.path.insert(0, "tests")
import _sticky_replica_old as old  # noqa: E402

from heuristics import kafka_default  # noqa: E402
from problems import load_problem  # noqa: E402


def document(seed: int) -> dict:
    """A random cluster: live brokers (some racked), removed brokers, added empty brokers, RF 1-3."""
    rng = np.random.default_rng(seed)
    live = int(rng.integers(2, 16))
    racks = int(rng.integers(0, 5))  # 0: rack-unaware
    removed = int(rng.integers(0, 3))
    added = int(rng.integers(0, 3))
    ids = rng.permutation(live + removed + added).tolist()
    def entry(b):
        return {"id": b, "rack": f"r{int(rng.integers(0, racks))}"} if racks else {"id": b}
    old_brokers = [entry(b) for b in ids[: live + removed]]
    new_brokers = [entry(b) for b in ids[live + removed :]]
    topics = int(rng.integers(1, 30))
    partitions = []
    for t in range(topics):
        factor = int(rng.integers(1, min(3, live) + 1))
        for index in range(int(rng.integers(1, 25))):
            partitions.append({"topic": f"t{t}", "partition": index, "replicas": list(range(factor))})
    shape = ["kafka-default", "uniform", "skewed"][seed % 3]
    pool = [b["id"] for b in old_brokers]
    if shape == "kafka-default":
        placed = kafka_default.assign(load_problem({"brokers": old_brokers, "partitions": partitions}), seed=seed)
        partitions = placed.assignment["partitions"]
    else:
        if shape == "skewed":
            pool = rng.choice(pool, size=max(3, len(pool) // 2), replace=False).tolist()
        for entry_ in partitions:
            factor = len(entry_["replicas"])
            choices = pool if len(pool) >= factor else [b["id"] for b in old_brokers]
            entry_["replicas"] = [int(b) for b in rng.choice(choices, size=factor, replace=False)]
    brokers = old_brokers[:live] + new_brokers
    return {"brokers": brokers, "partitions": partitions}


def large(seed: int, partitions: int, brokers: int, racks: int, removed: int, added: int) -> dict:
    """kafka-default's placement of ``partitions`` x RF 3 (topics of 20), then brokers removed and added."""
    every = [{"id": b, "rack": f"r{b % racks}"} for b in range(brokers + added)]
    topics = [{"topic": f"t{p // 20}", "partition": p % 20, "replicas": [0, 1, 2]} for p in range(partitions)]
    placed = kafka_default.assign(load_problem({"brokers": every[:brokers], "partitions": topics}), seed=seed)
    return {"brokers": every[: brokers - removed] + every[brokers:], "partitions": placed.assignment["partitions"]}


def compact(doc: dict) -> dict:
    """The document in a compact form: brokers ``[id, rack]``, partitions ``[topic, index, replicas]``."""
    return {"brokers": [[b["id"], b.get("rack")] for b in doc["brokers"]],
            "partitions": [[p["topic"], p["partition"], p["replicas"]] for p in doc["partitions"]]}


def main() -> None:
    cases = []
    docs = [document(seed) for seed in range(50)]
    docs += [large(0, 1200, 20, 4, 2, 0), large(1, 1200, 20, 4, 0, 1), large(2, 600, 12, 1, 1, 1)]
    for seed, doc in enumerate(docs):
        result = old.assign(load_problem(doc))
        cases.append({"cluster": compact(doc), "answer": result.answer.tolist(), "info": result.info})
    with open("tests/data/sticky_replica_pinned.json", "w") as out:
        json.dump({"source": "heuristics/sticky_replica.py before issue 15's rewrite "
                             "(tests/heuristics/_make_sticky_replica_pinned.py in git history)",
                   "cases": cases}, out, separators=(",", ":"))
        out.write("\n")


if __name__ == "__main__":
    main()
