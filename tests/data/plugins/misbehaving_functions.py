"""A Python plugin (``misbehaving_functions:assign``) that misbehaves by the group's member count:
3 answers well, 4 calls sys.exit, 5 os._exit, 6 os.abort, 7 hangs, 8 allocates 20 GB, 9 returns
float owners, 10 boolean owners, 11 prints to stdout and answers well, 12 raises."""

import os
import sys
import time

import numpy as np


def _owners(problem):
    """Each partition to a subscribed member, round robin (a valid answer of every group)."""
    owner = np.full(problem.num_partitions, -1, dtype=np.int64)
    for p in range(problem.num_partitions):
        subscribers = np.flatnonzero(problem.subscribes[:, problem.partition_topic[p]])
        if len(subscribers):
            owner[p] = subscribers[p % len(subscribers)]
    return owner


def assign(problem):
    count = problem.num_members
    if count == 4:
        sys.exit(1)
    if count == 5:
        os._exit(0)
    if count == 6:
        os.abort()
    if count == 7:
        time.sleep(600)
    if count == 8:
        hoard = bytearray(20 << 30)
        return [len(hoard)]
    if count == 9:
        return _owners(problem).astype(float)
    if count == 10:
        return _owners(problem) >= 0
    if count == 11:
        print("debugging output")
    if count == 12:
        raise RuntimeError("no idea")
    return _owners(problem)


assign.judged_on = "sticky"
assign.name = "misbehaving-py"
