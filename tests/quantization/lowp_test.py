"""fp16 and bf16 compiles (kiln compile --precision fp16|bf16): half the weight bytes, outputs
within the expected precision of fp32, the digits CNN's accuracy kept, the precision report.

Run: .venv/bin/python tests/quantization/lowp_test.py KILN WORK

Models: models/digits (a CNN trained on scikit-learn's digits, with its held-out test slice and
calibration set) and a MatMul + Conv model written here. Each is compiled in fp32, fp16 and
bf16 with --weights external, so that the weights' size is the size of OUTDIR/model.weights.

Expected precision. kiln rounds each float weight of 16 elements or more to the nearest fp16
(bf16) value and computes in fp32. So:
  1. kiln's fp16 (bf16) output equals ONNX Runtime's on the model with those weights rounded the
     same way (done here in numpy) within fp32's tolerance: |kiln - ort| <= 1e-4 + 1e-3 |ort|.
  2. Against fp32, one layer y = sum_k w_k x_k + b with each w rounded to w (1 + d), |d| <= u
     (u = 2^-11 for fp16, 2^-8 for bf16), is off by at most u * (sum_k |w_k| |x_k| + |b|): the
     same layer run by ONNX Runtime with |W|, |b| on |x|. The MatMul and the Conv are checked
     against that bound (plus fp32's 1e-4 + 1e-3 |ort|).
  3. The digits CNN's test accuracy under fp16 and bf16 stays within 1 point of fp32's (ONNX
     Runtime on the committed test slice), and both are printed.

Native bf16. On a CPU with AVX512_BF16 a bf16 MatMul or Gemm with a constant B, and a 1x1 Conv
that runs channel-blocked, compute in bf16 (kiln/rt/gemm_bf16.h): their input is rounded to
bf16 too (test_pointwise covers the Convs: two 1x1s with bias, Relu and a residual). There the reference of 1. also rounds
those A inputs (a Cast to bfloat16 and back, which ONNX Runtime rounds to nearest even), the
bound of 2. doubles for the MatMul's output (u |W||x| for the weights, as much again for x), and
each bf16 executable runs a second time with KILN_NATIVE_BF16=0, the fp32 fallback that other
CPUs take, checked against the weights-only reference.
"""
import json
import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from kiln_exe import check, compile_model, finish, run_exe, run_kiln

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DIGITS = os.path.join(REPO, "models", "digits")
UNIT_ROUNDOFF = {"fp16": 2.0 ** -11, "bf16": 2.0 ** -8}
MIN_HALVED = 16  # kiln keeps smaller float constants in fp32 (codegen/cpp/weight_blob.cpp)


def round_to(precision, a):
    a = np.asarray(a, dtype=np.float32)
    if precision == "fp16":
        return a.astype(np.float16).astype(np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16  # nearest, ties to even
    return bits.astype(np.uint32).view(np.float32)


def cpu_has_native_bf16():
    """What kiln's runtime decides (gemm_bf16_native): AVX-512 BW, VL and BF16, not disabled
    (KILN_NATIVE_BF16=0) and not capped below AVX-512 (KILN_CPU_ISA, kiln/rt/x86_dispatch.h)."""
    if os.environ.get("KILN_NATIVE_BF16") == "0" or os.environ.get("KILN_CPU_ISA", "native") not in ("", "native"):
        return False
    try:
        flags = next(l for l in open("/proc/cpuinfo") if l.startswith("flags")).split()
    except (OSError, StopIteration):
        return False
    return all(f in flags for f in ("avx512f", "avx512bw", "avx512vl", "avx512_bf16"))


NATIVE_BF16 = cpu_has_native_bf16()
FALLBACK = {"KILN_NATIVE_BF16": "0"}


def with_bf16_gemm_inputs(model, ops=("MatMul", "Gemm")):
    """A copy of `model` whose nodes of `ops` with a constant weight (input 1) of MIN_HALVED or
    more elements read their input 0 rounded to bf16 (Cast to bfloat16 and back): what native
    bf16 computes for MatMul and Gemm, and for the 1x1 Convs of test_pointwise."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    sizes = {i.name: int(np.prod(i.dims)) for i in m.graph.initializer}
    nodes = []
    for k, n in enumerate(m.graph.node):
        if n.op_type in ops and sizes.get(n.input[1], 0) >= MIN_HALVED:
            h, r = f"bf16_in_{k}", f"bf16_round_{k}"
            nodes += [helper.make_node("Cast", [n.input[0]], [h], to=TensorProto.BFLOAT16),
                      helper.make_node("Cast", [h], [r], to=TensorProto.FLOAT)]
            n.input[0] = r
        nodes.append(n)
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    return m


def rounded_reference(precision, model, feeds, native=None, ops=("MatMul", "Gemm")):
    """ONNX Runtime on `model` with its weights rounded as kiln stores them and, for native
    bf16 (default: whether this CPU computes bf16 natively), the inputs of its `ops` too."""
    native = NATIVE_BF16 if native is None else native
    m = with_weights(model, lambda w: round_to(precision, w))
    return ort_run(with_bf16_gemm_inputs(m, ops) if precision == "bf16" and native else m, feeds)


def with_weights(model, fn):
    """A copy of `model` whose float initializers of MIN_HALVED or more elements are fn(w)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for init in m.graph.initializer:
        w = numpy_helper.to_array(init)
        if w.dtype == np.float32 and w.size >= MIN_HALVED:
            init.CopyFrom(numpy_helper.from_array(fn(w).astype(np.float32), init.name))
    return m


def ort_run(model, feeds):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    s = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))


