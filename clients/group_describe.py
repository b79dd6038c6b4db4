"""``ConsumerGroupDescribe`` (API key 69, KIP-848): the admin API's view of a consumer-protocol group.

kafka-python 3.0.12 has no request for it; this module declares it (version 0, the schemas in
:mod:`clients.schemas`) on kafka-python's message classes and sends it to the group's
coordinator through the admin client's connection manager, as kafka-python's own
``describe_groups`` sends ``DescribeGroups``.  It is the polling source of ``rebalance-lab
record`` for consumer-protocol groups when the coordinator's records cannot be read, and names
the group's server assignor for the records (which carry it only when a member chose one).
"""

from __future__ import annotations

import datetime
import time
from typing import Any

from kafka.protocol.api_message import ApiMessage

from clients.recorder import Member, Observation
from clients.schemas import kafka_message

ConsumerGroupDescribeRequest = kafka_message(ApiMessage, "ConsumerGroupDescribeRequest")

ConsumerGroupDescribeResponse = kafka_message(ApiMessage, "ConsumerGroupDescribeResponse")

#: ``ConsumerGroupDescribe``'s group states as the rest of the recorder names them.
STATES = {
    "empty": "Empty",
    "assigning": "Assigning",
    "reconciling": "Reconciling",
    "stable": "Stable",
    "dead": "Dead",
}


class DescribeError(Exception):
    """The coordinator answered with an error: ``code`` is Kafka's error class name."""

    def __init__(self, code: str, message: str = ""):
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code


def describe_consumer_group(admin: Any, group: str) -> Any:
    """The ``DescribedGroup`` of ``group`` from its coordinator (raises :class:`DescribeError`)."""
    import kafka.errors as errors

    async def ask() -> Any:
        coordinators = await admin._find_coordinator_ids([group])
        request = ConsumerGroupDescribeRequest(
            group_ids=[group], include_authorized_operations=False
        )
        return await admin._manager.send(request, node_id=coordinators[group])

    try:
        response = admin._manager.run(ask)
    except errors.GroupAuthorizationFailedError as error:  # finding the coordinator
        raise DescribeError(type(error).__name__) from None
    (described,) = response.groups
    if described.error_code:
        raise DescribeError(
            errors.for_code(described.error_code).__name__, described.error_message or ""
        )
    return described


def _held(assignment: Any) -> dict[str, list[int]]:
    return dict(
        sorted(
            (tp.topic_name, sorted(tp.partitions))
            for tp in assignment.topic_partitions
            if tp.partitions and tp.topic_name
        )
    )


def consumer_group_observation(described: Any, counts: dict[str, int]) -> Observation:
    """One poll's observation of a described consumer-protocol group: each member with the
    partitions it holds now (its ``Assignment``; ``TargetAssignment`` is where it is going), the
    group ``Stable`` once every member has reconciled to the target of the group epoch."""
    members = tuple(
        Member(
            member_id=m.member_id,
            instance_id=m.instance_id or None,
            topics=tuple(sorted(set(m.subscribed_topic_names or ()))),
            assignment=_held(m.assignment),
            rack=m.rack_id or None,
            client_id=m.client_id or None,
        )
        for m in described.members
    )
    return Observation(
        when=time.monotonic(),
        wall=datetime.datetime.now(datetime.UTC),
        state=STATES.get(described.group_state.lower(), described.group_state),
        protocol="consumer",
        assignor=described.assignor_name or "",
        members=members,
        counts=counts,
        epoch=described.group_epoch,
    )


def subscribed(described: Any) -> set[str]:
    """The topics the described group's members subscribe."""
    return {t for m in described.members for t in (m.subscribed_topic_names or ())}
