"""Exact formulations: ``models/cpsat/<strategy>.py`` (OR-Tools CP-SAT),
``models/mip/<strategy>.py`` (PuLP with HiGHS or CBC) and
``models/flow/<strategy>.py`` (OR-Tools min-cost flow, where it is exact).

Every module has one public function, ``solve(problem, time_limit=..., **options)``,
returning a :class:`problems.Result` whose objective is re-scored by the evaluator.
"""
