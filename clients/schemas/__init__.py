"""Kafka message schemas that kafka-python does not ship, in its JSON schema form.

The group coordinator's record values of consumer-protocol groups (KIP-848) as Kafka 4.4.0 writes
them to ``__consumer_offsets`` (``clients.consumer_records``), and the describe requests of the
new group types (``clients.group_describe``): field names, types and versions as the protocol
defines them (but ``ConsumerGroupRegularExpressionValue.Version``, named ``RegexVersion`` here:
kafka-python's messages take ``version`` as their own), the documentation strings left out.
:func:`kafka.protocol.schemas.load_json` reads them: :func:`kafka_message` makes the kafka-python
message class of one.
"""

from __future__ import annotations

import sys
import types
from typing import Any


def kafka_message(base: Any, name: str) -> Any:
    """kafka-python's message class ``name`` (a subclass of ``base``: ``ApiData`` for a record
    value, ``ApiMessage`` for a request or response) from the schema ``name.json`` here."""
    return types.new_class(name, (base,), {"load_json": sys.modules[__name__]})
