"""kiln fp16 and bf16 against kiln fp32 and ONNX Runtime fp32: speed, memory, size and error.

    python bench/lowp_bench.py [--out build/bench] [--models bert,resnet50,mobilenet_v2]
                               [--threads 1,2] [--rounds 3] [--runs 10] [--realtime] [--lock FILE]

For every model (bench/models.py, batch 1, random weights), compiles it with `kiln compile
--cpu native --weights external` in fp32, fp16 and bf16, then times in alternating rounds (the
same 2 untimed warm-up runs for every process): kiln fp32, kiln bf16, kiln bf16 with
KILN_NATIVE_BF16=0 (the widened fp32 path that CPUs without AVX512_BF16 take; the same as
plain bf16 there), kiln fp16, and ONNX Runtime fp32. The figures are the medians over rounds of
each round's median; `paired` is the median of each round's own ratio to kiln fp32.

Also printed, per model: the weight bytes of each compile, each one's peak resident memory in
a process that runs the model twice (`/usr/bin/time`'s maximum RSS), and each reduced-precision
output's error against kiln fp32 (max |difference| / max |fp32 output|; top-1 agreement for
the classifiers). Whether this CPU computes bf16 natively is printed first (the test of
gemm_bf16_native: AVX-512 BW, VL and BF16 in /proc/cpuinfo).

Writes OUT/lowp_results.json. Not a test: nothing fails on a timing.
"""
import argparse
import json
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402  (bench/bench.py: model generation, timing)

REPO = B.REPO
CLASSIFIERS = {"resnet50", "mobilenet_v2"}
FALLBACK = {"KILN_NATIVE_BF16": "0"}


def cpu_has_native_bf16():
    try:
        flags = next(l for l in open("/proc/cpuinfo") if l.startswith("flags")).split()
    except (OSError, StopIteration):
        return False
    return all(f in flags for f in ("avx512f", "avx512bw", "avx512vl", "avx512_bf16"))


class Env:
    """Adds `extra` to the environment of the processes started inside the block."""

    def __init__(self, extra):
        self.extra, self.saved = extra or {}, {}

    def __enter__(self):
        for k, v in self.extra.items():
            self.saved[k] = os.environ.get(k)
            os.environ[k] = v

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def peak_rss_mb(exe, in_args, env):
    with Env(env):
        c = B.run(["/usr/bin/time", "-f", "maxrss %M", exe, *in_args, "--repeat", "2", "--threads", "1"])
    line = next(l for l in c.stderr.splitlines() if l.startswith("maxrss"))
    return int(line.split()[1]) / 1024.0


