#!/usr/bin/env python3
"""TorchScript test models for kiln's PyTorch frontend, with seeded inputs and PyTorch's outputs.

    /usr/bin/python3 models/torch/make_torch_models.py              # the committed models
    /usr/bin/python3 models/torch/make_torch_models.py --big OUTDIR # resnet18, mobilenet_v2,
                                                                    # a d_model-256 transformer

For every model and save mode, <root>/<model>_<mode>/ gets:
    model.pt        torch.jit.save of the module (root is models/torch, or OUTDIR with --big)
    input_K.npy     the forward's K-th argument, seeded (float32, or int64 for indices)
    expected_K.npy  the K-th output (outputs are flattened: every model returns a tensor or a
                    flat tuple of tensors), float32, from the eager nn.Module in eval mode
                    under torch.no_grad(), one thread
    set1/           (control_flow only) a second input set that takes the other branch
and <root>/README.md is rewritten: versions, sizes, shapes and the ops each archive's code calls.

Modes:
    trace         torch.jit.trace(m.eval(), inputs) under torch.no_grad()
    trace_grad    the same with autograd on (check_trace=False): nn.TransformerEncoderLayer
                  then records its unfused path instead of torch._transformer_encoder_layer_fwd
    script        torch.jit.script(m.eval())
    freeze        torch.jit.freeze(torch.jit.script(m.eval()))
    freeze_trace  torch.jit.freeze(torch.jit.trace(m.eval(), inputs)) (trace under no_grad)

Every saved archive is loaded back with torch.jit.load and run on each input set; its outputs
must agree with the eager ones within 1e-5 * max(1, max|expected|) (the README lists the
differences). Deterministic: seeded weights and inputs, so a rerun writes identical .npy files
on the same machine. The model.pt archives are identical across reruns and checkouts too: torch
writes fixed zip timestamps, and the script reruns itself from the repository root by its
relative path (code/*.debug_pkl entries record the source file's path) with PYTHONHASHSEED=0
(TorchScript prints class constants in set order). Class names carry process-wide
___torch_mangle_N counters, so all models are always built, in the same order.
Needs Debian's python3-torch (1.13) and python3-torchvision.
"""
from __future__ import annotations

import argparse
import collections
import os
import platform
import re
import shutil
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
RTOL = 1e-5
MAX_COMMITTED_BYTES = 600 * 1024

# ---------------------------------------------------------------------- helpers


def rng(seed: int) -> np.random.RandomState:
    return np.random.RandomState(seed)


def randn(seed: int, *shape, scale=1.0, shift=0.0) -> np.ndarray:
    return (shift + scale * rng(seed).standard_normal(shape)).astype(np.float32)


def randomize_batchnorm(module: nn.Module, seed: int) -> None:
    """Non-trivial running statistics and affine parameters, so that folding bugs show."""
    g = torch.Generator().manual_seed(seed)
    for layer in module.modules():
        if isinstance(layer, nn.modules.batchnorm._BatchNorm):
            c = layer.num_features
            with torch.no_grad():
                layer.running_mean.copy_(0.5 * torch.randn(c, generator=g))
                layer.running_var.copy_(0.5 + 1.5 * torch.rand(c, generator=g))
                layer.weight.copy_(0.5 + torch.rand(c, generator=g))
                layer.bias.copy_(0.2 * torch.randn(c, generator=g))
                layer.num_batches_tracked.fill_(100)


def kaiming(module: nn.Module) -> None:
    """He-normal weights so activations keep unit scale (PyTorch's default init shrinks them
    and leaves near-constant outputs that would hide kernel bugs)."""
    for layer in module.modules():
        if isinstance(layer, (nn.Conv1d, nn.Conv2d, nn.ConvTranspose2d, nn.Linear)):
            nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")
            if layer.bias is not None:
                nn.init.normal_(layer.bias, std=0.1)


def save_npy(path: Path, a: np.ndarray) -> None:
    np.save(path, np.ascontiguousarray(a), allow_pickle=False)


def flat_outputs(out) -> list[torch.Tensor]:
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    for o in outs:
        assert isinstance(o, torch.Tensor), f"outputs must be a flat tuple of tensors, got {type(o)}"
    return outs


def run(module, inputs: list[np.ndarray]) -> list[np.ndarray]:
    with torch.no_grad():
        out = module(*[torch.from_numpy(x) for x in inputs])
    return [o.detach().numpy().copy() for o in flat_outputs(out)]


