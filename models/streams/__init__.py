"""The ``streams`` objective's exact backends (CP-SAT, MIP, min-cost flow) and the data they share."""
