#!/usr/bin/env python3
"""Writes the TensorFlow fixtures of kiln's TensorFlow frontend, with seeded inputs and TF's outputs.

    python3 -m venv /work/wt/tfvenv && /work/wt/tfvenv/bin/pip install tensorflow-cpu numpy
    /work/wt/tfvenv/bin/python models/tensorflow/make_tf_models.py [OUT_DIR [NAME ...]]

OUT_DIR defaults to this script's folder; NAMEs (cnn, lstm, ...) remake only those models. Each model gets a folder holding:

    saved_model/     a TF2 SavedModel (cnn, transformer, embedding, lstm, gru: Keras 3
                     model.export; control_flow, control_flow_stateless, ops_mix:
                     tf.saved_model.save of a tf.Module)
    frozen.pb        (frozen/ only, instead of saved_model/) a GraphDef whose variables were
                     folded into Const nodes; inputs.txt/outputs.txt name its feed/fetch nodes
    inputs.txt       the serving signature's input keys, one a line, in input_K order (sorted)
    outputs.txt      its output keys, one a line, in expected_K order (sorted)
    input_K.npy      seeded inputs (float32; int32 for token ids and integer operands)
    expected_K.npy   TensorFlow's outputs, from the SavedModel loaded back from disk and called
                     through signatures["serving_default"] (frozen/: the GraphDef imported from
                     frozen.pb), so the reference is what the file holds, not the Python model

control_flow_neg/ holds only model.txt (the relative path ../control_flow/saved_model),
input_0.npy and expected_0.npy: an input taking the other tf.cond branch.

Inputs hold batch 1 to 3. The tf.Module signatures are fully static; Keras's model.export
writes the batch dimension as -1 whatever keras.Input(batch_size=...) says. Weights are seeded,
and biases, BatchNormalization statistics and normalization scales are randomized, so no
parameter is a trivial 0 or 1. oneDNN is switched off (TF_ENABLE_ONEDNN_OPTS=0) so that the
reference comes from TF's plain Eigen kernels.

A rerun writes byte-identical .npy, .txt and frozen.pb files. SavedModels are not byte-stable:
fingerprint.pb holds a random uuid, and Keras exports list their variables in an order that
follows object addresses (TF collects a function's variables in an identity set).

The README.md next to this script is rewritten with each model's op types (list_ops.py).
"""
import os
import sys

# Before importing TensorFlow: plain Eigen kernels, and no log noise.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from keras import layers  # noqa: E402
from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import list_ops  # noqa: E402

SEED = 20240611


# ---- shared helpers -------------------------------------------------------------------------

def seeded(offset):
    """A fresh generator per model, so that adding a model does not change the others."""
    keras.utils.set_random_seed(SEED + offset)  # Python, NumPy and TF seeds (Keras initializers)
    return np.random.default_rng(SEED + offset)


