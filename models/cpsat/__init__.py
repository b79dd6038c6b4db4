"""CP-SAT models; ranked (lexicographic) solving is written once in ``ranked``."""