def rel_err(got: np.ndarray, want: np.ndarray) -> float:
    assert got.shape == want.shape and got.dtype == want.dtype, \
        (got.shape, got.dtype, want.shape, want.dtype)
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    return float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)), initial=0.0)) / scale


def fmt_size(n: int) -> str:
    return f"{n / 1024:.1f} KiB" if n < 1024 * 1024 else f"{n / (1024 * 1024):.1f} MiB"


def shape_str(a: np.ndarray) -> str:
    return f"{a.dtype}{list(a.shape)}"


OP_RE = re.compile(r"(?<![\w.])torch\.(\w+)\(")
NS_RE = re.compile(r"(?<![\w.])ops\.(\w+)\.(\w+)\(")
BUILTIN_RE = re.compile(r"(?<![\w.])(int|float|bool|len|str|isinstance|annotate|unchecked_cast|"
                        r"uninitialized|getattr|hasattr|range|fork|wait|max|min|abs|round)\(")
FUNC_RE = re.compile(r"__torch__\.torch\.nn\.functional\.(?:___torch_mangle_\d+\.)?(\w+)")


def archive_ops(path: Path) -> dict:
    """What the archive's code/ files call: aten ops (printed `torch.f(`), other namespaces
    (`ops.ns.f(`), Python builtins of TorchScript's subset, and TorchScript functions of
    torch.nn.functional compiled into the archive."""
    aten, ns, builtins, funcs = (collections.Counter() for _ in range(4))
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if "/code/" in name and name.endswith(".py"):
                src = z.read(name).decode()
                aten.update(OP_RE.findall(src))
                ns.update(f"{a}.{b}" for a, b in NS_RE.findall(src))
                builtins.update(BUILTIN_RE.findall(src))
                funcs.update(FUNC_RE.findall(src))
        version = [z.read(n).decode().strip() for n in z.namelist()
                   if n.split("/", 1)[-1] in ("version", ".data/version")]
    return dict(aten=aten, ns=ns, builtins=builtins, funcs=funcs, version=",".join(version))


# ----------------------------------------------------------------------- models

class Spec:
    """A model: build() returns (module, input sets[, {mode: input sets}]), an input set being
    the forward's arguments as arrays; the first set is also the trace's example."""

    def __init__(self, name, description, build, modes, big=False):
        self.name, self.description, self.build, self.modes, self.big = \
            name, description, build, modes, big


SPECS: list[Spec] = []


def spec(name, description, modes, big=False):
    def register(fn):
        SPECS.append(Spec(name, description, fn, modes, big))
        return fn
    return register


class BasicBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


class TinyCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, stride=1, padding=1, bias=False),
                                  nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.block = BasicBlock(8)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        self.dw = nn.Sequential(nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8, bias=False),
                                nn.BatchNorm2d(8), nn.ReLU6(inplace=True))
        self.pw = nn.Sequential(nn.Conv2d(8, 12, 1, bias=False), nn.BatchNorm2d(12), nn.Hardswish())
        self.se_pool = nn.AdaptiveAvgPool2d(1)
        self.se_fc = nn.Conv2d(12, 12, 1)
        self.se_gate = nn.Hardsigmoid()
        self.act = nn.SiLU()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(12, 10)

    def forward(self, x):
        x = self.maxpool(self.block(self.stem(x)))
        x = self.pw(self.dw(x))
        x = x * self.se_gate(self.se_fc(self.se_pool(x)))
        x = self.pool(self.act(x))
        x = torch.flatten(x, 1)
        return self.fc(self.dropout(x))


def tiny_cnn_module() -> nn.Module:
    torch.manual_seed(0)
    m = TinyCNN()
    kaiming(m)
    randomize_batchnorm(m, seed=1)
    return m


@spec("tiny_cnn",
      "ResNet/MobileNet-style CNN, input [1,3,32,32] ([2,3,32,32] for `freeze`, whose two "
      "images have different statistics): Conv2d+BatchNorm2d+ReLU stem, BasicBlock "
      "(two 3x3 Conv+BN, in-place residual add, ReLU(inplace)), MaxPool2d(3,2,1), depthwise "
      "3x3 stride-2 Conv2d(groups=8)+BN+ReLU6, pointwise Conv+BN+Hardswish, a Hardsigmoid "
      "squeeze-excite gate (AdaptiveAvgPool2d(1), 1x1 Conv, mul), SiLU, AdaptiveAvgPool2d(1), "
      "torch.flatten, Dropout(0.2), Linear(12,10). BatchNorm running stats randomized.",
      ["trace", "script", "freeze"])
