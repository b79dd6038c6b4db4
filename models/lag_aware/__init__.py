"""The ``lag-aware`` objective's exact backends: CP-SAT and MIP, with the bounds, the searches and
the swap search that answer most problems before a model is built.
"""
