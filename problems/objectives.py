"""The catalogue of objectives (docs/design/objectives.md): each objective's levels and how the report
reads them.

:mod:`problems.evaluate` scores answers on these objectives by name.  Which strategy is judged on
which objective is a fact of the strategy, kept in its record (:mod:`models.registry`).
"""

from __future__ import annotations

from dataclasses import dataclass

from problems.streams import STREAMS_LEVELS

#: Objective levels of each objective kind, in lexicographic order.
OBJECTIVES: dict[str, tuple[str, ...]] = {
    "sticky": ("sum_sq_counts", "moves"),
    "lag-aware": ("max_member_lag", "sum_sq_member_lag"),
    "stream-join": ("sum_sq_numbers", "number_moves"),
    "rack-aware": ("sum_sq_counts", "rack_mismatches", "moves"),
    "replica": ("sum_sq_broker_replicas", "sum_sq_rack_replicas", "sum_sq_broker_leaders", "moves"),
    "share": ("sum_sq_counts", "sum_sq_readers", "moves"),
    "streams": STREAMS_LEVELS,
}
#: The most levels any objective has: the ``level1 .. levelN`` columns of a results row.
LEVELS = max(len(names) for names in OBJECTIVES.values())


@dataclass(frozen=True)
class Reading:
    """How the report reads an objective's levels.

    Attributes
    ----------
    columns
        Short names of levels 1 and 2 (the headline tables' column labels).
    definition
        What they measure, said in each table's caption.
    moves
        The level (from 1) that counts moves; ``None`` where no level does.
    moves_name
        The name of that level where it is not level 2 (``columns[1]`` otherwise).
    """

    columns: tuple[str, str]
    definition: str
    moves: int | None = None
    moves_name: str = ""

    @property
    def moves_label(self) -> str:
        """What the moves level is called in a figure."""
        return self.moves_name or self.columns[1]


# fmt: off
#: The reading of every objective of :data:`OBJECTIVES`.
READINGS: dict[str, Reading] = {
    "sticky": Reading(
        ("partition balance", "moves"),
        "partition balance = sum over members of the squared partition count; "
        "moves = partitions that change owner",
        moves=2),
    "lag-aware": Reading(
        ("max member lag", "lag balance"),
        "max member lag = the largest total lag of a member (messages); "
        "lag balance = sum over members of the squared total lag"),
    "stream-join": Reading(
        ("number balance", "number moves"),
        "number balance = sum over members of the squared count of partition numbers; "
        "number moves = partition numbers that change owner",
        moves=2),
    "replica": Reading(
        ("broker balance", "rack spread"),
        "broker balance = sum over brokers of the squared replica count; "
        "rack spread = sum over partitions and racks of the squared replica count",
        moves=4, moves_name="replica moves"),
    "rack-aware": Reading(
        ("partition balance", "rack mismatches"),
        "partition balance = sum over members of the squared partition count; rack mismatches = "
        "partitions whose member's rack holds none of their replicas (level 3, moves, not shown)",
        moves=3),
    "share": Reading(
        ("partition balance", "reader balance"),
        "partition balance = sum over members of the squared partition count; reader balance = "
        "sum over partitions of the squared member count (level 3, pairs dropped, not shown); "
        "invalid answers (uniform's idle members) have no gap",
        moves=3, moves_name="pairs dropped"),
    "streams": Reading(
        ("restore cost", "task balance"),
        "restore cost = sum over active stateful tasks of their process's lag (the "
        "task's largest known lag where the process has no state); task balance = sum over members "
        "of the squared active count weighted by 1/threads (levels 3-6, standby balance, cross-rack "
        "traffic, active and standby moves, not shown)",
        moves=5, moves_name="active task moves"),
}
# fmt: on


def above_moves(objective: str) -> int:
    """How many levels of ``objective`` stand above its moves (all of them where none counts moves)."""
    moves = READINGS[objective].moves
    return len(OBJECTIVES[objective]) if moves is None else moves - 1


def baseline_objective(problem: object) -> str:
    """The objective a Kafka baseline's answer is judged on: ``rack-aware`` when the problem has
    racks (``partition_racks``), ``sticky`` otherwise (docs/design/objectives.md)."""
    return "rack-aware" if getattr(problem, "has_racks", False) else "sticky"