def make_tiny_cnn():
    x2 = randn(11, 2, 3, 32, 32)
    x2[1] = 1.5 * x2[1] + np.array([0.5, -0.3, 0.2], np.float32).reshape(3, 1, 1)
    return tiny_cnn_module(), [[randn(10, 1, 3, 32, 32)]], {"freeze": [[x2]]}


def transformer_module(seed, d_model, nhead, ff, layers, **kw) -> nn.Module:
    torch.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # enable_nested_tensor with norm_first
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=ff, dropout=0.1,
                                           batch_first=True, **kw)
        m = nn.TransformerEncoder(layer, num_layers=layers)
    # nn.TransformerEncoder deep-copies its layer, so every layer starts with the same weights
    # (and torch.jit.freeze then pools them into one set of constants): give each layer its
    # own, with non-trivial biases and LayerNorm affine parameters.
    with torch.no_grad():
        for name, p in m.named_parameters():
            if "norm" in name:
                p.copy_(0.5 + torch.rand_like(p) if name.endswith("weight") else 0.2 * torch.randn_like(p))
            elif p.dim() > 1:
                nn.init.xavier_uniform_(p)
            else:
                nn.init.normal_(p, std=0.1)
    return m


@spec("tiny_transformer",
      "nn.TransformerEncoder(nn.TransformerEncoderLayer(d_model=16, nhead=2, "
      "dim_feedforward=32, dropout=0.1, batch_first=True), num_layers=2) (post-norm, ReLU), "
      "input [1,5,16]. `freeze_trace` (traced under no_grad) holds only the fused "
      "torch._transformer_encoder_layer_fwd; `trace_grad` holds the unfused path (a plain "
      "no_grad `trace` would hold the fused op like `freeze_trace`, with the weights as "
      "module attributes: left out for size).",
      ["trace_grad", "script", "freeze_trace"])
def make_tiny_transformer():
    return transformer_module(0, 16, 2, 32, 2), [[randn(20, 1, 5, 16)]]


@spec("tiny_transformer_prenorm_gelu",
      "tiny_transformer with norm_first=True and activation=\"gelu\", input [1,5,16].",
      ["freeze", "freeze_trace"])
def make_tiny_transformer_prenorm_gelu():
    return (transformer_module(1, 16, 2, 32, 2, norm_first=True, activation="gelu"),
            [[randn(21, 1, 5, 16)]])


