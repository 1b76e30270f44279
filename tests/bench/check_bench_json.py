"""Checks a `kiln bench --json` report: valid against the schema, and saying what a healthy
run says (kiln and the baseline measured, outputs agreeing, ratios consistent).

usage: check_bench_json.py SCHEMA REPORT [--baseline NAME]
"""
import argparse
import json
import sys

import jsonschema


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("schema")
    parser.add_argument("report")
    parser.add_argument("--baseline")
    args = parser.parse_args()
    with open(args.schema) as f:
        schema = json.load(f)
    with open(args.report) as f:
        report = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    try:
        jsonschema.Draft202012Validator(schema).validate(report)
    except jsonschema.ValidationError as e:
        sys.exit(f"{args.report}: does not match the schema: {e.message} at {list(e.absolute_path)}")
    engines = {e["name"]: e for e in report["engines"]}
    kiln = engines.get("kiln")
    problems = []
    if not kiln or kiln["status"] != "ok":
        problems.append("kiln was not measured")
    elif len(kiln["samples_ms"]) != report["settings"]["rounds"] * report["settings"]["runs_per_round"]:
        problems.append("kiln has the wrong number of samples")
    elif kiln["executable_bytes"] is None or kiln["executable_bytes"] <= 0:
        problems.append("kiln's executable size is missing")
    if args.baseline:
        base = engines.get(args.baseline)
        if not base or base["status"] != "ok":
            problems.append(f"{args.baseline} was not measured: {base and base.get('reason')}")
        comparisons = [c for c in report["comparisons"] if c["baseline"] == args.baseline]
        if len(comparisons) != 1:
            problems.append(f"no comparison with {args.baseline}")
        else:
            c = comparisons[0]
            want = kiln["latency_ms"]["p50"] / base["latency_ms"]["p50"]
            if abs(c["ratios"]["p50"] - want) > 1e-3 * want:
                problems.append(f"p50 ratio {c['ratios']['p50']} is not kiln/baseline = {want}")
            if len(c["agreement"]) != len(report["model"]["outputs"]):
                problems.append("agreement does not cover every output")
            for a in c["agreement"]:
                if "problem" in a or a["max_rel_error"] is None or a["max_rel_error"] > 1e-3:
                    problems.append(f"output {a['output']} disagrees: {a}")
                if a["top1_agreement"] is not None and a["top1_agreement"] < 1:
                    problems.append(f"output {a['output']} top-1 agreement {a['top1_agreement']}")
    if problems:
        sys.exit(f"{args.report}: " + "; ".join(problems))


if __name__ == "__main__":
    main()
