"""The exact optimum over a whole trace: its steps and levels, the count flow, the descent, the replica
realisation, the CP-SAT model and its bound.
"""
