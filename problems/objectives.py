"""The catalogue of objectives (docs/design/objectives.md): each objective's levels, and the objective
each strategy is judged on.

:mod:`problems.evaluate` scores answers on these objectives; the strategy
registry (:mod:`models.registry`), the harness and the report read the names
from here.
"""

from __future__ import annotations

from problems.streams import STREAMS_LEVELS

#: Objective levels of each objective kind, in lexicographic order.
OBJECTIVES: dict[str, tuple[str, ...]] = {
    "sticky": ("sum_sq_counts", "moves"),
    "lag-aware": ("max_member_lag", "sum_sq_member_lag"),
    "stream-join": ("sum_sq_numbers", "number_moves"),
    "rack-aware": ("sum_sq_counts", "rack_mismatches", "moves"),
    "replica": ("sum_sq_broker_replicas", "sum_sq_rack_replicas", "sum_sq_broker_leaders", "moves"),
    "share": ("sum_sq_counts", "sum_sq_readers", "moves"),
    "streams": STREAMS_LEVELS,
}
#: The most levels any objective has: the ``level1 .. levelN`` columns of a results row.
LEVELS = max(len(names) for names in OBJECTIVES.values())

#: The objective each strategy is judged on (range, round robin and KIP-848's uniform and
#: server-range are baselines judged on the sticky objective, or on ``rack-aware`` when the
#: document has racks: see :func:`objective_of`).
STRATEGY_OBJECTIVE: dict[str, str] = {
    "range": "sticky",
    "roundrobin": "sticky",
    "sticky": "sticky",
    "cooperative-sticky": "sticky",
    "rack-aware": "rack-aware",
    "lag-aware": "lag-aware",
    "stream-join": "stream-join",
    "uniform": "sticky",
    "server-range": "sticky",
    "share": "share",
    "streams-sticky": "streams",
    "streams-ha": "streams",
    "streams-kip924-sticky": "streams",
    "kafka-default": "replica",
    "sticky-replica": "replica",
}

GROUP_STRATEGIES = tuple(
    s for s, o in STRATEGY_OBJECTIVE.items() if o not in ("replica", "streams")
)
PLACEMENT_STRATEGIES = tuple(s for s, o in STRATEGY_OBJECTIVE.items() if o == "replica")
STREAMS_STRATEGIES = tuple(s for s, o in STRATEGY_OBJECTIVE.items() if o == "streams")

#: The baselines of docs/design/objectives.md judged on ``rack-aware`` when the document has
#: ``partition_racks``, on ``sticky`` otherwise (names not registered yet are harmless).
RACK_JUDGED = frozenset({"range", "roundrobin", "uniform", "server-range", "cooperative-sticky"})


def objective_of(problem: object, strategy: str) -> str:
    """The objective ``strategy``'s answers to ``problem`` are judged on (a key of :data:`OBJECTIVES`).

    :data:`STRATEGY_OBJECTIVE`, except that the baselines of :data:`RACK_JUDGED` are judged
    on ``rack-aware`` when the problem has racks (``partition_racks``).  ``sticky`` keeps its
    own objective (its exact models rank balance, then moves); the rack-aware sticky heuristic
    is judged on ``rack-aware`` as a baseline of the ``rack-aware`` strategy.
    """
    kind = STRATEGY_OBJECTIVE[strategy]
    if strategy in RACK_JUDGED and getattr(problem, "has_racks", False):
        return "rack-aware"
    return kind
