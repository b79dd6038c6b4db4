"""Kafka's client sticky assignors: ``sticky``, ``cooperative-sticky``, KIP-881's ``rack-aware``, and
the general and quota phases they share.
"""
