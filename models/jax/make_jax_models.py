"""Writes the StableHLO fixtures of kiln's JAX frontend (frontend/stablehlo/).

    python3 -m venv /tmp/jaxvenv && /tmp/jaxvenv/bin/pip install jax numpy
    /tmp/jaxvenv/bin/python models/jax/make_jax_models.py [OUT_DIR]

OUT_DIR defaults to this script's folder. Each model is written twice:

- MODEL/model.mlir: `jax.jit(lambda x: f(params, x)).lower(x).as_text()`, the weights inline
  as dense<...> constants;
- MODEL_params/model.mlir and params.npz: `jax.jit(f).lower(params, x).as_text()`, the
  weights as arguments of @main. cnn_params keys the .npz by argument index (arg0, arg1, ...);
  transformer_params is printed with debug_info=True, so that each argument carries its
  pytree path as a location (loc("params['ln1']['scale']")), and keys the .npz by those names.

cnn_generic is the cnn printed in MLIR's generic form
(`lowered.compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)`).

Beside each: input_0.npy and JAX's own output, expected_0.npy (CPU, float32). ops_mix has
three inputs and one output for each of some forty small functions (input_K.npy,
expected_K.npy).
"""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

jax.config.update("jax_platform_name", "cpu")


def normal(rng, shape, scale):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# ---- a small CNN: NHWC, HWIO kernels --------------------------------------------------------

def cnn_params(rng):
    return {
        "conv1": {"w": normal(rng, (3, 3, 3, 8), 0.3), "b": normal(rng, (8,), 0.1)},
        "dw": {"w": normal(rng, (3, 3, 1, 8), 0.3), "b": normal(rng, (8,), 0.1)},
        "conv2": {"w": normal(rng, (3, 3, 8, 16), 0.2), "b": normal(rng, (16,), 0.1)},
        "dense": {"w": normal(rng, (144, 10), 0.1), "b": normal(rng, (10,), 0.1)},
    }


def conv(x, p, stride=1, padding="SAME", groups=1):
    y = lax.conv_general_dilated(x, p["w"], (stride, stride), padding, dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                 feature_group_count=groups)
    return y + p["b"]


def cnn(params, x):
    y = jax.nn.relu(conv(x, params["conv1"]))                                                    # 16x16x8
    y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")             # 8x8x8 max pool
    y = jax.nn.relu(conv(y, params["dw"], groups=8))                                             # depthwise
    y = jax.nn.relu(conv(y, params["conv2"], padding="VALID"))                                   # 6x6x16
    y = lax.reduce_window(y, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0            # 3x3x16 avg pool
    y = y.reshape(y.shape[0], -1)
    return y @ params["dense"]["w"] + params["dense"]["b"]


# ---- a transformer block: layernorm, 2-head attention with softmax, gelu MLP ----------------

D, HEADS, HIDDEN = 16, 2, 32


def transformer_params(rng):
    dense = lambda n, m: {"w": normal(rng, (n, m), 1 / np.sqrt(n)), "b": normal(rng, (m,), 0.05)}
    ln = lambda: {"scale": (1 + normal(rng, (D,), 0.1)), "bias": normal(rng, (D,), 0.1)}
    return {"ln1": ln(), "qkv": dense(D, 3 * D), "out": dense(D, D), "ln2": ln(),
            "mlp1": dense(D, HIDDEN), "mlp2": dense(HIDDEN, D)}


def layernorm(x, p):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * p["scale"] + p["bias"]


def transformer(params, x):
    b, s, _ = x.shape
    h = layernorm(x, params["ln1"])
    qkv = h @ params["qkv"]["w"] + params["qkv"]["b"]
    q, k, v = jnp.split(qkv, 3, axis=-1)
    heads = lambda t: t.reshape(b, s, HEADS, D // HEADS)
    q, k, v = heads(q), heads(k), heads(v)
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(D // HEADS).astype(np.float32)
    att = jax.nn.softmax(scores, axis=-1)
    o = jnp.einsum("bhqk,bkhd->bqhd", att, v).reshape(b, s, D)
    x = x + o @ params["out"]["w"] + params["out"]["b"]
    h = layernorm(x, params["ln2"])
    h = jax.nn.gelu(h @ params["mlp1"]["w"] + params["mlp1"]["b"], approximate=False)
    return x + h @ params["mlp2"]["w"] + params["mlp2"]["b"]


# ---- many ops at once: convolution layouts, pools, reductions, elementwise, shapes ----------

def ops_mix(x, w, v):
    nchw = lambda t: t.transpose(0, 3, 1, 2)
    dn = ("NHWC", "HWIO", "NHWC")
    return (
        lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=dn),
        lax.conv_general_dilated(nchw(x), w.transpose(3, 2, 0, 1), (1, 1), [(2, 1), (0, 2)], rhs_dilation=(2, 1),
                                 dimension_numbers=("NCHW", "OIHW", "NCHW")),
        lax.conv_general_dilated(x[:, 0], w[0], (1,), "SAME", dimension_numbers=("NWC", "WIO", "NWC")),
        lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
        lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 2, 2, 1), "SAME") / 9.0,
        lax.reduce_window(x, jnp.inf, lax.min, (1, 2, 2, 1), (1, 1, 1, 1), "VALID"),
        jnp.max(v, axis=0), jnp.min(v, axis=1), jnp.sum(v), jnp.prod(v, axis=1), jnp.var(v, axis=0),
        jnp.all(v > -2, axis=1), jnp.any(v > 1, axis=0), jnp.argmax(v, axis=1), jnp.argmin(jnp.round(v), axis=0),
        jnp.exp(v), jnp.log1p(jnp.abs(v)), jnp.sqrt(jnp.abs(v)), v ** 3, jnp.power(jnp.abs(v), 0.7),
        jax.nn.sigmoid(v), jax.nn.gelu(v), jnp.clip(v, -0.5, 0.5), jnp.sign(v), jnp.floor(v), jnp.expm1(v),
        jnp.round(v), v % 0.3, jnp.sin(v), jax.nn.silu(v), jax.nn.softplus(v), jax.nn.elu(v),
        v.T, v[::2, 1:4], jnp.concatenate([v, v * 2], 0), jnp.broadcast_to(v[:, None, :], (3, 2, 5)),
        jnp.pad(v, ((1, 0), (0, 2))), jnp.flip(v, 0),
        jnp.einsum("ij,kj->ik", v, v), jnp.einsum("i,j->ij", v[0], v[1]),
        jnp.where(v > 0, v, 0.1 * v), (v != v[0]).astype(jnp.int32), jnp.arange(12).reshape(3, 4) * 2 + 1,
        v.astype(jnp.int32) // 2, jax.nn.log_softmax(v, axis=0), jax.nn.logsumexp(v, axis=1),
        (v.astype(jnp.float16) * 2).astype(jnp.float32),
        jnp.take(v, jnp.array([4, 0, 2]), axis=1), v[jnp.array([[2, 1], [0, 0]])],
    )


