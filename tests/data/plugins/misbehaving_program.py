"""A plugin program (the protocol of docs/plugins.md, no rebalance-lab import) that misbehaves by
the group's member count: 3 answers well, 4 exits, 5 hangs, 6 writes garbage, 7 answers an
unknown member, 8 aborts, 9 allocates 20 GB, 10 answers float owners, 11 prints to stdout before
its answer.  Every other count answers well.  Its stderr says what it did."""

import json
import os
import sys
import time


def owners(problem):
    """Each partition to a subscribed member, round robin (a valid answer of every group)."""
    members = problem["members"]
    out, turn = [], 0
    for topic, count in problem["topics"].items():
        subscribed = [m for m, member in enumerate(members) if topic in member["topics"]]
        for _ in range(count):
            out.append(subscribed[turn % len(subscribed)] if subscribed else -1)
            turn += 1
    return out


def answer(problem):
    count = len(problem["members"])
    print(f"a group of {count} members", file=sys.stderr, flush=True)
    if count == 4:
        print("giving up", file=sys.stderr, flush=True)
        sys.exit(3)
    if count == 5:
        time.sleep(600)
    if count == 6:
        return "this is not JSON"
    if count == 7:
        return json.dumps({"assignment": {"nobody": {}}})
    if count == 8:
        os.abort()
    if count == 9:
        hoard = bytearray(20 << 30)
        return json.dumps({"owner": [len(hoard)]})
    if count == 10:
        return json.dumps({"owner": [float(o) for o in owners(problem)]})
    if count == 11:
        sys.stdout.write("debugging output\n")
    return json.dumps({"owner": owners(problem)})


for line in sys.stdin:
    request = json.loads(line)
    if request.get("describe"):
        reply = json.dumps({"judged_on": "sticky", "name": "misbehaving"})
    else:
        reply = answer(request["problem"])
    sys.stdout.write(reply + "\n")
    sys.stdout.flush()
