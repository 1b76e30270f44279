"""kiln int8 against kiln fp32 and ONNX Runtime int8: acceptance 2 of the quantization issue.

    python bench/quant_bench.py [--out build/bench] [--models resnet50,mobilenet_v2]
                                [--threads 1,2] [--rounds 5] [--runs 10] [--realtime]
                                [--calibration-samples 8] [--no-qdq] [--lock FILE]

For every model (bench/models.py: torchvision ResNet-50 and MobileNetV2, random weights,
batch 1):

1. quantizes it with onnxruntime.quantization (quant_pre_process, then quantize_static:
   QDQ format, per-channel s8 weights, u8 activations, calibrated on 8 seeded random inputs),
2. compiles the fp32 model and the QDQ model with `kiln compile --cpu native` (kiln's
   fuse_qdq pass turns the QDQ Convs into QLinearConv on the int8 GEMM),
3. checks kiln int8 against ONNX Runtime on the same QDQ model (max abs error in output
   quantization steps; its fused int8 kernels, and the QDQ graph run as written, which is the
   exact reference on x86 without VNNI, where those kernels saturate) and against fp32,
4. times kiln fp32, kiln int8 and ORT int8 (and ORT fp32) at each thread count, alternating
   rounds as bench/bench.py does (the same 2 untimed warm-up runs for every process); the figure
   is the median over rounds of each round's median, and `paired` the median of each round's
   own kiln int8 / ORT int8 ratio.
   CPU time (all threads of the process) is reported too, for kiln and ONNX Runtime: on a
   shared machine it is the steadier comparison (ORT's includes its spinning workers).
5. at more than one thread, probes the cores before each round (bench/core_latency.cpp: ns a
   cache line streamed from CPU 0 to CPU 1), and prints for each such row the probe's range
   and the paired ratio over the rounds where the cores were close (under 2 ns a line; 3+ when
   the VM's cores are far apart, where every layer reading the other thread's output slows).

When kiln has `--precision int8` (its own static quantization; detected from `kiln compile
--help`), the fp32 model is also compiled that way, calibrated on the same 8 inputs, and timed
as a further row; where it has `--weight-range`, that row is `--weight-range reduced` (kiln's
default but with `--cpu native` on AVX-512 VNNI, and what runs fast on AVX2 without VNNI), and
a second build with `--weight-range full` is timed side by side in the same rounds. Both print their output error against kiln fp32 and whether the top-1 class is
the same.

`--realtime` times kiln and ORT alike under `chrt -f 50`, as bench/bench.py's option does;
`--lock FILE` takes FILE (flock) around each timed command, so that timings by others who take
the same lock do not overlap (compiles and calibration run outside it).
`--cpu-isa avx2` runs kiln (compiles and executables) under KILN_CPU_ISA=avx2: its AVX2 kernels,
and the weight range it picks for a CPU without VNNI, on an AVX-512 host; the int8/fp32 ratio is
then the AVX2 one, but ONNX Runtime has no such switch, so kiln/ORT is not.
`--calibration-samples N` calibrates kiln's own quantization on the first N of the 8 inputs
(kiln's calibration runs its interpreter: fewer samples compile faster while iterating; ORT's
model is always calibrated on all 8). `--no-qdq` skips compiling and timing ORT's QDQ model in
kiln (the kiln int8 column is then kiln's own `--precision int8`).

The issue asks for kiln int8 <= 0.55x kiln fp32 and faster than ORT int8. Prints a table and
writes OUT/quant_results.json. Not a test: nothing fails on a timing.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402  (bench/bench.py: model generation, timing, comparison)

REPO = B.REPO


def quantize(src, dst, entry, model_dir):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    if os.path.exists(dst):
        return
    inp = entry["inputs"][0]
    x = np.load(os.path.join(model_dir, inp["file"]))

    class Samples(CalibrationDataReader):
        def __init__(self):
            self.samples = [{inp["name"]: s} for s in calibration_samples(x.shape)]

        def get_next(self):
            return self.samples.pop() if self.samples else None

    pre = dst + ".pre.onnx"
    quant_pre_process(src, pre, skip_symbolic_shape=True)
    quantize_static(pre, dst, Samples(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    os.remove(pre)


def calibration_samples(shape):
    """The 8 seeded random inputs both ORT's and kiln's static quantization calibrate on."""
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(8)]


def kiln_weight_range(a):
    """Whether this kiln's --precision int8 has --weight-range full|reduced."""
    return "--weight-range" in B.run([a.kiln, "compile", "--help"]).stdout