def normal(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def randomize_keras_weights(model, rng):
    """Replaces the Keras defaults that would hide bugs (zero biases, BN mean 0 / var 1, unit
    gammas) by random values; kernels keep their seeded Glorot initialization."""
    for w in model.weights:
        name = w.path.split("/")[-1]
        shape = tuple(w.shape)
        if name == "moving_variance":
            w.assign(rng.uniform(0.5, 1.5, shape).astype(np.float32))
        elif name == "gamma":
            w.assign((1.0 + rng.standard_normal(shape) * 0.2).astype(np.float32))
        elif name in ("bias", "beta", "moving_mean"):
            w.assign(normal(rng, shape, 0.2))


def clean_dir(path):
    """Empties a model folder so that a rerun leaves no stale files behind."""
    if os.path.isdir(path):
        tf.io.gfile.rmtree(path)
    os.makedirs(path)


def save_arrays(folder, prefix, arrays):
    for k, a in enumerate(arrays):
        np.save(os.path.join(folder, f"{prefix}_{k}.npy"), a)


def write_lines(path, lines):
    with open(path, "w") as f:
        f.write("".join(f"{line}\n" for line in lines))


def write_reference(folder, saved_model_dir, inputs, with_names=True):
    """Runs the SavedModel as stored (serving_default) on inputs {key: array} and writes
    input_K/expected_K in sorted key order, plus inputs.txt/outputs.txt naming the keys."""
    signature = tf.saved_model.load(saved_model_dir).signatures["serving_default"]
    _, specs = signature.structured_input_signature
    in_keys = sorted(specs)
    if in_keys != sorted(inputs):
        raise ValueError(f"{folder}: signature inputs {in_keys}, given {sorted(inputs)}")
    outputs = signature(**{k: tf.constant(inputs[k]) for k in in_keys})
    out_keys = sorted(outputs)
    save_arrays(folder, "input", [inputs[k] for k in in_keys])
    save_arrays(folder, "expected", [outputs[k].numpy() for k in out_keys])
    if with_names:
        write_lines(os.path.join(folder, "inputs.txt"), in_keys)
        write_lines(os.path.join(folder, "outputs.txt"), out_keys)


def export_keras(root, name, model, inputs):
    """Keras 3 model.export (a SavedModel with a serve/serving_default endpoint) + reference."""
    folder = os.path.join(root, name)
    clean_dir(folder)
    saved = os.path.join(folder, "saved_model")
    model.export(saved, format="tf_saved_model", verbose=False)
    write_reference(folder, saved, inputs)


# ---- Keras models ---------------------------------------------------------------------------

def make_cnn(root):
    """NHWC CNN over the Keras conv/pool layers a MobileNet-like network uses."""
    rng = seeded(1)
    x = keras.Input((16, 16, 3), batch_size=1, name="image")
    y = layers.Conv2D(8, 3, padding="same", activation="relu")(x)           # 16x16x8
    y = layers.BatchNormalization()(y)
    y = layers.DepthwiseConv2D(3, padding="same")(y)                        # 16x16x8
    y = layers.Conv2D(12, 3, strides=2, padding="valid")(y)                 # 7x7x12
    y = layers.ReLU(max_value=6.0)(y)
    y = layers.ZeroPadding2D(((1, 0), (1, 2)))(y)                           # 8x10x12, uneven pads
    y = layers.MaxPooling2D(2)(y)                                           # 4x5x12
    # SAME average pooling: TF divides by the count of real (unpadded) elements at the border.
    y = layers.AveragePooling2D(3, strides=1, padding="same")(y)            # 4x5x12
    y = layers.GlobalAveragePooling2D()(y)                                  # 12
    y = layers.Dense(10)(y)
    y = layers.Softmax()(y)
    model = keras.Model(x, y, name="cnn")
    randomize_keras_weights(model, rng)
    export_keras(root, "cnn", model, {"image": normal(rng, (1, 16, 16, 3))})


def make_transformer(root):
    """Pre-norm transformer block: LN, 2-head self-attention, residual, LN, exact-gelu MLP."""
    rng = seeded(2)
    x = keras.Input((8, 16), batch_size=1, name="tokens")
    h = layers.LayerNormalization(epsilon=1e-5)(x)
    h = layers.MultiHeadAttention(num_heads=2, key_dim=8)(h, h)
    h = layers.Dropout(0.1)(h)  # identity at inference: checks the export drops it
    x1 = layers.Add()([x, h])
    h = layers.LayerNormalization(epsilon=1e-5)(x1)
    h = layers.Dense(32)(h)
    h = keras.ops.gelu(h, approximate=False)  # erf form, not the tanh approximation
    h = layers.Dense(16)(h)
    h = layers.Dropout(0.1)(h)
    y = layers.Add()([x1, h])
    model = keras.Model(x, y, name="transformer")
    randomize_keras_weights(model, rng)
    export_keras(root, "transformer", model, {"tokens": normal(rng, (1, 8, 16))})


def make_embedding(root):
    """int32 token ids -> Embedding lookup + position embedding -> Dense: a gather on a variable."""
    rng = seeded(3)
    ids = keras.Input((8,), batch_size=2, dtype="int32", name="ids")
    h = layers.Embedding(32, 16)(ids)                                       # 2x8x16
    # Positions derived from ids keep the lookup symbolic (a bare arange would be run eagerly
    # and its embedding weights left out of the model).
    positions = keras.ops.zeros_like(ids) + keras.ops.arange(8, dtype="int32")
    positions = layers.Embedding(8, 16)(positions)                          # 2x8x16
    h = layers.Add()([h, positions])
    y = layers.Dense(4)(h)
    model = keras.Model(ids, y, name="embedding")
    randomize_keras_weights(model, rng)
    export_keras(root, "embedding", model, {"ids": rng.integers(0, 32, (2, 8)).astype(np.int32)})


def make_lstm(root):
    """Sequence classifier: LSTM(8) keeping the last state, Dense(3), softmax."""
    rng = seeded(4)
    x = keras.Input((6, 4), batch_size=2, name="sequence")
    h = layers.LSTM(8)(x)
    y = layers.Dense(3, activation="softmax")(h)
    model = keras.Model(x, y, name="lstm")
    randomize_keras_weights(model, rng)
    export_keras(root, "lstm", model, {"sequence": normal(rng, (2, 6, 4))})


def make_gru(root):
    """Per-step outputs of a GRU over a batch of None: GRU(8, return_sequences) writes every
    step into a TensorList at the step's index; TimeDistributed Dense(2)."""
    rng = seeded(5)
    x = keras.Input((5, 3), name="frames")
    h = layers.GRU(8, return_sequences=True)(x)
    y = layers.Dense(2)(h)
    model = keras.Model(x, y, name="gru")
    randomize_keras_weights(model, rng)
    export_keras(root, "gru", model, {"frames": normal(rng, (3, 5, 3))})


# ---- tf.Module models -----------------------------------------------------------------------

class ControlFlow(tf.Module):
    """tf.cond on a data-dependent predicate, then a 3-trip tf.while_loop, both reading variables
    inside (so TF saves the stateful If and While)."""

    def __init__(self, rng):
        super().__init__()
        self.scale = tf.Variable(normal(rng, (4,), 0.5) + 1.0, name="scale")
        self.shift = tf.Variable(normal(rng, (4,), 0.5), name="shift")
        self.w = tf.Variable(normal(rng, (4, 4), 0.6), name="w")

    @tf.function(input_signature=[tf.TensorSpec([2, 4], tf.float32, name="x")])
    def __call__(self, x):
        # Two branches that differ in ops and variables, so taking the wrong one shows.
        y = tf.cond(tf.reduce_sum(x) > 0.0,
                    lambda: x * self.scale + self.shift,
                    lambda: tf.nn.relu(x - self.shift) * 2.0 - self.scale)
        # A counted loop carrying (i, y): y = tanh(y @ W) three times.
        _, y = tf.while_loop(lambda i, y: i < 3,
                             lambda i, y: (i + 1, tf.tanh(tf.matmul(y, self.w))),
                             [tf.constant(0), y])
        return {"y": y}


def save_module(module, saved_dir):
    tf.saved_model.save(module, saved_dir, signatures={"serving_default": module.__call__})


def make_control_flow(root):
    rng = seeded(5)
    module = ControlFlow(rng)
    folder = os.path.join(root, "control_flow")
    clean_dir(folder)
    saved = os.path.join(folder, "saved_model")
    save_module(module, saved)
    positive = np.abs(normal(rng, (2, 4))) + 0.1   # sum > 0: the then branch
    write_reference(folder, saved, {"x": positive})

    neg = os.path.join(root, "control_flow_neg")
    clean_dir(neg)
    write_lines(os.path.join(neg, "model.txt"), ["../control_flow/saved_model"])
    negative = -np.abs(normal(rng, (2, 4))) - 0.1  # sum < 0: the else branch
    write_reference(neg, saved, {"x": negative}, with_names=False)


def make_control_flow_stateless(root):
    rng = seeded(8)
    folder = os.path.join(root, "control_flow_stateless")
    clean_dir(folder)
    saved = os.path.join(folder, "saved_model")
    save_module(StatelessControlFlow(rng), saved)
    x = normal(rng, (2, 4)) * 0.5
    x[0, 0] = 1.0  # max(x) > 0.5: the matmul branch
    write_reference(folder, saved, {"x": x})


class StatelessControlFlow(tf.Module):
    """The same constructs with no variable read inside them, which TF saves as StatelessIf and
    StatelessWhile; the loop's trip count depends on the data (bounded by maximum_iterations)."""

    def __init__(self, rng):
        super().__init__()
        self.w = tf.Variable(normal(rng, (4, 4), 0.5), name="w")

    @tf.function(input_signature=[tf.TensorSpec([2, 4], tf.float32, name="x")])
    def __call__(self, x):
        w = tf.convert_to_tensor(self.w)  # read here, so the branches capture a plain tensor
        y = tf.cond(tf.reduce_max(x) > 0.5, lambda: tf.matmul(x, w), lambda: x * 0.5 - 1.0)
        trips, y = tf.while_loop(lambda i, s: tf.reduce_sum(tf.abs(s)) < 20.0,
                                 lambda i, s: (i + 1, s * 1.5 + 0.25),
                                 [tf.constant(0), y], maximum_iterations=10)
        return {"trips": trips, "y": y}


class OpsMix(tf.Module):
    """One output per op (or op variant); keys o00_..., so that sorted order is written order."""

    def __init__(self):
        super().__init__()

    @tf.function(input_signature=[
        tf.TensorSpec([2, 3, 4, 5], tf.float32, name="a"),    # positive: sqrt, log, pow base
        tf.TensorSpec([2, 3, 4, 5], tf.float32, name="b"),    # signed
        tf.TensorSpec([3], tf.int32, name="idx"),             # gather indices into axis 1 (size 3)
        tf.TensorSpec([2, 3], tf.int32, name="ints"),         # signed ints for FloorDiv/FloorMod
        tf.TensorSpec([5, 6], tf.float32, name="mat"),        # matmul right-hand side
    ])
    def __call__(self, a, b, idx, ints, mat):
        results = ops_mix_results(a, b, idx, ints, mat)
        return {f"o{k:02d}_{name}": t for k, (name, t) in enumerate(results)}


def ops_mix_results(a, b, idx, ints, mat):
    """(name, tensor) pairs, each mostly one TF op of interest."""
    unstacked = tf.unstack(b, axis=1)
    split_even = tf.split(b, 2, axis=2)
    split_sizes = tf.split(b, [1, -1, 2], axis=3)  # -1: the remainder (2)
    top = tf.math.top_k(b, k=3)
    return [
        # binary elementwise, with broadcasting in a few
        ("add", a + b), ("sub", a - b[:, :, :1, :]), ("mul", a * b), ("realdiv", b / a),
        ("maximum", tf.maximum(a, b)), ("minimum", tf.minimum(b, 0.25)),
        ("pow", tf.pow(a, b)), ("squared_difference", tf.math.squared_difference(a, b)),
        # unary elementwise
        ("square", tf.square(b)), ("sqrt", tf.sqrt(a)), ("rsqrt", tf.math.rsqrt(a)),
        ("erf", tf.math.erf(b)), ("exp", tf.exp(b)), ("log", tf.math.log(a)), ("tanh", tf.tanh(b)),
        ("sigmoid", tf.sigmoid(b)), ("softplus", tf.nn.softplus(b)), ("elu", tf.nn.elu(b)),
        ("selu", tf.nn.selu(b)), ("relu6", tf.nn.relu6(b * 4.0)), ("relu", tf.nn.relu(b)),
        ("leaky_relu", tf.nn.leaky_relu(b, alpha=0.1)), ("abs", tf.abs(b)), ("neg", -b),
        ("floor", tf.floor(b * 2.0)), ("ceil", tf.math.ceil(b * 2.0)),
        ("round", tf.round(b * 2.0)),  # round half to even
        # padding
        ("pad", tf.pad(b, [[0, 0], [1, 2], [0, 1], [2, 0]])),
        ("pad_value", tf.pad(b, [[0, 0], [1, 0], [0, 0], [0, 1]], constant_values=1.5)),  # PadV2
        ("mirror_pad_reflect", tf.pad(b, [[0, 0], [1, 1], [2, 1], [0, 0]], "REFLECT")),
        ("mirror_pad_symmetric", tf.pad(b, [[0, 0], [0, 2], [1, 0], [0, 0]], "SYMMETRIC")),
        # reductions, keepdims both ways
        ("mean_keep", tf.reduce_mean(b, axis=[1, 2], keepdims=True)), ("mean", tf.reduce_mean(b, axis=-1)),
        ("sum_keep", tf.reduce_sum(b, axis=[0, 3], keepdims=True)),
        ("sum", tf.reduce_sum(b, axis=3)), ("sum_all", tf.reduce_sum(b)),
        ("max_keep", tf.reduce_max(b, axis=-1, keepdims=True)), ("min", tf.reduce_min(b, axis=0)),
        ("prod", tf.reduce_prod(a, axis=1)), ("prod_keep", tf.reduce_prod(a, axis=[0, 2], keepdims=True)),
        ("max", tf.reduce_max(b, axis=[1, 3])),
        # matrix products
        ("matmul", tf.matmul(tf.reshape(b, [24, 5]), mat)),
        ("matmul_ta", tf.matmul(mat, mat, transpose_a=True)),
        ("batch_matmul", tf.matmul(b, mat)),                    # [2,3,4,5] x [5,6]: broadcast
        ("batch_matmul_adj_y", tf.matmul(a, b, transpose_b=True)),
        ("einsum_contract", tf.einsum("nhwc,cd->nhwd", b, mat)),
        ("einsum_batch", tf.einsum("bhqd,bhkd->bhqk", a, b)),
        # softmax family
        ("softmax", tf.nn.softmax(b)), ("log_softmax", tf.nn.log_softmax(b)),
        # shape ops
        ("reshape", tf.reshape(b, [2, -1, 5])), ("transpose", tf.transpose(b, [0, 3, 1, 2])),
        ("concat", tf.concat([a, b], axis=1)), ("concat_neg_axis", tf.concat([a, b, a], axis=-1)),
        ("stack", tf.stack([a, b], axis=1)),
        ("unstack_0", unstacked[0]), ("unstack_2", unstacked[2]),
        ("split_0", split_even[0]), ("split_1", split_even[1]),
        ("splitv_0", split_sizes[0]), ("splitv_1", split_sizes[1]), ("splitv_2", split_sizes[2]),
        ("squeeze", tf.squeeze(tf.reduce_mean(b, axis=1, keepdims=True), axis=[1])),
        ("expand_dims", tf.expand_dims(b, 2)),
        ("strided_masks_shrink", b[:, 1:, ::2, -1]),            # begin/end masks, shrink axis
        ("strided_negative", b[:, ::-1, 3:0:-2, :]),            # negative strides
        ("strided_ellipsis_newaxis", b[..., tf.newaxis, 1:4]),  # ellipsis and new axis masks
        ("slice", tf.slice(b, [0, 1, 1, 0], [2, 2, -1, 3])),
        # tf.shape of a static shape folds to a Const; raw Shape keeps the op, as dynamic-batch
        # graphs (the Keras exports) have it.
        ("fill_shape", tf.fill(tf.raw_ops.Shape(input=b), 0.5) + b),
        ("range", tf.range(0.0, 5.0, 0.5)),
        ("range_dynamic", tf.cast(tf.range(tf.raw_ops.Shape(input=idx)[0] * 2), tf.float32)),
        ("tile", tf.tile(a, [1, 2, 1, 3])),
        ("cast_to_int", tf.cast(b * 3.0, tf.int32)),            # truncates toward zero
        ("gather", tf.gather(b, idx, axis=1)),
        ("gather_const", tf.gather(b, [3, 0, 3], axis=-1)),
        ("select", tf.where(b > 0.0, a, b)),                    # SelectV2
        ("select_broadcast", tf.where(b[:, :, :, :1] < 0.3, b, 0.0)),
        ("argmax", tf.argmax(b, axis=-1)),                      # int64
        ("argmin_i32", tf.argmin(b, axis=1, output_type=tf.int32)),
        ("topk_values", top.values), ("topk_indices", top.indices),
        ("resize_bilinear", tf.image.resize(b, [6, 7], "bilinear")),  # half_pixel_centers
        ("resize_bilinear_align", tf.compat.v1.image.resize_bilinear(b, [5, 7], align_corners=True)),
        ("resize_nearest", tf.image.resize(b, [6, 8], "nearest")),
        ("floordiv", tf.math.floordiv(ints, tf.constant([3, -2, 5]))),  # rounds toward -inf
        ("floormod", tf.math.floormod(ints, tf.constant([3, -2, 5]))),
        ("zeros_like", tf.zeros_like(b) + 1.0), ("ones_like", tf.ones_like(ints)),
    ]


def make_ops_mix(root):
    rng = seeded(6)
    folder = os.path.join(root, "ops_mix")
    clean_dir(folder)
    saved = os.path.join(folder, "saved_model")
    save_module(OpsMix(), saved)
    inputs = {
        "a": rng.uniform(0.5, 2.0, (2, 3, 4, 5)).astype(np.float32),
        "b": normal(rng, (2, 3, 4, 5)),
        "idx": np.array([2, 0, 2], np.int32),
        "ints": np.array([[7, -7, 9], [-8, 5, -11]], np.int32),
        "mat": normal(rng, (5, 6), 0.5),
    }
    write_reference(folder, saved, inputs)


# ---- frozen GraphDef ------------------------------------------------------------------------

def make_frozen(root):
    """A small CNN+MLP with tf.Variables, frozen: variables become Const, one graph, no library."""
    rng = seeded(7)
    conv_w = tf.Variable(normal(rng, (3, 3, 2, 4), 0.4))
    conv_b = tf.Variable(normal(rng, (4,), 0.2))
    fc_w = tf.Variable(normal(rng, (64, 16), 0.2))
    fc_b = tf.Variable(normal(rng, (16,), 0.2))
    out_w = tf.Variable(normal(rng, (16, 5), 0.3))

    @tf.function(input_signature=[tf.TensorSpec([1, 8, 8, 2], tf.float32, name="x")])
    def net(x):
        y = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, conv_w, 1, "SAME"), conv_b))     # 8x8x4
        y = tf.nn.max_pool2d(y, 2, 2, "VALID")                                           # 4x4x4
        y = tf.nn.relu(tf.matmul(tf.reshape(y, [1, 64]), fc_w) + fc_b)
        return tf.nn.softmax(tf.matmul(y, out_w))

    frozen = convert_variables_to_constants_v2(net.get_concrete_function())
    graph_def = frozen.graph.as_graph_def()
    in_names = [t.op.name for t in frozen.inputs]
    out_names = [t.op.name for t in frozen.outputs]

    folder = os.path.join(root, "frozen")
    clean_dir(folder)
    path = os.path.join(folder, "frozen.pb")
    with open(path, "wb") as f:
        f.write(graph_def.SerializeToString(deterministic=True))  # attr maps in key order
    write_lines(os.path.join(folder, "inputs.txt"), in_names)
    write_lines(os.path.join(folder, "outputs.txt"), out_names)

    x = normal(rng, (1, 8, 8, 2))
    save_arrays(folder, "input", [x])
    save_arrays(folder, "expected", run_frozen(path, in_names, out_names, [x]))


