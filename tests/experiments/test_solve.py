"""Tests of experiments.solve, the plain-pandas function the Spark job maps over."""

from __future__ import annotations

import pandas as pd

from experiments.solve import RESULT_COLUMNS, solve_frame


def test_solve_frame_scores_each_row_with_the_evaluator():
    """Tests that each (problem, strategy) row is solved and re-scored, and a bad problem yields an error row."""
    problem = '{"topics": {"t0": 3}, "members": [{"id": "c_0", "topics": ["t0"]}, {"id": "c_1", "topics": ["t0"]}]}'
    frame = pd.DataFrame([
        {"scenario": "kip169", "problem": problem, "strategy": "range", "solver": "heuristic"},
        {"scenario": "kip169", "problem": problem, "strategy": "roundrobin", "solver": "heuristic"},
        {"scenario": "broken", "problem": '{"topics": {"t0": -1}, "members": []}', "strategy": "range",
         "solver": "heuristic"},
    ])
    out = solve_frame(frame)
    assert list(out.columns) == list(RESULT_COLUMNS)
    assert out["level1"].tolist()[:2] == [5, 5] and out["level2"].tolist()[:2] == [0, 0]
    assert out["valid"].tolist() == [True, True, False]
    assert out["status"].tolist() == ["heuristic", "heuristic", "error"]
    assert "topics.t0" in out["error"][2]
