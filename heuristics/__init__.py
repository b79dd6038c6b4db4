"""The documented heuristics: each strategy's greedy algorithm as its source document specifies it."""
