#!/usr/bin/env python3
"""ONNX models with control flow (If, Loop, Scan), their inputs and ONNX Runtime's outputs.

    .venv/bin/python models/control_flow/make_control_flow_models.py [NAME ...]

For each model, models/control_flow/<name>/ gets model.onnx (opset 17, IR version 8, every
shape static, subgraph inputs and outputs included), input_K.npy in graph input order and
expected_K.npy in graph output order, and set1/, set2/ with more input sets of the same
shapes where one set cannot reach every path (the other If branch, another trip count).
References come from ONNX Runtime (CPUExecutionProvider, graph optimizations off, one
thread) and must agree with each model written out in numpy (onnx.reference's Loop cannot
serve: it skips the body when the cond input is omitted). Seeded: a rerun writes the same bytes.
"""
from __future__ import annotations

import io
import shutil
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).resolve().parent
OPSET = 17
IR_VERSION = 8
MAX_TOTAL_BYTES = 200 * 1024
# ONNX Runtime vs the numpy transcription: max|ort - numpy| <= NUMPY_RTOL * max(1, max|numpy|).
NUMPY_RTOL = 1e-5
F, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL

MODELS = {}


def model(fn):
    MODELS[fn.__name__.removeprefix("make_")] = fn
    return fn


# --------------------------------------------------------------------- helpers

def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def const(output, array):
    """A Constant node, so that subgraphs hold constants of their own, not only captures."""
    return helper.make_node("Constant", [], [output], value=numpy_helper.from_array(np.asarray(array)))


def node(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, name=outputs[0], **attrs)


def finish(name, nodes, inputs, outputs, initializers):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializers)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                          ir_version=IR_VERSION, producer_name="make_control_flow_models.py")
    onnx.checker.check_model(m, full_check=True)
    return m


def weights(rng, shape, scale):
    return (scale * rng.standard_normal(shape)).astype(np.float32)


def run_ort(m, feed):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, feed)


def npy_bytes(a):
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(a), allow_pickle=False)
    return buf.getvalue()


def static_dims(v):
    dims = v.type.tensor_type.shape.dim
    assert all(d.HasField("dim_value") for d in dims), f"{v.name}: a dimension is not static"
    return [d.dim_value for d in dims]


# ---------------------------------------------------------------------- models
# Each returns (model, input sets, reference): an input set is a list of arrays in graph
# input order; reference(k, *arrays) is the model written out in numpy, returning the
# outputs, and asserts that set k took the path it was chosen for (branch, trip count).

def sigmoid(v):
    return 1 / (1 + np.exp(-v))


@model
def make_if_branches():
    """If on ReduceSum(x) > 0; both branches read h = x * y (computed outside) and the
    initializers W, b (then) or b, scale (else); two outputs, the first used after the If."""
    rng = np.random.RandomState(101)
    W, b, scale = weights(rng, [4, 4], 0.5), weights(rng, [4], 0.2), weights(rng, [4], 1.0)
    then_branch = helper.make_graph(
        [node("MatMul", ["h", "W"], ["then_mm"]),
         node("Add", ["then_mm", "b"], ["then_pre"]),
         node("Tanh", ["then_pre"], ["then_a"]),
         const("then_axes", np.array([1], np.int64)),
         node("Mul", ["h", "x"], ["then_hx"]),
         node("ReduceSum", ["then_hx", "then_axes"], ["then_b"], keepdims=0)],
        "then_branch", [], [vi("then_a", F, [3, 4]), vi("then_b", F, [3])])
    else_branch = helper.make_graph(
        [node("Sub", ["h", "b"], ["else_d"]),
         node("Sigmoid", ["else_d"], ["else_s"]),
         node("Mul", ["else_s", "scale"], ["else_a"]),
         node("ReduceMax", ["h"], ["else_b"], axes=[1], keepdims=0)],
        "else_branch", [], [vi("else_a", F, [3, 4]), vi("else_b", F, [3])])
    m = finish(
        "if_branches",
        [node("ReduceSum", ["x"], ["sum_x"], keepdims=0),
         node("Greater", ["sum_x", "zero"], ["positive"]),
         node("Mul", ["x", "y"], ["h"]),
         node("If", ["positive"], ["if_a", "row"], then_branch=then_branch, else_branch=else_branch),
         node("Add", ["if_a", "x"], ["out"])],
        [vi("x", F, [3, 4]), vi("y", F, [3, 4])],
        [vi("out", F, [3, 4]), vi("row", F, [3])],
        [init("zero", np.float32(0)), init("W", W), init("b", b), init("scale", scale)])
    y = weights(rng, [3, 4], 1.0)
    # Means of +-0.5 keep ReduceSum(x) far from 0: set 0 takes then, set 1 else.
    sets = [[weights(rng, [3, 4], 1.0) + np.float32(sign * 0.5), y] for sign in (1, -1)]

    def reference(k, x, y):
        h = x * y
        assert (x.sum() > 0) == (k == 0)
        if x.sum() > 0:
            a, row = np.tanh(h @ W + b), (h * x).sum(1)
        else:
            a, row = sigmoid(h - b) * scale, h.max(1)
        return [a + x, row]
    return m, sets, reference


