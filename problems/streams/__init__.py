"""Streams groups (KIP-1071, KIP-441): tasks, processes, their state, and the ``streams`` objective.

A streams group assigns *tasks*, not partitions.  A subtopology with ``partitions`` = k has the
tasks ``(subtopology, 0) .. (subtopology, k - 1)``; :class:`StreamsProblem` numbers every task of
the group once (``0 .. n_tasks - 1``, subtopologies in document order, then partition number) and
holds members, processes, the previous assignment and the processes' lags as integer arrays
(:mod:`problems.streams.problem`).  An answer is a :class:`StreamsAssignment`: the member of each
active task, and the ``(task, member)`` pairs of standby and warm-up replicas.  The document is
read and written by :mod:`problems.streams.format`, an answer's JSON by
:mod:`problems.streams.answers`; :func:`evaluate_streams` (:mod:`problems.streams.objective`)
checks an answer's hard constraints and scores the levels of :data:`STREAMS_LEVELS`.  The levels
and why they are what they are: docs/strategies/streams.md; the document format: docs/formats.md.
"""

from problems.streams.answers import (
    streams_answer_from_json,
    streams_assignment_json,
)
from problems.streams.format import (
    parse_streams,
    streams_problem_to_json,
)
from problems.streams.objective import (
    cross_rack_traffic,
    evaluate_streams,
    required_standbys,
    streams_levels,
    streams_shape_problem,
    streams_validity,
)
from problems.streams.problem import (
    DOCUMENT_FIELDS,
    KIND,
    MEMBER_FIELDS,
    NO_STATE,
    RACK_STRATEGIES,
    STREAMS_LEVELS,
    SUBTOPOLOGY_FIELDS,
    TASK_KINDS,
    BoolArray,
    IntArray,
    StreamsAssignment,
    StreamsConfigs,
    StreamsProblem,
    pairs,
    previous_assignment,
)

__all__ = [
    "BoolArray",
    "DOCUMENT_FIELDS",
    "IntArray",
    "KIND",
    "MEMBER_FIELDS",
    "NO_STATE",
    "RACK_STRATEGIES",
    "STREAMS_LEVELS",
    "SUBTOPOLOGY_FIELDS",
    "StreamsAssignment",
    "StreamsConfigs",
    "StreamsProblem",
    "TASK_KINDS",
    "cross_rack_traffic",
    "evaluate_streams",
    "pairs",
    "parse_streams",
    "previous_assignment",
    "required_standbys",
    "streams_answer_from_json",
    "streams_assignment_json",
    "streams_levels",
    "streams_problem_to_json",
    "streams_shape_problem",
    "streams_validity",
]
