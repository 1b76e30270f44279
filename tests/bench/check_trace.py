"""Checks a compiled executable's --profile output against the Chrome trace event format
(the JSON Object Format of the Trace Event Format document that chrome://tracing and
Perfetto read) and against the run it describes.

usage: check_trace.py TRACE.json --runs N --source model.cpp [--tolerance 0.10]

- the file is {"traceEvents": [...]} with optional displayTimeUnit and otherData;
- every event has name, ph, pid, tid; "X" events have numeric ts >= 0 and dur >= 0 and a
  cat; "M" events are process_name/thread_name metadata with args.name;
- there are N "run" events, each followed by one event per node whose name is a node of
  the generated model.cpp (kNodeNames), whose cat is that node's op (kNodeOps), and which
  lies inside its run;
- the node times of a run add up to within the tolerance of the run's latency, for the
  median run (a single run can be preempted between two nodes on a busy machine).
"""
import argparse
import json
import re
import statistics
import sys


def generated_nodes(source):
    text = open(source, encoding="utf-8").read()

    def table(name):
        body = re.search(name + r"\[\] = \{\n(.*?)\s*nullptr\};", text, re.S).group(1)
        return [json.loads(s) for s in re.findall(r'^\s*("(?:[^"\\]|\\.)*"),$', body, re.M)]

    return list(zip(table("kNodeNames"), table("kNodeOps")))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("trace")
    p.add_argument("--runs", type=int, required=True)
    p.add_argument("--source", required=True)
    p.add_argument("--tolerance", type=float, default=0.10)
    args = p.parse_args()
    with open(args.trace) as f:
        trace = json.load(f)
    errors = []
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        sys.exit("not a trace: no traceEvents list")
    allowed = {"traceEvents", "displayTimeUnit", "otherData", "systemTraceEvents", "stackFrames", "samples"}
    if set(trace) - allowed:
        errors.append(f"unknown top-level keys {set(trace) - allowed}")
    if trace.get("displayTimeUnit", "ms") not in ("ms", "ns"):
        errors.append("displayTimeUnit must be ms or ns")
    complete = []
    for i, e in enumerate(trace["traceEvents"]):
        for key in ("name", "ph", "pid", "tid"):
            if key not in e:
                errors.append(f"event {i} has no {key}")
        if e.get("ph") == "X":
            if not all(isinstance(e.get(k), (int, float)) and e[k] >= 0 for k in ("ts", "dur")):
                errors.append(f"event {i}: ts and dur must be numbers >= 0")
            if not isinstance(e.get("cat"), str):
                errors.append(f"event {i}: cat must be a string")
            complete.append(e)
        elif e.get("ph") == "M":
            if e.get("name") not in ("process_name", "thread_name") or "name" not in e.get("args", {}):
                errors.append(f"event {i}: bad metadata event")
        else:
            errors.append(f"event {i}: unexpected phase {e.get('ph')}")
    nodes = generated_nodes(args.source)
    runs = [e for e in complete if e["name"] == "run" and e["cat"] == "run"]
    if len(runs) != args.runs:
        errors.append(f"{len(runs)} run events, expected {args.runs}")
    ratios = []
    for r in range(len(runs)):
        events = [e for e in complete if e["args"].get("run") == r and e["cat"] != "run"]
        got = [(e["name"], e["cat"]) for e in events]
        if got != nodes:
            errors.append(f"run {r}: node events {got[:3]}... do not match the model's nodes {nodes[:3]}...")
            break
        run = runs[r]
        for e in events:
            if e["ts"] < run["ts"] - 1 or e["ts"] + e["dur"] > run["ts"] + run["dur"] + 1:
                errors.append(f"run {r}: node {e['name']} lies outside its run")
        ratios.append(sum(e["dur"] for e in events) / run["dur"])
    if ratios:
        median = statistics.median(ratios)
        if abs(1 - median) > args.tolerance:
            errors.append(f"node times add up to {median:.3f} of the run latency (median run), "
                          f"outside 1 +- {args.tolerance}")
        print(f"{args.trace}: {len(nodes)} nodes x {len(runs)} runs; node times are {median:.3f} "
              f"of the run latency (median; min {min(ratios):.3f}, max {max(ratios):.3f})")
    if errors:
        sys.exit(f"{args.trace}: " + "; ".join(errors[:10]))


if __name__ == "__main__":
    main()
