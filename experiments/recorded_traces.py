"""A folder of recorded traces as an experiment: the ``recorded`` trace family.

Every ``*.json`` file of the folder (what ``rebalance-lab record`` writes: a group trace with a
``recorded`` header and an ``observed`` object per step) is one trace scenario of family
``recorded`` (:data:`experiments.trace_scenarios.RECORDED`), its document carried in the
scenario itself (so a Spark worker needs no access to the folder).  The harness runs it as any
trace: every heuristic judged on the scenario's strategy and the ``step`` and ``horizon`` optima
through the same events, and one more run, ``observed`` (solver ``recorded``): what the members
held, re-scored on the same objective, with the recording's rounds and settle times
(:func:`experiments.trace_runs.solve_trace_scenario`).  A recording is judged on its recorded
assignor when traces are judged on it (``sticky``), else on ``sticky``.  Details: docs/harness.md.
"""

from __future__ import annotations

import os
from pathlib import Path

from experiments.trace_scenarios import RECORDED, TraceScenario, trace_judged_on
from problems import ProblemError
from problems.trace import load_trace

#: The strategy a recording is judged on when its assignor is not one traces are judged on.
DEFAULT_JUDGE = "sticky"
#: Seconds per exact solver and trace step where the command line sets none.
TIME_LIMIT = 10.0


def recorded_scenarios(folder: str | os.PathLike[str], tag: str = "") -> list[TraceScenario]:
    """One trace scenario per recorded trace in ``folder`` (its ``*.json`` files, by name).

    Raises
    ------
    ProblemError
        The folder is missing or holds no ``*.json`` file, or a file is not a recorded group
        trace (one line naming the file and the field).
    """
    where = Path(folder)
    if not where.is_dir():
        raise ProblemError("", "not a folder of recorded traces", str(where))
    files = sorted(where.glob("*.json"))
    if not files:
        raise ProblemError("", "holds no recorded trace (*.json)", str(where))
    return [_scenario(path, tag) for path in files]


def _scenario(path: Path, tag: str) -> TraceScenario:
    text = path.read_text(encoding="utf-8")
    trace = load_trace(text, name=str(path))
    if trace.recorded is None:
        raise ProblemError(
            str(path), "recorded: missing (not a trace `rebalance-lab record` wrote)"
        )
    assignor = trace.recorded.get("assignor")
    judged_on = assignor if assignor in trace_judged_on() else DEFAULT_JUDGE
    start = trace.start
    return TraceScenario(
        family="group",
        judged_on=judged_on,
        trace=RECORDED,
        partitions=int(sum(start["topics"].values())),
        members=len(start["members"]),
        topics=len(start["topics"]),
        steps=len(trace.steps),
        seed=0,
        tag=tag,
        source=path.stem,
        document=text,
    )
