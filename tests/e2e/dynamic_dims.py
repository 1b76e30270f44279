"""Models compiled once with a bounded symbolic dim (models/dynamic/: encoders exported with a
dynamic sequence length) run at every sample length, against ONNX Runtime's outputs; for
bert_seq also lengths outside the bounds refused with a message naming the input, the dim and
the bounds, and the C API's shape functions (tests/e2e/dynamic_api.c); two CNNs of models/
with their batch made symbolic, compiled for a bounded batch; a CNN with height and width bounded
in steps (strided windows, ConvTranspose, Resize); and NonZero and NonMaxSuppression, whose
counts the compiled code finds at run time.

    dynamic_dims.py KILN WORK

Float outputs must be within max|kiln - ort| <= 1e-4 * max(1, max|ort|).
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "..", "models", "dynamic")
MODEL_DIR = os.path.join(MODELS, "bert_seq")
TOLERANCE = 1e-4


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900, **kw)


def report(what, problem):
    print(f"FAIL {what}: {problem}" if problem else f"PASS {what}")
    return problem is None


def save_feeds(work, prefix, feeds):
    """Each input as WORK/PREFIX_NAME.npy; the executable's -i arguments for them."""
    args = []
    for name, value in feeds.items():
        path = os.path.join(work, f"{prefix}_{name}.npy")
        np.save(path, value)
        args += ["-i", f"{name}={path}"]
    return args


def error_of(got, ref):
    if got.shape != ref.shape:
        return f"shape {list(got.shape)}, ONNX Runtime's {list(ref.shape)}"
    if ref.size == 0:
        return None
    scale = max(1.0, float(np.max(np.abs(ref))))
    err = float(np.max(np.abs(got.astype(np.float64) - ref.astype(np.float64)))) / scale
    return None if err <= TOLERANCE else f"differs by {err:.3g} of its scale (limit {TOLERANCE})"


