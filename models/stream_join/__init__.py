"""The ``stream-join`` objective's exact backends (CP-SAT, MIP, min-cost flow) and its number classes."""
