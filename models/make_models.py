#!/usr/bin/env python3
"""Regenerate every sample model in models/ with its inputs and reference outputs.

    .venv/bin/python models/make_models.py [NAME ...]

For each model, models/<name>/ gets:
    model.onnx        fully static shapes
    input_K.npy       one per graph input, in graph input order
    expected_K.npy    one per graph output, in graph output order, computed by
                      ONNX Runtime (CPUExecutionProvider, graph optimizations
                      off, one thread); for models that came from PyTorch the
                      PyTorch outputs must agree before anything is written.
and models/README.md is rewritten with each model's ops and shapes.

Deterministic: fixed seeds, so a second run writes byte-identical files on the
same machine. Needs torch (scripts/setup.sh --with-torch) for the PyTorch models.
"""
from __future__ import annotations

import collections
import importlib.util
import io
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).resolve().parent

# PyTorch vs ONNX Runtime: max |a - b| <= RTOL * max(1, max |b|).
RTOL = 1e-5

MODELS: dict[str, dict] = {}


def model(name: str, description: str, made_with: str, needs_torch: bool = True):
    def register(fn):
        MODELS[name] = dict(fn=fn, description=description, made_with=made_with,
                            needs_torch=needs_torch)
        return fn
    return register


# --------------------------------------------------------------------- helpers

def rng(seed: int) -> np.random.RandomState:
    return np.random.RandomState(seed)


def strip_doc_strings(m: onnx.ModelProto) -> None:
    """Exporters may put source paths or stack traces in doc strings."""
    m.doc_string = ""
    m.graph.doc_string = ""
    for n in m.graph.node:
        n.doc_string = ""


def op_histogram(m: onnx.ModelProto) -> collections.Counter:
    return collections.Counter(n.op_type for n in m.graph.node)


def dims(vi: onnx.ValueInfoProto) -> list[int]:
    out = []
    for d in vi.type.tensor_type.shape.dim:
        if not d.HasField("dim_value"):
            raise AssertionError(f"{vi.name}: dimension {d} is not static")
        out.append(d.dim_value)
    return out


def check_static(m: onnx.ModelProto) -> None:
    for vi in list(m.graph.input) + list(m.graph.output):
        dims(vi)
    inferred = onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True, data_prop=True)
    for vi in inferred.graph.value_info:
        dims(vi)


