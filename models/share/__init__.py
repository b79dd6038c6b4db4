"""The ``share`` objective's exact backends (CP-SAT, MIP, min-cost flow) and their reader pairs."""
