"""docs/strategies/client-assignors.md, "Where Kafka differs from its documents", row by row, counted and pinned.

Each row is a pinned example plus a count over the same 1,000 seeded random
groups per kind (:func:`random_documents`: 2-8 members with random ids, 1-4
topics of 1-10 partitions, random claims and generations 0-3, or a group's own
sticky answer one generation later after members left and joined and a zombie
kept its generation).  "Kafka" is Kafka's Java ``StickyAssignor``
(``peers/kafka_java.py``); default ``sticky`` equals it on every group where
Kafka's answer is valid (``test_sticky_equality.py``).  Objectives are
``problems.evaluate``'s (sum of squared counts, then moves from the KIP-341
previous owners).  A change to any count means a change of behaviour: update
the table of docs/strategies/client-assignors.md with it.
"""

from __future__ import annotations

import numpy as np
import pytest

import heuristics.sticky.sticky as sticky
from problems import evaluate, load_problem
from support.sticky_kafka_check import compare

GROUPS = 1000
ALPHABET = list("abcC0123-_")


def _subscription(rng, names):
    return sorted(rng.choice(names, int(rng.integers(1, len(names) + 1)), replace=False).tolist())


def random_document(rng, equal: bool) -> dict:
    """One random group (see the module docstring)."""
    topics = {f"t{i}": int(rng.integers(1, 11)) for i in range(int(rng.integers(1, 5)))}
    names = list(topics)
    ids = set()
    while len(ids) < int(rng.integers(2, 9)):
        ids.add("".join(rng.choice(ALPHABET, int(rng.integers(1, 5)))))
    shared = _subscription(rng, names)
    members = []
    for member_id in rng.permutation(sorted(ids)).tolist():
        member = {"id": member_id, "topics": shared if equal else _subscription(rng, names)}
        if rng.random() < 0.75:
            member["generation"] = int(rng.integers(0, 4))
            member["owned"] = {
                t: sorted(rng.choice(n, int(rng.integers(0, n + 1)), replace=False).tolist())
                for t, n in topics.items()
                if rng.random() < 0.4
            }
        members.append(member)
    doc = {"topics": topics, "members": members}
    if rng.random() < 0.5:  # churned: the group's own answer, one generation later
        answer = sticky.assign(load_problem(doc)).assignment
        top = 1 + max(m.get("generation", 0) for m in members)
        churned = [
            {**m, "owned": answer[m["id"]], "generation": top - (rng.random() < 0.15)}
            for m in members
            if rng.random() < 0.8
        ]
        churned += [
            {"id": "joiner", "topics": shared if equal else _subscription(rng, names)}
        ] * int(rng.random() < 0.5)
        doc = {"topics": topics, "members": churned or members[:1]}
    return doc


def random_documents(seed: int, equal: bool) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [random_document(rng, equal) for _ in range(GROUPS)]


@pytest.fixture(scope="module")
def equal_docs():
    return random_documents(1, equal=True)


@pytest.fixture(scope="module")
def unequal_docs():
    return [
        d
        for d in random_documents(2, equal=False)
        if len({frozenset(m["topics"]) for m in d["members"]}) > 1
    ]


def differences(pairs) -> tuple[int, int, int, int]:
    """Over ``(problem, answer_a, answer_b)``: groups, answers differing, objectives differing, ``a`` better."""
    groups = differ = objective = a_better = 0
    for problem, a, b in pairs:
        groups += 1
        if np.array_equal(a, b):
            continue
        differ += 1
        score_a, score_b = (
            evaluate(problem, a, "sticky").objective,
            evaluate(problem, b, "sticky").objective,
        )
        objective += score_a != score_b
        a_better += score_a < score_b
    return groups, differ, objective, a_better


def variant_pairs(docs, variant):
    for doc in docs:
        problem = load_problem(doc)
        yield problem, sticky.assign(problem, variant=variant).answer, sticky.assign(problem).answer