def kiln_static_int8(a):
    """Whether this kiln has `--precision int8` (static, with calibration): its help names
    --calibration-method."""
    return "--calibration-method" in B.run([a.kiln, "compile", "--help"]).stdout


def write_calibration(entry, model_dir, dst, count):
    """The first COUNT calibration samples in kiln's layout: DST/sample_NN/<input name>.npy."""
    inp = entry["inputs"][0]
    x = np.load(os.path.join(model_dir, inp["file"]))
    if os.path.isdir(dst):
        for old in os.listdir(dst):  # a previous run's samples beyond COUNT
            if old.startswith("sample_") and int(old[len("sample_"):]) >= count:
                for f in os.listdir(os.path.join(dst, old)):
                    os.remove(os.path.join(dst, old, f))
                os.rmdir(os.path.join(dst, old))
    for k, sample in enumerate(calibration_samples(x.shape)[:count]):
        d = os.path.join(dst, f"sample_{k:02d}")
        os.makedirs(d, exist_ok=True)
        np.save(os.path.join(d, B.sanitize(inp["name"]) + ".npy"), sample)
    return dst


def time_ort(a, path, inputs, threads):
    """ONNX Runtime's median wall and CPU time (bench/ort_time.py)."""
    c = B.run(B.TIMED_PREFIX + [a.python, os.path.join(REPO, "bench", "ort_time.py"), path, inputs, "--threads",
               str(threads), "--warmup", str(B.WARMUP_RUNS), "--runs", str(a.runs)])
    r = json.loads(c.stdout.strip().splitlines()[-1])
    return r["median_ms"], r["cpu_mean_ms"]


def compile_model(a, path, out, extra=()):
    B.run([a.kiln, "compile", path, "-o", out, "--name", "model", "--cpu", "native", *extra])
    return os.path.join(out, "model")


def outputs(exe, in_args, out_dir):
    B.run([exe] + in_args + ["-o", out_dir])
    return [np.load(os.path.join(out_dir, f)) for f in sorted(os.listdir(out_dir))]


def output_step(path):
    m = onnx.load(path)
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in m.graph.initializer}
    producer = {o: n for n in m.graph.node for o in n.output}
    n = producer.get(m.graph.output[0].name)
    return float(inits[n.input[1]]) if n is not None and n.op_type == "DequantizeLinear" else float("nan")


CLOSE_NS_PER_LINE = 2.0  # bench/core_latency.cpp's streamed figure: about 0.7-1.0 close, 3+ far


