"""Benchmark: the sticky assignor family at Kafka's large test shape, and kafka-python side by side.

Part 1, Kafka's large shape (AbstractStickyAssignorTest): 500 topics x 2,000
partitions = 1,000,000 partitions (and, for the growth, 500 topics of 20 and
of 200: ``--sizes`` 10,000, 100,000, 1,000,000 in all), 2,000 members all subscribed (fresh); then
the same group after its last member leaves (the others own the first
assignment, generation 1); then, fresh, with the last member subscribed to
topic 0 only; then that same change on the owned first assignment.  Times
``load_problem`` of the in-memory document (once) and ``solve(problem)``
apart (best of ``--repeat``), and their sum; loading includes building the problem's cached arrays
(``subscribes``, ``topic_subscribers``, ``owned_claims``: cached on the
problem, built once per problem).  The KIP-341 resolution of previous owners
runs inside every timed call.  Peak memory is the maximum resident set of the
whole process (an upper bound on any one case's).

Part 2, the exact models at ``--exact-partitions`` (over ``--exact-topics``)
x ``--exact-members``: CP-SAT (one worker) and the MIP (HiGHS) on the same
three kinds of case, with their status and the flow optimum for reference.

Part 3, kafka-python's ``StickyPartitionAssignor`` and rebalance-lab's
heuristic on the same inputs in the same run (``--peer-partitions`` over
``--peer-topics`` topics, ``--peer-members`` members, all subscribed): a fresh
assignment, then a rebalance after one member leaves, starting from each
side's own first answer.  Both answers are scored by ``problems.evaluate``.

    .venv/bin/python benchmarks/sticky.py                                # all parts
    .venv/bin/python benchmarks/sticky.py --skip-exact --skip-peer       # part 1 only
    .venv/bin/python benchmarks/sticky.py --skip-large --skip-peer       # part 2 only
    .venv/bin/python benchmarks/sticky.py --skip-large --skip-exact      # part 3 only
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from functools import partial
from pathlib import Path

from models import solve
from problems import evaluate, load_problem
from timing import best_of

# The repository root, for the test-and-benchmark-only ``peers`` package (not installed); first, so
# that ``peers`` is that package and not benchmarks/peers.py (as benchmarks/peers.py does).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def group_document(
    topics: int,
    partitions: int,
    members: int,
    *,
    odd_member: bool = False,
    owned: dict | None = None,
    leave: bool = False,
) -> dict:
    names = [f"topic{t:03d}" for t in range(topics)]
    docs = [{"id": f"consumer{m:04d}", "topics": names} for m in range(members)]
    if owned is not None:
        docs = [{**d, "owned": owned.get(d["id"], {}), "generation": 1} for d in docs]
    if odd_member:
        docs[-1] = {**docs[-1], "topics": names[:1]}
    if leave:
        docs = docs[:-1]
    return {"topics": {name: partitions for name in names}, "members": docs}


def loaded(doc: dict):
    started = time.perf_counter()
    problem = load_problem(doc)
    problem.subscribes, problem.topic_subscribers, problem.owned_claims  # noqa: B018 - part of loading
    return problem, time.perf_counter() - started


def large(args) -> None:
    print(
        "| case | solver | load s | assign s | load + assign s | sum of squares | moves | status |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    t, m = args.topics, args.members
    for p in (int(size) // t for size in args.sizes.split(",")):
        fresh_doc = group_document(t, p, m)
        fresh, load_s = loaded(fresh_doc)
        first = solve(fresh, "sticky").assignment
        cases = [
            (f"{t * p:,} x {m:,}, equal, fresh", fresh, load_s),
            (
                f"{t * p:,} x {m - 1:,}, equal, one member left",
                *loaded(group_document(t, p, m, owned=first, leave=True)),
            ),
            (
                f"{t * p:,} x {m:,}, last member on topic 0 only, fresh",
                *loaded(group_document(t, p, m, odd_member=True)),
            ),
            (
                f"{t * p:,} x {m:,}, last member moves to topic 0 only",
                *loaded(group_document(t, p, m, odd_member=True, owned=first)),
            ),
        ]
        for name, problem, load_s in cases:
            for solver in ("heuristic", "flow"):
                seconds, result = best_of(args.repeat, solve, problem, "sticky", solver)
                verdict = evaluate(problem, result.answer, "sticky")
                assert verdict.valid, verdict.violations
                label = solver + (
                    f" ({result.info['algorithm']})" if "algorithm" in result.info else ""
                )
                print(
                    f"| {name} | {label} | {load_s:.2f} | {seconds:.3f} | {load_s + seconds:.2f} | "
                    f"{verdict.objective[0]:,} | {verdict.objective[1]:,} | {result.status} |",
                    flush=True,
                )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
    print(f"\npeak resident memory of the whole run: {peak:.2f} GB")


def exact(args) -> None:
    t, m = args.exact_topics, args.exact_members
    per_topic = args.exact_partitions // t
    print(
        f"\n| {t * per_topic:,} partitions x {m} members | solver | seconds | status | objective | flow optimum |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    fresh, _ = loaded(group_document(t, per_topic, m))
    first = solve(fresh, "sticky").assignment
    cases = [
        ("fresh", fresh),
        ("one member left", loaded(group_document(t, per_topic, m, owned=first, leave=True))[0]),
        (
            "last member moves to topic 0 only",
            loaded(group_document(t, per_topic, m, owned=first, odd_member=True))[0],
        ),
    ]
    for name, problem in cases:
        optimum = evaluate(problem, solve(problem, "sticky", "flow").answer, "sticky").objective
        for solver, backend in (("cpsat", "cpsat"), ("mip (highs)", "mip")):
            seconds, result = best_of(
                1, partial(solve, problem, "sticky", backend, time_limit=args.time_limit)
            )
            print(
                f"| {name} | {solver} | {seconds:.2f} | {result.status} | {list(result.objective)} | {list(optimum)} |",
                flush=True,
            )


def peer(args) -> None:
    from peers.kafka_python import PeerStickyGroup

    t, m = args.peer_topics, args.peer_members
    per_topic = args.peer_partitions // t
    print(
        f"\n| {t * per_topic:,} partitions x {m} members | assignor | seconds | sum of squares | moves |"
    )
    print("| --- | --- | --- | --- | --- |")
    fresh, _ = loaded(group_document(t, per_topic, m))
    peer_group = PeerStickyGroup()
    peer_s, peer_first = best_of(1, peer_group.assign, fresh)
    ours_s, ours_first = best_of(1, solve, fresh, "sticky")
    rows = [("fresh", fresh, peer_s, peer_first, ours_s, ours_first.answer)]
    left_peer, _ = loaded(
        group_document(
            t, per_topic, m, owned=peer_group.assignment_json(fresh, peer_first), leave=True
        )
    )
    left_ours, _ = loaded(group_document(t, per_topic, m, owned=ours_first.assignment, leave=True))
    peer_s2, peer_second = best_of(1, peer_group.assign, left_peer)
    ours_s2, ours_second = best_of(1, solve, left_ours, "sticky")
    rows.append(("one member leaves", None, peer_s2, peer_second, ours_s2, ours_second.answer))
    for (case, _, p_s, p_owner, o_s, o_owner), (p_problem, o_problem) in zip(
        rows, ((fresh, fresh), (left_peer, left_ours))
    ):
        p_obj = evaluate(p_problem, p_owner, "sticky").objective
        o_obj = evaluate(o_problem, o_owner, "sticky").objective
        print(
            f"| {case} | kafka-python StickyPartitionAssignor | {p_s:.3f} | {p_obj[0]:,} | {p_obj[1]:,} |"
        )
        print(
            f"| {case} | rebalance-lab sticky | {o_s:.4f} ({p_s / o_s:,.0f}x faster) | {o_obj[0]:,} | {o_obj[1]:,} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--topics", type=int, default=500)
    parser.add_argument(
        "--sizes",
        default="10000,100000,1000000",
        help="partitions in all of part 1 (over --topics topics)",
    )
    parser.add_argument("--members", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--exact-partitions", type=int, default=2_000)
    parser.add_argument("--exact-topics", type=int, default=20)
    parser.add_argument("--exact-members", type=int, default=100)
    parser.add_argument("--time-limit", type=float, default=10.0, help="of each exact solve")
    parser.add_argument("--skip-exact", action="store_true")
    parser.add_argument("--peer-partitions", type=int, default=10_000)
    parser.add_argument("--peer-topics", type=int, default=100)
    parser.add_argument("--peer-members", type=int, default=500)
    parser.add_argument("--skip-large", action="store_true")
    parser.add_argument("--skip-peer", action="store_true")
    args = parser.parse_args()
    if not args.skip_large:
        large(args)
    if not args.skip_exact:
        exact(args)
    if not args.skip_peer:
        peer(args)


if __name__ == "__main__":
    main()