# ------------------------------------------------------------- the rows
def test_kafka_12464_seed_text_vs_kafka(kafka_java, equal_docs):
    """Row: the seed's two phases (members by id, index-first partition order, block fill, KIP-341 claims) vs Kafka."""
    problem = load_problem(
        {
            "topics": {"topic1": 3, "topic2": 4},
            "members": [
                {"id": "consumer1", "topics": ["topic1", "topic2"]},
                {"id": "consumer2", "topics": ["topic1", "topic2"]},
            ],
        }
    )
    assert sticky.assign(problem, variant="kafka-12464").assignment["consumer1"] == {
        "topic1": [0, 1],
        "topic2": [0, 1],
    }
    assert sticky.assign(problem).assignment["consumer1"] == {"topic1": [0, 2], "topic2": [1, 3]}
    assert differences(variant_pairs(equal_docs, "kafka-12464")) == (1000, 488, 2, 2)
    assert kafka_outcomes(kafka_java, equal_docs) == {"equal": 1000}


def test_kafka_9987_vs_kafka(equal_docs):
    """Row: KAFKA-9987's four phases (keep up to C_c, steal back) vs Kafka 4.x."""
    assert differences(variant_pairs(equal_docs, "kafka-9987")) == (1000, 97, 2, 2)


def _without_old_claims(doc: dict) -> dict:
    top = max(m.get("generation", -1) for m in doc["members"])
    return {
        **doc,
        "members": [
            m if m.get("generation", -1) == top else {**m, "owned": {}} for m in doc["members"]
        ],
    }


def test_generation_rule_seed_text_vs_kafka(kafka_java, equal_docs, unequal_docs):
    """Row: KAFKA-12464's "remove all owned_partitions if the generation is old" vs Kafka, which keeps an older
    member's uncontested partitions (here B keeps t0 2, 3 at generation 1)."""
    doc = {
        "topics": {"t0": 6},
        "members": [
            {"id": "A", "topics": ["t0"], "owned": {}, "generation": 2},
            {"id": "B", "topics": ["t0"], "owned": {"t0": [2, 3]}, "generation": 1},
            {"id": "C", "topics": ["t0"], "owned": {"t0": [0, 1]}, "generation": 2},
        ],
    }
    expected = {"A": {"t0": [4, 5]}, "B": {"t0": [2, 3]}, "C": {"t0": [0, 1]}}
    assert kafka_java.assignment(load_problem(doc), "sticky") == expected
    assert sticky.assign(load_problem(doc)).assignment == expected
    assert sticky.assign(load_problem(_without_old_claims(doc))).assignment["B"] != {"t0": [2, 3]}

    def pairs(docs):
        for doc in docs:
            problem = load_problem(doc)
            yield (
                problem,
                sticky.assign(load_problem(_without_old_claims(doc))).answer,
                sticky.assign(problem).answer,
            )

    assert differences(pairs(equal_docs)) == (1000, 318, 273, 1)
    assert differences(pairs(unequal_docs)) == (701, 220, 167, 13)


def _with_ghosts(doc: dict, rng) -> dict:
    members = [
        {**m, "topics": [*m["topics"], "ghost"]} if rng.random() < 0.5 else m
        for m in doc["members"]
    ]
    members[0] = {**members[0], "topics": [t for t in members[0]["topics"] if t != "ghost"]}
    return {**doc, "members": members}


def test_nonexistent_topic_makes_subscriptions_unequal(kafka_java, equal_docs):
    """Row: a subscription to a topic that does not exist makes Kafka run its general path (raw lists compared);
    the variants, like the project before, compare existing topics and run the constrained one."""
    doc = {
        "topics": {"t": 4},
        "members": [{"id": "A", "topics": ["t", "ghost"]}, {"id": "B", "topics": ["t"]}],
    }
    problem = load_problem(doc)
    assert sticky.assign(problem).info == {"algorithm": "kafka-general"}
    assert sticky.assign(problem, variant="kafka-12464").info == {"algorithm": "kafka-12464"}
    assert np.array_equal(kafka_java.assign(problem, "sticky"), sticky.assign(problem).answer)
    rng = np.random.default_rng(3)

    def pairs():
        for doc in equal_docs:
            ghosts = load_problem(_with_ghosts(doc, rng))
            yield ghosts, sticky.assign(load_problem(doc)).answer, sticky.assign(ghosts).answer

    assert differences(pairs()) == (1000, 369, 47, 45)


