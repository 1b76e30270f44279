"""int8-dynamic compiles (kiln compile --precision int8-dynamic): MatMul/Gemm weights stored as
int8 (a quarter of the bytes), activations quantized per run; outputs checked against ONNX
Runtime on the same model quantized by onnxruntime.quantization.quantize_dynamic and against
fp32 within a bound derived from the quantization steps.

Run: .venv/bin/python tests/quantization/dynamic_test.py KILN WORK

Expected precision. For one output y[n] = sum_k x[k] W[k, n] (+ b[n]), kiln uses
  x^[k] = (q[k] - zp) * sx    (u8, sx = (max(x, 0) - min(x, 0)) / 255 of the whole tensor, per run)
  W^[k, n] = Wq[k, n] * sw[n] (s8 in [-127, 127], sw[n] = max_k |W[k, n]| / 127)
with |x^ - x| <= sx (half a step from rounding, up to one where the rounded zero point makes
the largest value saturate) and |W^ - W| <= sw[n] / 2. So
  |y^[n] - y[n]| <= sx * sum_k |W[k, n]| + sw[n] / 2 * sum_k |x[k]| + K * sx * sw[n] / 2,
which the single-layer model is checked against (plus fp32 noise). The check also requires the
error to be at least 1% of that bound somewhere, so that an fp32 compile would fail it.

Against ONNX Runtime (same quantization of the same model, DynamicQuantizeLinear +
MatMulInteger + the float scale), the integer products agree; what differs is float rounding
of the scales and products. The tolerance is 1e-4 + 1e-4 |y| for the single layer (measured: 0)
and a tenth of ORT's error against fp32 for the transformer (measured: 4.8e-7). ORT's
quantize_dynamic leaves Gemm in fp32, so the Gemm is checked against the same quantization
emulated in numpy (exact integer products, the scales in f32) within float rounding.
"""
import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic
from kiln_exe import check, compile_model, finish, run_exe, run_kiln

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests"))
from ort_int8 import exact_integer_run  # noqa: E402


def ort_quantized_run(model_path, feeds):
    """ORT's quantize_dynamic model's outputs with exact integer products (tests/ort_int8.py)."""
    outputs, engine = exact_integer_run(model_path, feeds)
    print(f"reference for {os.path.basename(model_path)}: {engine}")
    return outputs


def ort_run(model_path, feeds):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    s = ort.InferenceSession(model_path, opts, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))


def ort_dynamic(model_path):
    out = model_path.replace(".onnx", ".dyn.onnx")
    quantize_dynamic(model_path, out, per_channel=True, weight_type=QuantType.QInt8)
    return out


def kiln(*args, expect_ok=True):
    return run_kiln(KILN, *args, expect_ok=expect_ok)


def step(x):
    """DynamicQuantizeLinear's scale for x."""
    return (max(float(x.max()), 0.0) - min(float(x.min()), 0.0)) / 255


def layer_bound(x, w):
    """The bound above for x [M, K] times w [K, N]: [M, N]."""
    sx, sw = step(x), np.abs(w).max(axis=0) / 127
    return (sx * np.abs(w).sum(axis=0)[None, :] + np.abs(x).sum(axis=1)[:, None] * sw[None, :] / 2
            + x.shape[1] * sx * sw[None, :] / 2)


def emulate(x, w, bias):
    """The quantized layer in numpy: DynamicQuantizeLinear, exact integer products, f32 scale."""
    sx = np.float32(step(x))
    zp = np.clip(np.round(-min(float(x.min()), 0.0) / sx), 0, 255)
    q = np.clip(np.round(x / sx) + zp, 0, 255)
    ws = (np.abs(w).max(axis=0) / np.float32(127)).astype(np.float32)
    wq = np.clip(np.round(w / ws), -127, 127)
    acc = (q.astype(np.int64) - int(zp)) @ wq.astype(np.int64)
    return acc.astype(np.float32) * (sx * ws) + bias


def layers_model():
    """y = Relu(x @ W + b) and g = Gemm(x2, B, C; transB, alpha 0.5, beta 2)."""
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((256, 384)) / 16).astype(np.float32)
    b = rng.standard_normal(384).astype(np.float32)
    gb = (rng.standard_normal((96, 64)) / 8).astype(np.float32)  # [N, K]: transB
    gc = rng.standard_normal(96).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["xw"]), helper.make_node("Add", ["xw", "b"], ["xwb"]),
         helper.make_node("Relu", ["xwb"], ["y"]),
         helper.make_node("Gemm", ["x2", "gb", "gc"], ["g"], transB=1, alpha=0.5, beta=2.0)],
        "layers",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 256]),
         helper.make_tensor_value_info("x2", TensorProto.FLOAT, [3, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 384]),
         helper.make_tensor_value_info("g", TensorProto.FLOAT, [3, 96])],
        [numpy_helper.from_array(a, n) for a, n in ((w, "w"), (b, "b"), (gb, "gb"), (gc, "gc"))])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), (w, b), (gb.T * 0.5, 2 * gc)