def streamed_ns_per_line(probe):
    try:
        c = subprocess.run(B.TIMED_PREFIX + [probe], capture_output=True, text=True, timeout=60)
        return float(c.stdout.split()[1])
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        return float("nan")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join(REPO, "build", "bench"))
    p.add_argument("--kiln", default=os.path.join(REPO, "build", "bin", "kiln"))
    p.add_argument("--python", default=sys.executable, help="python that has onnxruntime")
    p.add_argument("--models", default="resnet50,mobilenet_v2")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--runs", type=int, default=10)
    B.add_timing_args(p)
    p.add_argument("--calibration-samples", type=int, default=8,
                   help="how many of the 8 inputs kiln's own --precision int8 calibrates on")
    p.add_argument("--no-qdq", action="store_true", help="do not compile or time ORT's QDQ model in kiln")
    p.add_argument("--cpu-isa", choices=["native", "avx2", "portable"], default="native",
                   help="KILN_CPU_ISA for kiln's compiles and runs (docs/reference/environment.md): avx2 measures kiln as on "
                        "a CPU without AVX-512; ONNX Runtime keeps the CPU's own kernels")
    a = p.parse_args()
    B.apply_timing_args(a)
    if a.cpu_isa != "native":
        os.environ["KILN_CPU_ISA"] = a.cpu_isa  # inherited by every kiln compile and executable
        B.log(f"kiln's kernels capped at {a.cpu_isa} (KILN_CPU_ISA); ONNX Runtime's are not, so kiln/ORT is not "
              f"an {a.cpu_isa} machine's ratio")
    models = [m for m in a.models.split(",") if m]
    threads = [int(t) for t in a.threads.split(",")]
    model_dir = os.path.join(a.out, "models")
    manifest = B.generate_models(a.python, model_dir, [1], models)
    probe = B.build_core_latency(a.out) if any(t > 1 for t in threads) else None
    rows = []
    for name in models:
        entry = next(e for e in manifest.values() if e["model"] == name and e["batch"] in (1, None))
        work = os.path.join(a.out, "work", f"{name}_int8")
        inputs = os.path.join(work, "inputs")
        B.link_inputs(model_dir, entry, inputs)
        fp32 = os.path.join(model_dir, entry["file"])
        qdq = os.path.join(model_dir, entry["file"].replace(".onnx", ".qdq.onnx"))
        B.log(f"{name}: quantizing with onnxruntime.quantization")
        quantize(fp32, qdq, entry, model_dir)
        exe_f = compile_model(a, fp32, os.path.join(work, "kiln_fp32"))
        exe_q = None if a.no_qdq else compile_model(a, qdq, os.path.join(work, "kiln_int8"))
        exe_s = exe_full = None
        if kiln_static_int8(a):  # kiln's own static quantization of the fp32 model
            calib = write_calibration(entry, model_dir, os.path.join(work, "calibration"),
                                      a.calibration_samples)
            reduced = ["--weight-range", "reduced"] if kiln_weight_range(a) else []
            exe_s = compile_model(a, fp32, os.path.join(work, "kiln_int8_static"),
                                  ["--precision", "int8", "--calibration", calib] + reduced)
            if kiln_weight_range(a) and not a.no_qdq:  # and with full-range weights, side by side
                exe_full = compile_model(a, fp32, os.path.join(work, "kiln_int8_static_full"),
                                         ["--precision", "int8", "--calibration", calib, "--weight-range", "full"])
        if exe_q is None:  # --no-qdq: kiln's own quantization is the kiln int8 column
            if exe_s is None:
                raise SystemExit("--no-qdq needs a kiln with --precision int8")
            exe_q, exe_s = exe_s, None
        in_args = B.kiln_input_args(fp32, inputs)
        got_q = outputs(exe_q, in_args, os.path.join(work, "out_int8"))[0].astype(np.float64)
        got_f = outputs(exe_f, in_args, os.path.join(work, "out_fp32"))[0].astype(np.float64)
        ort_dir = os.path.join(work, "out_ort_int8")
        B.run([a.python, os.path.join(REPO, "bench", "ort_time.py"), qdq, inputs, "--runs", "1", "--warmup", "0",
               "--outputs", ort_dir])
        ort_q = np.load(os.path.join(ort_dir, "0.npy")).astype(np.float64)
        # ORT's fused int8 kernels saturate int16 pair sums on x86 without VNNI: also against
        # the QDQ graph run as written (exact integers, then float)
        written_dir = os.path.join(work, "out_ort_as_written")
        B.run([a.python, os.path.join(REPO, "bench", "ort_time.py"), qdq, inputs, "--runs", "1", "--warmup", "0",
               "--as-written", "--outputs", written_dir])
        ort_w = np.load(os.path.join(written_dir, "0.npy")).astype(np.float64)
        step = output_step(qdq)
        err_ort = float(np.abs(got_q - ort_q).max())
        err_written = float(np.abs(got_q - ort_w).max())
        err_fp32 = float(np.abs(got_q - got_f).max() / max(np.abs(got_f).max(), 1e-30))
        top1 = bool(np.argmax(got_q) == np.argmax(got_f))
        static_err = {}  # kiln's own int8 against kiln fp32, relative to the output's scale
        for label, exe in (("static", exe_s), ("static_full", exe_full)):
            if exe:
                got = outputs(exe, in_args, os.path.join(work, f"out_{label}"))[0].astype(np.float64)
                static_err[label] = (float(np.abs(got - got_f).max() / max(np.abs(got_f).max(), 1e-30)),
                                     bool(np.argmax(got) == np.argmax(got_f)))
                B.log(f"{name}: kiln --precision int8 ({label}) vs kiln fp32 {static_err[label][0]:.2e} of scale, "
                      f"same top-1: {static_err[label][1]}")
        B.log(f"{name}: kiln int8 vs ORT int8 max abs {err_ort:.3g} ({err_ort / step:.2f} steps), vs ORT "
              f"running the QDQ graph as written {err_written:.3g} ({err_written / step:.2f} steps); "
              f"vs kiln fp32 {err_fp32:.2e} of scale, same top-1: {top1}")
        for t in threads:
            kf, kq, oq, of, kf_cpu, kq_cpu, oq_cpu, ks, ks_cpu = [], [], [], [], [], [], [], [], []
            kw, kw_cpu = [], []  # kiln's own int8, full-range weights
            cores = []  # the probe before each round (ns a line), at more than one thread
            for _ in range(a.rounds):
                if t > 1:
                    cores.append(streamed_ns_per_line(probe))
                wall, cpu = B.time_kiln(exe_f, in_args, t, a.runs)
                kf.append(wall)
                kf_cpu.append(cpu)
                wall, cpu = B.time_kiln(exe_q, in_args, t, a.runs)
                kq.append(wall)
                kq_cpu.append(cpu)
                if exe_s:
                    wall, cpu = B.time_kiln(exe_s, in_args, t, a.runs)
                    ks.append(wall)
                    ks_cpu.append(cpu)
                if exe_full:
                    wall, cpu = B.time_kiln(exe_full, in_args, t, a.runs)
                    kw.append(wall)
                    kw_cpu.append(cpu)
                wall, cpu = time_ort(a, qdq, inputs, t)
                oq.append(wall)
                oq_cpu.append(cpu)
                of.append(B.time_ort(a, fp32, inputs, t))
            row = dict(model=name, batch=1, threads=t, kiln_fp32_ms=statistics.median(kf),
                       kiln_int8_ms=statistics.median(kq), ort_int8_ms=statistics.median(oq),
                       ort_fp32_ms=statistics.median(of), kiln_fp32_cpu_ms=statistics.median(kf_cpu),
                       kiln_int8_cpu_ms=statistics.median(kq_cpu), ort_int8_cpu_ms=statistics.median(oq_cpu),
                       int8_vs_ort_steps=err_ort / step, int8_vs_ort_as_written_steps=err_written / step,
                       int8_vs_fp32_rel=err_fp32, same_top1=top1)
            row.update(kiln_fp32_rounds_ms=kf, kiln_int8_rounds_ms=kq, ort_int8_rounds_ms=oq, ort_fp32_rounds_ms=of)
            if cores:
                row["cores_ns_per_line_rounds"] = cores
                close = [k / o for k, o, c in zip(kq, oq, cores) if c < CLOSE_NS_PER_LINE]
                row["close_rounds"] = len(close)
                if close:
                    row["int8_over_ort_int8_paired_close"] = statistics.median(close)
            row["int8_over_fp32"] = row["kiln_int8_ms"] / row["kiln_fp32_ms"]
            # CPU time: what the cores spent on each, meaningful on a shared machine too.
            row["int8_over_fp32_cpu"] = row["kiln_int8_cpu_ms"] / row["kiln_fp32_cpu_ms"]
            row["int8_over_ort_int8"] = row["kiln_int8_ms"] / row["ort_int8_ms"]
            # The median of each round's own ratio: a round's processes run seconds apart.
            row["int8_over_ort_int8_paired"] = statistics.median(k / o for k, o in zip(kq, oq))
            row["int8_over_ort_int8_cpu"] = row["kiln_int8_cpu_ms"] / row["ort_int8_cpu_ms"]
            if exe_s:
                row["kiln_static_int8_ms"] = statistics.median(ks)
                row["kiln_static_int8_cpu_ms"] = statistics.median(ks_cpu)
                row["static_over_fp32_cpu"] = row["kiln_static_int8_cpu_ms"] / row["kiln_fp32_cpu_ms"]
                row["static_over_ort_int8_cpu"] = row["kiln_static_int8_cpu_ms"] / row["ort_int8_cpu_ms"]
                row["static_over_ort_int8_paired"] = statistics.median(k / o for k, o in zip(ks, oq))
                row["static_vs_fp32_rel"], row["static_same_top1"] = static_err["static"]
            if exe_full:
                row["kiln_static_full_int8_ms"] = statistics.median(kw)
                row["kiln_static_full_int8_cpu_ms"] = statistics.median(kw_cpu)
                row["static_full_over_ort_int8_paired"] = statistics.median(k / o for k, o in zip(kw, oq))
                row["static_full_vs_fp32_rel"], row["static_full_same_top1"] = static_err["static_full"]
            B.log(f"{name} threads {t}: kiln fp32 {row['kiln_fp32_ms']:.2f} ms, kiln int8 "
                  f"{row['kiln_int8_ms']:.2f} ms, ORT int8 {row['ort_int8_ms']:.2f} ms, ORT fp32 "
                  f"{row['ort_fp32_ms']:.2f} ms")
            rows.append(row)
    with open(os.path.join(a.out, "quant_results.json"), "w") as f:
        json.dump({"machine": B.machine(), "rounds": a.rounds, "runs_per_round": a.runs, "rows": rows}, f, indent=2)
    print("| model | threads | kiln fp32 ms | kiln int8 ms | int8/fp32 (<= 0.55) | ORT int8 ms | kiln/ORT int8 (< 1) "
          "| paired | ORT fp32 ms | int8 vs ORT (steps) | int8 vs ORT as written (steps) "
          "| CPU ms kiln fp32 / kiln int8 / ORT int8 | CPU int8/fp32 | CPU kiln/ORT int8 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['threads']} | {r['kiln_fp32_ms']:.2f} | {r['kiln_int8_ms']:.2f} | "
              f"{r['int8_over_fp32']:.2f} | {r['ort_int8_ms']:.2f} | {r['int8_over_ort_int8']:.2f} | "
              f"{r['int8_over_ort_int8_paired']:.2f} | "
              f"{r['ort_fp32_ms']:.2f} | {r['int8_vs_ort_steps']:.2f} | {r['int8_vs_ort_as_written_steps']:.2f} | "
              f"{r['kiln_fp32_cpu_ms']:.1f} / "
              f"{r['kiln_int8_cpu_ms']:.1f} / {r['ort_int8_cpu_ms']:.1f} | {r['int8_over_fp32_cpu']:.2f} | "
              f"{r['int8_over_ort_int8_cpu']:.2f} |")
    for r in rows:
        if "cores_ns_per_line_rounds" not in r:
            continue
        c = r["cores_ns_per_line_rounds"]
        line = (f"{r['model']} at {r['threads']} threads: the cores streamed a line in {min(c):.2f}-{max(c):.2f} ns "
                f"before the rounds; {r['close_rounds']} of {len(c)} rounds with them close (< {CLOSE_NS_PER_LINE} ns)")
        if "int8_over_ort_int8_paired_close" in r:
            line += f", paired kiln/ORT int8 in those {r['int8_over_ort_int8_paired_close']:.2f}"
        print(line)
    static = [r for r in rows if "kiln_static_int8_ms" in r]
    if static:
        print("\nkiln --precision int8 (its own static quantization of the fp32 model):")
        print("| model | threads | kiln int8 (reduced range) ms | int8/fp32 | kiln/ORT int8, paired | CPU ms | CPU int8/fp32 "
              "| CPU kiln/ORT int8 | vs fp32 (of scale), same top-1 "
              "| --weight-range full: ms, kiln/ORT paired, vs fp32 |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in static:
            full = (f"{r['kiln_static_full_int8_ms']:.2f}, {r['static_full_over_ort_int8_paired']:.2f}, "
                    f"{r['static_full_vs_fp32_rel']:.2e} {r['static_full_same_top1']}"
                    if "kiln_static_full_int8_ms" in r else "-")
            print(f"| {r['model']} | {r['threads']} | {r['kiln_static_int8_ms']:.2f} | "
                  f"{r['kiln_static_int8_ms'] / r['kiln_fp32_ms']:.2f} | {r['static_over_ort_int8_paired']:.2f} | "
                  f"{r['kiln_static_int8_cpu_ms']:.1f} | {r['static_over_fp32_cpu']:.2f} | "
                  f"{r['static_over_ort_int8_cpu']:.2f} | {r['static_vs_fp32_rel']:.2e} {r['static_same_top1']} | "
                  f"{full} |")


if __name__ == "__main__":
    main()
