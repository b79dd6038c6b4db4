"""Scenario suites: deterministic, versioned lists of problems to compare solvers on.

Details: docs/harness.md.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass

import numpy as np

import heuristics.range as range_assignor
import heuristics.roundrobin as roundrobin_assignor
from problems import load_problem

SUITE_VERSION = 5

GROUP_CHURN = (
    "fresh",
    "member-joins",
    "member-leaves",
    "several-leave",
    "topic-added",
    "topic-deleted",
    "partitions-added",
    "zombie",
)
PLACEMENT_CHURN = ("broker-removed", "broker-added", "rack-added")
#: PR 18903's "Limitations" example: four brokers on two racks, partition A on rack 1's two
#: brokers, B on rack 2's; only a two-move swap improves rack spread.
TWO_MOVE_LIMIT = "two-move-limit"
PATTERNS = ("equal", "random-subsets", "few-topics", "one-odd")
#: The subscription patterns of Kafka's own server-side assignor benchmark (KIP-848 shapes):
#: homogeneous, and heterogeneous in 5 buckets of members and topics.
KIP848_PATTERNS = ("equal", "buckets")
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
        ``sticky-replica`` (also the yardstick of kafka-default).
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
    seed
        Random seed of the instance.
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

    @property
    def scenario_id(self) -> str:
        if self.family == "placement":
            detail = f"rf{self.replication}"
        elif self.judged_on == "rack-aware":
            racks = f"racks{RACKS}-rf{self.replication}" if self.replication else "norack"
            detail = f"{self.pattern}-{self.lags}-{racks}"
        else:
            detail = f"{self.pattern}-{self.lags}"
        return (
            f"{self.judged_on}/{self.churn}/{detail}/"
            f"p{self.partitions}-m{self.members}-t{self.topics}/s{self.seed}"
        )

    @property
    def size(self) -> int:
        """Items to place: partitions (groups) or replicas (placements)."""
        return self.partitions * (self.replication if self.family == "placement" else 1)

    def as_row(self) -> dict:
        return {"scenario_id": self.scenario_id, "size": self.size, **asdict(self)}


# ===================================================================== groups
def _group_state(s: Scenario, rng: np.random.Generator) -> tuple[dict[str, int], list[dict]]:
    """Topics and members (with subscriptions) of the group after the churn event."""
    names = [f"topic{t:02d}" for t in range(s.topics)]
    counts = np.full(s.topics, s.partitions // s.topics, dtype=np.int64)
    counts[: s.partitions % s.topics] += 1
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


def _previous(s: Scenario, topics: dict[str, int], members: list[dict], rng: np.random.Generator):
    """The group before the churn event, and who owned what (Kafka's range / round robin)."""
    before_topics = dict(topics)
    before_members = [dict(m) for m in members]
    if s.churn == "member-joins":
        before_members = before_members[:-1]
    elif s.churn in ("member-leaves", "several-leave"):
        extra = 1 if s.churn == "member-leaves" else max(2, s.members // 4)
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
    assignor = range_assignor if s.judged_on == "stream-join" else roundrobin_assignor
    before = assignor.assign(load_problem({"topics": before_topics, "members": before_members}))
    return before.assignment


def _lags(
    s: Scenario, topics: dict[str, int], rng: np.random.Generator
) -> dict[str, list[int]] | None:
    if s.judged_on != "lag-aware":
        return None
    out = {}
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
        hot = max(topics, key=topics.get)
        if topics[hot]:
            out[hot][int(rng.integers(topics[hot]))] = 10**6
    return out


def _group_document(s: Scenario) -> dict:
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
    doc = {"topics": topics, "members": members}
    lags = _lags(s, topics, rng)
    if lags is not None:
        doc["lags"] = lags
    if s.replication:  # drawn last: the twin without racks has the same group
        _add_racks(doc, s.replication, rng)
    return doc


def _add_racks(doc: dict, replication: int, rng: np.random.Generator) -> None:
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
def _placement_document(s: Scenario) -> dict:
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


def build_problem(scenario: Scenario) -> dict:
    """The problem document of ``scenario`` (deterministic in the scenario alone)."""
    if scenario.family == "placement":
        return _placement_document(scenario)
    return _group_document(scenario)


# ===================================================================== suites
def _groups(strategies, churns, sizes, seeds, patterns=("equal",), lags=("zero",)):
    for judged_on, churn, (p, m, t), seed, pattern in itertools.product(
        strategies, churns, sizes, seeds, patterns
    ):
        for lag in lags if judged_on == "lag-aware" else ("zero",):
            yield Scenario(
                "group",
                judged_on,
                churn,
                p,
                m,
                t,
                seed,
                pattern if judged_on != "stream-join" else "equal",
                lag,
            )


def _racked(churns, sizes, seeds, patterns, layouts=RACK_LAYOUTS):
    """Group scenarios judged on ``rack-aware``, one per rack layout (replicas per partition, 0: no racks)."""
    for churn, (p, m, t), seed, pattern, replication in itertools.product(
        churns, sizes, seeds, patterns, layouts
    ):
        yield Scenario(
            "group", "rack-aware", churn, p, m, t, seed, pattern, replication=replication
        )


def _placements(churns, sizes, seeds):
    for churn, (p, b, r, rf), seed in itertools.product(churns, sizes, seeds):
        yield Scenario("placement", "sticky-replica", churn, p, b, r, seed, replication=rf)


TWO_MOVE_SCENARIO = Scenario(
    "placement", "sticky-replica", TWO_MOVE_LIMIT, 2, 4, 2, 0, replication=2
)


def _unique(scenarios) -> list[Scenario]:
    return list(dict.fromkeys(scenarios))


def suite(name: str) -> list[Scenario]:
    """The scenarios of suite ``name`` (``smoke``, ``gate``, ``default``, ``scale``)."""
    builders = {"smoke": _smoke, "gate": _gate, "default": _default, "scale": _scale}
    if name not in builders:
        raise ValueError(f"unknown suite {name!r} (choose from {', '.join(SUITES)})")
    return _unique(builders[name]())


def _smoke() -> list[Scenario]:
    """The smoke suite: a small scenario or two of each family (seconds; the tests run it)."""
    return [
        *_groups(["sticky"], ["fresh", "member-leaves"], [(12, 3, 2)], [1]),
        *_groups(["lag-aware"], ["fresh"], [(8, 3, 2)], [1], lags=("zipf",)),
        *_groups(["stream-join"], ["member-leaves"], [(12, 3, 2)], [1]),
        *_racked(["member-leaves"], [(12, 3, 2)], [1], ["random-subsets"], layouts=(2,)),
        *_placements(["broker-removed"], [(6, 4, 2, 2)], [1]),
        TWO_MOVE_SCENARIO,
    ]


def _gate() -> list[Scenario]:
    """The gate suite (``rebalance-lab gate``): small scenarios of every family, two seeds each."""
    return [
        *_groups(
            ["sticky"],
            GROUP_CHURN,
            [(24, 4, 3), (60, 7, 4)],
            [1, 2],
            patterns=("equal", "random-subsets"),
        ),
        *_groups(
            ["lag-aware"],
            ["fresh", "member-joins"],
            [(12, 3, 2), (16, 4, 2)],
            [1, 2],
            patterns=("equal",),
            lags=("uniform", "zipf", "hot"),
        ),
        *_groups(
            ["stream-join"],
            ["fresh", "member-joins", "member-leaves", "zombie", "topic-added"],
            [(24, 4, 3)],
            [1, 2],
        ),
        *_racked(
            ["fresh", "member-leaves"],
            [(24, 4, 3)],
            [1, 2],
            ("equal", "random-subsets"),
            layouts=(2, 0),
        ),
        *_placements(PLACEMENT_CHURN, [(12, 6, 2, 3), (24, 9, 3, 3)], [1, 2]),
        TWO_MOVE_SCENARIO,
    ]


def _default() -> list[Scenario]:
    """The default suite, the main job's (``make run``): every family, small sizes to Kafka's shapes."""
    return [
        *_groups(
            ["sticky"],
            GROUP_CHURN,
            [(12, 3, 2), (200, 10, 5), (2000, 100, 20)],
            [1, 2],
            patterns=PATTERNS,
        ),
        # Kafka's server-side assignor benchmark shapes, small: 10 partitions per member,
        # full and incremental (a member joins), homogeneous and in 5 buckets.
        *_groups(
            ["sticky"],
            ["fresh", "member-joins"],
            [(1000, 100, 10), (2000, 200, 100)],
            [1],
            patterns=KIP848_PATTERNS,
        ),
        # KIP-881 racks (3 racks; replicas on 2 of them, on all 3, or no racks at all):
        # range, sticky and cooperative-sticky rack-aware, uniform and server-range with
        # racks, against the exact rack-aware model.
        *_racked(
            ["fresh", "member-joins", "member-leaves"],
            [(24, 4, 3), (200, 10, 5)],
            [1],
            ("equal", "random-subsets", "buckets"),
        ),
        *_groups(
            ["lag-aware"],
            ["fresh", "member-joins", "member-leaves"],
            [(12, 3, 2), (16, 4, 2), (24, 4, 2)],
            [1],
            patterns=("equal", "few-topics"),
            lags=LAGS,
        ),
        *_groups(["lag-aware"], ["fresh"], [(200, 10, 2)], [1], lags=("uniform", "zipf")),
        *_groups(["stream-join"], GROUP_CHURN, [(24, 4, 3), (300, 10, 3), (2000, 50, 5)], [1, 2]),
        *_placements(PLACEMENT_CHURN, [(12, 4, 2, 2), (60, 9, 3, 3), (300, 12, 3, 3)], [1, 2]),
        *_placements(["broker-removed"], [(1000, 30, 3, 3)], [1]),
        TWO_MOVE_SCENARIO,
    ]


def _scale() -> list[Scenario]:
    """The scale suite: Kafka's benchmark shapes at their largest, and millions of partitions."""
    return [
        *_groups(
            ["sticky"],
            GROUP_CHURN,
            [(100_000, 1000, 100), (1_000_000, 2000, 500)],
            [1],
            patterns=("equal", "one-odd"),
        ),
        # Kafka's server-side assignor benchmark at its largest: 10,000 members x 10
        # partitions per member x 1,000 topics, and 5 and 50 partitions per member on 100
        # topics.
        *_groups(
            ["sticky"],
            ["fresh", "member-joins"],
            [(100_000, 10_000, 1000), (5_000, 1000, 100), (50_000, 1000, 100)],
            [1],
            patterns=KIP848_PATTERNS,
        ),
        *_racked(["fresh", "member-joins"], [(100_000, 10_000, 1000)], [1], KIP848_PATTERNS),
        *_groups(["stream-join"], ["member-leaves", "zombie"], [(50_000, 500, 5)], [1]),
        *_placements(PLACEMENT_CHURN, [(10_000, 100, 5, 3)], [1]),
        *_placements(["broker-removed"], [(100_000, 100, 5, 3)], [1]),
        *_groups(
            ["lag-aware"],
            ["fresh", "member-joins"],
            [(10_000, 100, 10), (100_000, 1000, 10)],
            [1],
            lags=("uniform", "zipf"),
        ),
    ]


SUITES = ("smoke", "gate", "default", "scale")
