"""Small builders of hand-written consumer groups (test support)."""

from __future__ import annotations

from problems import GroupProblem, load_problem


def member(
    member_id: str,
    topics: list[str],
    owned: dict | None = None,
    generation: int | None = None,
    instance: str | None = None,
) -> dict:
    """One member entry of the group format; ``owned``, ``generation`` and ``instance`` (its
    group.instance.id) only when given."""
    doc: dict = {"id": member_id, "topics": list(topics)}
    if owned is not None:
        doc["owned"] = owned
    if generation is not None:
        doc["generation"] = generation
    if instance is not None:
        doc["instance_id"] = instance
    return doc


def group(topics: dict[str, int], *members: dict, lags: dict | None = None) -> GroupProblem:
    """A loaded group of ``members`` over ``topics`` (with ``lags`` when given)."""
    doc: dict = {"topics": topics, "members": list(members)}
    if lags is not None:
        doc["lags"] = lags
    return load_problem(doc)