@model
def make_if_nested():
    """Outer If on ReduceSum(x) > 0; its then branch holds an If on ReduceSum(x * w) > 0
    whose branches read base = Abs(x), a value of the outermost graph."""
    rng = np.random.RandomState(102)
    w = np.array([[1.0, -2.0, 0.5], [-1.5, 1.0, 2.0]], np.float32)
    c = np.float32(-0.75)
    inner_then = helper.make_graph(
        [node("Add", ["a", "base"], ["inner_then_out"])],
        "inner_then", [], [vi("inner_then_out", F, [2, 3])])
    inner_else = helper.make_graph(
        [node("Sub", ["a", "base"], ["inner_else_d"]),
         node("Mul", ["inner_else_d", "c"], ["inner_else_out"])],
        "inner_else", [], [vi("inner_else_out", F, [2, 3])])
    outer_then = helper.make_graph(
        [node("Mul", ["x", "w"], ["a"]),
         node("ReduceSum", ["a"], ["sum_a"], keepdims=0),
         node("Greater", ["sum_a", "zero"], ["inner_cond"]),
         node("If", ["inner_cond"], ["inner_out"], then_branch=inner_then, else_branch=inner_else),
         node("Add", ["inner_out", "a"], ["outer_then_out"])],
        "outer_then", [], [vi("outer_then_out", F, [2, 3])])
    outer_else = helper.make_graph(
        [node("Mul", ["base", "c"], ["outer_else_out"])],
        "outer_else", [], [vi("outer_else_out", F, [2, 3])])
    m = finish(
        "if_nested",
        [node("Abs", ["x"], ["base"]),
         node("ReduceSum", ["x"], ["sum_x"], keepdims=0),
         node("Greater", ["sum_x", "zero"], ["outer_cond"]),
         node("If", ["outer_cond"], ["out"], then_branch=outer_then, else_branch=outer_else)],
        [vi("x", F, [2, 3])], [vi("out", F, [2, 3])],
        [init("zero", np.float32(0)), init("w", w), init("c", c)])

    def path(x):
        return (True, bool((x * w).sum() > 0)) if x.sum() > 0 else (False, None)
    # Draw inputs until each path has one whose conditions are clear of 0:
    # set 0 then/then, set 1 then/else, set 2 else.
    wanted = [(True, True), (True, False), (False, None)]
    sets = [None] * 3
    while any(s is None for s in sets):
        x = weights(rng, [2, 3], 1.0)
        if min(abs(x.sum()), abs((x * w).sum())) >= 0.25 and sets[wanted.index(path(x))] is None:
            sets[wanted.index(path(x))] = [x]

    def reference(k, x):
        assert path(x) == wanted[k]
        base = np.abs(x)
        if x.sum() <= 0:
            return [base * c]
        a = x * w
        return [(a + base if a.sum() > 0 else (a - base) * c) + a]
    return m, sets, reference


