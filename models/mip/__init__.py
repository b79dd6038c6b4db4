"""PuLP MIP models (HiGHS by default, CBC on request); ranked solving is written once in ``ranked``."""