# ---- writing ----------------------------------------------------------------------------------

def write(folder, text, x, y, params=None):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "model.mlir"), "w") as f:
        f.write(text)
    np.save(os.path.join(folder, "input_0.npy"), x)
    if y is not None:
        np.save(os.path.join(folder, "expected_0.npy"), np.asarray(y))
    if params is not None:
        np.savez(os.path.join(folder, "params.npz"), **params)
    print(f"{folder}: {len(text)} bytes of text")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    rng = np.random.default_rng(42)
    models = [("cnn", cnn, cnn_params(rng), normal(rng, (2, 16, 16, 3), 1.0), False),
              ("transformer", transformer, transformer_params(rng), normal(rng, (2, 8, D), 1.0), True)]
    for name, f, params, x, by_name in models:
        y = jax.jit(f)(params, x)
        inline_lowered = jax.jit(lambda x, f=f, params=params: f(params, x)).lower(x)
        write(os.path.join(out, name), inline_lowered.as_text(), x, y)
        if name == "cnn":  # MLIR's generic form, module and functions included
            ir = inline_lowered.compiler_ir("stablehlo")
            write(os.path.join(out, name + "_generic"), ir.operation.get_asm(print_generic_op_form=True), x, y)
        lowered = jax.jit(f).lower(params, x)
        flat = jax.tree_util.tree_flatten_with_path(params)[0]
        if by_name:
            text = lowered.as_text(debug_info=True)
            named = {"params" + jax.tree_util.keystr(path): np.asarray(v) for path, v in flat}
        else:
            text = lowered.as_text()
            named = {f"arg{i}": np.asarray(v) for i, (_, v) in enumerate(flat)}
        write(os.path.join(out, name + "_params"), text, x, y, named)
    args = (normal(rng, (2, 9, 9, 4), 1.0), normal(rng, (3, 3, 4, 6), 0.3), normal(rng, (3, 5), 1.0))
    folder = os.path.join(out, "ops_mix")
    write(folder, jax.jit(ops_mix).lower(*args).as_text(), args[0], None)
    for k, a in enumerate(args):
        np.save(os.path.join(folder, f"input_{k}.npy"), a)
    for k, y in enumerate(jax.jit(ops_mix)(*args)):
        np.save(os.path.join(folder, f"expected_{k}.npy"), np.asarray(y))


if __name__ == "__main__":
    main()
