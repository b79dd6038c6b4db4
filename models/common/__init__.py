"""What every family's exact models share: ranked (lexicographic) solving with CP-SAT and with a MIP
(MPS files, HiGHS or CBC), the ranked outcome both report, class counting, the min-cost-flow helpers.
"""
