"""The ``sticky`` objective's exact backends: CP-SAT, MIP and the min-cost flow."""
