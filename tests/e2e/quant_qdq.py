"""QDQ models from onnxruntime.quantization (static, per-channel s8 weights, u8 and s8
activations), imported by kiln: their outputs, interpreted and compiled, must be within one
quantization step of the output (plus float noise) of ONNX Runtime running the same model.

The references are ORT running the QDQ graph as written (graph optimizations off:
DequantizeLinear, float op, QuantizeLinear) and, for the operator form, ONNX's own reference
evaluator; ORT's int8 kernels are compared as well and must agree wherever they are exact
(tests/ort_int8.py: on x86 without VNNI their int16 pair sums saturate).

  quant_qdq.py KILN WORK_DIR
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
from onnxruntime.quantization.shape_inference import quant_pre_process

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests"))
from ort_int8 import ort_int8_exact, ort_session  # noqa: E402


class Samples(CalibrationDataReader):
    def __init__(self, name, shape):
        rng = np.random.default_rng(0)
        self.samples = [{name: rng.standard_normal(shape).astype(np.float32)} for _ in range(8)]

    def get_next(self):
        return self.samples.pop() if self.samples else None


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    return r


def operator_form(kiln, work):
    """QLinearMatMul, MatMulInteger, QLinearConv and ConvInteger with constant weights (the
    compiled int8 GEMM path) must give the exact integers: ONNX's reference evaluator's, and
    ONNX Runtime's where its kernels are exact."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(1)
    a = rng.integers(0, 256, (2, 5, 37), dtype=np.uint8)
    x = rng.integers(0, 256, (1, 6, 9, 9), dtype=np.uint8)
    inits = [numpy_helper.from_array(v, n) for n, v in [
        ("b", rng.integers(-128, 128, (37, 19), dtype=np.int8)),
        ("w", rng.integers(-128, 128, (8, 6, 3, 3), dtype=np.int8)),
        ("a_s", np.array(0.02, np.float32)), ("a_z", np.array(131, np.uint8)),
        ("b_s", np.array(0.01, np.float32)), ("b_z", np.array(0, np.int8)),
        ("y_s", np.array(0.3, np.float32)), ("y_z", np.array(100, np.uint8)),
        ("w_s", rng.uniform(0.001, 0.01, 8).astype(np.float32)), ("w_z", np.zeros(8, np.int8)),
        ("bias", rng.integers(-500, 500, 8, dtype=np.int32))]]
    nodes = [
        helper.make_node("QLinearMatMul", ["a", "a_s", "a_z", "b", "b_s", "b_z", "y_s", "y_z"], ["qmm"]),
        helper.make_node("MatMulInteger", ["a", "b", "a_z", "b_z"], ["mmi"]),
        helper.make_node("QLinearConv", ["x", "a_s", "a_z", "w", "w_s", "w_z", "y_s", "y_z", "bias"], ["qconv"],
                         pads=[1, 1, 1, 1], strides=[2, 1]),
        helper.make_node("ConvInteger", ["x", "w", "a_z"], ["convi"], pads=[0, 1, 0, 1])]
    graph = helper.make_graph(
        nodes, "ops", [helper.make_tensor_value_info("a", TensorProto.UINT8, a.shape),
                       helper.make_tensor_value_info("x", TensorProto.UINT8, x.shape)],
        [helper.make_tensor_value_info(n, t, None) for n, t in [("qmm", TensorProto.UINT8),
                                                                 ("mmi", TensorProto.INT32),
                                                                 ("qconv", TensorProto.UINT8),
                                                                 ("convi", TensorProto.INT32)]],
        inits)
    path = os.path.join(work, "ops.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    from onnx.reference import ReferenceEvaluator
    exact = ReferenceEvaluator(path).run(None, {"a": a, "x": x})
    fused = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"a": a, "x": x})
    np.save(os.path.join(work, "a.npy"), a)
    np.save(os.path.join(work, "xq.npy"), x)
    run([kiln, "compile", path, "-o", os.path.join(work, "ops")])
    run([os.path.join(work, "ops", "ops"), os.path.join(work, "a.npy"), os.path.join(work, "xq.npy"),
         "-o", os.path.join(work, "ops_out")])
    ok = True
    strict = ort_int8_exact()
    for name, w, f in zip(["qmm", "mmi", "qconv", "convi"], exact, fused):
        got = np.load(os.path.join(work, "ops_out", name + ".npy"))
        diff = int(np.abs(got.astype(np.int64) - w.astype(np.int64)).max())
        diff_ort = int(np.abs(got.astype(np.int64) - f.astype(np.int64)).max())
        print(f"operator form {name}: max |kiln - onnx.reference| = {diff}, |kiln - ORT| = {diff_ort}"
              + ("" if strict else " (ORT's kernels saturate on this CPU: not compared)"))
        ok = ok and got.shape == w.shape and diff == 0 and (diff_ort == 0 or not strict)
    return ok