class OpsMix(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 6)
        self.ln = nn.LayerNorm(6)
        self.gn = nn.GroupNorm(3, 6)
        self.conv1d = nn.Conv1d(4, 5, 3, padding=1)
        self.convt = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1)
        self.w = nn.Parameter(torch.randn(6, 5))
        self.b = nn.Parameter(torch.randn(5))
        self.register_buffer("chan_bias", torch.randn(1, 3, 1, 1))

    def forward(self, x, seq, idx):
        # x [2,3,5,6] float32; seq [2,4,6] float32; idx [2,5] int64 in [0, 6)
        n = x.size(0)
        # chunk / split / cat / stack / permute / transpose / reshape / view, scalar arithmetic
        a, b = torch.chunk(x, 2, dim=3)                              # [2,3,5,3] each
        s0, s1, s2 = torch.split(x, [1, 2, 2], dim=2)                # rows 1 | 2 | 2
        arith = torch.cat([a * 2 + 1, 1 - b, (a / 3) ** 2], dim=1)   # [2,9,5,3]
        st = torch.stack([a, b], dim=-1)                             # [2,3,5,3,2]
        p = st.permute(0, 4, 1, 3, 2).contiguous()                   # [2,2,3,3,5]
        t = p.transpose(1, 2).reshape(n, 6, 15)                      # [2,6,15]
        flat = x.view(x.size(0), -1)                                 # [2,90]
        hw = x.size(2) * x.size(3)
        rows = x.reshape(n * 3, hw)                                  # [6,30]
        shaped = torch.cat([flat[:, :30], rows[:n].reshape(n, -1) / hw,
                            s0.reshape(n, -1) - s1.sum(2).reshape(n, -1),
                            s2.mean(dim=2).flatten(1)], dim=1)      # [2,96]
        # slicing, select, negative and strided slices, advanced indexing, broadcasting adds
        sl = x[:, 1:3, :3, :5]                                       # [2,2,3,5]
        sel = x[0]                                                   # [3,5,6]
        strided = x[:, :, ::2, -3:]                                  # [2,3,3,3]
        gathered = seq[:, :, idx[1, :3]]                             # [2,4,3]
        picked = x[:, :, 2, torch.tensor([5, 0, 3])]                 # [2,3,3]
        bcast = x + self.chan_bias + sel[1]                          # [2,3,5,6]
        # activations, softmax, reductions (keepdim and not), broadcasting
        act = torch.cat([torch.sigmoid(t[:, :2]), torch.tanh(t[:, 2:4]), F.gelu(t[:, 4:5]),
                         F.gelu(t[:, 5:], approximate="tanh")], dim=1)  # [2,6,15]
        probs = torch.softmax(t, dim=-1) + F.log_softmax(t, dim=1)
        red = t.mean(dim=(1, 2), keepdim=True) + t.sum(dim=1, keepdim=True) \
            - t.amax(dim=-1, keepdim=True) + t.sum(dim=2).unsqueeze(2)  # [2,6,15]
        # embedding (int64 input), layer_norm, group_norm
        e = self.ln(self.emb(idx)) + seq[:, :1, :]                   # [2,5,6]
        gn = self.gn(arith[:, :6])                                   # [2,6,5,3]
        # interpolation
        up = torch.cat([F.interpolate(sl, scale_factor=2.0, mode="nearest"),
                        F.interpolate(sl, scale_factor=2.0, mode="bilinear", align_corners=False),
                        F.interpolate(sl, scale_factor=2.0, mode="bilinear", align_corners=True)],
                       dim=1)                                        # [2,6,6,10]
        odd = F.interpolate(sl, size=(5, 7), mode="bilinear", align_corners=False)  # [2,2,5,7]
        # pooling with padding and ceil_mode
        mp = F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)  # [2,3,3,4]
        ap = F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)  # [2,3,3,4]
        ap2 = F.avg_pool2d(x[:, :, :, :5], 2, stride=2, ceil_mode=True,
                           count_include_pad=False)                  # [2,3,3,3]
        aap = F.adaptive_avg_pool2d(x, (2, 3))                       # [2,3,2,3], 5 -> 2 overlaps
        pools = torch.cat([mp.flatten(1), ap.flatten(1), ap2.flatten(1), aap.flatten(1)], dim=1)
        # convolutions
        c1 = self.conv1d(seq)                                        # [2,5,6]
        ct = self.convt(x[:, :, :3, :4])                             # [2,2,6,8]
        # matmul family
        mm = torch.matmul(seq, self.w)                               # [2,4,5]
        bm = torch.bmm(seq, seq.transpose(1, 2))                     # [2,4,4]
        am = torch.addmm(self.b, flat[:, :6], self.w)                # [2,5]
        m4 = torch.matmul(x, x.transpose(-1, -2))                    # [2,3,5,5]
        attn = torch.softmax(torch.matmul(seq, seq.transpose(1, 2)) / 6 ** 0.5, dim=-1) @ seq
        # casts
        cast = idx.to(torch.float32) / 3 + (x[:, 0, 0, :5] > 0).to(torch.float32)  # [2,5]
        return (arith, t, shaped, strided, gathered, picked, bcast, act, probs, red, e, gn,
                up, odd, pools, c1, ct, mm, bm, am, m4, attn, cast)


@spec("ops_mix",
      "one module calling many aten ops, inputs x float32[2,3,5,6], seq float32[2,4,6], idx "
      "int64[2,5]; 23 outputs: chunk/split/cat/stack/permute/transpose/reshape/view with "
      "x.size() arithmetic, scalar arithmetic (x*2+1, 1-x, x/3, x**2), slices x[:,1:3,:3,:5] and "
      "x[:,:,::2,-3:], select x[0], advanced indexing by an input tensor and by a constant "
      "tensor, broadcasting adds, sigmoid/tanh/gelu (none and tanh), softmax/log_softmax, "
      "mean/sum/amax over dims with keepdim, Embedding+LayerNorm, GroupNorm, F.interpolate "
      "(nearest x2, bilinear x2 align_corners False/True, bilinear to (5,7)), "
      "max_pool2d/avg_pool2d with padding and ceil_mode (and count_include_pad=False), "
      "adaptive_avg_pool2d to (2,3), Conv1d, ConvTranspose2d (stride 2, output_padding 1), "
      "matmul (3-D and 4-D)/bmm/addmm/@, .to(torch.float32) of int64 and bool. "
      "F.scaled_dot_product_attention does not exist in torch 1.13 (added in 2.0): the "
      "attention here is softmax(q k^T / sqrt(d)) v by hand.",
      ["trace", "script"])