def run_frozen(path, in_names, out_names, inputs):
    """Imports the GraphDef read back from disk and runs it: the reference is the file's."""
    graph_def = tf.compat.v1.GraphDef()
    with open(path, "rb") as f:
        graph_def.ParseFromString(f.read())
    wrapped = tf.compat.v1.wrap_function(lambda: tf.compat.v1.import_graph_def(graph_def, name=""), [])
    run = wrapped.prune([f"{n}:0" for n in in_names], [f"{n}:0" for n in out_names])
    return [t.numpy() for t in run(*[tf.constant(a) for a in inputs])]


# ---- README ---------------------------------------------------------------------------------

DESCRIPTIONS = {
    "cnn": "Keras 3 `model.export`, NHWC [1,16,16,3] -> [1,10]: Conv2D(relu), BatchNorm, "
           "DepthwiseConv2D, Conv2D s2 VALID, ReLU(6), ZeroPadding2D, MaxPool, AvgPool SAME, GAP, Dense, Softmax",
    "transformer": "Keras 3 `model.export`, [1,8,16]: LayerNorm, MultiHeadAttention(2 heads, key_dim 8), "
                   "Dropout, residual, LayerNorm, Dense + exact gelu, Dense",
    "embedding": "Keras 3 `model.export`, int32 ids [2,8] -> [2,8,4]: Embedding + position Embedding, Dense",
    "lstm": "Keras 3 `model.export`, [2,6,4] -> [2,3]: LSTM(8), Dense(3, softmax)",
    "gru": "Keras 3 `model.export`, [batch,5,3] -> [batch,5,2] (inputs at batch 3): GRU(8, return_sequences), Dense(2)",
    "control_flow": "tf.Module, x [2,4]: tf.cond(sum(x) > 0) over two variable-using branches, "
                    "then tf.while_loop of 3 trips y = tanh(y @ W); input takes the then branch",
    "control_flow_neg": "model.txt -> ../control_flow/saved_model; an input taking the else branch",
    "control_flow_stateless": "tf.Module, x [2,4]: the variable is read before a tf.cond(max(x) > 0.5) "
                              "and a tf.while_loop whose trip count depends on the data "
                              "(maximum_iterations 10); outputs trips (int32) and y",
    "ops_mix": "tf.Module, inputs a, b [2,3,4,5] f32, idx [3] i32, ints [2,3] i32, mat [5,6] f32; "
               "one output per op variant (outputs.txt)",
    "frozen": "frozen GraphDef `frozen.pb` (convert_variables_to_constants_v2), x [1,8,8,2] -> [1,5]: "
              "Conv2D, BiasAdd, Relu, MaxPool, MatMul, Softmax",
}


