#!/usr/bin/env python3
"""nestcheck.py TRACE.json: checks that on every (pid, tid) track of a Chrome
trace the complete ("X") events nest properly: any two either do not overlap
or one contains the other (issue 17: a range open across a step boundary
must not partially overlap the ProfileStep ranges). Prints each partial
overlap and exits 1 if there is one; prints the number of X events checked.
Standard library only."""
import json
import sys
from collections import defaultdict


def main(path):
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)
    tracks = defaultdict(list)
    for e in trace.get("traceEvents", []):
        if e.get("ph") == "X":
            start = round(float(e["ts"]) * 1000)
            tracks[(e.get("pid"), e.get("tid"))].append((start, start + round(float(e["dur"]) * 1000),
                                                         e.get("name")))
    bad = checked = 0
    for key, events in tracks.items():
        events.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for start, end, name in events:
            checked += 1
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack and end > stack[-1][1]:
                bad += 1
                print(f"track {key}: {name!r} [{start}, {end}] partially overlaps "
                      f"{stack[-1][2]!r} [{stack[-1][0]}, {stack[-1][1]}]")
            stack.append((start, end, name))
    print(f"{checked} X events, {bad} partial overlaps")
    return 1 if bad or not checked else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
