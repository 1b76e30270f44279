"""Each convolution of a network as a share of one core's FMA peak: kiln's per-layer efficiency.

    python bench/layer_efficiency.py [--model resnet50] [--isa avx2] [--cpu generic] [--runs 10] [--rounds 3]
                                     [--out build/bench/layers]

Generates the model (bench/models.py, batch 1), compiles it with `kiln compile --cpu CPU`, runs
it on one thread under KILN_CPU_ISA=ISA (`avx2`: kiln's AVX2 kernels on any x86 machine, the
figures issue 37 asks for where no AVX2-only machine is at hand) with `--profile`, and divides
each convolution's multiply-adds (from the model's shapes) by the median and by the best of its
node's times. The peak is bench/peak_fma.cpp's (256-bit FMAs: the AVX2 peak, also on AVX-512
hosts), measured before the first round and after each, its best taken. Winograd layers are counted by the direct convolution's multiply-adds, so they
can exceed 100%.

Prints one row per convolution and a summary per kind (the stem, 1x1, 3x3 stride 1, strided),
with the CPU and its instruction sets. Not a test: nothing fails on a figure.
"""
import argparse
import collections
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402  (bench/bench.py: models, peak, machine)

REPO = B.REPO


def conv_layers(model_path):
    """{node name: (multiply-adds, description, kind)} for every Conv of the ONNX model."""
    import onnx
    from onnx import shape_inference
    m = shape_inference.infer_shapes(onnx.load(model_path))
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in list(m.graph.value_info) + list(m.graph.output) + list(m.graph.input)}
    weights = {i.name: list(i.dims) for i in m.graph.initializer}
    layers = {}
    for n in m.graph.node:
        if n.op_type != "Conv" or n.input[1] not in weights or n.output[0] not in shapes:
            continue
        w, y = weights[n.input[1]], shapes[n.output[0]]
        if len(w) != 4 or len(y) != 4:
            continue
        strides = next((list(a.ints) for a in n.attribute if a.name == "strides"), [1, 1])
        group = next((a.i for a in n.attribute if a.name == "group"), 1)
        macs = w[0] * w[1] * w[2] * w[3] * y[0] * y[2] * y[3]
        c_in = w[1] * group
        kind = ("stem" if c_in <= 4 else "depthwise" if group > 1 else
                "strided" if max(strides) > 1 else "1x1" if w[2] * w[3] == 1 else f"{w[2]}x{w[3]} stride 1")
        desc = f"{w[2]}x{w[3]}/{max(strides)} {c_in}->{w[0]} at {y[2]}x{y[3]}"
        layers[n.name] = (macs, desc, kind)
    return layers


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="resnet50", help="a bench/models.py model with convolutions")
    p.add_argument("--isa", default="avx2", choices=["native", "avx2", "portable"],
                   help="KILN_CPU_ISA for the run (native: no cap)")
    p.add_argument("--cpu", default="generic", help="kiln compile --cpu")
    p.add_argument("--runs", type=int, default=10, help="runs a round")
    p.add_argument("--rounds", type=int, default=3, help="rounds of runs, a peak measurement after each")
    p.add_argument("--out", default=os.path.join(REPO, "build", "bench", "layers"))
    p.add_argument("--kiln", default=os.path.join(REPO, "build", "bin", "kiln"))
    p.add_argument("--python", default=os.path.join(REPO, ".venv", "bin", "python"))
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    model_dir = os.path.join(a.out, "models")
    entry = B.generate_models(a.python, model_dir, [1], [a.model])[a.model]
    model = os.path.join(model_dir, entry["file"])
    exe_dir = os.path.join(a.out, f"{a.model}_{a.cpu}")
    B.log(f"compiling {a.model} (--cpu {a.cpu})")
    B.run([a.kiln, "compile", model, "--cpu", a.cpu, "--name", "m", "-o", exe_dir])
    # The machine's other tenants slow some runs by 10-20% (the peak itself read 86-95 GFLOP/s
    # within minutes): rounds of runs alternate with peak measurements, and each layer is
    # reported by its median and its best time over all runs against the best peak seen.
    peaks = [B.measure_peak(a.out)]
    inputs = [arg for i in entry["inputs"] for arg in ("-i", f"{i['name']}={os.path.join(model_dir, i['file'])}")]
    env = dict(os.environ)
    if a.isa != "native":
        env["KILN_CPU_ISA"] = a.isa
    import subprocess
    times = collections.defaultdict(list)
    run_ms = []
    for r in range(a.rounds):
        B.log(f"round {r + 1} of {a.rounds}: {a.runs} runs on one thread (KILN_CPU_ISA={a.isa})")
        trace = os.path.join(a.out, f"{a.model}_{a.isa}.json")
        subprocess.run([os.path.join(exe_dir, "m"), *inputs, "--threads", "1", "--warmup", "2", "--repeat",
                        str(a.runs), "--profile", trace], check=True, capture_output=True, env=env)
        for e in json.load(open(trace))["traceEvents"]:
            if e.get("ph") != "X":
                continue
            (run_ms if e.get("cat") == "run" else times[e["name"]]).append(e["dur"] / 1000.0)
        peaks.append(B.measure_peak(a.out))
    peak = max(peaks)
    layers = conv_layers(model)
    peak_macs = peak / 2.0
    rows, by_kind = [], collections.defaultdict(lambda: [0.0, 0.0, 0.0])
    for name, (macs, desc, kind) in layers.items():
        if name not in times:
            continue  # fused away, or renamed
        ms, best = statistics.median(times[name]), min(times[name])
        g = macs / ms / 1e6
        rows.append((name, desc, kind, ms, g, g / peak_macs, macs / best / 1e6 / peak_macs))
        by_kind[kind][0] += macs
        by_kind[kind][1] += ms
        by_kind[kind][2] += best
    m = B.machine()
    print(f"\nmachine: {m['cpu']}, {m['cores']} cores; {B.isa_flags()}")
    print(f"{a.model}, batch 1, one thread, KILN_CPU_ISA={a.isa}, kiln compile --cpu {a.cpu}; {a.rounds} rounds of "
          f"{a.runs} runs; whole run: median {statistics.median(run_ms):.1f} ms, best {min(run_ms):.1f} ms")
    print(f"peak (bench/peak_fma.cpp, 256-bit FMA, best of {len(peaks)} measurements: "
          f"{', '.join(f'{x:.1f}' for x in peaks)}): {peak:.1f} GFLOP/s = {peak_macs:.1f} G multiply-adds/s\n")
    print("| layer | shape | median ms | G multiply-adds/s | of the peak | best run's |")
    print("|---|---|--:|--:|--:|--:|")
    for name, desc, kind, ms, g, share, best_share in rows:
        print(f"| {name} | {desc} | {ms:.3f} | {g:.1f} | {100 * share:.0f}% | {100 * best_share:.0f}% |")
    print("\n| kind | median ms | G multiply-adds/s | of the peak | lowest layer | best runs' | lowest layer |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    for kind, (macs, ms, best) in sorted(by_kind.items()):
        g = macs / ms / 1e6
        low = min(r[5] for r in rows if r[2] == kind)
        low_best = min(r[6] for r in rows if r[2] == kind)
        print(f"| {kind} | {ms:.2f} | {g:.1f} | {100 * g / peak_macs:.0f}% | {100 * low:.0f}% | "
              f"{100 * macs / best / 1e6 / peak_macs:.0f}% | {100 * low_best:.0f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
