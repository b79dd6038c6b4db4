"""``streams-ha``: Kafka Streams' ``HighAvailabilityTaskAssignor`` (KIP-441), Kafka 4.4's own.

The client-side assignor of Kafka Streams' classic rebalance protocol: stateful active tasks go to
processes that are caught up on them (within ``acceptable.recovery.lag``), warm-up replicas build
state where an active task should move later (at most ``max.warmup.replicas``), standbys are spread
by the ``DefaultStandbyTaskAssignor`` or, with ``rack.aware.assignment.tags``, KIP-708's
``ClientTagAwareStandbyTaskAssignor``, and KIP-925's ``RackAwareTaskAssignor`` re-places tasks by
min-cost flow when ``rack.aware.assignment.strategy`` asks for it and the racks are known.

The assignor's steps: :mod:`heuristics.streams.streams_ha_assignor`; how the document becomes its input
(processes as clients ordered by process UUID, lags, racks): :mod:`heuristics.streams.streams_ha_input`;
the standby assignors, KIP-925 and Kafka's min-cost flow, and the Java orders they depend on:
:mod:`heuristics.streams.streams_ha_standby`, :mod:`heuristics.streams.streams_ha_rack`,
:mod:`heuristics.streams.streams_ha_flow`, :mod:`heuristics.streams.streams_ha_order`.  Every process's answer
equals Kafka's own classes' (tests/peers/test_streams_ha_equality.py).

``info`` reports ``probing_rebalance`` (Kafka schedules a probing rebalance: some task is to
move once a warm-up catches up) and ``rack_aware`` (KIP-925's optimisation ran).
"""

from __future__ import annotations

from heuristics.streams.streams_ha_assignor import high_availability_assign
from heuristics.streams.streams_ha_input import streams_input, to_members
from problems import Result
from problems.streams import StreamsProblem


def assign(problem: StreamsProblem) -> Result:
    """Kafka Streams' ``HighAvailabilityTaskAssignor`` on ``problem``."""
    inp, order = streams_input(problem)
    out = high_availability_assign(inp)
    answer = to_members(problem, order, out.active, out.standby, out.warmup)
    return Result(
        problem,
        "streams-ha",
        answer,
        info={"probing_rebalance": out.probing, "rack_aware": out.rack_aware},
        objective_name="streams",
    )