def large_per_tensor(kiln, work):
    """QuantizeLinear and DequantizeLinear per tensor on 8 bits, large enough (50000 values, a
    last chunk of 848) that the compiled code splits them into chunks across the threads: at 1
    and 2 threads the same values as kiln's interpreter and ONNX Runtime's. A quantized Add
    (kiln.QLinearAdd once fused), split into a share a thread (at 24960 for two), the same values
    as the interpreter's and within a step of ORT's float Add between its DequantizeLinear and
    QuantizeLinear."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((1, 20, 50, 50)) * 3).astype(np.float32)
    inits = [numpy_helper.from_array(v, n) for n, v in [
        ("s", np.array(0.023, np.float32)), ("zu", np.array(117, np.uint8)), ("zs", np.array(-9, np.int8)),
        ("s2", np.array(0.031, np.float32)), ("z2", np.array(90, np.uint8)), ("s3", np.array(0.041, np.float32)),
        ("z3", np.array(128, np.uint8))]]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "zu"], ["qu"]),
             helper.make_node("QuantizeLinear", ["x", "s", "zs"], ["qs"]),
             helper.make_node("DequantizeLinear", ["qu", "s", "zu"], ["du"]),
             helper.make_node("DequantizeLinear", ["qs", "s", "zs"], ["ds"]),
             helper.make_node("Neg", ["x"], ["xn"]),
             helper.make_node("QuantizeLinear", ["xn", "s2", "z2"], ["qn"]),
             helper.make_node("DequantizeLinear", ["qn", "s2", "z2"], ["dn"]),
             helper.make_node("DequantizeLinear", ["qu", "s", "zu"], ["du2"]),
             helper.make_node("Add", ["du2", "dn"], ["sum"]),
             helper.make_node("QuantizeLinear", ["sum", "s3", "z3"], ["qadd"])]
    outs = [("qu", TensorProto.UINT8), ("qs", TensorProto.INT8), ("du", TensorProto.FLOAT),
            ("ds", TensorProto.FLOAT), ("qadd", TensorProto.UINT8)]
    graph = helper.make_graph(nodes, "large", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info(n, t, x.shape) for n, t in outs], inits)
    path = os.path.join(work, "large.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.save(os.path.join(work, "xl.npy"), x)
    run([kiln, "compile", path, "-o", os.path.join(work, "large")])
    run([kiln, "run", path, os.path.join(work, "xl.npy"), "-o", os.path.join(work, "large_interpreted")])
    ok = True
    for threads in (1, 2):
        out = os.path.join(work, f"large_{threads}")
        run([os.path.join(work, "large", "large"), os.path.join(work, "xl.npy"), "--threads", str(threads),
             "-o", out])
        for (name, _), w in zip(outs, want):
            got = np.load(os.path.join(out, name + ".npy"))
            ref = np.load(os.path.join(work, "large_interpreted", name + ".npy"))
            same = got.shape == ref.shape and np.array_equal(got, ref)
            diff = float(np.abs(got.astype(np.float64) - w.astype(np.float64)).max())
            print(f"per tensor, {threads} threads, {name}: equal to the interpreter {same}, max |kiln - ORT| {diff:g}")
            ok = ok and same and diff <= (1 if name == "qadd" else 0)
    return ok


def qdq_against_ort(kiln, work, pre, x, activations, channels_last=False):
    """pre quantized by onnxruntime.quantization (QDQ, per-channel s8 weights, `activations` u8 or
    s8), imported by kiln, interpreted and compiled: within one output step of ORT's result.
    `channels_last`: layout_nhwc must have turned its int8 1x1, dense 3x3 and depthwise convolutions into
    kiln.QLinearConvNhwc, each of them compiled (none left as QLinearConv: the 3-channel stem runs as row patches)."""
    name = onnx.load(pre).graph.input[0].name
    tag = ("nhwc_" if channels_last else "") + activations
    qdq = os.path.join(work, f"qdq_{tag}.onnx")
    quantize_static(pre, qdq, Samples(name, x.shape), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QInt8 if activations == "s8" else QuantType.QUInt8,
                    weight_type=QuantType.QInt8)
    model = onnx.load(qdq)
    out_name = model.graph.output[0].name
    # The scale of the last QuantizeLinear before the output: one step of the output.
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    producer = {o: n for n in model.graph.node for o in n.output}
    dq = producer[out_name]
    step = float(inits[dq.input[1]]) if dq.op_type == "DequantizeLinear" else 0.0

    want = ort_session(qdq, optimize=False).run(None, {name: x})[0]
    ort_fused = ort.InferenceSession(qdq, providers=["CPUExecutionProvider"]).run(None, {name: x})[0]
    strict = ort_int8_exact()
    np.save(os.path.join(work, "x.npy"), x)

    exe_dir = os.path.join(work, f"exe_{tag}")
    ir = run([kiln, "compile", qdq, "-o", exe_dir, "--name", "qdq", "--print-ir-after", "fuse_qdq",
              "--print-ir-after", "layout_nhwc"]).stderr
    after_fuse, after_layout = ir.split("layout_nhwc", 1) if "layout_nhwc" in ir else (ir, "")
    fused = after_fuse.count("= QLinearConv(")
    print(f"{tag}: QLinearConv after fuse_qdq: {fused}; output step {step:g}")
    if fused == 0:
        print(f"FAIL: {tag}: fuse_qdq turned no Conv into QLinearConv")
        return False
    if channels_last:
        nhwc, left = after_layout.count("= kiln.QLinearConvNhwc("), after_layout.count("= QLinearConv(")
        print(f"{tag}: after layout_nhwc: {nhwc} kiln.QLinearConvNhwc, {left} QLinearConv")
        if nhwc != fused or left != 0:  # the 3-channel stem too, on the dense kernel's row patches
            print(f"FAIL: {tag}: layout_nhwc should convert every convolution, the stem included")
            return False
    ok = True
    for threads in ("1", "2"):
        run([os.path.join(exe_dir, "qdq"), os.path.join(work, "x.npy"), "--threads", threads, "-o",
             os.path.join(work, f"compiled{threads}_{tag}")])
    run([kiln, "run", qdq, os.path.join(work, "x.npy"), "-o", os.path.join(work, f"interpreted_{tag}")])
    tol = step * 1.001 + 1e-5 * float(np.abs(want).max())
    for how in ("interpreted", "compiled1", "compiled2"):
        d = os.path.join(work, f"{how}_{tag}")
        got = np.load(os.path.join(d, os.listdir(d)[0]))
        for ref, label, asserted in ((want, "ORT as written", True), (ort_fused, "ORT int8 kernels", strict)):
            err = float(np.abs(got.astype(np.float64) - ref).max())
            steps = err / step if step else float("nan")
            print(f"{tag} activations, {how}: max |kiln - {label}| = {err:.6g} ({steps:.2f} steps), "
                  f"{int(np.sum(got != ref))}/{ref.size} elements differ"
                  + ("" if asserted else " (they saturate on this CPU: not compared)"))
            if asserted and (got.shape != ref.shape or not err <= tol):
                ok = False
    return ok


def mobilenet_blocks(work):
    """A small MobileNetV2-like float model (a 3x3 stem, then inverted residual blocks: 1x1
    expansion, depthwise 3x3 of stride 1 or 2, 1x1 projection, residual Add; then two dense
    3x3s), for the int8 chain that layout_nhwc runs channels-last. Returns its path and an
    input."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(3)
    inits, nodes = [], []

    def weight(name, shape):
        fan_in = int(np.prod(shape[1:]))
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32), name))
        inits.append(numpy_helper.from_array((rng.standard_normal(shape[0]) * 0.1).astype(np.float32), name + "_b"))

    def conv(x, name, cin, cout, k, stride=1, group=1, relu=True):
        weight(name, [cout, cin // group, k, k])
        nodes.append(helper.make_node("Conv", [x, name, name + "_b"], [name + "_y"], kernel_shape=[k, k],
                                      pads=[k // 2] * 4, strides=[stride, stride], group=group))
        if not relu:
            return name + "_y"
        nodes.append(helper.make_node("Relu", [name + "_y"], [name + "_r"]))
        return name + "_r"

    def block(x, name, cin, cout, stride):
        h = conv(x, name + "_expand", cin, cin * 4, 1)
        h = conv(h, name + "_dw", cin * 4, cin * 4, 3, stride, group=cin * 4)
        h = conv(h, name + "_project", cin * 4, cout, 1, relu=False)
        if stride == 1 and cin == cout:
            nodes.append(helper.make_node("Add", [x, h], [name + "_add"]))
            return name + "_add"
        return h

    h = conv("x", "stem", 3, 16, 3)
    h = block(h, "b1", 16, 16, 1)
    h = block(h, "b2", 16, 24, 2)
    h = block(h, "b3", 24, 24, 1)
    h = block(h, "b4", 24, 24, 1)
    # ResNet's kind of layer: dense 3x3s, stride 1 and 2 (group 1, padding at the border)
    h = conv(h, "dense3x3", 24, 24, 3)
    h = conv(h, "dense3x3s2", 24, 24, 3, stride=2)
    nodes.append(helper.make_node("GlobalAveragePool", [h], ["pooled"]))
    nodes.append(helper.make_node("Flatten", ["pooled"], ["flat"]))
    inits.append(numpy_helper.from_array((rng.standard_normal((10, 24)) * 0.3).astype(np.float32), "fc"))
    nodes.append(helper.make_node("Gemm", ["flat", "fc"], ["logits"], transB=1))
    graph = helper.make_graph(nodes, "blocks", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 14, 14])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])], inits)
    path = os.path.join(work, "blocks.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path, rng.standard_normal((1, 3, 14, 14)).astype(np.float32)


def main():
    kiln, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    src = os.path.join(REPO, "models", "cnn")
    x = np.load(os.path.join(src, "input_0.npy"))
    pre = os.path.join(work, "pre.onnx")
    quant_pre_process(os.path.join(src, "model.onnx"), pre, skip_symbolic_shape=True)
    failed = False
    for activations in ("u8", "s8"):
        if not qdq_against_ort(kiln, work, pre, x, activations):
            failed = True
    blocks, xb = mobilenet_blocks(work)
    blocks_pre = os.path.join(work, "blocks_pre.onnx")
    quant_pre_process(blocks, blocks_pre, skip_symbolic_shape=True)
    for activations in ("u8", "s8"):
        if not qdq_against_ort(kiln, work, blocks_pre, xb, activations, channels_last=True):
            failed = True
    if not operator_form(kiln, work):
        failed = True
    if not large_per_tensor(kiln, work):
        failed = True
    if failed:
        sys.exit("FAIL: kiln differs from ONNX Runtime (QDQ: by more than one step; operator form and "
                 "large per-tensor Quantize/DequantizeLinear: at all)")
    print("ok")


if __name__ == "__main__":
    main()
