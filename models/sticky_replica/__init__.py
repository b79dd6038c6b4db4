"""The replica objective's exact backends (CP-SAT, MIP, the flows) and the data they share."""
