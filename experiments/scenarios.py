"""Scenario suites: deterministic, versioned lists of problems to compare solvers on.

Details: docs/harness.md.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from importlib import resources
from typing import Any

import numpy as np

import heuristics.range as range_assignor
import heuristics.roundrobin as roundrobin_assignor
import heuristics.share as share_assignor
from experiments.kafka_grid import benchmark_document, benchmark_problem, partition_counts
from experiments.streams_scenarios import is_streams, scenario_detail, streams_document
from problems import GroupProblem, load_problem
from problems.io import Problem

#: The suites' version: rows and the gate's baseline carry it (7: the suites gained traces; 8: the
#: default suite's runs that spent their whole time limit unproven moved to the scale suite).
SUITE_VERSION = 8
#: The version since which the suites' single-rebalance scenarios are unchanged: a baseline of that
#: version or later still judges them (one from before traces judges no trace).
SCENARIOS_SINCE = 6

GROUP_CHURN = (
    "fresh",
    "member-joins",
    "member-leaves",
    "several-leave",
    "topic-added",
    "topic-deleted",
    "partitions-added",
    "zombie",
    "stable",
    "join-many",
    "leave-many",
    "partitions-grow",
)
#: Kafka's assignor benchmark events (``ConsumerAssignorBenchmark``) by the churn level that
#: expresses each: FULL, STABLE, JOIN_ONE, JOIN_MANY, LEAVE_ONE, LEAVE_MANY, PARTITIONS_ADDED.
KAFKA_EVENTS = {
    "fresh": "FULL",
    "stable": "STABLE",
    "member-joins": "JOIN_ONE",
    "join-many": "JOIN_MANY",
    "member-leaves": "LEAVE_ONE",
    "leave-many": "LEAVE_MANY",
    "partitions-grow": "PARTITIONS_ADDED",
}
PLACEMENT_CHURN = ("broker-removed", "broker-added", "rack-added")
#: PR 18903's "Limitations" example: four brokers on two racks, partition A on rack 1's two
#: brokers, B on rack 2's; only a two-move swap improves rack spread.
TWO_MOVE_LIMIT = "two-move-limit"
PATTERNS = ("equal", "random-subsets", "few-topics", "one-odd")
#: The subscription patterns of Kafka's own server-side assignor benchmark (KIP-848 shapes):
#: homogeneous, and heterogeneous in 5 buckets of members and topics.
KIP848_PATTERNS = ("equal", "buckets")
#: The subscriptions of Kafka's assignor benchmark grid (``ConsumerAssignorBenchmark``): homogeneous,
#: heterogeneous on disjoint runs of topics, heterogeneous nested (built by
#: :mod:`experiments.kafka_grid`).
GRID_PATTERNS = ("equal", "disjoint", "nested")
#: Topic sizes: ``equal`` (partitions spread evenly over the topics) or ``skewed`` (the benchmark's
#: geometric tiers: :func:`experiments.kafka_grid.partition_counts`).
TOPOLOGIES = ("equal", "skewed")
#: The KIP-848 assignors of Kafka's benchmark grid whose own previous output a benchmark group holds
#: (a scenario's ``assignor``; empty: not a benchmark group).
GRID_ASSIGNORS = ("range", "uniform")
LAGS = ("zero", "uniform", "zipf", "hot")
#: Racks of a racked group scenario (Kafka's assignor benchmarks: 3 racks, member ``m`` on rack ``m
#: mod 3``).
RACKS = 3
#: Replicas per partition of the racked group families: 2 of the 3 racks (each partition misaligned
#: with a third of the members, so rack alignment binds), all 3 (Kafka's rack-aware benchmark shape:
#: every member aligned with every partition, Kafka's rack logic stays off), and 0 (no racks at
#: all).
RACK_LAYOUTS = (2, 3, 0)

GENERATION = 5  # generation of the previous assignment (a zombie claims with GENERATION - 2)


@dataclass(frozen=True)
class Scenario:
    """One problem of a suite.

    Attributes
    ----------
    family
        ``group`` or ``placement``.
    judged_on
        The strategy whose constraints and objective judge every answer: ``sticky`` (also the
        yardstick of range, round robin, uniform, server-range and cooperative-sticky),
        ``rack-aware`` (the same baselines with KIP-881 racks), ``lag-aware``, ``stream-join`` or
        ``sticky-replica`` (also the yardstick of kafka-default), or ``share`` (KIP-932 share
        groups, also the yardstick of uniform: a consumer-group answer is a share answer with one
        member per partition), or ``streams-sticky`` (streams groups, judged on ``streams``,
        fields read as :mod:`experiments.streams_scenarios` says).
    churn
        What happened since the previous assignment (``GROUP_CHURN`` / ``PLACEMENT_CHURN``).
    partitions, members, topics
        Group sizes (partitions in total, spread over ``topics``); for a
        placement ``partitions`` and ``members`` = brokers, ``topics`` = racks
        (0 = rack-unaware), ``replication`` the replication factor.  For a group,
        ``replication`` is the replicas per partition of KIP-881's ``partition_racks``, each on
        another of :data:`RACKS` racks, members on rack ``m mod RACKS``; 0: no racks.
    pattern, lags
        Subscription pattern and lag distribution (groups).
    topology
        Topic sizes of a group (:data:`TOPOLOGIES`); part of the id only when not ``equal``.
    assignor
        A benchmark group (:mod:`experiments.kafka_grid`, built as Kafka's
        ``ConsumerAssignorBenchmark`` builds it): the KIP-848 assignor (:data:`GRID_ASSIGNORS`)
        whose own output on the group before the event the members hold; part of the id when set.
    seed
        Random seed of the instance.
    settings
        How an experiment file has it solved (JSON: its time limit, solver options, the
        strategies and solvers to run, the researcher's plugins); empty: every run judged on
        ``judged_on``, with the run's time limit.  It does not change the problem.
    tag
        The run factors an experiment varies (``~time_limit=2``), appended to the id.
    """

    family: str
    judged_on: str
    churn: str
    partitions: int
    members: int
    topics: int
    seed: int
    pattern: str = "equal"
    lags: str = "zero"
    replication: int = 0
    topology: str = "equal"
    assignor: str = ""
    settings: str = ""
    tag: str = ""

    @property
    def scenario_id(self) -> str:
        if self.family == "placement":
            detail = f"rf{self.replication}"
        elif is_streams(self.judged_on):
            detail = scenario_detail(self.pattern, self.lags, self.replication)
        elif self.judged_on == "rack-aware":
            racks = f"racks{RACKS}-rf{self.replication}" if self.replication else "norack"
            detail = f"{self.pattern}-{self.lags}-{racks}"
        else:
            detail = f"{self.pattern}-{self.lags}"
        if self.topology != "equal":
            detail += f"-{self.topology}"
        if self.assignor:
            detail += f"-after-{self.assignor}"
        return (
            f"{self.judged_on}/{self.churn}/{detail}/"
            f"p{self.partitions}-m{self.members}-t{self.topics}/s{self.seed}{self.tag}"
        )

    @property
    def size(self) -> int:
        """Items to place: partitions (groups) or replicas (placements)."""
        return self.partitions * (self.replication if self.family == "placement" else 1)

    def as_row(self) -> dict[str, Any]:
        return {"scenario_id": self.scenario_id, "size": self.size, **asdict(self)}


# ===================================================================== groups
def _group_state(
    s: Scenario, rng: np.random.Generator
) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """Topics and members (with subscriptions) of the group after the churn event."""
    names = [f"topic{t:02d}" for t in range(s.topics)]
    counts = topic_sizes(s.partitions, s.topics, s.topology)
    if s.judged_on == "stream-join":  # co-partitioned topics: equal partition counts
        counts[:] = max(1, s.partitions // s.topics)
    topics = dict(zip(names, counts.tolist()))
    members = []
    for m in range(s.members):
        if s.pattern == "equal" or s.judged_on == "stream-join":
            subscription = names
        elif s.pattern == "random-subsets":
            chosen = rng.random(s.topics) < 0.5
            chosen[rng.integers(s.topics)] = True
            subscription = [n for n, c in zip(names, chosen) if c]
        elif s.pattern == "few-topics":
            k = int(rng.integers(1, min(3, s.topics) + 1))
            subscription = sorted(rng.choice(names, size=k, replace=False).tolist())
        elif s.pattern == "one-odd":
            subscription = names[:1] if m == s.members - 1 else names
        elif (
            s.pattern == "buckets"
        ):  # Kafka's ServerSideAssignorBenchmark: 5 blocks of members on 5 of topics
            buckets = min(5, s.members)
            topic_block, member_block = -(-s.topics // buckets), -(-s.members // buckets)
            bucket = m // member_block
            subscription = names[bucket * topic_block : (bucket + 1) * topic_block] or names[-1:]
        else:
            raise ValueError(f"unknown subscription pattern {s.pattern!r}")
        members.append({"id": f"consumer{m:04d}", "topics": list(subscription)})
    return topics, members


def topic_sizes(partitions: int, topics: int, topology: str) -> np.ndarray:
    """Partitions per topic: spread evenly, or the benchmark's skewed tiers
    (:func:`experiments.kafka_grid.partition_counts`)."""
    if topology not in TOPOLOGIES:
        raise ValueError(f"unknown topology {topology!r}")
    return partition_counts(topology, topics, partitions)


def _many(members: int) -> int:
    """Members that join or leave in Kafka's JOIN_MANY / LEAVE_MANY: a tenth, at least two."""
    return max(2, members // 10)


def _previous(
    s: Scenario, topics: dict[str, int], members: list[dict[str, Any]], rng: np.random.Generator
) -> dict[str, Any]:
    """The group before the churn event, and who owned what (Kafka's range / round robin; for a
    share group Kafka's ``SimpleAssignor``, a partition held by several members)."""
    before_topics = dict(topics)
    before_members = [dict(m) for m in members]
    if s.churn == "member-joins":
        before_members = before_members[:-1]
    elif s.churn == "join-many":  # the group had a tenth fewer members (at least one stays)
        before_members = before_members[: max(1, s.members - _many(s.members))]
    elif s.churn in ("member-leaves", "several-leave", "leave-many"):
        extra = {
            "member-leaves": 1,
            "several-leave": max(2, s.members // 4),
            "leave-many": _many(s.members),
        }[s.churn]
        for i in range(extra):
            before_members.append(
                {"id": f"left{i:03d}", "topics": list(before_members[0]["topics"])}
            )
    elif s.churn == "topic-added":
        newest = list(topics)[-1]
        before_topics.pop(newest)
        for m in before_members:
            m["topics"] = [t for t in m["topics"] if t != newest] or list(before_topics)[:1]
    elif s.churn == "topic-deleted":
        before_topics["deleted-topic"] = max(1, s.partitions // max(s.topics, 1))
        for m in before_members:
            m["topics"] = [*m["topics"], "deleted-topic"]
    elif s.churn == "partitions-added":
        first = list(topics)[0]
        before_topics[first] = max(1, topics[first] // 2)
    elif s.churn == "partitions-grow":  # one partition more on a tenth of the topics (at least one)
        for name in list(topics)[: max(1, len(topics) // 10)]:
            before_topics[name] = max(1, topics[name] - 1)
    before_problem = load_problem({"topics": before_topics, "members": before_members})
    assert isinstance(before_problem, GroupProblem)  # a group document
    if s.judged_on == "share":  # a share group held Kafka's SimpleAssignor answer (several readers)
        held = share_assignor.assign(before_problem).assignment or {}
        return {member: topics for member, topics in held.items() if topics}
    assignor = range_assignor if s.judged_on == "stream-join" else roundrobin_assignor
    return assignor.assign(before_problem).assignment or {}


def _lags(
    s: Scenario, topics: dict[str, int], rng: np.random.Generator
) -> dict[str, list[int]] | None:
    if s.judged_on != "lag-aware":
        return None
    out: dict[str, list[int]] = {}
    for name, count in topics.items():
        if s.lags == "zero":
            values = np.zeros(count, dtype=np.int64)
        elif s.lags == "uniform":
            values = rng.integers(0, 100_000, size=count)
        elif s.lags == "zipf":
            values = np.minimum(rng.zipf(1.5, size=count), 10**6) * 100
        elif s.lags == "hot":
            values = rng.integers(0, 1_000, size=count)
        else:
            raise ValueError(f"unknown lag distribution {s.lags!r}")
        out[name] = [int(v) for v in values]
    if s.lags == "hot" and topics:
        hot = max(topics, key=topics.__getitem__)
        if topics[hot]:
            out[hot][int(rng.integers(topics[hot]))] = 10**6
    return out


def _group_document(s: Scenario) -> dict[str, Any]:
    rng = np.random.default_rng(s.seed)
    topics, members = _group_state(s, rng)
    if s.churn != "fresh":
        owned = _previous(s, topics, members, rng)
        for member in members:
            if owned.get(member["id"]):
                member["owned"] = owned[member["id"]]
                member["generation"] = GENERATION
        if s.churn == "zombie" and len(members) >= 2:
            # A member that missed a rebalance: it still claims the first member's
            # partitions, with an older generation (KIP-341 / KIP-315 epochs).
            victim, zombie = members[0], members[-1]
            zombie["owned"] = {
                t: sorted(set(zombie.get("owned", {}).get(t, [])) | set(ps))
                for t, ps in {**zombie.get("owned", {}), **victim.get("owned", {})}.items()
            }
            zombie["generation"] = GENERATION - 2
    doc: dict[str, Any] = {"topics": topics, "members": members}
    lags = _lags(s, topics, rng)
    if lags is not None:
        doc["lags"] = lags
    if s.replication:  # drawn last: the twin without racks has the same group
        _add_racks(doc, s.replication, rng)
    return doc


def _add_racks(doc: dict[str, Any], replication: int, rng: np.random.Generator) -> None:
    """Member ``m`` on rack ``m mod RACKS``; each partition's ``replication`` replicas on consecutive racks
    from a random first one (KIP-881's ``partition_racks``)."""
    if not 0 < replication <= RACKS:
        raise ValueError(f"replicas per partition must be 1 to {RACKS}, not {replication}")
    names = [f"rack{r}" for r in range(RACKS)]
    for m, member in enumerate(doc["members"]):
        member["rack"] = names[m % RACKS]
    doc["partition_racks"] = {}
    for topic, count in doc["topics"].items():
        first = rng.integers(RACKS, size=count)
        doc["partition_racks"][topic] = [
            [names[(f + j) % RACKS] for j in range(replication)] for f in first.tolist()
        ]


# ================================================================= placements
def _placement_document(s: Scenario) -> dict[str, Any]:
    if s.churn == TWO_MOVE_LIMIT:
        return {
            "brokers": [{"id": b, "rack": "rack1" if b <= 2 else "rack2"} for b in (1, 2, 3, 4)],
            "partitions": [
                {"topic": "A", "partition": 0, "replicas": [1, 2]},
                {"topic": "B", "partition": 0, "replicas": [3, 4]},
            ],
        }
    rng = np.random.default_rng(s.seed)
    racks = s.topics
    brokers = [
        {"id": b + 1, **({"rack": f"rack{b % racks}"} if racks else {})} for b in range(s.members)
    ]
    # The placement before the event: replicas dealt round the brokers from a random
    # start, each next replica on the next broker of the list (a rack-alternating list).
    ids = [b["id"] for b in brokers]
    start = int(rng.integers(len(ids)))
    partitions = []
    topic_count = max(1, s.partitions // 8)
    for p in range(s.partitions):
        first = (start + p) % len(ids)
        replicas = [ids[(first + r) % len(ids)] for r in range(s.replication)]
        partitions.append(
            {
                "topic": f"topic{p % topic_count:02d}",
                "partition": p // topic_count,
                "replicas": replicas,
            }
        )
    if s.churn == "broker-removed":
        removed = rng.choice(len(brokers), size=min(2, len(brokers) - s.replication), replace=False)
        brokers = [b for i, b in enumerate(brokers) if i not in set(removed.tolist())]
    elif s.churn == "broker-added":
        for extra in range(2):
            brokers.append(
                {"id": s.members + extra + 1, **({"rack": f"rack{extra % racks}"} if racks else {})}
            )
    elif s.churn == "rack-added":
        for extra in range(2):
            brokers.append(
                {"id": s.members + extra + 1, **({"rack": f"rack{racks}"} if racks else {})}
            )
    return {"brokers": brokers, "partitions": partitions}


def _benchmark_cell(scenario: Scenario) -> tuple[str, int, int, int]:
    """A benchmark group's event and sizes (members, topics, partitions)."""
    return scenario.churn, scenario.members, scenario.topics, scenario.partitions


def _benchmark_shape(scenario: Scenario) -> dict[str, Any]:
    """A benchmark group's distribution, subscriptions, racks and assignor."""
    return {
        "distribution": scenario.topology,
        "pattern": scenario.pattern,
        "racks": scenario.replication > 0,
        "assignor": scenario.assignor,
    }


def build_problem(scenario: Scenario) -> dict[str, Any]:
    """The problem document of ``scenario`` (deterministic in the scenario alone)."""
    if scenario.assignor:
        return benchmark_document(*_benchmark_cell(scenario), **_benchmark_shape(scenario))
    if scenario.family == "placement":
        return _placement_document(scenario)
    if is_streams(scenario.judged_on):  # experiments/streams_scenarios.py
        return streams_document(
            scenario.partitions,
            scenario.members,
            scenario.topics,
            scenario.seed,
            churn=scenario.churn,
            pattern=scenario.pattern,
            lags=scenario.lags,
            standbys=scenario.replication,
        )
    return _group_document(scenario)


def scenario_problem(scenario: Scenario) -> Problem:
    """``load_problem(build_problem(scenario))``; a benchmark group built from arrays
    (:func:`experiments.kafka_grid.benchmark_problem`: the same problem, no document to write and
    parse)."""
    if scenario.assignor:
        return benchmark_problem(*_benchmark_cell(scenario), **_benchmark_shape(scenario))
    return load_problem(build_problem(scenario))


# ===================================================================== suites
#: PR 18903's two-move example as a scenario (every shipped suite has it).
TWO_MOVE_SCENARIO = Scenario(
    "placement", "sticky-replica", TWO_MOVE_LIMIT, 2, 4, 2, 0, replication=2
)


def _suite_names() -> tuple[str, ...]:
    """The shipped suites (``experiments/suites/*.toml``), the four tiers first, then by name."""
    folder = resources.files("experiments.suites")
    names = [p.name[: -len(".toml")] for p in folder.iterdir() if p.name.endswith(".toml")]
    tiers = ("smoke", "gate", "default", "scale")
    return tuple(sorted(names, key=lambda n: (tiers.index(n) if n in tiers else len(tiers), n)))


SUITES = _suite_names()
