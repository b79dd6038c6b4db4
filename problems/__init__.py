"""The shared language of rebalance-lab.

Problem data, JSON I/O, previous ownership, the objectives and the one evaluator.

>>> from problems import load_problem, evaluate
>>> problem = load_problem({"topics": {"t0": 2}, "members": [{"id": "c0", "topics": ["t0"]}]})
>>> evaluate(problem, [0, 0], "sticky").objective
(4, 0)
"""

from problems.errors import ProblemError
from problems.evaluate import (
    evaluate,
    is_kip54_balanced,
    member_counts,
    member_lags,
    member_topic_counts,
    replica_levels,
)
from problems.group import GroupProblem
from problems.io import load_problem, load_streams_problem, parse_problem, problem_to_json
from problems.objectives import LEVELS, OBJECTIVES, READINGS, above_moves, baseline_objective
from problems.ownership import (
    join_partition_count,
    next_epoch,
    number_owners,
    previous_number_owners,
    previous_owners,
    resolve_claims,
    topic_partitions,
)
from problems.placement import PlacementProblem
from problems.result import (
    Result,
    Status,
    assignment_json,
    owner_from_assignment,
    reassignment_json,
)
from problems.streams import (
    STREAMS_LEVELS,
    StreamsAssignment,
    StreamsConfigs,
    StreamsProblem,
    evaluate_streams,
    streams_answer_from_json,
    streams_assignment_json,
)
from problems.verdict import Evaluation

__all__ = [
    "LEVELS",
    "OBJECTIVES",
    "READINGS",
    "STREAMS_LEVELS",
    "StreamsAssignment",
    "StreamsConfigs",
    "StreamsProblem",
    "Evaluation",
    "GroupProblem",
    "PlacementProblem",
    "ProblemError",
    "Result",
    "Status",
    "above_moves",
    "assignment_json",
    "baseline_objective",
    "evaluate",
    "evaluate_streams",
    "is_kip54_balanced",
    "join_partition_count",
    "load_problem",
    "load_streams_problem",
    "member_counts",
    "member_lags",
    "member_topic_counts",
    "next_epoch",
    "number_owners",
    "owner_from_assignment",
    "parse_problem",
    "previous_number_owners",
    "previous_owners",
    "problem_to_json",
    "reassignment_json",
    "replica_levels",
    "resolve_claims",
    "streams_answer_from_json",
    "streams_assignment_json",
    "topic_partitions",
]
