"""Writes the jax.export fixtures of kiln's JAX frontend: serialized artifacts, whose module
is MLIR bytecode of StableHLO's portable form (VHLO) inside a flatbuffer.

    /tmp/jaxvenv/bin/pip install flatbuffers  # for Exported.serialize()
    /tmp/jaxvenv/bin/python models/jax/make_jax_export.py [OUT_DIR]

OUT_DIR defaults to this script's folder. Each model is written to MODEL/:

- model.jax_exported: `jax.export.export(jax.jit(f))(spec).serialize()`, the weights inline;
- model.mlirbc: the bytecode alone (the artifact's mlir_module_serialized field);
- input_K.npy and JAX's own outputs, expected_K.npy (CPU).

- params.npz (mlp_export_params): the weights, when they are arguments of @main, keyed arg0,
  arg1, ... in pytree order.

mlp_export is a two-layer MLP (dot_general, add, tanh, relu), mlp_export_params the same with
its weights as arguments; cnn_export, transformer_export and ops_mix_export are
make_jax_models.py's cnn, transformer block and op mix (three inputs, one output per function).
"""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import export

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_jax_models import D, cnn, cnn_params, normal, ops_mix, transformer, transformer_params  # noqa: E402

jax.config.update("jax_platform_name", "cpu")


def mlp_params(rng):
    return {"w1": normal(rng, (8, 16), 0.4), "b1": normal(rng, (16,), 0.1),
            "w2": normal(rng, (16, 4), 0.3), "b2": normal(rng, (4,), 0.1)}


def mlp(params, x):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jax.nn.relu(h @ params["w2"] + params["b2"]) - 0.5 * h[:, :4]


def write(folder, fn, args, params=None):
    """Exports jax.jit(fn) for `args` (and the pytree `params` first, as arguments, when given)."""
    os.makedirs(folder, exist_ok=True)
    leaves = jax.tree_util.tree_leaves(params) if params is not None else []
    call_args = ((params,) if params is not None else ()) + tuple(args)
    specs = [jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), a) for a in call_args]
    exp = export.export(jax.jit(fn), platforms=["cpu"])(*specs)
    blob = exp.serialize()
    with open(os.path.join(folder, "model.jax_exported"), "wb") as fp:
        fp.write(blob)
    with open(os.path.join(folder, "model.mlirbc"), "wb") as fp:
        fp.write(exp.mlir_module_serialized)
    for k, a in enumerate(args):
        np.save(os.path.join(folder, f"input_{k}.npy"), a)
    outs = jax.jit(fn)(*call_args)
    for k, y in enumerate(outs if isinstance(outs, (tuple, list)) else [outs]):
        np.save(os.path.join(folder, f"expected_{k}.npy"), np.asarray(y))
    if params is not None:
        np.savez(os.path.join(folder, "params.npz"), **{f"arg{i}": np.asarray(v) for i, v in enumerate(leaves)})
    print(f"{folder}: {len(blob)} bytes of artifact, {len(exp.mlir_module_serialized)} of bytecode")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    rng = np.random.default_rng(7)
    params, x = mlp_params(rng), normal(rng, (3, 8), 1.0)
    write(os.path.join(out, "mlp_export"), lambda x: mlp(params, x), (x,))
    write(os.path.join(out, "mlp_export_params"), mlp, (x,), params)
    params, x = cnn_params(rng), normal(rng, (2, 16, 16, 3), 1.0)
    write(os.path.join(out, "cnn_export"), lambda x: cnn(params, x), (x,))
    params, x = transformer_params(rng), normal(rng, (2, 8, D), 1.0)
    write(os.path.join(out, "transformer_export"), lambda x: transformer(params, x), (x,))
    args = (normal(rng, (2, 9, 9, 4), 1.0), normal(rng, (3, 3, 4, 6), 0.3), normal(rng, (3, 5), 1.0))
    write(os.path.join(out, "ops_mix_export"), ops_mix, args)


if __name__ == "__main__":
    main()