@model
def make_loop_fixed():
    """Loop with M = 5 and no cond input: h = h @ W + b (W, b captured initializers) and an
    int64 counter carried, Tanh(h) of every iteration stacked."""
    rng = np.random.RandomState(103)
    W, b = weights(rng, [4, 4], 0.4), weights(rng, [1, 4], 0.3)
    body = helper.make_graph(
        [node("Identity", ["cond_in"], ["cond_out"]),
         node("MatMul", ["h", "W"], ["h_mm"]),
         node("Add", ["h_mm", "b"], ["h_next"]),
         const("one", np.array([1], np.int64)),
         node("Add", ["n", "one"], ["n_next"]),
         node("Tanh", ["h_next"], ["h_t"])],
        "loop_body",
        [vi("i", I64, []), vi("cond_in", BOOL, []), vi("h", F, [1, 4]), vi("n", I64, [1])],
        [vi("cond_out", BOOL, []), vi("h_next", F, [1, 4]), vi("n_next", I64, [1]),
         vi("h_t", F, [1, 4])])
    m = finish(
        "loop_fixed",
        [node("Loop", ["M", "", "h0", "count0"], ["h_final", "count_final", "h_all"], body=body)],
        [vi("h0", F, [1, 4]), vi("count0", I64, [1])],
        [vi("h_final", F, [1, 4]), vi("count_final", I64, [1]), vi("h_all", F, [5, 1, 4])],
        [init("M", np.int64(5)), init("W", W), init("b", b)])
    sets = [[weights(rng, [1, 4], 1.0), np.array([k * 7], np.int64)] for k in range(2)]

    def reference(k, h, n):
        hs = []
        for _ in range(5):
            h = h @ W + b
            n = n + 1
            hs.append(np.tanh(h))
        return [h, n, np.stack(hs)]
    return m, sets, reference


@model
def make_loop_early_exit():
    """Loop with M = 10 and cond = true: acc += inc (inc a captured graph input) until
    ReduceSum(acc) >= 4; the body's cond output stops it early."""
    rng = np.random.RandomState(104)
    threshold = np.float32(4)
    body = helper.make_graph(
        [node("Add", ["acc", "inc"], ["acc_next"]),
         const("one", np.array([1], np.int64)),
         node("Add", ["n", "one"], ["n_next"]),
         node("ReduceSum", ["acc_next"], ["acc_sum"], keepdims=0),
         node("Less", ["acc_sum", "threshold"], ["cond_out"])],
        "loop_body",
        [vi("i", I64, []), vi("cond_in", BOOL, []), vi("acc", F, [3]), vi("n", I64, [1])],
        [vi("cond_out", BOOL, []), vi("acc_next", F, [3]), vi("n_next", I64, [1])])
    m = finish(
        "loop_early_exit",
        [node("Loop", ["M", "keep_going", "acc0", "steps0"], ["acc_final", "steps"], body=body)],
        [vi("acc0", F, [3]), vi("inc", F, [3])],
        [vi("acc_final", F, [3]), vi("steps", I64, [1])],
        [init("M", np.int64(10)), init("keep_going", np.bool_(True)),
         init("threshold", threshold), init("steps0", np.zeros([1], np.int64))])

    def input_set(stop_after):
        # ReduceSum(acc) grows by d per iteration and crosses the threshold half a step
        # into iteration stop_after: no rounding can move the exit.
        acc0 = rng.uniform(-0.5, 0.5, 3).astype(np.float32)
        d = (threshold - float(acc0.sum())) / (stop_after - 0.5)
        jitter = rng.uniform(-0.3, 0.3, 3)
        return [acc0, (d / 3 + jitter - jitter.mean()).astype(np.float32)]
    # 4 iterations, 1, and all 10 (it would stop in the 13th).
    runs = [4, 1, 10]
    sets = [input_set(4), input_set(1), input_set(13)]

    def reference(k, acc, inc):
        n = np.zeros([1], np.int64)
        for _ in range(10):
            acc = acc + inc
            n = n + 1
            if not acc.sum() < threshold:
                break
        assert n[0] == runs[k]
        return [acc, n]
    return m, sets, reference