def first_output(exe, in_args, out_dir, env):
    with Env(env):
        B.run([exe, *in_args, "-o", out_dir])
    return np.load(os.path.join(out_dir, sorted(os.listdir(out_dir))[0])).astype(np.float64)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join(REPO, "build", "bench"))
    p.add_argument("--kiln", default=os.path.join(REPO, "build", "bin", "kiln"))
    p.add_argument("--python", default=sys.executable, help="python that has onnxruntime")
    p.add_argument("--models", default="bert,resnet50,mobilenet_v2")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=10)
    B.add_timing_args(p)
    a = p.parse_args()
    B.apply_timing_args(a)
    native = cpu_has_native_bf16()
    B.log(f"native bf16 compute on this CPU (AVX512_BF16): {native}")
    models = [m for m in a.models.split(",") if m]
    threads = [int(t) for t in a.threads.split(",")]
    model_dir = os.path.join(a.out, "models")
    manifest = B.generate_models(a.python, model_dir, [1], models)
    # (label, precision compiled, environment of its runs)
    builds = [("fp32", "fp32", None), ("bf16", "bf16", None), ("bf16 widened", "bf16", FALLBACK),
              ("fp16", "fp16", None)]
    rows, models_info = [], []
    for name in models:
        entry = next(e for e in manifest.values() if e["model"] == name and e["batch"] in (1, None))
        work = os.path.join(a.out, "work", f"{name}_lowp")
        inputs = os.path.join(work, "inputs")
        B.link_inputs(model_dir, entry, inputs)
        path = os.path.join(model_dir, entry["file"])
        in_args = B.kiln_input_args(path, inputs)
        exes, info = {}, {"model": name, "native_bf16": native, "weight_bytes": {}, "peak_rss_mb": {}, "error": {}}
        for precision in ("fp32", "bf16", "fp16"):
            out = os.path.join(work, f"kiln_{precision}")
            B.log(f"{name}: compiling {precision}")
            B.run([a.kiln, "compile", path, "-o", out, "--name", "model", "--cpu", "native", "--weights", "external",
                   "--precision", precision])
            exes[precision] = os.path.join(out, "model")
            info["weight_bytes"][precision] = os.path.getsize(os.path.join(out, "model.weights"))
        ref = first_output(exes["fp32"], in_args, os.path.join(work, "out_fp32"), None)
        for label, precision, env in builds:
            info["peak_rss_mb"][label] = peak_rss_mb(exes[precision], in_args, env)
            if label == "fp32":
                continue
            got = first_output(exes[precision], in_args, os.path.join(work, f"out_{label.replace(' ', '_')}"), env)
            err = float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30))
            info["error"][label] = {"max_rel_of_scale": err}
            if name in CLASSIFIERS:
                info["error"][label]["same_top1"] = bool(np.argmax(got) == np.argmax(ref))
            B.log(f"{name} {label}: max |diff| / max |fp32| {err:.2e}")
        models_info.append(info)
        for t in threads:
            times = {label: [] for label, _, _ in builds}
            ort = []
            for _ in range(a.rounds):
                for label, precision, env in builds:
                    with Env(env):
                        times[label].append(B.time_kiln(exes[precision], in_args, t, a.runs)[0])
                ort.append(B.time_ort(a, path, inputs, t))
            row = {"model": name, "threads": t, "ort_fp32_ms": statistics.median(ort), "ort_fp32_rounds_ms": ort}
            for label in times:
                key = label.replace(" ", "_")
                row[f"kiln_{key}_ms"] = statistics.median(times[label])
                row[f"kiln_{key}_rounds_ms"] = times[label]
                row[f"{key}_over_fp32_paired"] = statistics.median(x / f for x, f in zip(times[label], times["fp32"]))
                row[f"{key}_over_ort_fp32_paired"] = statistics.median(x / o for x, o in zip(times[label], ort))
            B.log(f"{name} threads {t}: " + ", ".join(f"kiln {l} {row['kiln_' + l.replace(' ', '_') + '_ms']:.2f} ms"
                                                     for l in times) + f", ORT fp32 {row['ort_fp32_ms']:.2f} ms")
            rows.append(row)
    with open(os.path.join(a.out, "lowp_results.json"), "w") as f:
        json.dump({"machine": B.machine(), "native_bf16": native, "rounds": a.rounds, "runs_per_round": a.runs,
                   "models": models_info, "rows": rows}, f, indent=2)
    print(f"native bf16 compute on this CPU: {native}")
    print("| model | threads | kiln fp32 ms | kiln bf16 ms (/fp32 paired) | bf16 widened ms (/fp32) "
          "| kiln fp16 ms (/fp32) | ORT fp32 ms | kiln bf16 / ORT fp32 paired |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['threads']} | {r['kiln_fp32_ms']:.2f} | {r['kiln_bf16_ms']:.2f} "
              f"({r['bf16_over_fp32_paired']:.2f}) | {r['kiln_bf16_widened_ms']:.2f} "
              f"({r['bf16_widened_over_fp32_paired']:.2f}) | {r['kiln_fp16_ms']:.2f} ({r['fp16_over_fp32_paired']:.2f}) "
              f"| {r['ort_fp32_ms']:.2f} | {r['bf16_over_ort_fp32_paired']:.2f} |")
    print("\n| model | weight bytes fp32 / bf16 / fp16 | peak RSS MB fp32 / bf16 / bf16 widened / fp16 "
          "| error vs fp32 (of scale): bf16 / bf16 widened / fp16 |")
    print("|---|---|---|---|")
    for m in models_info:
        w, rss, e = m["weight_bytes"], m["peak_rss_mb"], m["error"]

        def err(label):
            x = e[label]
            return f"{x['max_rel_of_scale']:.2e}" + ("" if "same_top1" not in x else
                                                      (" top-1 kept" if x["same_top1"] else " top-1 changed"))

        print(f"| {m['model']} | {w['fp32']} / {w['bf16']} ({w['bf16'] / w['fp32']:.3f}x) / {w['fp16']} "
              f"({w['fp16'] / w['fp32']:.3f}x) | {rss['fp32']:.0f} / {rss['bf16']:.0f} / {rss['bf16 widened']:.0f} / "
              f"{rss['fp16']:.0f} | {err('bf16')} / {err('bf16 widened')} / {err('fp16')} |")


if __name__ == "__main__":
    main()