def run_ort(m: onnx.ModelProto, inputs: list[np.ndarray]) -> list[np.ndarray]:
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(m.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    assert names == [i.name for i in m.graph.input], (names, m.graph.input)
    return sess.run(None, dict(zip(names, inputs)))


def assert_close(name: str, got: np.ndarray, want: np.ndarray) -> float:
    assert got.shape == want.shape and got.dtype == want.dtype, \
        (name, got.shape, got.dtype, want.shape, want.dtype)
    scale = max(1.0, float(np.max(np.abs(want))))
    err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
    if not err <= RTOL * scale:
        raise AssertionError(f"{name}: ONNX Runtime and PyTorch differ by {err:g} "
                             f"(scale {scale:g}, tolerance {RTOL * scale:g})")
    return err / scale


def export_torch(module, inputs: list[np.ndarray], opset: int,
                 do_constant_folding: bool = True) -> tuple[onnx.ModelProto, list[np.ndarray]]:
    """Export an nn.Module in eval mode; return the model and PyTorch's outputs."""
    import torch

    module.eval()
    args = tuple(torch.from_numpy(x) for x in inputs)
    with torch.no_grad():
        out = module(*args)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    buf = io.BytesIO()
    torch.onnx.export(
        module, args, buf, opset_version=opset,
        input_names=[f"input_{k}" for k in range(len(inputs))],
        output_names=[f"output_{k}" for k in range(len(outs))],
        do_constant_folding=do_constant_folding,
        # PRESERVE (with the module in eval mode) exports inference-mode ops but
        # skips the EVAL-only peephole that folds BatchNorm into Conv even
        # when do_constant_folding=False.
        training=(torch.onnx.TrainingMode.EVAL if do_constant_folding
                  else torch.onnx.TrainingMode.PRESERVE),
        dynamic_axes=None)
    m = onnx.load_from_string(buf.getvalue())
    return m, [o.detach().numpy() for o in outs]


def reinit_weights(module) -> None:
    """He-normal weights so activations keep unit scale through the network
    (PyTorch's default init shrinks them, leaving near-constant outputs that
    would hide kernel bugs)."""
    import torch

    for layer in module.modules():
        if isinstance(layer, (torch.nn.Conv2d, torch.nn.Linear)):
            torch.nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")
            if layer.bias is not None:
                torch.nn.init.normal_(layer.bias, std=0.1)


def randomize_batchnorm(module, seed: int) -> None:
    """Give BatchNorm layers non-trivial running statistics and affine params."""
    import torch

    g = torch.Generator().manual_seed(seed)
    for layer in module.modules():
        if isinstance(layer, torch.nn.BatchNorm2d):
            c = layer.num_features
            with torch.no_grad():
                layer.running_mean.copy_(0.1 * torch.randn(c, generator=g))
                layer.running_var.copy_(0.5 + torch.rand(c, generator=g))
                layer.weight.copy_(0.75 + 0.5 * torch.rand(c, generator=g))
                layer.bias.copy_(0.1 * torch.randn(c, generator=g))


# ---------------------------------------------------------------------- models

@model("mlp",
       "Linear(64,128)-ReLU-Linear(128,64)-Tanh-Linear(64,10)-Softmax(dim=1), input [1,64]",
       "PyTorch nn.Sequential, torch.onnx.export opset 13")
def make_mlp():
    import torch
    from torch import nn

    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Linear(64, 128), nn.ReLU(),
        nn.Linear(128, 64), nn.Tanh(),
        nn.Linear(64, 10), nn.Softmax(dim=1))
    reinit_weights(net)
    x = rng(1).standard_normal((1, 64)).astype(np.float32)
    m, ref = export_torch(net, [x], opset=13)
    return m, [x], ref


@model("cnn",
       "small ResNet/MobileNet-style CNN, input [2,3,32,32] (batch 2): "
       "Conv+BatchNorm+ReLU stem, residual block (Add), MaxPool, depthwise Conv "
       "(groups=16)+BatchNorm+ReLU6 (Clip), pointwise Conv+BatchNorm+ReLU6, "
       "AveragePool, squeeze-excite gate (GlobalAveragePool, 1x1 Convs, Sigmoid, Mul), "
       "GlobalAveragePool, Flatten, Linear (Gemm)",
       "PyTorch, eval mode, torch.onnx.export opset 13, do_constant_folding=False "
       "(BatchNormalization nodes kept)")