def make_ops_mix():
    torch.manual_seed(3)
    m = OpsMix()
    kaiming(m)
    x = randn(30, 2, 3, 5, 6)
    seq = randn(31, 2, 4, 6)
    idx = rng(32).randint(0, 6, size=(2, 5)).astype(np.int64)
    return m, [[x, seq, idx]]


class ControlFlow(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(6, 6) for _ in range(3)])
        self.head = nn.Linear(6, 4)

    def forward(self, x):
        # data-dependent branch on a tensor value
        if x.sum() > 0:
            y = x * 2
        else:
            y = x - 1
        # counted loop, accumulating
        acc = torch.zeros_like(y)
        for i in range(3):
            acc = acc + y * (i + 1)
        # loop over a ModuleList
        for layer in self.layers:
            acc = torch.relu(layer(acc)) + acc
        # shape-dependent branch
        if x.dim() == 4:
            out = acc.mean(dim=1)
        else:
            out = acc
        return self.head(out)


@spec("control_flow",
      "scripted module, input float32[2,3,5,6]: `if x.sum() > 0: y = x * 2 else: y = x - 1`, "
      "`for i in range(3)` accumulating, a loop over an nn.ModuleList of three Linear(6,6) "
      "(relu + residual), `if x.dim() == 4` (mean over dim 1) branch, Linear(6,4) head. "
      "Input set 0 has a positive sum (the `x * 2` branch), set1/ a negative one (`x - 1`).",
      ["script", "freeze"])
def make_control_flow():
    torch.manual_seed(4)
    m = ControlFlow()
    kaiming(m)
    x0 = randn(40, 2, 3, 5, 6, shift=0.5)
    x1 = randn(41, 2, 3, 5, 6, shift=-0.5)
    assert x0.sum() > 0 > x1.sum()
    return m, [[x0], [x1]]


class RNNs(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 12, num_layers=2, batch_first=True)
        self.gru = nn.GRU(8, 12, bidirectional=True)

    def forward(self, x, s):
        # x [batch 2, time 7, 8] (batch_first); s [time 5, batch 3, 8]
        o1, (h1, c1) = self.lstm(x)
        o2, h2 = self.gru(s)
        return o1, h1, c1, o2, h2


@spec("rnn",
      "nn.LSTM(8, 12, num_layers=2, batch_first=True) on x float32[2,7,8] and "
      "nn.GRU(8, 12, bidirectional=True) on s float32[5,3,8] (time-major), zero initial "
      "states; outputs LSTM output, h_n, c_n, GRU output, h_n.",
      ["trace", "script"])
def make_rnn():
    torch.manual_seed(5)
    return RNNs(), [[randn(50, 2, 7, 8), randn(51, 5, 3, 8)]]


# The big models (--big): not committed.

@spec("resnet18", "torchvision.models.resnet18(weights=None), seeded init, BatchNorm "
      "running stats randomized, input [1,3,224,224].", ["trace", "script", "freeze"], big=True)
def make_resnet18():
    import torchvision
    torch.manual_seed(0)
    m = torchvision.models.resnet18(weights=None)
    randomize_batchnorm(m, seed=1)
    return m, [[randn(60, 1, 3, 224, 224)]]


@spec("mobilenet_v2", "torchvision.models.mobilenet_v2(weights=None), seeded init, BatchNorm "
      "running stats randomized, input [1,3,224,224].", ["trace", "script", "freeze"], big=True)
def make_mobilenet_v2():
    import torchvision
    torch.manual_seed(0)
    m = torchvision.models.mobilenet_v2(weights=None)
    randomize_batchnorm(m, seed=1)
    return m, [[randn(61, 1, 3, 224, 224)]]


@spec("transformer256",
      "nn.TransformerEncoder(nn.TransformerEncoderLayer(d_model=256, nhead=8, "
      "dim_feedforward=2048, dropout=0.1, batch_first=True), num_layers=2), input [1,32,256].",
      ["trace", "trace_grad", "script", "freeze"], big=True)
