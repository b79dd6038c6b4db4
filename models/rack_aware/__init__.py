"""The ``rack-aware`` objective's exact backends (CP-SAT, MIP, min-cost flow) and their rack classes."""
