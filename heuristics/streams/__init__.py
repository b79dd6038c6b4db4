"""Kafka Streams' task assignors: ``streams-sticky``, ``streams-ha`` (the high-availability
assignor and its parts) and ``streams-kip924-sticky``.
"""