def check_lengths(kiln, folder, work):
    """Compiles the model with --dim seq=1..256 (optimized, and at -O0, where the unfused ops
    run: ReduceMean, Pow, batched MatMul, Softmax) and runs it at every sample length."""
    name = os.path.basename(folder)
    ok = True
    for level in ("-O2", "-O0"):
        tag = name if level == "-O2" else f"{name} {level}"
        out = os.path.join(work, name if level == "-O2" else f"{name}_O0")
        p = run([kiln, "compile", os.path.join(folder, "model.onnx"), "--dim", "seq=1..256", level, "--emit",
                 "exe,lib", "--name", "m", "-o", out])
        if not report(f"{tag}: compile --dim seq=1..256", None if p.returncode == 0 else p.stdout[-3000:]):
            ok = False
            continue
        sizes = sorted(int(os.path.basename(f).split("_")[1])
                       for f in glob.glob(os.path.join(folder, "expected_*_0.npy")))
        for seq in sizes:
            inputs = sorted(glob.glob(os.path.join(folder, f"input_{seq}_*.npy")))
            res = os.path.join(out + "_runs", f"seq{seq}")
            p = run([os.path.join(out, "m"), *inputs, "-o", res])
            ref = np.load(os.path.join(folder, f"expected_{seq}_0.npy"))
            problem = p.stdout[-2000:] if p.returncode else error_of(np.load(os.path.join(res, "y.npy")), ref)
            ok = report(f"{tag}: executable at seq {seq}", problem) and ok
    return ok


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    kiln, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    ok = True
    for folder in sorted(glob.glob(os.path.join(MODELS, "*", "model.onnx"))):
        ok = check_lengths(kiln, os.path.dirname(folder), work) and ok
    out = os.path.join(work, "bert_seq")
    exe = os.path.join(out, "m")
    if not os.path.exists(exe):
        return 1

    # Outside the bounds: a clear error and no output.
    long_x, long_mask = os.path.join(work, "x257.npy"), os.path.join(work, "mask257.npy")
    np.save(long_x, np.zeros((1, 257, 32), np.float32))
    np.save(long_mask, np.ones((1, 257), np.float32))
    res = os.path.join(work, "bert_seq_seq257")
    p = run([exe, "-i", f"x={long_x}", "-i", f"mask={long_mask}", "-o", res])
    want = "input 'x': shape [1,257,32] is outside the model's bounds [1,1..256,32]"
    problem = None
    if p.returncode == 0:
        problem = "exit status 0"
    elif want not in p.stdout:
        problem = f"expected '{want}', got: {p.stdout.strip()}"
    elif os.path.exists(os.path.join(res, "y.npy")):
        problem = "an output was written"
    ok = report("seq 257 refused", problem) and ok
    x16 = os.path.join(MODEL_DIR, "input_16_0.npy")
    mask64 = os.path.join(MODEL_DIR, "input_64_1.npy")
    p = run([exe, "-i", f"x={x16}", "-i", f"mask={mask64}"])
    want = "inputs 'x' and 'mask' disagree on the symbolic dim 'seq': 16 and 64"
    ok = report("inputs disagreeing on seq refused",
                None if p.returncode != 0 and want in p.stdout else f"got: {p.stdout.strip()}") and ok

    # An unnamed dim ('?', as PP-OCR's models have) bounded through --input-shape.
    import onnx
    m = onnx.load(os.path.join(MODELS, "torch_encoder", "model.onnx"))
    for vi in list(m.graph.input) + list(m.graph.output):
        for d in vi.type.tensor_type.shape.dim:
            if d.dim_param:
                d.ClearField("dim_param")
    unnamed = os.path.join(work, "unnamed.onnx")
    onnx.save(m, unnamed)
    out_u = os.path.join(work, "unnamed")
    p = run([kiln, "compile", unnamed, "--input-shape", "ids=1,1..256:i64", "--name", "m", "-o", out_u])
    problem = p.stdout[-2000:] if p.returncode else None
    if not problem:
        folder = os.path.join(MODELS, "torch_encoder")
        p = run([os.path.join(out_u, "m"), os.path.join(folder, "input_64_0.npy"), "-o", out_u + "_run"])
        problem = p.stdout[-2000:] if p.returncode else error_of(
            np.load(os.path.join(out_u + "_run", "y.npy")), np.load(os.path.join(folder, "expected_64_0.npy")))
    ok = report("unnamed dim bounded with --input-shape ids=1,1..256:i64, at seq 64", problem) and ok
    p = run([kiln, "inspect", unnamed, "--input-shape", "ids=1,1..256:i64"])
    ok = report("kiln inspect --input-shape ids=1,1..256:i64 names the dim and says the model compiles",
                None if p.returncode == 0 and "compilable: yes" in p.stdout and "input   ids i64[1,ids_1]" in p.stdout
                else p.stdout[-2000:]) and ok

    # CNNs of models/ with their batch made symbolic ('batch' in the file, as a dynamic export
    # writes it), compiled for batches 1..4: convolutions, pools and the channel-blocked layout
    # run item by item. At batches 1 and 3, against ONNX Runtime on the same file.
    import onnxruntime as ort
    from onnx import TensorProto, helper
    rng = np.random.default_rng(0)
    for cnn in ("cnn", "inverted_residual"):
        m = onnx.load(os.path.join(HERE, "..", "..", "models", cnn, "model.onnx"))
        name = m.graph.input[0].name
        item = [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim[1:]]
        for vi in list(m.graph.input[:1]) + list(m.graph.output):
            vi.type.tensor_type.shape.dim[0].dim_param = "batch"
        del m.graph.value_info[:]
        batched = os.path.join(work, f"{cnn}_batch.onnx")
        onnx.save(m, batched)
        out_c = os.path.join(work, f"{cnn}_batch")
        p = run([kiln, "compile", batched, "--dim", "batch=1..4", "--name", "m", "-o", out_c])
        if p.returncode:
            ok = report(f"{cnn} compiled with --dim batch=1..4", p.stdout[-2000:]) and ok
            continue
        session = ort.InferenceSession(batched, providers=["CPUExecutionProvider"])
        for batch in (1, 3):
            x = rng.standard_normal([batch] + item).astype(np.float32)
            want = session.run(None, {name: x})[0]
            xb = os.path.join(work, f"{cnn}_x{batch}.npy")
            np.save(xb, x)
            res = os.path.join(work, f"{cnn}_batch{batch}")
            p = run([os.path.join(out_c, "m"), "-i", f"{name}={xb}", "-o", res])
            produced = sorted(glob.glob(os.path.join(res, "*.npy")))
            problem = p.stdout[-2000:] if p.returncode or len(produced) != 1 else error_of(np.load(produced[0]), want)
            ok = report(f"{cnn} compiled for batches 1..4, at batch {batch}", problem) and ok

    # Height and width bounded in steps of 16 (--input-shape x=1,3,16..64:16,16..96:16, as
    # PP-OCR's detector takes them): strided convolutions and pools, a squeeze-excite block
    # (GlobalAveragePool), a 1x1 and a stride-2 convolution in the channel-blocked layout
    # (kiln.ConvNchwc), ConvTranspose and Resize back up, a skip Concat and a BatchNormalization,
    # all with run-time extents. At the bounds and between, against ONNX Runtime; a height that
    # is no multiple of 16 is refused.
    from onnx import numpy_helper
    wrng = np.random.default_rng(1)

    def weight(name, *shape):
        return numpy_helper.from_array((wrng.standard_normal(shape) * 0.3).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], strides=[2, 2], pads=[1, 1, 1, 1]),  # H/2
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),  # H/4
        helper.make_node("Conv", ["p1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["c2"], ["g"]),
        helper.make_node("Conv", ["g", "w3"], ["e"]),
        helper.make_node("HardSigmoid", ["e"], ["hs"]),
        helper.make_node("Mul", ["c2", "hs"], ["se"]),
        helper.make_node("Conv", ["se", "w4"], ["c4"]),  # 1x1, blocked
        helper.make_node("Relu", ["c4"], ["r4"]),
        helper.make_node("Conv", ["r4", "w5"], ["c5"], strides=[2, 2], pads=[1, 1, 1, 1]),  # H/8, blocked
        helper.make_node("ConvTranspose", ["c5", "wt"], ["up"], strides=[4, 4]),  # H/2
        helper.make_node("Concat", ["up", "r1"], ["cat"], axis=1),
        helper.make_node("Resize", ["cat", "", "scales"], ["big"], mode="nearest"),  # H
        helper.make_node("BatchNormalization", ["big", "gamma", "beta", "mean", "var"], ["bn"]),
        helper.make_node("AveragePool", ["bn"], ["avg"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["avg"], ["y"]),
    ]
    inits = [weight("w1", 16, 3, 3, 3), weight("b1", 16), weight("w2", 16, 16, 3, 3), weight("w3", 16, 16, 1, 1),
             weight("w4", 32, 16, 1, 1), weight("w5", 32, 32, 3, 3), weight("wt", 32, 16, 4, 4),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
             weight("gamma", 32), weight("beta", 32), weight("mean", 32),
             numpy_helper.from_array(np.full(32, 0.5, np.float32), "var")]
    graph = helper.make_graph(nodes, "stepped", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, None, None])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, None, None])], inits)
    st_model = os.path.join(work, "stepped.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), st_model)
    out_st = os.path.join(work, "stepped")
    p = run([kiln, "compile", st_model, "--input-shape", "x=1,3,16..64:16,16..96:16", "--name", "m", "-o", out_st, "-v"])
    blocked = re.search(r"after eliminate_dead_code .*kiln\.ConvNchwc 2\b", p.stdout)
    if not report("a CNN compiled with --input-shape x=1,3,16..64:16,16..96:16, its 1x1 and stride-2 convolutions "
                  "blocked", p.stdout[-2000:] if p.returncode or not blocked else None):
        ok = False
    else:
        session = ort.InferenceSession(st_model, providers=["CPUExecutionProvider"])
        for h, w in ((16, 16), (32, 80), (64, 96)):
            x = rng.standard_normal([1, 3, h, w]).astype(np.float32)
            xb = os.path.join(work, "st_x.npy")
            np.save(xb, x)
            res = os.path.join(work, f"st_{h}x{w}")
            p = run([os.path.join(out_st, "m"), "-i", f"x={xb}", "-o", res])
            problem = p.stdout[-2000:] if p.returncode else error_of(
                np.load(os.path.join(res, "y.npy")), session.run(None, {"x": x})[0])
            ok = report(f"stepped CNN at {h}x{w}", problem) and ok
        np.save(os.path.join(work, "st_bad.npy"), np.zeros([1, 3, 40, 16], np.float32))
        p = run([os.path.join(out_st, "m"), "-i", f"x={os.path.join(work, 'st_bad.npy')}"])
        want = "input 'x': shape [1,3,40,16] is outside the model's bounds [1,3,16..64:16,16..96:16]"
        ok = report("stepped CNN refuses a height of 40",
                    None if p.returncode != 0 and want in p.stdout else f"got: {p.stdout.strip()}") and ok

    # NonZero's count is known only when it runs: compiled with its output planned for every
    # element non-zero, the count set by the node and read by the Transpose and GatherND after
    # it. Over a bounded batch, at batches 1 and 3 and with nothing non-zero, against ONNX Runtime.
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("NonZero", ["r"], ["coords"]),
         helper.make_node("Transpose", ["coords"], ["tuples"], perm=[1, 0]),
         helper.make_node("GatherND", ["r", "tuples"], ["values"])],
        "nonzero", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 6])],
        [helper.make_tensor_value_info("coords", TensorProto.INT64, [2, None]),
         helper.make_tensor_value_info("values", TensorProto.FLOAT, [None])])
    nz_model = os.path.join(work, "nonzero.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), nz_model)
    out_nz = os.path.join(work, "nonzero")
    p = run([kiln, "compile", nz_model, "--dim", "batch=1..4", "--name", "m", "-o", out_nz])
    if not report("NonZero + Transpose + GatherND compiled with --dim batch=1..4",
                  p.stdout[-2000:] if p.returncode else None):
        ok = False
    else:
        session = ort.InferenceSession(nz_model, providers=["CPUExecutionProvider"])
        for what, x in (("batch 1", rng.standard_normal([1, 6])), ("batch 3", rng.standard_normal([3, 6])),
                        ("batch 4, all zero", np.zeros([4, 6])), ("batch 4, all non-zero", np.ones([4, 6]))):
            x = x.astype(np.float32)
            xb = os.path.join(work, "nz_x.npy")
            np.save(xb, x)
            res = os.path.join(work, "nz_" + what.replace(" ", "_").replace(",", ""))
            p = run([os.path.join(out_nz, "m"), "-i", f"x={xb}", "-o", res])
            problem = p.stdout[-2000:] if p.returncode else None
            if not problem:
                want = session.run(None, {"x": x})
                for k, name in enumerate(("coords", "values")):
                    problem = problem or error_of(np.load(os.path.join(res, f"{name}.npy")), want[k])
            ok = report(f"NonZero compiled, {what}", problem) and ok

    # A NonZero inside an If branch: its count is a symbol of the whole model (the generated code
    # keeps one table), set when the branch runs and read by the Cast and ReduceSum after it.
    then_g = helper.make_graph(
        [helper.make_node("NonZero", ["x"], ["nz"]), helper.make_node("Cast", ["nz"], ["nzf"], to=TensorProto.FLOAT),
         helper.make_node("ReduceSum", ["nzf"], ["s"], keepdims=0)],
        "then", [], [helper.make_tensor_value_info("s", TensorProto.FLOAT, [])])
    else_g = helper.make_graph([helper.make_node("ReduceMax", ["x"], ["m"], keepdims=0)], "else", [],
                               [helper.make_tensor_value_info("m", TensorProto.FLOAT, [])])
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)], "if_nonzero",
        [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    if_model = os.path.join(work, "if_nonzero.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), if_model)
    out_if = os.path.join(work, "if_nonzero")
    p = run([kiln, "compile", if_model, "--name", "m", "-o", out_if])
    if not report("NonZero inside an If branch compiled", p.stdout[-2000:] if p.returncode else None):
        ok = False
    else:
        session = ort.InferenceSession(if_model, providers=["CPUExecutionProvider"])
        for cond in (True, False):
            x = (rng.standard_normal([3, 4]) * (rng.random([3, 4]) > 0.5)).astype(np.float32)
            feeds = {"c": np.array(cond), "x": x}
            args = save_feeds(work, "if", feeds)
            res = os.path.join(work, f"if_run_{cond}")
            p = run([os.path.join(out_if, "m"), *args, "-o", res])
            problem = p.stdout[-2000:] if p.returncode else error_of(
                np.load(os.path.join(res, "y.npy")), session.run(None, feeds)[0])
            ok = report(f"NonZero inside an If branch, condition {cond}", problem) and ok

    # NonMaxSuppression's count of boxes kept, the same way, over a bounded batch of images; the
    # thresholds are inputs, read when it runs.
    graph = helper.make_graph(
        [helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_per_class", "iou", "score_min"], ["kept"])],
        "nms", [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, ["batch", 8, 4]),
                helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["batch", 2, 8]),
                helper.make_tensor_value_info("max_per_class", TensorProto.INT64, [1]),
                helper.make_tensor_value_info("iou", TensorProto.FLOAT, [1]),
                helper.make_tensor_value_info("score_min", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("kept", TensorProto.INT64, [None, 3])])
    nms_model = os.path.join(work, "nms.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), nms_model)
    out_nms = os.path.join(work, "nms")
    p = run([kiln, "compile", nms_model, "--dim", "batch=1..3", "--name", "m", "-o", out_nms])
    if not report("NonMaxSuppression compiled with --dim batch=1..3", p.stdout[-2000:] if p.returncode else None):
        ok = False
    else:
        session = ort.InferenceSession(nms_model, providers=["CPUExecutionProvider"])
        for batch, limit, iou, score_min in ((1, 3, 0.5, 0.0), (3, 8, 0.3, 0.4), (2, 0, 0.5, 0.0)):
            corners = rng.uniform(0, 10, [batch, 8, 2, 2]).astype(np.float32)
            feeds = {"boxes": np.concatenate([corners.min(axis=2), corners.max(axis=2)], axis=2),
                     "scores": rng.uniform(0, 1, [batch, 2, 8]).astype(np.float32),
                     "max_per_class": np.array([limit], np.int64), "iou": np.array([iou], np.float32),
                     "score_min": np.array([score_min], np.float32)}
            args = save_feeds(work, "nms", feeds)
            res = os.path.join(work, f"nms_run{batch}")
            p = run([os.path.join(out_nms, "m"), *args, "-o", res])
            problem = p.stdout[-2000:] if p.returncode else error_of(
                np.load(os.path.join(res, "kept.npy")), session.run(None, feeds)[0])
            ok = report(f"NonMaxSuppression compiled, batch {batch}, at most {limit} a class", problem) and ok

    # The C API, through the static library.
    api_exe = os.path.join(work, "dynamic_api")
    cc = shlex.split(os.environ.get("CC", "cc"))  # the sanitized build's CC carries its flags
    p = run([*cc, "-O1", "-o", api_exe, os.path.join(HERE, "dynamic_api.c"), f"-I{out}", os.path.join(out, "libm.a"),
             "-lstdc++", "-lm", "-pthread"])
    if not report("C API program builds", None if p.returncode == 0 else p.stdout[-3000:]):
        return 1
    seq = 64
    raw = []
    for k, name in enumerate(["x", "mask"]):
        path = os.path.join(work, f"{name}.f32")
        np.load(os.path.join(MODEL_DIR, f"input_{seq}_{k}.npy")).astype(np.float32).tofile(path)
        raw.append(path)
    y = os.path.join(work, "y.f32")
    p = run([api_exe, str(seq), *raw, y])
    problem = p.stdout[-2000:] if p.returncode else None
    if not problem:
        got = np.fromfile(y, np.float32).reshape(1, seq, 32)
        problem = error_of(got, np.load(os.path.join(MODEL_DIR, f"expected_{seq}_0.npy")))
    ok = report(f"C API at seq {seq}", problem) and ok

    if ok:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
