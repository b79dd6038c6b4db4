"""The ``rack-aware`` strategy's heuristic: Kafka's ``StickyAssignor`` with KIP-881 rack awareness.

KIP-881 makes the client sticky assignor rank balance, then rack alignment (a
member gets partitions with a replica on its rack), then stickiness: the ranking
of the ``rack-aware`` objective (docs/design/objectives.md).  Its heuristic is therefore
:func:`heuristics.sticky.sticky.assign`, run as Kafka runs it (rack logic on exactly when
Kafka's is), and judged on ``rack-aware`` instead of ``sticky``.
"""

from __future__ import annotations

from heuristics.sticky import sticky
from problems import GroupProblem, Result


def assign(problem: GroupProblem) -> Result:
    """Kafka's ``StickyAssignor`` on ``problem``, judged on the ``rack-aware`` objective."""
    result = sticky.assign(problem)
    return Result(
        problem, "rack-aware", result.answer, info=result.info, objective_name="rack-aware"
    )