def kafka_outcomes(kafka_java, docs) -> dict[str, int]:
    """How Kafka's answer compares with ours on ``docs``."""
    outcomes: dict[str, int] = {}
    for doc in docs:
        outcome = compare(kafka_java, doc)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return outcomes


def test_kafka_gives_a_partition_to_an_earlier_owner_that_left_its_topic(kafka_java, unequal_docs):
    """Row (where rebalance-lab differs from Kafka): an earlier owner (a claim of an older generation) that no
    longer subscribes the topic still gets the partition back from Kafka's balancing; ours skips it;
    and an
    earlier owner that cannot take part makes Kafka throw NullPointerException."""
    doc = {
        "topics": {"t0": 4, "t1": 2},
        "members": [
            {"id": "A", "topics": ["t0", "t1"], "owned": {"t0": [0, 1, 2, 3]}, "generation": 2},
            {"id": "B", "topics": ["t1"], "owned": {"t0": [0, 1]}, "generation": 1},
            {"id": "C", "topics": ["t0", "t1"]},
        ],
    }
    problem = load_problem(doc)
    theirs = kafka_java.assign(problem, "sticky")
    assert (
        not evaluate(problem, theirs, "sticky").valid and theirs[problem.global_id("t0", 0)] == 1
    )  # B
    assert sticky.assign(problem).assignment == {
        "A": {"t0": [1, 2, 3]},
        "B": {"t1": [0]},
        "C": {"t0": [0], "t1": [1]},
    }
    cannot_take_part = {
        "topics": {"t0": 4, "t1": 1},
        "members": [
            {"id": "A", "topics": ["t0"], "owned": {"t0": [0, 1, 2, 3]}, "generation": 2},
            {"id": "X", "topics": ["t1"], "owned": {"t0": [0, 1], "t1": [0]}, "generation": 1},
            {"id": "C", "topics": ["t0"]},
        ],
    }
    assert compare(kafka_java, cannot_take_part) == "kafka-throws"
    assert sticky.assign(load_problem(cannot_take_part)).assignment == {
        "A": {"t0": [2, 3]},
        "X": {"t1": [0]},
        "C": {"t0": [0, 1]},
    }
    assert kafka_outcomes(kafka_java, unequal_docs) == {"equal": 674, "kafka-invalid": 27}


def test_kafka_gives_four_partitions_back_to_an_earlier_owner_that_left_their_topic(kafka_java):
    """Same row, hypothesis's example (more wrong partitions than the evaluator's lines name): '00' (generation 0,
    on t0 only) owned t3 0, 2, 5, 8 and Kafka gives all four back to it, and t0 to 'new0' alone;
    ours is valid
    and optimal (the flow solver's objective: sum of squares 90, one move)."""
    import models
    from support.sticky_kafka_check import unsubscribed_earlier_owner

    doc = {
        "topics": {"t0": 3, "t1": 0, "t2": 3, "t3": 10},
        "members": [
            {"id": "00", "owned": {"t3": [0, 2, 5, 8]}, "generation": 0, "topics": ["t0"]},
            {
                "id": "000",
                "owned": {"t3": [1, 3, 6, 9]},
                "generation": 0,
                "topics": ["t0", "t1", "t2", "t3"],
            },
            {
                "id": "0000",
                "owned": {"t0": [0], "t3": [4, 7]},
                "generation": 1,
                "topics": ["t0", "t1", "t2", "t3"],
            },
            {"id": "new0", "topics": ["t0"]},
        ],
    }
    problem = load_problem(doc)
    theirs = kafka_java.assign(problem, "sticky")
    assert kafka_java.assignment(problem, "sticky") == {
        "00": {"t3": [0, 2, 5, 8]},
        "000": {"t2": [1], "t3": [1, 3, 6, 9]},
        "0000": {"t2": [0, 2], "t3": [4, 7]},
        "new0": {"t0": [0, 1, 2]},
    }
    assert [problem.partition_name(g) for g in unsubscribed_earlier_owner(problem, theirs)] == [
        "t3-0",
        "t3-2",
        "t3-5",
        "t3-8",
    ]
    verdict = evaluate(problem, theirs, "sticky")
    assert not verdict.valid and verdict.violations[-1] == "... and 1 more"
    ours = sticky.assign(problem)
    assert ours.assignment == {
        "00": {"t0": [0, 1]},
        "000": {"t2": [1], "t3": [0, 1, 3, 5, 6, 9]},
        "0000": {"t2": [0, 2], "t3": [2, 4, 7, 8]},
        "new0": {"t0": [2]},
    }
    assert ours.valid and ours.objective == [90, 1]
    exact = models.solve(problem, "sticky", "flow")
    assert exact.status == "optimal" and exact.objective == [90, 1]
    assert compare(kafka_java, doc) == "kafka-invalid"