def make_cnn():
    import torch
    from torch import nn

    def conv_bn(cin, cout, k=3, groups=1, act=None):
        layers = [nn.Conv2d(cin, cout, k, padding=k // 2, groups=groups, bias=False),
                  nn.BatchNorm2d(cout)]
        if act is not None:
            layers.append(act)
        return nn.Sequential(*layers)

    class Residual(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.a = conv_bn(c, c, act=nn.ReLU())
            self.b = conv_bn(c, c)
            self.relu = nn.ReLU()

        def forward(self, x):
            return self.relu(self.b(self.a(x)) + x)

    class SqueezeExcite(nn.Module):
        def __init__(self, c, r=4):
            super().__init__()
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc1 = nn.Conv2d(c, c // r, 1)
            self.relu = nn.ReLU()
            self.fc2 = nn.Conv2d(c // r, c, 1)
            self.gate = nn.Sigmoid()

        def forward(self, x):
            return x * self.gate(self.fc2(self.relu(self.fc1(self.pool(x)))))

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = conv_bn(3, 16, act=nn.ReLU())
            self.res = Residual(16)
            self.maxpool = nn.MaxPool2d(2)
            self.dw = conv_bn(16, 16, k=3, groups=16, act=nn.ReLU6())
            self.pw = conv_bn(16, 32, k=1, act=nn.ReLU6())
            self.avgpool = nn.AvgPool2d(2, count_include_pad=False)  # no Pad node
            self.se = SqueezeExcite(32)
            self.gap = nn.AdaptiveAvgPool2d(1)
            self.flatten = nn.Flatten()
            self.fc = nn.Linear(32, 10)

        def forward(self, x):
            x = self.maxpool(self.res(self.stem(x)))
            x = self.avgpool(self.pw(self.dw(x)))
            x = self.se(x)
            return self.fc(self.flatten(self.gap(x)))

    torch.manual_seed(0)
    net = CNN()
    reinit_weights(net)
    randomize_batchnorm(net, seed=1)
    # Different statistics per batch item, so that the global pooling does not
    # average both items to nearly the same output.
    r = rng(2)
    x = r.standard_normal((2, 3, 32, 32))
    x[1] = 1.5 * x[1] + np.array([0.5, -0.3, 0.2]).reshape(3, 1, 1)
    x = x.astype(np.float32)
    m, ref = export_torch(net, [x], opset=13, do_constant_folding=False)
    hist = op_histogram(m)
    assert hist["BatchNormalization"] == 5, hist
    assert "Pad" not in hist, hist
    for op in ("Conv", "Relu", "Add", "Clip", "MaxPool", "AveragePool", "Sigmoid",
               "Mul", "GlobalAveragePool", "Flatten", "Gemm"):
        assert hist[op] > 0, (op, hist)
    assert any(n.op_type == "Conv" and any(a.name == "group" and a.i == 16 for a in n.attribute)
               for n in m.graph.node), "no depthwise Conv"
    return m, [x], ref


def conv_bn(cin, cout, k, stride=1, groups=1, relu6=True):
    """MobileNetV2's Conv (no bias, "same" padding) + BatchNorm [+ ReLU6], as a torch module."""
    from torch import nn
    layers = [nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, groups=groups, bias=False),
              nn.BatchNorm2d(cout)]
    if relu6:
        layers.append(nn.ReLU6())
    return nn.Sequential(*layers)


def inverted_residual_blocks(blocks, bn_seed: int):
    """MobileNetV2's inverted-residual blocks (cin, mid, cout, stride) in a row, as a torch module:
    1x1 expand Conv+BatchNorm+ReLU6, depthwise 3x3 Conv+BatchNorm+ReLU6, 1x1 project Conv+BatchNorm,
    and the residual Add where the block keeps its shape."""
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self, cin, mid, cout, stride):
            super().__init__()
            self.expand = conv_bn(cin, mid, 1)
            self.dw = conv_bn(mid, mid, 3, stride=stride, groups=mid)
            self.project = conv_bn(mid, cout, 1, relu6=False)
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            y = self.project(self.dw(self.expand(x)))
            return x + y if self.residual else y

    torch.manual_seed(0)
    net = nn.Sequential(*(Block(*b) for b in blocks))
    reinit_weights(net)
    randomize_batchnorm(net, seed=bn_seed)
    return net


@model("inverted_residual",
       "three MobileNetV2 inverted-residual blocks, input [1,16,23,25] (odd sizes): 1x1 expand "
       "Conv+BatchNorm+ReLU6 (16 -> 48), depthwise 3x3 Conv+BatchNorm+ReLU6 (stride 1), 1x1 "
       "project Conv+BatchNorm, residual Add; the same with 16 -> 32 -> 16; then 16 -> 32 expand, "
       "depthwise stride 2, project to 24 (kiln fuses each expand with its depthwise: "
       "kiln.FusedConvDepthwise; between blocked 1x1s, kiln.FusedConvDepthwiseNchwc: the first "
       "writes its result blocked, the second reads and writes blocked values)",
       "PyTorch, eval mode, torch.onnx.export opset 13 (BatchNorm folded into the Convs)")
def make_inverted_residual():
    net = inverted_residual_blocks([(16, 48, 16, 1), (16, 32, 16, 1), (16, 32, 24, 2)], bn_seed=3)
    x = rng(4).standard_normal((1, 16, 23, 25)).astype(np.float32)
    m, ref = export_torch(net, [x], opset=13)
    hist = op_histogram(m)
    assert hist["Conv"] == 9 and hist["Clip"] == 6 and hist["Add"] == 2, hist
    return m, [x], ref


@model("mobilenet_head",
       "MobileNetV2's first two blocks at 57 x 59 (odd sizes, planes over 56 x 56): depthwise "
       "3x3 Conv+BatchNorm+ReLU6 on 16 channels, 1x1 project to 8 (kiln: kiln.FusedDepthwiseConv, "
       "the band of depthwise rows fed to the 1x1 through a stack buffer); then 8 -> 48 expand, "
       "depthwise 3x3, project to 8 and residual Add (kiln.FusedConvDepthwise)",
       "PyTorch, eval mode, torch.onnx.export opset 13 (BatchNorm folded into the Convs)")
def make_mobilenet_head():
    import torch
    from torch import nn

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.block1 = nn.Sequential(conv_bn(16, 16, 3, groups=16), conv_bn(16, 8, 1, relu6=False))
            self.block2 = nn.Sequential(conv_bn(8, 48, 1), conv_bn(48, 48, 3, groups=48),
                                        conv_bn(48, 8, 1, relu6=False))

        def forward(self, x):
            y = self.block1(x)
            return y + self.block2(y)

    torch.manual_seed(0)
    net = Head()
    reinit_weights(net)
    randomize_batchnorm(net, seed=5)
    x = rng(6).standard_normal((1, 16, 57, 59)).astype(np.float32)
    m, ref = export_torch(net, [x], opset=13)
    hist = op_histogram(m)
    assert hist["Conv"] == 5 and hist["Clip"] == 3 and hist["Add"] == 1, hist
    return m, [x], ref


@model("mobilenet_tail",
       "MobileNetV2's small-plane blocks, input [1,32,9,7] (63 positions, where kiln does not fuse "
       "the expand with the depthwise): 1x1 expand Conv+BatchNorm+ReLU6 (32 -> 96), depthwise 3x3 "
       "Conv+BatchNorm+ReLU6, 1x1 project to 32 and residual Add; then 32 -> 64, depthwise stride 2, "
       "project to 48 (kiln runs both depthwise convolutions on channel-blocked tensors between the "
       "blocked 1x1s: kiln.DepthwiseConvNchwc)",
       "PyTorch, eval mode, torch.onnx.export opset 13 (BatchNorm folded into the Convs)")
def make_mobilenet_tail():
    net = inverted_residual_blocks([(32, 96, 32, 1), (32, 64, 48, 2)], bn_seed=7)
    x = rng(8).standard_normal((1, 32, 9, 7)).astype(np.float32)
    m, ref = export_torch(net, [x], opset=13)
    hist = op_histogram(m)
    assert hist["Conv"] == 6 and hist["Clip"] == 4 and hist["Add"] == 1, hist
    return m, [x], ref


@model("ops_mix",
       "hand-built graph with three inputs (A [2,3,4,5] f32, B [5,6] f32, "
       "idx [4] i64) and three outputs; see the node list below",
       "onnx.helper, opset 17, IR version 8; references from ONNX Runtime only",
       needs_torch=False)
def make_ops_mix():
    f32, i64 = TensorProto.FLOAT, TensorProto.INT64
    r = rng(3)

    def const_node(name, array):
        return helper.make_node("Constant", [], [name], name=name,
                                value=numpy_helper.from_array(array, name))

    initializers = [
        numpy_helper.from_array((0.5 + r.rand(1, 1, 1, 6)).astype(np.float32), "divisor"),
        numpy_helper.from_array(np.array([0, -1, 6], np.int64), "shape_0_m1_6"),
        numpy_helper.from_array(np.array(0, np.int64), "index_0"),
        numpy_helper.from_array(np.array([0], np.int64), "axes_0"),
        numpy_helper.from_array(np.array([-1], np.int64), "minus_one"),
        numpy_helper.from_array(np.array([1, 3], np.int64), "axes_1_3"),
        numpy_helper.from_array(np.array([-1], np.int64), "axes_m1"),
    ]
    N = helper.make_node
    nodes = [
        const_node("offset", r.standard_normal(6).astype(np.float32)),
        # [2,3,4,5] x [5,6] -> [2,3,4,6]: batch-broadcast MatMul
        N("MatMul", ["A", "B"], ["mm"], name="matmul"),
        N("Transpose", ["mm"], ["t"], name="transpose", perm=[0, 2, 1, 3]),  # [2,4,3,6]
        N("Sigmoid", ["t"], ["sig"], name="sigmoid"),
        N("Sub", ["t", "offset"], ["centered"], name="sub"),               # bcast [6]
        N("Div", ["centered", "divisor"], ["scaled"], name="div"),         # bcast [1,1,1,6]
        N("Concat", ["sig", "scaled"], ["cat"], name="concat", axis=3),    # [2,4,3,12]
        N("Reshape", ["cat", "shape_0_m1_6"], ["r1"], name="reshape_0_m1"),  # [2,24,6]
        # Shape -> Gather -> Unsqueeze -> Concat -> Reshape: [2,24,6] -> [2,144]
        N("Shape", ["r1"], ["r1_shape"], name="shape"),
        N("Gather", ["r1_shape", "index_0"], ["batch"], name="gather_batch", axis=0),
        N("Unsqueeze", ["batch", "axes_0"], ["batch_1d"], name="unsqueeze_batch"),
        N("Concat", ["batch_1d", "minus_one"], ["new_shape"], name="concat_shape", axis=0),
        N("Reshape", ["r1", "new_shape"], ["r2"], name="reshape_dynamic_shape"),
        # Unsqueeze/Squeeze with axes as inputs: [2,144] -> [2,1,144,1] -> [2,1,144]
        N("Unsqueeze", ["r2", "axes_1_3"], ["u"], name="unsqueeze"),
        N("Squeeze", ["u", "axes_m1"], ["sq"], name="squeeze"),
        N("Identity", ["sq"], ["out_squeezed"], name="identity"),
        # Gather on axis 1 with negative indices, then Softmax on a non-last axis
        N("Gather", ["r1", "idx"], ["picked"], name="gather_rows", axis=1),  # [2,4,6]
        N("Softmax", ["picked"], ["out_softmax"], name="softmax", axis=1),
        # Flatten at axis 2: [2,4,3,6] -> [8,18]
        N("Flatten", ["t"], ["out_flat"], name="flatten", axis=2),
    ]
    graph = helper.make_graph(
        nodes, "ops_mix",
        inputs=[helper.make_tensor_value_info("A", f32, [2, 3, 4, 5]),
                helper.make_tensor_value_info("B", f32, [5, 6]),
                helper.make_tensor_value_info("idx", i64, [4])],
        outputs=[helper.make_tensor_value_info("out_softmax", f32, [2, 4, 6]),
                 helper.make_tensor_value_info("out_squeezed", f32, [2, 1, 144]),
                 helper.make_tensor_value_info("out_flat", f32, [8, 18])],
        initializer=initializers)
    m = helper.make_model(graph, producer_name="kiln models/make_models.py",
                          opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8  # readable by onnx 1.12 (Debian's libonnx-dev)
    a = r.standard_normal((2, 3, 4, 5)).astype(np.float32)
    b = r.standard_normal((5, 6)).astype(np.float32)
    idx = np.array([-1, 0, 5, -3], np.int64)
    return m, [a, b, idx], None


@model("matmul_f64",
       "float64 MatMuls: [2,3,16,40] x a [40,24] weight (one GEMM over all rows), then x an input "
       "[3,24,8] broadcast over the batch (one GEMM per batch element)",
       "onnx.helper (hand-written graph)", needs_torch=False)
def make_matmul_f64():
    f64 = TensorProto.DOUBLE
    r = rng(5)
    w = numpy_helper.from_array(r.standard_normal((40, 24)), "W")
    nodes = [helper.make_node("MatMul", ["A", "W"], ["AW"], name="matmul_weight"),
             helper.make_node("MatMul", ["AW", "C"], ["Y"], name="matmul_broadcast")]
    graph = helper.make_graph(
        nodes, "matmul_f64",
        inputs=[helper.make_tensor_value_info("A", f64, [2, 3, 16, 40]),
                helper.make_tensor_value_info("C", f64, [3, 24, 8])],
        outputs=[helper.make_tensor_value_info("Y", f64, [2, 3, 16, 8])],
        initializer=[w])
    m = helper.make_model(graph, producer_name="kiln models/make_models.py",
                          opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8  # readable by onnx 1.12 (Debian's libonnx-dev)
    return m, [r.standard_normal((2, 3, 16, 40)), r.standard_normal((3, 24, 8))], None


@model("transformer",
       "two-layer BERT-style encoder, input [1,8,32] and mask [1,8] (1 attend, 0 padding; "
       "the last 2 positions padded): self-attention with 4 heads (Q/K/V Linear, heads split "
       "by view/permute, scores / sqrt(8) + (1 - mask) * -10000, Softmax, heads merged), "
       "residual + LayerNorm, FFN 32-64-32 with GELU (erf in layer 1, tanh in layer 2), "
       "residual + LayerNorm",
       "PyTorch plain nn.Module, torch.onnx.export opset 13 (LayerNorm and GELU decomposed)")
def make_transformer():
    import math

    import torch
    from torch import nn

    hidden, heads, ffn, seq = 32, 4, 64, 8

    class Layer(nn.Module):
        def __init__(self, approximate):
            super().__init__()
            self.q, self.k, self.v = (nn.Linear(hidden, hidden) for _ in range(3))
            self.out = nn.Linear(hidden, hidden)
            self.norm1 = nn.LayerNorm(hidden)
            self.ff1, self.ff2 = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden)
            self.gelu = nn.GELU(approximate=approximate)
            self.norm2 = nn.LayerNorm(hidden)

        def split(self, x):
            b, s, _ = x.shape
            return x.view(b, s, heads, hidden // heads).permute(0, 2, 1, 3)

        def forward(self, x, mask):
            q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(hidden // heads)
            ctx = torch.matmul(torch.softmax(scores + mask, dim=-1), v).permute(0, 2, 1, 3)
            ctx = ctx.contiguous().view(x.shape[0], x.shape[1], hidden)
            x = self.norm1(x + self.out(ctx))
            return self.norm2(x + self.ff2(self.gelu(self.ff1(x))))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([Layer("none"), Layer("tanh")])

        def forward(self, x, mask):
            additive = (1.0 - mask[:, None, None, :]) * -10000.0
            for layer in self.layers:
                x = layer(x, additive)
            return x

    torch.manual_seed(0)
    net = Encoder()
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.copy_(1.0 + 0.1 * torch.randn_like(m.weight))
                m.bias.copy_(0.1 * torch.randn_like(m.bias))
    x = rng(5).standard_normal((1, seq, hidden)).astype(np.float32)
    mask = np.ones((1, seq), np.float32)
    mask[:, -2:] = 0
    m, ref = export_torch(net, [x, mask], opset=13)
    return m, [x, mask], ref


@model("recurrent",
       "LSTM, GRU and RNN with constant weights (kiln packs R at compile time for the batch: "
       "the 8-row GEMV layout at batch 1, the GEMM's packed B beyond), inputs X1 [6,1,10] and "
       "X3 [6,3,10]: bidirectional LSTM (hidden 20) and forward GRU (hidden 12) at batch 1, "
       "bidirectional GRU with linear_before_reset at batch 1, reverse GRU with "
       "linear_before_reset, bidirectional RNN (hidden 9) and a forward LSTM's Y_h at batch 3",
       "onnx.helper (hand-written graph)", needs_torch=False)
def make_recurrent():
    f32 = TensorProto.FLOAT
    r = rng(6)
    seq, inp = 6, 10
    inits, nodes, outputs = [], [], []

    def layer(op, name, x, hidden, dirs, out_shape, out_index=0, direction=None, **attrs):
        gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
        for part, cols in (("W", inp), ("R", hidden)):
            w = r.uniform(-0.4, 0.4, (dirs, gates * hidden, cols)).astype(np.float32)
            inits.append(numpy_helper.from_array(w, f"{name}_{part}"))
        b = r.uniform(-0.2, 0.2, (dirs, 2 * gates * hidden)).astype(np.float32)
        inits.append(numpy_helper.from_array(b, f"{name}_B"))
        direction = direction or {1: "forward", 2: "bidirectional"}[dirs]
        outs = [""] * out_index + [f"{name}_out"]  # Y, Y_h, Y_c: only output out_index
        nodes.append(helper.make_node(op, [x, f"{name}_W", f"{name}_R", f"{name}_B"], outs, name=name,
                                      hidden_size=hidden, direction=direction, **attrs))
        outputs.append(helper.make_tensor_value_info(f"{name}_out", f32, out_shape))

    layer("LSTM", "lstm_bi_b1", "X1", 20, 2, [seq, 2, 1, 20])
    layer("GRU", "gru_b1", "X1", 12, 1, [seq, 1, 1, 12])
    layer("GRU", "gru_bi_lbr_b1", "X1", 12, 2, [seq, 2, 1, 12], linear_before_reset=1)
    layer("GRU", "gru_rev_lbr_b3", "X3", 12, 1, [seq, 1, 3, 12], linear_before_reset=1, direction="reverse")
    layer("RNN", "rnn_bi_b3", "X3", 9, 2, [seq, 2, 3, 9])
    layer("LSTM", "lstm_yh_b3", "X3", 20, 1, [1, 3, 20], out_index=1)
    graph = helper.make_graph(
        nodes, "recurrent",
        inputs=[helper.make_tensor_value_info("X1", f32, [seq, 1, inp]),
                helper.make_tensor_value_info("X3", f32, [seq, 3, inp])],
        outputs=outputs, initializer=inits)
    m = helper.make_model(graph, producer_name="kiln models/make_models.py",
                          opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8  # readable by onnx 1.12 (Debian's libonnx-dev)
    xs = [r.standard_normal((seq, 1, inp)).astype(np.float32), r.standard_normal((seq, 3, inp)).astype(np.float32)]
    return m, xs, None


# ------------------------------------------------------------------------ main

def write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def npy_bytes(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(a), allow_pickle=False)
    return buf.getvalue()


def build(name: str) -> dict:
    spec = MODELS[name]
    m, inputs, torch_outputs = spec["fn"]()
    strip_doc_strings(m)
    onnx.checker.check_model(m, full_check=True)
    check_static(m)
    assert len(inputs) == len(m.graph.input)
    for x, vi in zip(inputs, m.graph.input):
        assert list(x.shape) == dims(vi), (name, vi.name, x.shape)

    outputs = run_ort(m, inputs)
    assert len(outputs) == len(m.graph.output)
    worst = None
    if torch_outputs is not None:
        assert len(torch_outputs) == len(outputs)
        worst = max(assert_close(f"{name}/{vi.name}", o, t)
                    for o, t, vi in zip(outputs, torch_outputs, m.graph.output))

    folder = HERE / name
    folder.mkdir(exist_ok=True)
    for stale in folder.glob("*.npy"):
        stale.unlink()
    write_atomic(folder / "model.onnx", m.SerializeToString())
    for k, x in enumerate(inputs):
        write_atomic(folder / f"input_{k}.npy", npy_bytes(x))
    for k, y in enumerate(outputs):
        write_atomic(folder / f"expected_{k}.npy", npy_bytes(y))

    size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
    info = dict(name=name, spec=spec, model=m, inputs=inputs, outputs=outputs,
                worst=worst, size=size)
    print(f"{name:8s} {size / 1024:7.1f} KiB  nodes {len(m.graph.node):3d}  "
          + (f"torch vs ort max rel err {worst:.2e}" if worst is not None else "ort only"))
    return info


def io_line(vi: onnx.ValueInfoProto, arr: np.ndarray, kind: str, k: int) -> str:
    return f"`{kind}_{k}.npy` ← `{vi.name}` {arr.dtype} {list(arr.shape)}"


def write_readme(infos: list[dict]) -> None:
    lines = [
        "# Sample models",
        "",
        "Made by `make_models.py` (run `.venv/bin/python models/make_models.py`; needs",
        "`bash scripts/setup.sh --with-torch`). Every file here is generated; do not edit.",
        "This README is rewritten by the same script.",
        "",
        "Each folder holds `model.onnx` (static shapes), `input_K.npy` in graph input",
        "order and `expected_K.npy` in graph output order. Expected outputs come from",
        "ONNX Runtime (CPUExecutionProvider, graph optimizations off, one thread); for",
        "models exported from PyTorch the PyTorch outputs were checked to agree within",
        f"max|ort - torch| <= {RTOL:g} * max(1, max|torch|) before writing.",
        "Inputs are seeded, so a rerun writes the same bytes.",
        "",
        f"Versions: onnx {onnx.__version__}, onnxruntime {ort.__version__}, numpy {np.__version__}"
        + _torch_version() + ".",
        "",
        "| model | size | nodes | inputs | outputs |",
        "|---|---|---|---|---|",
    ]
    for i in infos:
        m = i["model"]
        ins = ", ".join(f"{x.dtype}{list(x.shape)}" for x in i["inputs"])
        outs = ", ".join(f"{y.dtype}{list(y.shape)}" for y in i["outputs"])
        lines.append(f"| `{i['name']}` | {i['size'] / 1024:.1f} KiB | {len(m.graph.node)} "
                     f"| {ins} | {outs} |")
    for i in infos:
        m = i["model"]
        spec = i["spec"]
        opset = next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
        hist = op_histogram(m)
        lines += [
            "",
            f"## {i['name']}",
            "",
            f"{spec['description']}.",
            "",
            f"Made with: {spec['made_with']}. Opset {opset}, IR version {m.ir_version}, "
            f"{len(m.graph.initializer)} initializers "
            f"({sum(int(np.prod(t.dims)) for t in m.graph.initializer)} values).",
            "",
            "Ops: " + ", ".join(f"{op} ×{c}" for op, c in sorted(hist.items())) + ".",
            "",
        ]
        lines += [f"- {io_line(vi, x, 'input', k)}"
                  for k, (vi, x) in enumerate(zip(m.graph.input, i["inputs"]))]
        lines += [f"- {io_line(vi, y, 'expected', k)}"
                  for k, (vi, y) in enumerate(zip(m.graph.output, i["outputs"]))]
        if i["name"] == "ops_mix":
            lines += ["", "Nodes (in order):", ""]
            for n in m.graph.node:
                attrs = ", ".join(f"{a.name}={helper.get_attribute_value(a)}"
                                  for a in n.attribute if a.name != "value")
                lines.append(f"- `{n.name}`: {n.op_type}({', '.join(n.input)}) → "
                             f"{', '.join(n.output)}" + (f" [{attrs}]" if attrs else ""))
    write_atomic(HERE / "README.md", ("\n".join(lines) + "\n").encode())


def _torch_version() -> str:
    try:
        import torch
        return f", torch {torch.__version__}"
    except ImportError:
        return ""


def main(argv: list[str]) -> int:
    names = argv or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print(f"make_models.py: unknown model(s) {unknown}; known: {list(MODELS)}",
              file=sys.stderr)
        return 2
    need = [n for n in names if MODELS[n]["needs_torch"]]
    if need and importlib.util.find_spec("torch") is None:
        print(f"make_models.py: {need} need torch; run `bash scripts/setup.sh --with-torch` "
              f"(or build only the others: {[n for n in MODELS if n not in need]})",
              file=sys.stderr)
        return 1
    infos = [build(n) for n in names]
    if names == list(MODELS):
        write_readme(infos)
    else:
        print("(README.md not rewritten: it is written only when all models are built)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