@model
def make_loop_cond_only():
    """Loop with no trip count: v = v * 2 + c while max|v| < 100, the first cond computed
    from the input, so that one set runs the body zero times."""
    c = np.array([[0.25, -0.5], [0.125, 0.75]], np.float32)
    limit = np.float32(100)
    body = helper.make_graph(
        [node("Mul", ["v", "two"], ["v_twice"]),
         node("Add", ["v_twice", "c"], ["v_next"]),
         const("one", np.array([1], np.int64)),
         node("Add", ["n", "one"], ["n_next"]),
         node("Abs", ["v_next"], ["v_abs"]),
         node("ReduceMax", ["v_abs"], ["v_max"], keepdims=0),
         node("Less", ["v_max", "limit"], ["cond_out"])],
        "loop_body",
        [vi("i", I64, []), vi("cond_in", BOOL, []), vi("v", F, [2, 2]), vi("n", I64, [1])],
        [vi("cond_out", BOOL, []), vi("v_next", F, [2, 2]), vi("n_next", I64, [1])])
    m = finish(
        "loop_cond_only",
        [node("Abs", ["v0"], ["v0_abs"]),
         node("ReduceMax", ["v0_abs"], ["v0_max"], keepdims=0),
         node("Less", ["v0_max", "limit"], ["go"]),
         node("Loop", ["", "go", "v0", "n0"], ["v_final", "iterations"], body=body)],
        [vi("v0", F, [2, 2])],
        [vi("v_final", F, [2, 2]), vi("iterations", I64, [1])],
        [init("two", np.float32(2)), init("c", c), init("limit", limit),
         init("n0", np.zeros([1], np.int64))])
    sets = [[np.array([[0.5, -1.25], [0.75, 0.3]], np.float32)],
            [np.array([[20.0, -31.0], [5.5, 12.0]], np.float32)],
            [np.array([[3.0, -140.0], [0.5, 1.0]], np.float32)]]
    runs = [6, 2, 0]

    def reference(k, v):
        n = np.zeros([1], np.int64)
        while np.abs(v).max() < limit:
            assert abs(np.abs(v).max() - limit) > 1  # clear of the limit
            v = v * 2 + c
            n = n + 1
        assert n[0] == runs[k]
        return [v, n]
    return m, sets, reference


@model
def make_scan_sum():
    """ONNX's test_scan9_sum: running sum over the rows of x, the sum carried and stacked."""
    rng = np.random.RandomState(105)
    body = helper.make_graph(
        [node("Add", ["sum_in", "next"], ["sum_out"]),
         node("Identity", ["sum_out"], ["scan_out"])],
        "scan_body", [vi("sum_in", F, [2]), vi("next", F, [2])],
        [vi("sum_out", F, [2]), vi("scan_out", F, [2])])
    m = finish(
        "scan_sum",
        [node("Scan", ["initial", "x"], ["y", "z"], body=body, num_scan_inputs=1)],
        [vi("initial", F, [2]), vi("x", F, [3, 2])],
        [vi("y", F, [2]), vi("z", F, [3, 2])], [])
    sets = [[weights(rng, [2], 1.0), weights(rng, [3, 2], 1.0)]]

    def reference(k, initial, x):
        z = initial + np.cumsum(x, axis=0)
        return [z[-1], z]
    return m, sets, reference


@model
def make_scan_axes():
    """Scan over axis 1 of two inputs, a read last to first and b first to last, with the
    per-step outputs stacked along axis 1 and a captured decay."""
    rng = np.random.RandomState(106)
    decay = np.float32(0.5)
    body = helper.make_graph(
        [node("Mul", ["s", "decay"], ["s_decayed"]),
         node("Add", ["s_decayed", "a_t"], ["s_a"]),
         node("Add", ["s_a", "b_t"], ["s_next"]),
         node("Tanh", ["s_next"], ["y_t"])],
        "scan_body", [vi("s", F, [2, 3]), vi("a_t", F, [2, 3]), vi("b_t", F, [3])],
        [vi("s_next", F, [2, 3]), vi("y_t", F, [2, 3])])
    m = finish(
        "scan_axes",
        [node("Scan", ["s0", "a", "b"], ["s_final", "ys"], body=body, num_scan_inputs=2,
              scan_input_axes=[1, 1], scan_input_directions=[1, 0], scan_output_axes=[1])],
        [vi("s0", F, [2, 3]), vi("a", F, [2, 5, 3]), vi("b", F, [3, 5])],
        [vi("s_final", F, [2, 3]), vi("ys", F, [2, 5, 3])],
        [init("decay", decay)])
    sets = [[weights(rng, [2, 3], 1.0), weights(rng, [2, 5, 3], 1.0), weights(rng, [3, 5], 1.0)]]

    def reference(k, s, a, b):
        ys = []
        for t in range(5):
            s = s * decay + a[:, 4 - t, :] + b[:, t]
            ys.append(np.tanh(s))
        return [s, np.stack(ys, axis=1)]
    return m, sets, reference