def folder_size(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def model_path(folder):
    for candidate in ("saved_model", "frozen.pb"):
        if os.path.exists(os.path.join(folder, candidate)):
            return os.path.join(folder, candidate)
    return None


# Ops every tf.saved_model.save adds for checkpointing (the __traced_save/__traced_restore
# functions) and Keras's variable-initializer nodes: not part of any model.
SAVER_OPS = ["AssignVariableOp", "DisableCopyOnRead", "MergeV2Checkpoints", "Pack", "RestoreV2",
             "SaveV2", "Select", "ShardedFilename", "StaticRegexFullMatch", "StringJoin",
             "VarIsInitializedOp"]

NOTES = """\
## Structure (what a frontend meets)

- The outer graph of a SavedModel holds only plumbing: one `Placeholder` per signature input
  (`serving_default_<key>`; Keras exports also have a `serve` signature with `serve_<key>`),
  a `VarHandleOp` per variable (Keras exports: three handles per variable, `<name>`,
  `<name>_1` and `Variable_N`; the signature calls use the `<name>_1` ones), and a
  `StatefulPartitionedCall` (`PartitionedCall` when no variable is used) per signature whose
  `f` is `__inference_signature_wrapper_...`, which in turn calls `__inference___call___N`, the
  model. Resource handles are passed as extra call arguments (`Tin` type 20 = DT_RESOURCE) and
  read with `ReadVariableOp` inside the function; captured constants arrive the same way from an
  outer `Const` (embedding).
- Signature output tensors are `StatefulPartitionedCall_1:0` (Keras) or `PartitionedCall:K`.
  Output keys: `output_0` for Keras exports, the returned dict's keys for the tf.Modules.
- Variables: checkpoint keys are the object-graph path plus `/.ATTRIBUTES/VARIABLE_VALUE`:
  `variables/N/...` and `_all_variables/N/...` for Keras exports (every value stored twice, in
  two orders), the attribute name (`w/.ATTRIBUTES/VARIABLE_VALUE`) for tf.Modules. Map a
  function's resource arguments to keys through
  `object_graph_def.concrete_functions[f].bound_inputs` (object node ids, in argument order).
- Inside FunctionDefs, inputs are `node:output_arg:index` (e.g. `split:output:3`,
  `MatMul:product:0`, `while:output:3`), function arguments by bare name; the OpDef's output
  args are needed to turn these into flat output indices. Attributes equal to their OpDef
  default are stripped at save time (e.g. `data_format`, `dilations`, `transpose_a`,
  `parallel_iterations` 10, `align_corners` false), so OpDef defaults must be applied.
- `tf.cond` -> `If` (branches read variables) or `StatelessIf`: attrs `Tcond`, `Tin`, `Tout`,
  `then_branch`, `else_branch`, `output_shapes`, `_lower_using_switch_merge`. Both branches
  take the same argument list (the union of their captures).
- `tf.while_loop` -> `While` or `StatelessWhile`: attrs `T`, `cond`, `body`, `output_shapes`,
  `_num_original_outputs`, `parallel_iterations` (absent when 10); loop variables are
  (loop_counter, maximum_iterations (-1 = none), user variables..., captures...), and the body
  returns all of them.
"""


def write_readme(root):
    lines = [
        "# TensorFlow fixtures",
        "",
        "Made by `make_tf_models.py` (see its docstring); every file here but the two scripts is",
        "generated, and this README is rewritten by the same script. Regenerate with:",
        "",
        "    python3 -m venv /work/wt/tfvenv && /work/wt/tfvenv/bin/pip install tensorflow-cpu numpy",
        "    /work/wt/tfvenv/bin/python models/tensorflow/make_tf_models.py",
        "",
        "Each folder: `saved_model/` (or `frozen.pb`), `input_K.npy` in sorted signature-input-key",
        "order and `expected_K.npy` in sorted output-key order (the keys are in `inputs.txt` and",
        "`outputs.txt`; for `frozen/` these name the feed and fetch nodes). Expected outputs come from",
        "the file as stored: the SavedModel's `serving_default` signature, or the imported GraphDef.",
        "",
        f"Versions: tensorflow {tf.__version__}, keras {keras.__version__}, numpy {np.__version__}.",
        "",
        "Ops: those the `serving_default` signature reaches (outer nodes and every function called,",
        "transitively). Every SavedModel also holds save/restore functions (Keras exports also",
        "variable-initializer nodes) with " +
        ", ".join(SAVER_OPS) + ". `list_ops.py PATH [--attrs]` lists the ops graph by graph.",
        "",
        "| folder | size | holds | TF ops |",
        "|---|---|---|---|",
    ]
    total = 0
    for name, text in DESCRIPTIONS.items():
        folder = os.path.join(root, name)
        path = model_path(folder)
        ops = ", ".join(list_ops.serving_ops(path)) if path else "(as control_flow)"
        total += folder_size(folder)
        lines.append(f"| `{name}` | {folder_size(folder) / 1024:.1f} KiB | {text} | {ops} |")
    lines += ["", f"Total: {total / 1024:.1f} KiB.", "", NOTES]
    write_lines(os.path.join(root, "README.md"), lines)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
    os.makedirs(root, exist_ok=True)
    only = set(sys.argv[2:])  # model names: remake just these (the others stay byte for byte)
    for make in (make_cnn, make_transformer, make_embedding, make_lstm, make_gru, make_control_flow,
                 make_control_flow_stateless, make_ops_mix, make_frozen):
        if not only or make.__name__[5:] in only:
            make(root)
            print(f"wrote {make.__name__[5:]}")
    write_readme(root)


if __name__ == "__main__":
    main()
