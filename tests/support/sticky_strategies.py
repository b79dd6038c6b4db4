"""Hypothesis strategies for sticky rebalances (test support).

``equal_groups``: every member subscribes the same topics, with random previous
assignments (conflicting claims, stale and missing generations).
``rebalances``: a group that had an assignment (the sticky assignor's own
answer, at generation g) and then changed: members left, joined, changed their
subscription, topics were deleted, a zombie member reports an older
generation.
"""

from __future__ import annotations

from hypothesis import strategies as st

import heuristics.sticky.sticky as sticky
from problems import load_problem
from support.problem_strategies import group_documents

TOPICS = [f"t{i}" for i in range(4)]


@st.composite
def equal_group_documents(draw, max_members: int = 6, max_partitions: int = 8) -> dict:
    topics = {
        t: draw(st.integers(0, max_partitions)) for t in TOPICS[: draw(st.integers(1, len(TOPICS)))]
    }
    subscription = draw(st.lists(st.sampled_from(list(topics)), min_size=1, unique=True))
    members = []
    for m in range(draw(st.integers(1, max_members))):
        member = {"id": f"c{m}", "topics": subscription}
        if draw(st.booleans()):
            member["owned"] = {
                t: draw(st.lists(st.integers(0, n - 1), unique=True)) if n else []
                for t, n in topics.items()
                if draw(st.booleans())
            }
            if draw(st.integers(0, 3)):
                member["generation"] = draw(st.integers(0, 2))
        members.append(member)
    return {"topics": topics, "members": members}


def equal_groups(**kwargs):
    """Random groups with equal subscriptions."""
    return equal_group_documents(**kwargs).map(load_problem)


@st.composite
def rebalance_documents(draw) -> dict:
    before = draw(group_documents(max_members=6, max_partitions=8))
    problem = load_problem(before)
    assignment = sticky.assign(problem).assignment
    generation = draw(st.integers(0, 3))
    topics = dict(before["topics"])
    for t in (
        draw(st.lists(st.sampled_from(sorted(topics)), unique=True, max_size=1)) if topics else []
    ):
        del topics[t]  # deleted: claims on it are stale
    names = list(before["topics"]) + ["fresh-topic"]
    members = []
    for doc in before["members"]:
        if draw(st.integers(0, 4)) == 0:
            continue  # left the group
        member = {
            "id": doc["id"],
            "topics": doc["topics"],
            "owned": assignment[doc["id"]],
            "generation": generation,
        }
        if draw(st.integers(0, 4)) == 0:
            member["topics"] = draw(st.lists(st.sampled_from(names), unique=True))
        if draw(st.integers(0, 5)) == 0:
            member["generation"] = generation - 1  # a zombie's stale view
        members.append(member)
    for j in range(draw(st.integers(0, 2))):
        members.append(
            {"id": f"new{j}", "topics": draw(st.lists(st.sampled_from(names), unique=True))}
        )
    return {"topics": topics, "members": members}


def rebalances():
    """Random groups after churn, owning their previous sticky assignment."""
    return rebalance_documents().map(load_problem)


# ------------------------------------------- for the comparisons with Kafka's Java
# ``kafka_group_documents(equal=...)``: up to 8 members on up to 4 topics of 0-10
# partitions (at most 40), equal or unequal subscriptions (topics that do not
# exist included), new members and members of generations 0-3 with random
# claims, so that claims conflict within and across generations and some are on
# a deleted topic.  ``kafka_churned_documents(equal=...)``: such a group's sticky answer
# owned one generation later, then members leave and join, subscriptions change
# (unequal only), a topic is deleted or added, and a zombie keeps an older
# generation.  Claims stay below each topic's partition count: Kafka never removes
# partitions, so a claim past the count cannot reach its assignor.
KAFKA_TOPICS = ["t0", "t1", "t2", "t3"]
GONE = "gone"  # subscribed or claimed, but not (or no longer) a topic
IDS = st.text("abcC0123-_", min_size=1, max_size=4)


def _subscription(draw, names: list[str]) -> list[str]:
    return draw(st.lists(st.sampled_from(names), min_size=1, unique=True))


def _claims(draw, topics: dict[str, int]) -> dict[str, list[int]]:
    owned = {}
    for topic in draw(st.lists(st.sampled_from([*topics, GONE]), unique=True, max_size=3)):
        count = topics.get(topic, 4)
        owned[topic] = (
            draw(st.lists(st.integers(0, count - 1), unique=True, max_size=count)) if count else []
        )
    return owned


def _make_unequal(draw, members: list[dict], names: list[str]) -> None:
    """Changes one member's subscription if every member subscribes the same set."""
    if len({frozenset(m["topics"]) for m in members}) > 1:
        return
    member = members[draw(st.integers(0, len(members) - 1))]
    others = [t for t in names if t not in member["topics"]]
    if others and (len(member["topics"]) == 1 or draw(st.booleans())):
        member["topics"] = [*member["topics"], draw(st.sampled_from(others))]
    else:
        member["topics"] = member["topics"][1:]


@st.composite
def kafka_group_documents(draw, equal: bool) -> dict:
    topics = {
        t: draw(st.integers(0, 10)) for t in KAFKA_TOPICS[: draw(st.integers(1, len(KAFKA_TOPICS)))]
    }
    names = [*topics, GONE]
    ids = draw(st.lists(IDS, min_size=1, max_size=8, unique=True))
    shared = _subscription(draw, names)
    members = []
    for member_id in ids:
        member = {"id": member_id, "topics": shared if equal else _subscription(draw, names)}
        if draw(st.integers(0, 3)):
            member["owned"] = _claims(draw, topics)
            member["generation"] = draw(st.integers(0, 3))
        members.append(member)
    if not equal and len(members) > 1:
        _make_unequal(draw, members, names)
    return {"topics": topics, "members": members}


@st.composite
def kafka_churned_documents(draw, equal: bool) -> dict:
    before = draw(kafka_group_documents(equal))
    answer = sticky.assign(load_problem(before)).assignment
    generation = 1 + max((m.get("generation", 0) for m in before["members"]), default=0)
    topics = dict(before["topics"])
    if draw(st.integers(0, 3)) == 0 and len(topics) > 1:
        del topics[draw(st.sampled_from(sorted(topics)))]  # deleted: its claims go stale
    added = draw(st.integers(0, 3)) == 0
    if added:
        topics["t9"] = draw(st.integers(1, 6))
    names = [*topics, GONE]
    shared = before["members"][0]["topics"] + (["t9"] if added else [])
    members = []
    for doc in before["members"]:
        if draw(st.integers(0, 3)) == 0:
            continue  # left the group
        member = {
            "id": doc["id"],
            "owned": answer[doc["id"]],
            "generation": generation,
            "topics": shared
            if equal
            else doc["topics"] + (["t9"] if added and draw(st.booleans()) else []),
        }
        if not equal and draw(st.integers(0, 4)) == 0:
            member["topics"] = _subscription(draw, names)
        if draw(st.integers(0, 4)) == 0:
            member["generation"] = generation - 1  # a zombie's stale view
        members.append(member)
    taken = {m["id"] for m in members}
    for j in range(draw(st.integers(0 if members else 1, 2))):
        if f"new{j}" not in taken:
            members.append(
                {"id": f"new{j}", "topics": shared if equal else _subscription(draw, names)}
            )
    if not equal and len(members) > 1:
        _make_unequal(draw, members, names)
    return {"topics": topics, "members": members}


def kafka_documents(equal: bool):
    """Fresh-ish random groups and churned ones, half and half."""
    return st.one_of(kafka_group_documents(equal), kafka_churned_documents(equal))