def kiln(*args, expect_ok=True):
    return run_kiln(KILN, *args, expect_ok=expect_ok)


def within(a, b, bound):
    return bool(np.all(np.abs(a - b) <= bound + 1e-4 + 1e-3 * np.abs(b)))


def check_sizes(name, sizes):
    for p in ("fp16", "bf16"):
        ratio = sizes[p] / sizes["fp32"]
        check(0.45 <= ratio <= 0.55, f"{name} {p}: weights {sizes[p]} bytes, fp32 {sizes['fp32']} ({ratio:.3f}x)")


def matmul_conv_model():
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((256, 384)) / 16).astype(np.float32)
    b = rng.standard_normal(384).astype(np.float32)
    wc = (rng.standard_normal((32, 8, 3, 3)) / 8).astype(np.float32)
    bc = rng.standard_normal(32).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["xw"]), helper.make_node("Add", ["xw", "b"], ["y"]),
         helper.make_node("Conv", ["img", "wc", "bc"], ["z"], pads=[1, 1, 1, 1])],
        "matmul_conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 256]),
         helper.make_tensor_value_info("img", TensorProto.FLOAT, [2, 8, 12, 12])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 384]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 32, 12, 12])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"), numpy_helper.from_array(wc, "wc"),
         numpy_helper.from_array(bc, "bc")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_matmul_conv():
    model = matmul_conv_model()
    path = os.path.join(WORK, "matmul_conv.onnx")
    onnx.save(model, path)
    rng = np.random.default_rng(1)
    feeds = {"x": rng.uniform(-1, 1, (4, 256)).astype(np.float32),
             "img": rng.uniform(-1, 1, (2, 8, 12, 12)).astype(np.float32)}
    fp32 = ort_run(model, feeds)
    magnitude = ort_run(with_weights(model, np.abs), {k: np.abs(v) for k, v in feeds.items()})
    sizes = {}
    for p in ("fp32", "fp16", "bf16"):
        out = os.path.join(WORK, f"matmul_conv_{p}")
        sizes[p] = compile_model(KILN, path, out, p)
        got = run_exe(out, [feeds["x"], feeds["img"]], ["y", "z"])
        if p == "fp32":
            for n in ("y", "z"):
                check(within(got[n], fp32[n], 0), f"matmul_conv fp32 '{n}' matches ONNX Runtime")
            continue
        native = p == "bf16" and NATIVE_BF16
        runs = [(got, native, "")]
        if native:  # the fp32 fallback of CPUs without native bf16, on this one
            runs.append((run_exe(out, [feeds["x"], feeds["img"]], ["y", "z"], env=FALLBACK), False,
                         " (KILN_NATIVE_BF16=0)"))
        for result, computes_bf16, how in runs:
            rounded = rounded_reference(p, model, feeds, computes_bf16)
            for n in ("y", "z"):
                err = float(np.abs(result[n] - fp32[n]).max())
                # The MatMul's x is rounded as well when computed in bf16: twice the bound.
                u = UNIT_ROUNDOFF[p] * (2 if computes_bf16 and n == "y" else 1)
                bound = u * magnitude[n]
                check(within(result[n], rounded[n], 0),
                      f"matmul_conv {p}{how} '{n}' matches ONNX Runtime on {p}-rounded weights"
                      + (" and MatMul input" if computes_bf16 and n == "y" else "")
                      + f" (max diff {float(np.abs(result[n] - rounded[n]).max()):.3g})")
                check(within(result[n], fp32[n], bound),
                      f"matmul_conv {p}{how} '{n}' vs fp32: max abs error {err:.3g} within "
                      f"{'2u' if u > UNIT_ROUNDOFF[p] else 'u'}*|W||x| "
                      f"(u = {UNIT_ROUNDOFF[p]:.3g}, largest bound {float(bound.max()):.3g})")
    check_sizes("matmul_conv", sizes)


