"""Writes the jax.export fixtures of kiln's JAX frontend: serialized artifacts, whose module
is MLIR bytecode of StableHLO's portable form (VHLO) inside a flatbuffer.

    /tmp/jaxvenv/bin/pip install flatbuffers  # for Exported.serialize()
    /tmp/jaxvenv/bin/python models/jax/make_jax_export.py [OUT_DIR]

OUT_DIR defaults to this script's folder. Each model is written to MODEL/:

- model.jax_exported: `jax.export.export(jax.jit(f))(spec).serialize()`, the weights inline;
- model.mlirbc: the bytecode alone (the artifact's mlir_module_serialized field);
- input_0.npy and JAX's own output, expected_0.npy (CPU, float32).

mlp_export is a two-layer MLP (dot_general, add, tanh, relu); cnn_export is make_jax_models.py's
cnn (convolutions, reduce_window pools, a depthwise conv).
"""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import export

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_jax_models import cnn, cnn_params, normal  # noqa: E402

jax.config.update("jax_platform_name", "cpu")


def mlp_params(rng):
    return {"w1": normal(rng, (8, 16), 0.4), "b1": normal(rng, (16,), 0.1),
            "w2": normal(rng, (16, 4), 0.3), "b2": normal(rng, (4,), 0.1)}


def mlp(params, x):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jax.nn.relu(h @ params["w2"] + params["b2"]) - 0.5 * h[:, :4]


def write(folder, f, params, x):
    os.makedirs(folder, exist_ok=True)
    fn = jax.jit(lambda x: f(params, x))
    exp = export.export(fn, platforms=["cpu"])(jax.ShapeDtypeStruct(x.shape, x.dtype))
    blob = exp.serialize()
    with open(os.path.join(folder, "model.jax_exported"), "wb") as fp:
        fp.write(blob)
    with open(os.path.join(folder, "model.mlirbc"), "wb") as fp:
        fp.write(exp.mlir_module_serialized)
    np.save(os.path.join(folder, "input_0.npy"), x)
    np.save(os.path.join(folder, "expected_0.npy"), np.asarray(fn(x)))
    print(f"{folder}: {len(blob)} bytes of artifact, {len(exp.mlir_module_serialized)} of bytecode")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    rng = np.random.default_rng(7)
    write(os.path.join(out, "mlp_export"), mlp, mlp_params(rng), normal(rng, (3, 8), 1.0))
    write(os.path.join(out, "cnn_export"), cnn, cnn_params(rng), normal(rng, (2, 16, 16, 3), 1.0))


if __name__ == "__main__":
    main()
