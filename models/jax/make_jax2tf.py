"""Writes jax2tf_cnn/, a jax2tf SavedModel for kiln's TensorFlow frontend: a small CNN converted
with jax2tf.convert(f, native_serialization=True), so that its graph is one XlaCallModule op
whose `module` attribute is MLIR bytecode of VHLO, with the weights as tf.Variables read and
passed to it.

    python3 -m venv /tmp/jaxtf && /tmp/jaxtf/bin/pip install jax tensorflow-cpu flatbuffers
    /tmp/jaxtf/bin/python models/jax/make_jax2tf.py [OUT_DIR]

OUT_DIR defaults to this script's folder. Writes jax2tf_cnn/saved_model/, input_0.npy and
JAX's output, expected_0.npy.
"""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import tensorflow as tf
from jax import lax
from jax.experimental import jax2tf

jax.config.update("jax_platform_name", "cpu")


def normal(rng, shape, scale):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def cnn(p, x):
    y = lax.conv_general_dilated(x, p["conv"]["w"], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = jax.nn.relu(y + p["conv"]["b"])
    y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    y = y.reshape(y.shape[0], -1)
    return jnp.tanh(y @ p["dense"]["w"] + p["dense"]["b"])


def main():
    out = os.path.join(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)), "jax2tf_cnn")
    rng = np.random.default_rng(11)
    params = {"conv": {"w": normal(rng, (3, 3, 3, 8), 0.3), "b": normal(rng, (8,), 0.1)},
              "dense": {"w": normal(rng, (8 * 4 * 4, 5), 0.1), "b": normal(rng, (5,), 0.1)}}
    x = normal(rng, (2, 8, 8, 3), 1.0)
    module = tf.Module()
    module.params = tf.nest.map_structure(tf.Variable, params)
    converted = jax2tf.convert(cnn, native_serialization=True, with_gradient=False)
    module.f = tf.function(lambda x: converted(module.params, x), autograph=False,
                           input_signature=[tf.TensorSpec(x.shape, tf.float32, name="x")])
    tf.saved_model.save(module, os.path.join(out, "saved_model"), signatures=module.f)
    np.save(os.path.join(out, "input_0.npy"), x)
    np.save(os.path.join(out, "expected_0.npy"), np.asarray(jax.jit(cnn)(params, x)))
    print(f"{out}: written")


if __name__ == "__main__":
    main()