def pointwise_model():
    """Two 1x1 Convs over 32 and 64 channels, bias, Relu, a residual Add and Relu: what kiln's
    layout_nchwc runs blocked (kiln.ConvNchwc), and bf16 natively on AVX512_BF16 CPUs."""
    rng = np.random.default_rng(2)
    w1 = (rng.standard_normal((64, 32, 1, 1)) / 6).astype(np.float32)
    w2 = (rng.standard_normal((32, 64, 1, 1)) / 8).astype(np.float32)
    b1, b2 = rng.standard_normal(64).astype(np.float32), rng.standard_normal(32).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w1", "b1"], ["h"]), helper.make_node("Relu", ["h"], ["hr"]),
         helper.make_node("Conv", ["hr", "w2", "b2"], ["o"]), helper.make_node("Add", ["o", "x"], ["s"]),
         helper.make_node("Relu", ["s"], ["y"])],
        "pointwise", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 32, 10, 10])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 32, 10, 10])],
        [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_pointwise():
    model = pointwise_model()
    path = os.path.join(WORK, "pointwise.onnx")
    onnx.save(model, path)
    feeds = {"x": np.random.default_rng(3).uniform(-1, 1, (2, 32, 10, 10)).astype(np.float32)}
    fp32 = ort_run(model, feeds)["y"]
    sizes = {}
    for p in ("fp32", "fp16", "bf16"):
        out = os.path.join(WORK, f"pointwise_{p}")
        sizes[p] = compile_model(KILN, path, out, p)
        runs = [(run_exe(out, [feeds["x"]], ["y"])["y"], p == "bf16" and NATIVE_BF16, "")]
        if runs[0][1]:
            runs.append((run_exe(out, [feeds["x"]], ["y"], env=FALLBACK)["y"], False, " (KILN_NATIVE_BF16=0)"))
        for got, computes_bf16, how in runs:
            ref = fp32 if p == "fp32" else rounded_reference(p, model, feeds, computes_bf16, ("Conv",))["y"]
            check(within(got, ref, 0), f"pointwise 1x1 convs {p}{how} match ONNX Runtime"
                  + ("" if p == "fp32" else f" on {p}-rounded weights") + (" and conv inputs" if computes_bf16 else "")
                  + f" (max diff {float(np.abs(got - ref).max()):.3g}; against fp32 {float(np.abs(got - fp32).max()):.3g}"
                  f", largest |y| {float(np.abs(fp32).max()):.3g})")
    check_sizes("pointwise", sizes)


def test_digits():
    model = onnx.load(os.path.join(DIGITS, "model.onnx"))
    x, labels = np.load(os.path.join(DIGITS, "test_x.npy")), np.load(os.path.join(DIGITS, "test_y.npy"))
    fp32 = ort_run(model, {"image": x})["logits"]
    accuracy = {"onnxruntime fp32": float((fp32.argmax(1) == labels).mean())}
    sizes = {}
    for p in ("fp32", "fp16", "bf16"):
        out = os.path.join(WORK, f"digits_{p}")
        sizes[p] = compile_model(KILN, os.path.join(DIGITS, "model.onnx"), out, p, "--dim", f"batch={len(x)}")
        got = run_exe(out, [x], ["logits"])["logits"]
        accuracy[p] = float((got.argmax(1) == labels).mean())
        reference = fp32 if p == "fp32" else rounded_reference(p, model, {"image": x})["logits"]
        native = p == "bf16" and NATIVE_BF16
        check(within(got, reference, 0), f"digits {p} logits match ONNX Runtime"
              + ("" if p == "fp32" else f" on {p}-rounded weights") + (" and Gemm inputs" if native else "")
              + f" (max abs error against fp32 "
              f"{float(np.abs(got - fp32).max()):.3g}, largest |logit| {float(np.abs(fp32).max()):.3g})")
        if native:
            fallback = run_exe(out, [x], ["logits"], env=FALLBACK)["logits"]
            accuracy["bf16 KILN_NATIVE_BF16=0"] = float((fallback.argmax(1) == labels).mean())
            check(within(fallback, rounded_reference(p, model, {"image": x}, False)["logits"], 0),
                  "digits bf16 with KILN_NATIVE_BF16=0 (fp32 compute) matches ONNX Runtime on bf16-rounded weights")
    print("digits test accuracy on %d images: %s" % (len(x), ", ".join(f"{k} {v * 100:.2f}%" for k, v in accuracy.items())))
    for p in [k for k in accuracy if k != "onnxruntime fp32"]:
        diff = abs(accuracy[p] - accuracy["onnxruntime fp32"]) * 100
        check(diff <= 1.0, f"digits {p} accuracy {accuracy[p] * 100:.2f}% within 1 point of fp32 "
              f"{accuracy['onnxruntime fp32'] * 100:.2f}%")
    check_sizes("digits", sizes)


def test_report():
    out, report = os.path.join(WORK, "digits_report"), os.path.join(WORK, "report.json")
    p = kiln("compile", os.path.join(DIGITS, "model.onnx"), "-o", out, "--dim", "batch=1", "--emit", "exe",
             "--precision", "bf16", "--calibration", os.path.join(DIGITS, "calibration"), "--report", report, "-v")
    r = json.load(open(report))
    print(json.dumps(r, indent=1))
    check("precision bf16" in p.stderr, "-v prints the report")
    check(r["precision"] == "bf16" and r["samples"] == 32, "report: bf16 on the 32 calibration samples")
    check(0.45 <= r["weight_bytes"] / r["weight_bytes_fp32"] <= 0.55, "report: weight bytes halved")
    (logits,) = r["outputs"]
    check(logits["name"] == "logits" and logits["elements"] == 320, "report: the 'logits' output, 32 x 10 values")
    check(0 < logits["mean_abs_error"] <= logits["max_abs_error"] < 0.05 * logits["max_abs_fp32"],
          "report: bf16 errors nonzero and small against the largest logit")
    check(logits.get("top1_agreement", 0) >= 0.95, "report: top-1 agreement")


def test_errors():
    model = os.path.join(DIGITS, "model.onnx")
    out = os.path.join(WORK, "errors")
    bad = os.path.join(WORK, "bad_calibration")
    os.makedirs(os.path.join(bad, "sample_0"))
    cases = [(["--precision", "fp8"], "--precision"),
             (["--calibration", os.path.join(WORK, "missing")], "not a directory"),
             (["--calibration", bad], "sample_0 has no image.npy"),
             (["--report", os.path.join(WORK, "missing", "r.json")], "no directory")]
    for extra, message in cases:
        p = kiln("compile", model, "-o", out, "--dim", "batch=1", *extra, expect_ok=False)
        check(p.returncode > 0 and message in p.stderr,
              f"kiln compile {' '.join(extra[:1])}: fails with '{message}'")
    with open(os.path.join(bad, "sample_0", "image.npy"), "wb") as f:
        f.write(b"\x93NUMPY garbage")
    p = kiln("compile", model, "-o", out, "--dim", "batch=1", "--calibration", bad, expect_ok=False)
    check(p.returncode == 1 and "image.npy" in p.stderr, "a corrupt calibration .npy fails naming the file")
    np.save(os.path.join(bad, "sample_0", "image.npy"), np.zeros((2, 1, 8, 8), np.float32))
    p = kiln("compile", model, "-o", out, "--dim", "batch=1", "--calibration", bad, expect_ok=False)
    check(p.returncode == 1 and "[2, 1, 8, 8]" in p.stderr, "a calibration .npy of the wrong shape fails naming it")


if __name__ == "__main__":
    KILN, WORK = sys.argv[1], sys.argv[2]
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    test_errors()
    test_matmul_conv()
    test_pointwise()
    test_digits()
    test_report()
    print("native bf16 compute on this CPU:", NATIVE_BF16)
    finish()
