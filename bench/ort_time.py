"""Times one ONNX model under ONNX Runtime in its own process (the baseline of bench/bench.py).

    python bench/ort_time.py MODEL.onnx INPUT_DIR --threads N --runs R [--outputs DIR]

INPUT_DIR holds <input name>.npy for every graph input. ONNX Runtime gets all graph
optimizations and N intra-op threads (inter-op 1, sequential execution), as kiln's executable
gets N threads. Prints one JSON line: {"median_ms", "min_ms", "cpu_mean_ms", "runs"} (cpu:
the process's CPU time over all timed runs divided by their number, all threads, spinning
workers included; a mean, since the kernel adds running workers' time only at scheduler ticks); with --outputs, writes
the last run's outputs as DIR/<index>.npy.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import onnxruntime as ort


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("inputs")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--outputs")
    p.add_argument("--as-written", action="store_true",
                   help="graph optimizations off: a QDQ model runs as its DequantizeLinear, float ops and "
                        "QuantizeLinear (exact integers where ORT's int8 kernels saturate, x86 without VNNI)")
    a = p.parse_args()

    so = ort.SessionOptions()
    so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_DISABLE_ALL if a.as_written
                                   else ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(a.model, so, providers=["CPUExecutionProvider"])
    feeds = {i.name: np.load(os.path.join(a.inputs, sanitize(i.name) + ".npy"))
             for i in sess.get_inputs()}
    for _ in range(a.warmup):
        outs = sess.run(None, feeds)
    times = []
    c0 = time.process_time()
    for _ in range(a.runs):
        t0 = time.perf_counter()
        outs = sess.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    cpu_mean_ms = (time.process_time() - c0) * 1e3 / a.runs
    if a.outputs:
        os.makedirs(a.outputs, exist_ok=True)
        for k, o in enumerate(outs):
            np.save(os.path.join(a.outputs, f"{k}.npy"), o)
    print(json.dumps({"median_ms": statistics.median(times), "min_ms": min(times),
                      "cpu_mean_ms": cpu_mean_ms, "runs": a.runs}))


def sanitize(name):
    """File names as kiln derives them from tensor names (kiln::rt::sanitize_file_name)."""
    s = "".join(c if (c.isascii() and c.isalnum()) or c in "_-." else "_" for c in name)
    return {"": "_", ".": "_", "..": "__"}.get(s, s)


if __name__ == "__main__":
    sys.exit(main())