def make_transformer256():
    return transformer_module(0, 256, 8, 2048, 2), [[randn(62, 1, 32, 256)]]


# ------------------------------------------------------------------------ build

def convert(module: nn.Module, mode: str, inputs: list[np.ndarray]):
    args = tuple(torch.from_numpy(x) for x in inputs)
    module.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        if mode == "trace":
            with torch.no_grad():
                return torch.jit.trace(module, args)
        if mode == "trace_grad":
            # The trace checker reruns under no_grad, where the transformer takes its fused
            # path, and reports the graphs as different: skip it (outputs are compared below).
            return torch.jit.trace(module, args, check_trace=False)
        if mode == "script":
            return torch.jit.script(module)
        if mode == "freeze":
            return torch.jit.freeze(torch.jit.script(module))
        if mode == "freeze_trace":
            with torch.no_grad():
                return torch.jit.freeze(torch.jit.trace(module, args))
    raise ValueError(mode)


def build(s: Spec, root: Path) -> list[dict]:
    made = s.build()
    module, default_sets = made[0].eval(), made[1]
    per_mode = made[2] if len(made) > 2 else {}
    infos = []
    for mode in s.modes:
        input_sets = per_mode.get(mode, default_sets)
        expected = [run(module, inputs) for inputs in input_sets]
        for outs in expected:
            for o in outs:
                assert o.dtype == np.float32, (s.name, o.dtype)
                assert np.all(np.isfinite(o)), s.name
        folder = root / f"{s.name}_{mode}"
        tmp = root / f".{s.name}_{mode}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        ts = convert(module, mode, input_sets[0])
        torch.jit.save(ts, str(tmp / "model.pt"))
        loaded = torch.jit.load(str(tmp / "model.pt"), map_location="cpu").eval()
        errs = []
        for k, (inputs, want) in enumerate(zip(input_sets, expected)):
            got = run(loaded, inputs)
            assert len(got) == len(want), (s.name, mode, len(got), len(want))
            errs.append(max(rel_err(g, w) for g, w in zip(got, want)))
            if errs[-1] > RTOL:
                raise AssertionError(f"{s.name}_{mode}: the saved archive differs from eager "
                                     f"PyTorch by {errs[-1]:g} (relative) on input set {k}")
            d = tmp if k == 0 else tmp / f"set{k}"
            d.mkdir(exist_ok=True)
            for i, x in enumerate(inputs):
                save_npy(d / f"input_{i}.npy", x)
            for i, y in enumerate(want):
                save_npy(d / f"expected_{i}.npy", y)
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(tmp, folder)
        size = (folder / "model.pt").stat().st_size
        total = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
        print(f"{folder.name}: model.pt {fmt_size(size)} (folder {fmt_size(total)}), "
              f"archive vs eager {max(errs):.1e}", flush=True)
        infos.append(dict(spec=s, mode=mode, folder=folder, size=size, total=total,
                          inputs=input_sets[0], outputs=expected[0], sets=len(input_sets),
                          err=max(errs), ops=archive_ops(folder / "model.pt")))
    return infos


def versions() -> str:
    import torchvision
    return (f"torch {torch.__version__}, torchvision {torchvision.__version__}, "
            f"numpy {np.__version__}, Python {platform.python_version()}")


def op_line(c: collections.Counter) -> str:
    return ", ".join(f"{k} ×{v}" if v > 1 else k for k, v in sorted(c.items())) or "—"