def test_layers():
    model, (w, b), (g_weight, g_bias) = layers_model()
    path = os.path.join(WORK, "layers.onnx")
    onnx.save(model, path)
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (4, 256)).astype(np.float32)
    x[0, 0] = 3.0  # an asymmetric range: the zero point is not 128
    x2 = rng.uniform(-2, 0.5, (3, 64)).astype(np.float32)
    feeds = {"x": x, "x2": x2}
    fp32 = ort_run(path, feeds)
    ort_q = ort_quantized_run(ort_dynamic(path), feeds)
    sizes = {}
    for p in ("fp32", "int8-dynamic"):
        sizes[p] = compile_model(KILN, path, os.path.join(WORK, f"layers_{p}"), p)
    got = run_exe(os.path.join(WORK, "layers_int8-dynamic"), [x, x2], ["y", "g"])
    # The Relu can only shrink the difference; the bias adds no error.
    for name, inp, weight in (("y", x, w), ("g", x2, g_weight)):
        bound = layer_bound(inp, weight)
        err = np.abs(got[name] - fp32[name])
        check(bool(np.all(err <= bound + 1e-5 + 1e-5 * np.abs(fp32[name]))),
              f"layers '{name}' vs fp32: max abs error {float(err.max()):.4g} within the quantization bound "
              f"(largest {float(bound.max()):.4g}, largest |y| {float(np.abs(fp32[name]).max()):.4g})")
        check(float((err / bound).max()) >= 0.01,
              f"layers '{name}': quantized (error reaches {float((err / bound).max()):.3f} of the bound)")
        mine = emulate(inp, weight, b if name == "y" else g_bias)
        if name == "y":
            mine = np.maximum(mine, 0)
            diff = np.abs(got[name] - ort_q[name])  # ORT's quantize_dynamic leaves Gemm in fp32
            check(bool(np.all(diff <= 1e-4 + 1e-4 * np.abs(ort_q[name]))),
                  f"layers '{name}' vs ONNX Runtime quantize_dynamic: max abs diff {float(diff.max()):.3g} "
                  f"(float rounding only: 1e-4 + 1e-4 |y|, against a quantization bound of {float(bound.max()):.3g})")
        diff = np.abs(got[name] - mine)
        check(bool(np.all(diff <= 1e-5 + 1e-5 * np.abs(mine))),
              f"layers '{name}' vs the same quantization in numpy: max abs diff {float(diff.max()):.3g}")
    quantized = 4 * (256 * 384 + 64 * 96)  # the fp32 bytes of the two weight matrices
    others = sizes["fp32"] - quantized
    ratio = (sizes["int8-dynamic"] - others) / quantized
    check(ratio <= 0.3, f"layers: weights {sizes['fp32']} -> {sizes['int8-dynamic']} bytes; the two matrices "
          f"{quantized} -> {sizes['int8-dynamic'] - others} bytes ({ratio:.3f}x)")


def test_transformer():
    path = os.path.join(REPO, "models", "transformer", "model.onnx")
    inputs = [np.load(os.path.join(REPO, "models", "transformer", f"input_{k}.npy")) for k in range(2)]
    feeds = {"input_0": inputs[0], "input_1": inputs[1]}
    fp32 = ort_run(path, feeds)
    (name,) = fp32
    dyn = os.path.join(WORK, "transformer.onnx")
    onnx.save(onnx.load(path), dyn)
    ort_q = ort_quantized_run(ort_dynamic(dyn), feeds)[name]
    sizes = {p: compile_model(KILN, path, os.path.join(WORK, f"transformer_{p}"), p) for p in ("fp32", "int8-dynamic")}
    got = run_exe(os.path.join(WORK, "transformer_int8-dynamic"), inputs, [name])[name]
    ref = fp32[name]
    err, ort_err = float(np.abs(got - ref).max()), float(np.abs(ort_q - ref).max())
    diff = float(np.abs(got - ort_q).max())
    scale = float(np.abs(ref).max())
    check(1e-4 * scale < err < 0.05 * scale,
          f"transformer vs fp32: max abs error {err:.4g} (largest |y| {scale:.4g}; ONNX Runtime's quantize_dynamic "
          f"{ort_err:.4g}): quantized, and within 5% of the largest value")
    check(err <= 1.5 * ort_err + 1e-5, "transformer: kiln's quantization error no worse than 1.5x ONNX Runtime's")
    check(diff <= 0.1 * ort_err + 1e-5,
          f"transformer vs ONNX Runtime quantize_dynamic: max abs diff {diff:.3g} (tolerance a tenth of ORT's error "
          f"against fp32, {0.1 * ort_err:.3g})")
    check(sizes["int8-dynamic"] < 0.5 * sizes["fp32"],
          f"transformer: weights {sizes['fp32']} -> {sizes['int8-dynamic']} bytes "
          f"({sizes['int8-dynamic'] / sizes['fp32']:.3f}x; LayerNorm, biases and embeddings stay fp32)")


def test_report():
    report = os.path.join(WORK, "report.json")
    p = kiln("compile", os.path.join(WORK, "layers.onnx"), "-o", os.path.join(WORK, "layers_report"), "--emit", "exe",
             "--precision", "int8-dynamic", "--report", report, "-v")
    r = json.load(open(report))
    print(json.dumps(r, indent=1))
    check("int8-dynamic" in p.stderr and r["precision"] == "int8-dynamic", "report: int8-dynamic, printed by -v")
    check(r["weight_bytes"] <= 0.3 * r["weight_bytes_fp32"] + 4 * 500, "report: weight bytes about a quarter")
    for o in r["outputs"]:
        check(0 < o["mean_abs_error"] <= o["max_abs_error"] < 0.05 * o["max_abs_fp32"],
              f"report '{o['name']}': errors nonzero and small ({o['max_abs_error']:.3g} of {o['max_abs_fp32']:.3g})")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: dynamic_test.py KILN WORK")
    KILN, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    os.makedirs(WORK, exist_ok=True)
    test_layers()
    test_transformer()
    test_report()
    finish()
