"""Time the Python reference checking a file of states, one Harness.

usage: reference_drift.py SDK_DIR STATES.jsonl RUNS

Each line of STATES.jsonl is a state as `laserbrain check --stream` reads
it (goal, progress, distance, parent_goal). Every run checks all of them
on a fresh Harness, in this process; prints the best run's seconds.
"""
import json
import sys
import time

sys.path.insert(0, sys.argv[1])
from laserbrain import Harness  # noqa: E402

states = [json.loads(line) for line in open(sys.argv[2])]
best = None
for _ in range(int(sys.argv[3])):
    hz = Harness()
    start = time.perf_counter()
    for s in states:
        hz.check(s["goal"], s.get("progress", "advancing"), s.get("distance", 5),
                 parent_goal=s.get("parent_goal"))
    took = time.perf_counter() - start
    best = took if best is None else min(best, took)
print(best)
