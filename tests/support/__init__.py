"""Test support shared by every test family: problem builders, hypothesis strategies, the exhaustive reference.

* :mod:`support.problem_builders`: ``member`` / ``group``, hand-written consumer groups;
* :mod:`support.problem_strategies`, ``cluster_strategies``, ``sticky_strategies``,
  ``lag_strategies``, ``stream_join_strategies``: hypothesis strategies of problems;
* :mod:`support.result_rows`: hand-made result rows; :mod:`support.sticky_kafka_check`: one
  comparison with Kafka's StickyAssignor;
* :mod:`support.exhaustive`: the optimum by enumeration, every answer scored by
  :func:`problems.evaluate` (tiny problems only).
"""
