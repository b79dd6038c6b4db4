"""Min-cost-flow solvers for objectives that a flow solves exactly."""
