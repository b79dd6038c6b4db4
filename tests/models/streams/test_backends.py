"""The exact streams models (models/streams/cpsat.py, models/streams/mip.py, models/streams/flow.py)
against every feasible assignment of tiny streams groups, enumerated.

Each tiny group (1-3 processes of 1-2 members, 2-4 tasks, 0-1 standby per stateful task, random
restore costs, thread weights, traffic and previous assignment) is solved by enumerating every
active assignment and every standby placement; CP-SAT and the MIP must reach that optimum on every
level and prove it, the flow must reach it wherever it says ``optimal``, and every backend's bound
must lie at or below the best answer any of them found.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from models.options import SolveOptions
from models.streams.cpsat import solve_data as cpsat_solve
from models.streams.data import StreamsData
from models.streams.flow import active_flow, standby_flow
from models.streams.flow import solve_data as flow_solve
from models.streams.mip import solve_data as mip_solve


def tiny_group(seed: int) -> StreamsData:
    """A random tiny streams group: 1-3 processes of 1-2 members, 2-4 tasks, 0-1 standby."""
    rng = random.Random(seed)
    processes = rng.randint(1, 3)
    member_process = np.array(
        [p for p in range(processes) for _ in range(rng.randint(1, 2))], dtype=np.int64
    )
    members = len(member_process)
    tasks = rng.randint(2, 4) if members <= 4 else rng.randint(2, 3)
    standby = rng.randint(0, 1)
    stateful = [rng.random() < 0.7 for _ in range(tasks)]
    members = len(member_process)
    threads = [rng.choice([1, 2]) for _ in range(members)]
    return StreamsData(
        member_process=member_process,
        num_processes=processes,
        standbys=np.array([min(standby, processes - 1) if s else 0 for s in stateful], np.int64),
        restore=np.array(
            [[rng.choice([0, 0, 5, 10]) if s else 0 for s in stateful] for _ in range(processes)],
            np.int64,
        ),
        balance_group=np.arange(members),
        balance_weight=np.array([2 // t for t in threads], np.int64),
        standby_group=np.arange(members),
        standby_weight=np.array([2 // t for t in threads], np.int64),
        traffic=np.array([[rng.choice([0, 1, 2]) for _ in range(members)] for _ in range(tasks)]),
        standby_traffic=np.array(
            [[rng.choice([0, 1]) for _ in range(members)] for _ in range(tasks)]
        ),
        prev_active=np.array([rng.choice([-1, *range(members)]) for _ in range(tasks)], np.int64),
        standby_new=np.array([[rng.random() < 0.7 for _ in range(members)] for _ in range(tasks)]),
    )


def enumerated_optimum(data: StreamsData) -> tuple[int, ...]:
    """The lexicographic optimum over every feasible answer (every task active once, its standbys
    each on another process than its other copies)."""
    best: tuple[int, ...] | None = None
    members = range(data.num_members)
    for active in itertools.product(members, repeat=data.num_tasks):
        choices = []
        for t in range(data.num_tasks):
            need = int(data.standbys[t])
            choices.append(
                [
                    c
                    for c in itertools.combinations(members, need)
                    if len({int(data.member_process[m]) for m in (*c, active[t])}) == need + 1
                ]
            )
        for pick in itertools.product(*choices):
            rows = np.array([(t, m) for t, c in enumerate(pick) for m in c], np.int64)
            levels = data.levels(np.array(active), rows.reshape(-1, 2))
            best = levels if best is None or levels < best else best
    assert best is not None
    return best


def _valid(data: StreamsData, active: np.ndarray, standby: np.ndarray) -> bool:
    for t in range(data.num_tasks):
        copies = [int(active[t]), *standby[standby[:, 0] == t][:, 1].tolist()]
        if len(copies) != int(data.standbys[t]) + 1:
            return False
        if len({int(data.member_process[m]) for m in copies}) != len(copies):
            return False
    return True


SEEDS = range(36)


@pytest.mark.parametrize("seed", SEEDS)
def test_every_backend_meets_the_enumerated_optimum(seed):
    """Tests that CP-SAT and the MIP prove the enumerated optimum on every level, and that the
    flow's answer is valid, meets it where the flow says optimal, and bounds it from below."""
    data = tiny_group(seed)
    best = enumerated_optimum(data)
    found = []
    ranked, active, standby = cpsat_solve(data, SolveOptions(time_limit=20))
    assert ranked.status == "optimal" and _valid(data, active, standby)
    assert data.levels(active, standby) == best and ranked.bound == best
    found.append((ranked.bound, data.levels(active, standby)))
    backend = "cbc" if seed % 4 == 0 else "highs"
    ranked, active, standby = mip_solve(data, SolveOptions.of(time_limit=20, backend=backend))
    assert ranked.status == "optimal" and _valid(data, active, standby)
    assert data.levels(active, standby) == best and ranked.bound == best
    found.append((ranked.bound, data.levels(active, standby)))
    active, standby, status, bound = flow_solve(data)
    assert _valid(data, active, standby)
    levels = data.levels(active, standby)
    assert levels >= best
    assert bound[:2] == best[:2]  # levels 1-2 are always proven
    if status == "optimal":
        assert levels == best and bound == best
    found.append((bound, levels))
    for proven, _ in found:  # every bound at or below the best answer any backend found
        assert tuple(proven) <= min(levels for _, levels in found)
        assert tuple(proven) <= best[: len(proven)]


@pytest.mark.parametrize("seed", SEEDS)
def test_flow_without_standbys_is_the_optimum(seed):
    """Tests that the flow proves every level when no task has a standby."""
    data = tiny_group(seed)
    bare = StreamsData(
        **{
            **data.__dict__,
            "standbys": np.zeros_like(data.standbys),
            "standby_new": np.ones_like(data.standby_new),
        }
    )
    active, standby, status, bound = flow_solve(bare)
    assert status == "optimal" and len(standby) == 0
    assert bare.levels(active, standby) == enumerated_optimum(bare) == bound


def test_actives_with_fixed_standbys_avoid_their_processes():
    """Tests that the active flow given standbys (``exclude``) keeps each task off the processes
    of its standbys and is the optimum over the actives those standbys allow."""
    data = next(d for d in map(tiny_group, range(40)) if d.num_processes == 3)
    exclude = np.zeros((data.num_tasks, data.num_processes), dtype=bool)
    exclude[0, 0] = True
    answer = active_flow(data, exclude)
    chosen = dict(answer.pairs.tolist())
    assert data.member_process[chosen[0]] != 0
    best = min(
        data.levels(np.array(a), np.zeros((0, 2), np.int64))[:2]
        for a in itertools.product(range(data.num_members), repeat=data.num_tasks)
        if data.member_process[a[0]] != 0
    )
    assert answer.levels[:2] == best


def test_relaxed_standby_flow_bounds_the_placed_one():
    """Tests that the relaxed standby network (no process excluded) is never worse than the
    standbys placed around the actives."""
    for seed in range(12):
        data = tiny_group(seed)
        actives = active_flow(data)
        active = np.empty(data.num_tasks, np.int64)
        active[actives.pairs[:, 0]] = actives.pairs[:, 1]
        assert standby_flow(data, None).levels <= standby_flow(data, active).levels