@model
def make_rnn_loop():
    """A tanh RNN cell unrolled by Loop over x's first dim (the trip count is Shape(x)[0]):
    x_t = Gather(x, iteration), h = tanh(x_t W + h U + b); h_final and every h."""
    rng = np.random.RandomState(107)
    W, U, b = weights(rng, [3, 4], 0.6), weights(rng, [4, 4], 0.5), weights(rng, [4], 0.1)
    body = helper.make_graph(
        [node("Identity", ["cond_in"], ["cond_out"]),
         node("Gather", ["x", "t"], ["x_t"], axis=0),
         node("MatMul", ["x_t", "W"], ["xw"]),
         node("MatMul", ["h", "U"], ["hu"]),
         node("Add", ["xw", "hu"], ["pre"]),
         node("Add", ["pre", "b"], ["pre_b"]),
         node("Tanh", ["pre_b"], ["h_next"]),
         node("Identity", ["h_next"], ["h_t"])],
        "cell",
        [vi("t", I64, []), vi("cond_in", BOOL, []), vi("h", F, [2, 4])],
        [vi("cond_out", BOOL, []), vi("h_next", F, [2, 4]), vi("h_t", F, [2, 4])])
    m = finish(
        "rnn_loop",
        [node("Shape", ["x"], ["x_shape"]),
         node("Gather", ["x_shape", "time_axis"], ["steps"], axis=0),
         node("Loop", ["steps", "", "h0"], ["h_final", "h_all"], body=body)],
        [vi("x", F, [6, 2, 3]), vi("h0", F, [2, 4])],
        [vi("h_final", F, [2, 4]), vi("h_all", F, [6, 2, 4])],
        [init("time_axis", np.int64(0)), init("W", W), init("U", U), init("b", b)])
    sets = [[weights(rng, [6, 2, 3], 1.0), weights(rng, [2, 4], 0.5)]]

    def reference(k, x, h):
        hs = []
        for t in range(x.shape[0]):
            h = np.tanh(x[t] @ W + h @ U + b)
            hs.append(h)
        return [h, np.stack(hs)]
    return m, sets, reference


# ------------------------------------------------------------------------ main

def build(name):
    """Checks every input set's outputs, then replaces models/control_flow/<name>/."""
    m, sets, reference = MODELS[name]()
    graph_inputs = list(m.graph.input)
    files = {"model.onnx": m.SerializeToString()}
    for k, arrays in enumerate(sets):
        assert len(arrays) == len(graph_inputs)
        for a, v in zip(arrays, graph_inputs):
            assert list(a.shape) == static_dims(v), (name, v.name, a.shape)
        outs = run_ort(m, {v.name: a for v, a in zip(graph_inputs, arrays)})
        for o, v, ref in zip(outs, m.graph.output, reference(k, *arrays), strict=True):
            assert list(o.shape) == static_dims(v), (name, v.name, o.shape)
            assert o.dtype == ref.dtype and o.shape == ref.shape, (name, v.name, ref.dtype, ref.shape)
            err = np.max(np.abs(o.astype(np.float64) - ref)) / max(1.0, np.max(np.abs(ref)))
            assert err <= NUMPY_RTOL, f"{name} set {k} {v.name}: ONNX Runtime and numpy differ by {err:g}"
        where = f"set{k}/" if k else ""
        files.update({f"{where}input_{j}.npy": npy_bytes(a) for j, a in enumerate(arrays)})
        files.update({f"{where}expected_{j}.npy": npy_bytes(o) for j, o in enumerate(outs)})
    folder = HERE / name
    shutil.rmtree(folder, ignore_errors=True)
    for path, data in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)
    print(f"{name:16s} {sum(map(len, files.values())) / 1024:5.1f} KiB  {len(sets)} input set(s)  "
          f"inputs {', '.join(v.name for v in graph_inputs)}  outputs {', '.join(v.name for v in m.graph.output)}")


def main(argv):
    names = argv or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        sys.exit(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    for name in names:
        build(name)
    total = sum(p.stat().st_size for p in HERE.rglob("*") if p.is_file())
    assert total <= MAX_TOTAL_BYTES, f"models/control_flow takes {total} bytes, over {MAX_TOTAL_BYTES}"
    print(f"total {total / 1024:.1f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