def write_readme(root: Path, infos: list[dict], big: bool) -> None:
    lines = ["# TorchScript test models" + (" (big, not committed)" if big else ""), ""]
    cmd = ("/usr/bin/python3 models/torch/make_torch_models.py" + (" --big OUTDIR" if big else ""))
    lines += [
        f"Made by `{cmd}` (Debian's python3-torch and python3-torchvision). Every file here is "
        "generated; do not edit. This README is rewritten by the same script.",
        "",
        "Each folder `<model>_<mode>/` holds `model.pt` (torch.jit.save), `input_K.npy` (the "
        "forward's arguments in order, seeded) and `expected_K.npy` (the outputs in order, "
        "float32, from the eager module in eval mode under torch.no_grad(), one thread). "
        "`control_flow_*` also have `set1/` with a second input set that takes the other "
        "branch. Modes: `trace` = torch.jit.trace under no_grad; `trace_grad` = trace with "
        "autograd on (check_trace=False; the transformers record their unfused path); "
        "`script` = torch.jit.script; `freeze` = torch.jit.freeze(torch.jit.script(m.eval())); "
        "`freeze_trace` = torch.jit.freeze of the no_grad trace.",
        "",
        "Each archive was loaded back and run: `err` is max|archive − eager| / max(1, "
        "max|eager|) over outputs and input sets. The .npy files are byte-identical on a "
        "rerun on the same machine, and so are the model.pt archives (fixed zip timestamps; "
        "the script reruns itself from the repository root with PYTHONHASHSEED=0, so that "
        "code/*.debug_pkl records a relative path and class constants print in one order). "
        "`version` is the archive's "
        "`version` record (`.data/version` from 6 on): 3 unless an upgraded op bumps it "
        "(div: 4, gelu with `approximate`: 10).",
        "",
        f"Versions: {versions()}.",
        "",
        "| folder | model.pt | folder | version | inputs | outputs | err |",
        "|---|---|---|---|---|---|---|",
    ]
    for i in infos:
        outs = i["outputs"]
        out_s = ", ".join(shape_str(o) for o in outs) if len(outs) <= 5 else \
            f"{len(outs)} tensors ({', '.join(shape_str(o) for o in outs[:3])}, …)"
        lines.append(f"| `{i['folder'].name}` | {fmt_size(i['size'])} | {fmt_size(i['total'])} | "
                     f"{i['ops']['version']} | "
                     f"{', '.join(shape_str(x) for x in i['inputs'])} | {out_s} | {i['err']:.1e} |")
    total = sum(i["total"] for i in infos)
    lines += ["", f"Total: {fmt_size(total)}.", ""]
    by_model = collections.OrderedDict()
    for i in infos:
        by_model.setdefault(i["spec"].name, []).append(i)
    for name, group in by_model.items():
        s = group[0]["spec"]
        lines += [f"## {name}", "", s.description, ""]
        if len(group[0]["outputs"]) > 5:
            lines += ["Outputs: " + ", ".join(f"{k}: {shape_str(o)}" for k, o in
                                               enumerate(group[0]["outputs"])) + ".", ""]
        for i in group:
            ops = i["ops"]
            lines.append(f"- `{i['mode']}`: aten: {op_line(ops['aten'])}. "
                         f"Other: {op_line(ops['ns'])}. Builtins: {op_line(ops['builtins'])}."
                         + (f" torch.nn.functional compiled in: {', '.join(sorted(ops['funcs']))}."
                            if ops["funcs"] else ""))
        lines.append("")
    (root / "README.md").write_text("\n".join(lines))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--big", metavar="OUTDIR", type=Path,
                    help="write the big models (not committed) under OUTDIR instead")
    args = ap.parse_args(argv)
    if os.environ.get("_KILN_MAKE_TORCH_MODELS") != "1":
        # Rerun from the repository root, this file run by its relative path, with
        # PYTHONHASHSEED=0: code/*.debug_pkl then records "models/torch/make_torch_models.py"
        # rather than this checkout's absolute path, and TorchScript's printing of class
        # constants (in set order, which follows str hashing) is the same every time.
        rel = HERE.relative_to(REPO) / Path(__file__).name
        new_argv = ["--big", str(args.big.resolve())] if args.big else []
        env = dict(os.environ, PYTHONHASHSEED="0", _KILN_MAKE_TORCH_MODELS="1")
        os.chdir(REPO)
        runner = (f"import runpy, sys; sys.argv = [{str(rel)!r}] + sys.argv[1:]; "
                  f"runpy.run_path({str(rel)!r}, run_name='__main__')")
        os.execve(sys.executable, [sys.executable, "-c", runner, *new_argv], env)
    torch.set_num_threads(1)
    root = args.big if args.big else HERE
    root.mkdir(parents=True, exist_ok=True)
    infos = []
    for s in SPECS:
        if s.big == bool(args.big):
            infos += build(s, root)
    write_readme(root, infos, bool(args.big))
    total = sum(i["total"] for i in infos)
    print(f"total {fmt_size(total)} in {len(infos)} folders under {root}")
    if not args.big and total > MAX_COMMITTED_BYTES:
        print(f"make_torch_models.py: the committed models take {fmt_size(total)}, over "
              f"{fmt_size(MAX_COMMITTED_BYTES)}: make them smaller", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
