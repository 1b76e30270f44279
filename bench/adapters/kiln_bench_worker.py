"""The worker side of `kiln bench` and `kiln compile --verify-against`, shared by the
adapters in this folder. kiln writes these scripts to a temporary folder and runs them with
the user's Python (--python, else $KILN_PYTHON, else python3); each imports only its own
framework and numpy.

An adapter defines load(model, threads) -> (version, run), where run(inputs) takes the
input arrays in graph order and returns the outputs in graph order, and calls main(...).

Command line (positional arguments are the input .npy files, in graph order):
  ADAPTER --probe                      print "ok VERSION" (exit 3: framework missing)
  ADAPTER --model M --serve ...        the line protocol of kiln/rt/bench_worker.h
  ADAPTER --model M --outputs DIR ...  run once, write DIR/output_K.npy
"""
import argparse
import os
import sys
import time

MISSING = 3  # exit status: the framework cannot be imported


def _write_outputs(outputs, folder):
    import numpy as np
    os.makedirs(folder, exist_ok=True)
    for k, value in enumerate(outputs):
        np.save(os.path.join(folder, f"output_{k}.npy"), np.ascontiguousarray(value))


def _serve(run, inputs):
    t0 = time.perf_counter()
    outputs = run(inputs)
    print(f"ready {(time.perf_counter() - t0) * 1e3:.6f}", flush=True)
    for line in sys.stdin:
        line = line.rstrip("\n")
        if line == "quit":
            return 0
        if line.startswith("run "):
            times = []
            for _ in range(int(line[4:])):
                t0 = time.perf_counter()
                outputs = run(inputs)
                times.append((time.perf_counter() - t0) * 1e3)
            print("times " + " ".join(f"{t:.6f}" for t in times), flush=True)
        elif line.startswith("outputs "):
            _write_outputs(outputs, line[8:])
            print("ok", flush=True)
        else:
            print(f"error unknown request '{line}'", flush=True)
            return 1
    return 0


def main(framework, load, add_options=None, act=None):
    """Parses the command line and does what it asks. An adapter with options of its own
    registers them with add_options(parser); act(args, inputs) then runs first and returns
    True when it did the whole job."""
    parser = argparse.ArgumentParser(description=f"kiln bench adapter for {framework}")
    parser.add_argument("--probe", action="store_true")
    parser.add_argument("--model")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--serve", action="store_true")
    parser.add_argument("--outputs")
    parser.add_argument("inputs", nargs="*")
    if add_options:
        add_options(parser)
    args = parser.parse_args()
    try:
        version, run = load(args.model if not args.probe else None, args.threads)
    except ImportError as e:
        print(f"{framework} cannot be imported: {e}", file=sys.stderr)
        sys.exit(MISSING)
    if args.probe:
        print(f"ok {version}", flush=True)
        return
    import numpy as np
    inputs = [np.load(p) for p in args.inputs]
    try:
        if act and act(args, inputs):
            return
        if args.serve:
            sys.exit(_serve(run, inputs))
        _write_outputs(run(inputs), args.outputs)
    except Exception as e:  # one line for kiln, which shows it with the model's name
        message = str(e).replace("\n", " ")
        if args.serve:
            print(f"error {type(e).__name__}: {message}", flush=True)
        else:
            print(f"{framework}: {type(e).__name__}: {message}", file=sys.stderr)
        sys.exit(1)