def test_kafka_gives_partitions_to_a_member_that_subscribes_nothing(kafka_java):
    """Row (where rebalance-lab differs from Kafka): a member with an empty subscription met first in map order
    passes Kafka's equal-subscription check, and gets partitions; ours runs the general path."""
    doc = {
        "topics": {"t0": 4},
        "members": [{"id": "11", "topics": []}, {"id": "-0_-", "topics": ["t0"]}],
    }
    problem = load_problem(doc)
    theirs = kafka_java.assign(problem, "sticky")
    assert (theirs == 0).any() and not evaluate(problem, theirs, "sticky").valid
    ours = sticky.assign(problem)
    assert ours.info == {"algorithm": "kafka-general"} and ours.assignment == {
        "11": {},
        "-0_-": {"t0": [0, 1, 2, 3]},
    }


def _claims_differ(doc: dict) -> bool:
    """Whether Kafka's resolution of the claims keeps other previous owners than KIP-341's rule."""
    import heuristics.sticky.sticky_kafka as kafka
    from problems import previous_owners

    problem = load_problem(doc)
    order = kafka.hash_map_order(list(problem.members))
    position = np.empty(problem.num_members, dtype=np.int64)
    position[order] = np.arange(problem.num_members)
    kept, doubly = kafka.resolve_claims(problem, position)
    if kafka.subscriptions_equal(problem):
        kept[doubly] = -1
    else:
        claimed = kept >= 0
        kept[claimed & ~problem.subscribes[np.maximum(kept, 0), problem.partition_topic]] = -1
    return not np.array_equal(kept, previous_owners(problem))


def test_claim_resolution_kip341_vs_kafka(kafka_java, equal_docs, unequal_docs):
    """Row: KIP-341 (seed 002) keeps the claim of the unique highest generation; Kafka settles claims member by
    member in map order, and with equal subscriptions drops a partition once claimed twice in one
    generation, even when a higher generation claims it too (A, B at 1 then C at 2: C keeps t0-0
    under KIP-341, nobody in
    Kafka); with unequal ones a claim on an unsubscribed topic still wins its conflict, then is dropped."""
    doc = {
        "topics": {"t0": 3},
        "members": [
            {"id": "A", "topics": ["t0"], "owned": {"t0": [0]}, "generation": 1},
            {"id": "B", "topics": ["t0"], "owned": {"t0": [0]}, "generation": 1},
            {"id": "C", "topics": ["t0"], "owned": {"t0": [0]}, "generation": 2},
        ],
    }
    problem = load_problem(doc)
    assert sticky.assign(problem, variant="kafka-12464").answer[0] == 2
    assert sticky.assign(problem).answer[0] != 2
    assert compare(kafka_java, doc) == "equal"
    assert sum(map(_claims_differ, equal_docs)) == 3
    assert sum(map(_claims_differ, unequal_docs)) == 79
