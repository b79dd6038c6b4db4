"""Trace scenarios: sequences of rebalances built deterministically from (family, sizes, seed).

A trace scenario (:class:`TraceScenario`) names a trace family (:data:`TRACE_FAMILIES`: what
happens to the group or cluster, step after step), the sizes of the starting problem, the number
of steps and a seed; :func:`build_trace` turns it into a trace document (DESIGN section 2,
"Traces": a starting problem and a list of steps, each one rebalance), the same document every
time.  The starting problem is the ``fresh`` single-rebalance scenario of the same sizes
(:func:`experiments.scenarios.build_problem`), so a trace starts from the groups and clusters the
suites already study.

Group families (judged on ``sticky``, ``rack-aware``, ``lag-aware`` or ``stream-join``):

``rolling-restart``
    Every member restarts once, in list order, the members split into ``steps`` consecutive
    slices (one member per step, cycling, when there are more steps than members).  Dynamic
    members: a restarted member comes back without its claims.
``static-rolling-restart``
    The same with static membership (every member has an ``instance_id``, KIP-345): a restarted
    member keeps its claims and its place.
``scale-out`` / ``scale-in``
    Each step 1 to k members join (leave), k = members // (2 * steps), at least 1, the count drawn
    from the seed; joiners subscribe as the pattern does (every topic when equal, else the
    subscription of a member drawn from the seed), leavers are drawn from the seed.
``crash-rejoin``
    A machine of k = members // 4 (at least 1) members crashes (they leave together); they come
    back one per step (dynamic members, no claims); then the next machine crashes.
``flapping``
    One member (drawn from the seed) leaves at every odd step and rejoins at every even step.
``topic-growth``
    Odd steps add a topic (partitions // topics partitions; subscribed by the members of the first
    topic, or by a random half of them under other patterns); even steps grow a topic (drawn from
    the seed) by half its partitions.  Stream joins keep their topics co-partitioned: every topic
    grows together.  Lag-aware traces get the new partitions' lags in the same step.
``lag-drift``
    Lag-aware only: every step every partition's lag drifts (multiplied by a log-normal factor,
    plus new messages, at most 10^6) and one partition drawn from the seed becomes hot (10^6
    messages).

Placement families (judged on ``sticky-replica``; ``steps`` counts the brokers involved):

``decommission-one-by-one`` / ``decommission-all-at-once``
    ``steps`` brokers drawn from the seed are removed, one per step, or all in one step (a trace
    of one step: both end with the same cluster, so their total moves compare).
``rack-added``
    A new rack is built: each step adds one broker on it (without racks: one more broker).

Details: docs/harness.md.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from experiments.scenarios import RACKS, Scenario, build_problem
from models.registry import judged_strategies
from problems.checks import INT64_MAX

#: Trace families and the problem family each applies to.
TRACE_FAMILIES: dict[str, str] = {
    "rolling-restart": "group",
    "static-rolling-restart": "group",
    "scale-out": "group",
    "scale-in": "group",
    "crash-rejoin": "group",
    "flapping": "group",
    "topic-growth": "group",
    "lag-drift": "group",
    "decommission-one-by-one": "placement",
    "decommission-all-at-once": "placement",
    "rack-added": "placement",
}
#: Families that apply to one judged-on strategy only.
ONLY_FOR = {"lag-drift": "lag-aware"}


def trace_judged_on() -> tuple[str, ...]:
    """Strategies a trace scenario can be judged on (:attr:`models.registry.Judging.trace_panel`;
    share groups have no trace format)."""
    return tuple(
        record.name
        for record in judged_strategies()
        if record.judging is not None and record.judging.trace_panel is not None
    )


#: The lag a hot partition gets (as :func:`experiments.scenarios._lags` draws ``hot``).
HOT_LAG = 10**6


@dataclass(frozen=True)
class TraceScenario:
    """One trace of a suite: a trace family over a starting problem.

    Attributes
    ----------
    family
        ``group`` or ``placement``.
    judged_on
        The strategy whose objective judges every step (as :class:`experiments.scenarios.Scenario`).
    trace
        The trace family (:data:`TRACE_FAMILIES`).
    partitions, members, topics, replication, pattern, lags
        The starting problem's sizes, as a single-rebalance scenario's (placements: ``members`` =
        brokers, ``topics`` = racks, ``replication`` the replication factor).
    steps
        Rebalances after the first (placement decommissions: brokers removed).
    seed
        Random seed of the starting problem and of the events.
    settings, tag
        How an experiment file has it solved, and the run factors it varies (as a scenario's).
    """

    family: str
    judged_on: str
    trace: str
    partitions: int
    members: int
    topics: int
    steps: int
    seed: int
    pattern: str = "equal"
    lags: str = "zero"
    replication: int = 0
    settings: str = ""
    tag: str = ""

    @property
    def start(self) -> Scenario:
        """The single-rebalance scenario whose problem the trace starts from (``fresh``)."""
        return Scenario(
            self.family,
            self.judged_on,
            "fresh",
            self.partitions,
            self.members,
            self.topics,
            self.seed,
            self.pattern,
            self.lags,
            self.replication,
        )

    @property
    def churn(self) -> str:
        """The trace family, in the result rows' ``churn`` column."""
        return self.trace

    @property
    def scenario_id(self) -> str:
        detail = self.start.scenario_id.split("/")[2]
        return (
            f"trace/{self.judged_on}/{self.trace}/{detail}/"
            f"p{self.partitions}-m{self.members}-t{self.topics}-T{self.steps}/s{self.seed}{self.tag}"
        )

    @property
    def size(self) -> int:
        """Items to place at the start: partitions (groups) or replicas (placements)."""
        return self.start.size

    def as_row(self) -> dict[str, Any]:
        return {"scenario_id": self.scenario_id, "size": self.size, **asdict(self)}


def check(scenario: TraceScenario) -> str | None:
    """Why ``scenario`` cannot be built (a family for another problem or strategy, a trace that
    would empty the group or the cluster), or None."""
    family = TRACE_FAMILIES.get(scenario.trace)
    if family is None:
        return f"unknown trace family {scenario.trace!r} (choose from {', '.join(TRACE_FAMILIES)})"
    if family != scenario.family:
        return f"trace {scenario.trace!r} is for {family}s, this block is {scenario.family}s"
    if scenario.judged_on not in trace_judged_on():
        return f"no traces are judged on {scenario.judged_on!r}"
    only = ONLY_FOR.get(scenario.trace)
    if only is not None and scenario.judged_on != only:
        return f"trace {scenario.trace!r} is judged on {only} only"
    if scenario.steps < 1:
        return "a trace has at least one step"
    if scenario.trace == "scale-in" and scenario.members <= scenario.steps:
        return (
            f"scale-in needs more members ({scenario.members}) than steps ({scenario.steps}): "
            "every step one leaves at least"
        )
    if scenario.trace.startswith("decommission"):
        spare = scenario.members - scenario.replication
        if scenario.steps > spare:
            return (
                f"decommissioning {scenario.steps} of {scenario.members} brokers leaves fewer than "
                f"the replication factor {scenario.replication}"
            )
    return None


# ===================================================================== building
def _rng(scenario: TraceScenario) -> np.random.Generator:
    """The events' random stream: the seed and the family (the start has its own).  Both
    decommissions share theirs: they remove the same brokers."""
    key = "decommission" if scenario.trace.startswith("decommission") else scenario.trace
    return np.random.default_rng([scenario.seed, zlib.crc32(key.encode())])


def build_trace(scenario: TraceScenario) -> dict[str, Any]:
    """The trace document of ``scenario`` (deterministic in the scenario alone).

    Raises
    ------
    ValueError
        The scenario cannot be built (:func:`check`).
    """
    problem = check(scenario)
    if problem is not None:
        raise ValueError(f"{scenario.scenario_id}: {problem}")
    start = build_problem(scenario.start)
    rng = _rng(scenario)
    if scenario.family == "placement":
        steps = _placement_steps(scenario, start, rng)
        return {"kind": "placement-trace", "problem": start, "steps": steps}
    if scenario.trace == "static-rolling-restart":
        for member in start["members"]:
            member["instance_id"] = f"instance-{member['id']}"
    steps = _GroupEvents(scenario, start, rng).steps()
    return {"kind": "group-trace", "problem": start, "steps": steps}


class _GroupEvents:
    """The group as the events change it: members (in order), topics and lags."""

    def __init__(
        self,
        scenario: TraceScenario,
        start: dict[str, Any],
        rng: np.random.Generator,
        counting: bool = False,
    ):
        self.s = scenario
        self.rng = rng
        self.counting = counting  # only the partition counts: draws made, lags and racks dropped
        self.members: list[dict[str, Any]] = [dict(m) for m in start["members"]]
        self.topics: dict[str, int] = dict(start["topics"])
        self.lags: dict[str, list[int]] | None = (
            {t: list(v) for t, v in start["lags"].items()} if "lags" in start else None
        )
        self.racked = any("rack" in m for m in self.members)
        self.partition_racks: dict[str, list[list[str]]] | None = (
            {t: [list(r) for r in v] for t, v in start["partition_racks"].items()}
            if "partition_racks" in start
            else None
        )
        # counting: the lengths of the lags' and the replica racks' lists, in their place
        self.rack_lengths: dict[str, int] | None = None
        self.lag_lengths: dict[str, int] | None = None
        if counting:
            if self.partition_racks is not None:
                self.rack_lengths = {t: len(v) for t, v in self.partition_racks.items()}
            if self.lags is not None:
                self.lag_lengths = {t: len(v) for t, v in self.lags.items()}
            self.partition_racks = self.lags = None
        self.next_id = scenario.members
        self.next_topic = scenario.topics
        self.away: list[dict[str, Any]] = []  # members that left and will come back

    # ----------------------------------------------------------------- helpers
    def _ids(self) -> list[str]:
        return [m["id"] for m in self.members]

    def _new_member(self) -> dict[str, Any]:
        number = self.next_id
        self.next_id += 1
        if self.s.pattern == "equal" or self.s.judged_on == "stream-join" or not self.members:
            topics = list(self.topics)
        else:
            topics = list(self.members[int(self.rng.integers(len(self.members)))]["topics"])
        member: dict[str, Any] = {"id": f"consumer{number:04d}", "topics": topics}
        if self.racked:
            member["rack"] = f"rack{number % RACKS}"
        return member

    def _leave(self, ids: list[str]) -> dict[str, Any]:
        gone = set(ids)
        self.away.extend(m for m in self.members if m["id"] in gone)
        self.members = [m for m in self.members if m["id"] not in gone]
        return {"leave": ids}

    def _rejoin(self, member: dict[str, Any]) -> dict[str, Any]:
        self.away.remove(member)
        topics = [t for t in member["topics"] if self.topics.get(t, 0) > 0] or list(self.topics)[:1]
        back = {**member, "topics": topics}
        self.members.append(back)
        return {"join": [back]}

    def _draw_lags(self, count: int) -> list[int]:
        kind = self.s.lags
        if kind == "zero":
            return [0] * count
        if kind == "uniform":
            values = self.rng.integers(0, 100_000, size=count)
        elif kind == "zipf":
            values = np.minimum(self.rng.zipf(1.5, size=count), 10**6) * 100
        else:  # hot: small lags (the hot partition is set apart)
            values = self.rng.integers(0, 1_000, size=count)
        return [int(v) for v in values]

    def _lags_event(self) -> dict[str, Any]:
        """Lags and replica racks for every partition after a topic change (new partitions get
        drawn lags, and replicas on ``replication`` consecutive racks from a drawn first one)."""
        if self.counting:
            return self._count_lags()
        event: dict[str, Any] = {}
        if self.partition_racks is not None:
            names = [f"rack{r}" for r in range(RACKS)]
            for topic, count in self.topics.items():
                have = self.partition_racks.get(topic, [])
                first = self.rng.integers(RACKS, size=max(0, count - len(have))).tolist()
                have = have + [
                    [names[(f + j) % RACKS] for j in range(self.s.replication)] for f in first
                ]
                self.partition_racks[topic] = have[:count]
            event["partition_racks"] = {
                t: [list(r) for r in v] for t, v in self.partition_racks.items()
            }
        if self.lags is None:
            return event
        for topic, count in self.topics.items():
            values = self.lags.get(topic, [])
            if len(values) < count:
                values = values + self._draw_lags(count - len(values))
            self.lags[topic] = values[:count]
        return {**event, "lags": {t: list(v) for t, v in self.lags.items()}}

    def _count_lags(self) -> dict[str, Any]:
        """:meth:`_lags_event`'s random draws for the new partitions, their values dropped (only
        the lists' lengths are kept), and no event."""
        for lengths, draw in ((self.rack_lengths, self._draw_racks), (self.lag_lengths, None)):
            if lengths is None:
                continue
            for topic, count in self.topics.items():
                missing = count - lengths.get(topic, 0)
                if draw is not None:
                    draw(max(0, missing))
                elif missing > 0:
                    self._draw_lags(missing)
                lengths[topic] = count
        return {}

    def _draw_racks(self, count: int) -> None:
        self.rng.integers(RACKS, size=count)

    def sizes(self) -> Iterator[int]:
        """The partitions after each ``topic-growth`` step, the steps made one at a time."""
        for k in range(1, self.s.steps + 1):
            self._topic_growth(k)
            yield sum(self.topics.values())

    def _k(self) -> int:
        return max(1, self.s.members // (2 * self.s.steps))

    # ------------------------------------------------------------------ events
    def steps(self) -> list[dict[str, Any]]:
        make = {
            "rolling-restart": self._rolling,
            "static-rolling-restart": self._rolling,
            "scale-out": self._scale_out,
            "scale-in": self._scale_in,
            "crash-rejoin": self._crash_rejoin,
            "flapping": self._flapping,
            "topic-growth": self._topic_growth,
            "lag-drift": self._lag_drift,
        }[self.s.trace]
        return [make(k) for k in range(1, self.s.steps + 1)]

    def _rolling(self, k: int) -> dict[str, Any]:
        ids = self._ids()
        if self.s.steps >= len(ids):
            return {"restart": [ids[(k - 1) % len(ids)]]}
        part = np.array_split(np.arange(len(ids)), self.s.steps)[k - 1]
        return {"restart": [ids[i] for i in part.tolist()]}

    def _scale_out(self, k: int) -> dict[str, Any]:
        count = int(self.rng.integers(1, self._k() + 1))
        joined = [self._new_member() for _ in range(count)]
        self.members.extend(joined)
        return {"join": joined}

    def _scale_in(self, k: int) -> dict[str, Any]:
        count = min(int(self.rng.integers(1, self._k() + 1)), len(self.members) - 1)
        chosen = sorted(self.rng.choice(len(self.members), size=count, replace=False).tolist())
        ids = [self.members[i]["id"] for i in chosen]
        event = self._leave(ids)
        self.away.clear()  # scaled in: they do not come back
        return event

    def _crash_rejoin(self, k: int) -> dict[str, Any]:
        if self.away:
            return self._rejoin(self.away[0])
        machine = min(max(1, self.s.members // 4), len(self.members) - 1)
        if machine < 1:  # a group of one: it restarts instead
            return {"restart": self._ids()}
        chosen = sorted(self.rng.choice(len(self.members), size=machine, replace=False).tolist())
        return self._leave([self.members[i]["id"] for i in chosen])

    def _flapping(self, k: int) -> dict[str, Any]:
        if k == 1:
            self.flapper = self.members[int(self.rng.integers(len(self.members)))]["id"]
        if self.away:
            return self._rejoin(self.away[0])
        if len(self.members) < 2:  # the only member: it restarts instead
            return {"restart": [self.flapper]}
        return self._leave([self.flapper])

    def _topic_growth(self, k: int) -> dict[str, Any]:
        event: dict[str, Any] = {}
        if self.s.judged_on == "stream-join":
            count = min(self.topics.values()) if self.topics else 1
            if k % 2:  # a new co-partitioned topic, joined by every member
                name = self._topic_name()
                self.topics[name] = count
                for member in self.members:
                    member["topics"] = [*member["topics"], name]
                event["subscribe"] = {m["id"]: list(m["topics"]) for m in self.members}
            else:
                self.topics = {t: c + max(1, c // 2) for t, c in self.topics.items()}
            event = {"topics": dict(self.topics), **event}
            return {**event, **self._lags_event()}
        if k % 2:
            name = self._topic_name()
            self.topics[name] = max(1, self.s.partitions // max(1, self.s.topics))
            first = next(iter(self.topics))
            readers = [m for m in self.members if first in m["topics"]] or self.members[:1]
            if self.s.pattern != "equal" and len(readers) > 1:
                keep = self.rng.random(len(readers)) < 0.5
                keep[int(self.rng.integers(len(readers)))] = True
                readers = [m for m, kept in zip(readers, keep.tolist()) if kept]
            for member in readers:
                member["topics"] = [*member["topics"], name]
            event = {
                "topics": {name: self.topics[name]},
                "subscribe": {m["id"]: list(m["topics"]) for m in readers},
            }
        else:
            names = list(self.topics)
            name = names[int(self.rng.integers(len(names)))]
            self.topics[name] += max(1, self.topics[name] // 2)
            event = {"topics": {name: self.topics[name]}}
        return {**event, **self._lags_event()}

    def _topic_name(self) -> str:
        name = f"topic{self.next_topic:02d}"
        self.next_topic += 1
        return name

    def _lag_drift(self, k: int) -> dict[str, Any]:
        assert self.lags is not None, "lag-drift traces are judged on lag-aware"
        cells = [(t, p) for t, count in self.topics.items() for p in range(count)]
        for topic, values in self.lags.items():
            if not values:
                continue
            factors = self.rng.lognormal(0.0, 0.5, size=len(values))
            arrivals = self.rng.integers(0, 1_000, size=len(values))
            drifted = np.floor(np.asarray(values, dtype=np.float64) * factors) + arrivals
            self.lags[topic] = [int(v) for v in np.minimum(drifted, HOT_LAG).astype(np.int64)]
        if cells:
            topic, p = cells[int(self.rng.integers(len(cells)))]
            self.lags[topic][p] = HOT_LAG
        return {"lags": {t: list(v) for t, v in self.lags.items()}}


def _placement_steps(
    scenario: TraceScenario, start: dict[str, Any], rng: np.random.Generator
) -> list[dict[str, Any]]:
    brokers = [b["id"] for b in start["brokers"]]
    if scenario.trace.startswith("decommission"):
        chosen = rng.choice(len(brokers), size=scenario.steps, replace=False).tolist()
        removed = [brokers[i] for i in chosen]
        if scenario.trace == "decommission-all-at-once":
            return [{"remove_brokers": sorted(removed)}]
        return [{"remove_brokers": [broker]} for broker in removed]
    # rack-added: a new rack's brokers, one per step (rack-unaware: one more broker a step)
    racked = bool(scenario.topics)
    first = max(brokers, default=0) + 1
    return [
        {
            "add_brokers": [
                {"id": first + k, **({"rack": f"rack{scenario.topics}"} if racked else {})}
            ]
        }
        for k in range(scenario.steps)
    ]


def trace_length(scenario: TraceScenario) -> int:
    """Rebalances of the trace: its steps and the first (one step for an all-at-once decommission)."""
    return 2 if scenario.trace == "decommission-all-at-once" else scenario.steps + 1


def start_items(scenario: TraceScenario) -> int:
    """The starting problem's partitions (a placement's replicas), from the sizes alone: a stream
    join's co-partitioned topics hold ``partitions // topics`` (at least 1) each."""
    if scenario.family == "group" and scenario.judged_on == "stream-join":
        return scenario.topics * max(1, scenario.partitions // max(1, scenario.topics))
    return scenario.size


def trace_size(scenario: TraceScenario, limit: int | None = None) -> tuple[int, bool]:
    """The size :func:`problems.trace.trace_size` gives the trace of ``scenario`` — partitions
    (a placement's replicas) summed over its rebalances — without building the trace, and
    whether it is exact.

    Only ``topic-growth`` changes the partitions: a stream join's growth is counted from the
    sizes (every topic grows together); another group's is followed step by step with the
    events' own random draws, counts only (:class:`_GroupEvents` counting).  The second counting
    stops once the sum is above ``limit`` (the first once it is above 2**63-1, past any limit):
    then the number is a lower bound (the steps left counted at the partitions reached), not
    exact.
    """
    rebalances = trace_length(scenario)
    items = start_items(scenario)
    if scenario.trace != "topic-growth":
        return items * rebalances, True
    stop = limit
    if scenario.judged_on == "stream-join":
        topics = max(1, scenario.topics)
        sizes = _stream_join_growth(topics, items // topics, scenario.steps)
        if stop is not None:  # plain arithmetic: counted on to the end, or past any limit
            stop = max(stop, INT64_MAX)
    else:
        start = build_problem(scenario.start)
        sizes = _GroupEvents(scenario, start, _rng(scenario), counting=True).sizes()
    total, current = items, items
    for k, current in enumerate(sizes, start=1):
        total += current
        if stop is not None and total > stop and k < scenario.steps:
            return total + current * (scenario.steps - k), False
    return total, True


def _stream_join_growth(topics: int, count: int, steps: int) -> Iterator[int]:
    """A stream join's partitions after each topic-growth step: odd steps add a topic of the
    common count, even steps grow every topic by half (at least 1)."""
    for k in range(1, steps + 1):
        if k % 2:
            topics += 1
        else:
            count += max(1, count // 2)
        yield topics * count


__all__ = [
    "ONLY_FOR",
    "TRACE_FAMILIES",
    "trace_judged_on",
    "TraceScenario",
    "build_trace",
    "check",
    "start_items",
    "trace_length",
    "trace_size",
]
