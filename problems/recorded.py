"""The parts of a recorded group trace (``rebalance-lab record``): the ``recorded`` header and each
step's ``observed`` object (docs/formats.md, "Recorded traces").

``recorded`` says where the trace came from: ``group`` (required), ``protocol``, ``assignor``,
``source``, ``from``, ``to`` (strings), ``poll_ms`` (an integer) and ``clients`` (member id ->
client id, the names of a consumer-protocol group's opaque member ids).  ``observed`` is what
Kafka's members actually held after a step's rebalance: ``assignment`` (required: member id ->
topic -> partitions, every member in the group at that step, every partition in its topic and
held by one member at most), ``generation`` (the classic protocol's generation or the consumer
protocol's group epoch), ``rounds`` (rebalances the step took, at least 1), ``settle_ms`` and
``unowned_partition_ms`` (integers >= 0).  Each malformed field is one :class:`ProblemError`
naming it (``steps[3].observed.assignment.c9``).
"""

from __future__ import annotations

from typing import Any

from problems import checks
from problems.checks import INT64_MAX
from problems.errors import ProblemError

RECORDED_FIELDS = frozenset(
    {"group", "protocol", "assignor", "source", "from", "to", "poll_ms", "clients"}
)
OBSERVED_FIELDS = frozenset(
    {"generation", "assignment", "rounds", "settle_ms", "unowned_partition_ms"}
)


def parse_recorded(value: Any) -> dict[str, Any]:
    """The ``recorded`` header, checked."""
    checks.expect(value, dict, "recorded", "an object (where the trace was recorded)")
    checks.known_fields(value, RECORDED_FIELDS, "recorded")
    if "group" not in value:
        raise ProblemError("recorded.group", "missing (the recorded group's name)")
    for key in sorted(RECORDED_FIELDS - {"poll_ms", "assignor", "clients"}):
        if key in value:
            checks.string(value[key], f"recorded.{key}")
    if "assignor" in value:
        checks.expect(value["assignor"], str, "recorded.assignor", "a string")
    if "poll_ms" in value:
        checks.integer(value["poll_ms"], "recorded.poll_ms")
    if "clients" in value:
        clients = checks.expect(
            value["clients"], dict, "recorded.clients", "an object (member id -> client id)"
        )
        for member, client in clients.items():
            checks.string(client, f"recorded.clients.{member}")
    return dict(value)


def parse_observed(value: Any, field: str) -> dict[str, Any]:
    """A step's ``observed`` object, checked in itself (the members and partitions against the
    step's group: :func:`check_assignment`)."""
    checks.expect(value, dict, field, "an object (what the members held after the rebalance)")
    checks.known_fields(value, OBSERVED_FIELDS, field)
    if "assignment" not in value:
        raise ProblemError(f"{field}.assignment", "missing (member id -> topic -> partitions)")
    if "generation" in value:
        checks.integer(value["generation"], f"{field}.generation")
    if "rounds" in value:
        checks.integer(value["rounds"], f"{field}.rounds", low=1)
    for key in ("settle_ms", "unowned_partition_ms"):
        if key in value:
            checks.integer(value[key], f"{field}.{key}", high=INT64_MAX)
    return dict(value)


def check_assignment(observed: dict[str, Any], document: dict[str, Any], field: str) -> None:
    """``observed["assignment"]`` against the group ``document`` of its step: known members and
    topics, partitions that exist, none held twice."""
    where = f"{field}.assignment"
    assignment = checks.expect(
        observed["assignment"], dict, where, "an object (member id -> topic -> partitions)"
    )
    members = {m["id"] for m in document["members"]}
    counts = document["topics"]
    holder: dict[tuple[str, int], str] = {}
    for member, held in assignment.items():
        if member not in members:
            raise ProblemError(f"{where}.{member}", "member is not in the group at this step")
        checks.expect(held, dict, f"{where}.{member}", "an object (topic -> partitions)")
        for topic, partitions in held.items():
            at = f"{where}.{member}.{topic}"
            if topic not in counts:
                raise ProblemError(at, "topic is not in the group at this step")
            checks.expect(partitions, list, at, "a list of partitions")
            checks.integers(partitions, checks.items(at), high=counts[topic] - 1)
            for j, partition in enumerate(partitions):
                other = holder.setdefault((topic, partition), member)
                if other != member or partitions.index(partition) != j:
                    raise ProblemError(
                        f"{at}[{j}]", f"partition {partition} is also held by {other!r}"
                    )
