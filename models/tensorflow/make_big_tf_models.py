#!/usr/bin/env python3
"""Writes full-size Keras application models as SavedModels, for manual and benchmark runs of
kiln's TensorFlow frontend. Not run by CI and not committed (ResNet50 alone is ~100 MB).

    python3 -m venv /work/wt/tfvenv && /work/wt/tfvenv/bin/pip install tensorflow-cpu numpy
    /work/wt/tfvenv/bin/python models/tensorflow/make_big_tf_models.py [OUT_DIR]

OUT_DIR defaults to /tmp/kiln_tf_big. Same layout as make_tf_models.py: OUT_DIR/<model>/ holds
saved_model/ (Keras 3 model.export), inputs.txt/outputs.txt, input_0.npy (float32
[1,224,224,3]) and expected_0.npy, computed by the SavedModel's serving_default signature.

Models (weights=None: no download; seeded Glorot kernels, plus the small fixtures' randomized
biases and BatchNormalization statistics, so BN is not an identity):
    mobilenet_v3_small  keras.applications.MobileNetV3Small; includes its Rescaling
                        preprocessing, so the input is an image in [0, 255]
    resnet50            keras.applications.ResNet50; no preprocessing layer, input ~N(0, 1)
Both are built with classifier_activation=None: the expected outputs are logits, which
compare more sharply than a softmax that saturates with random weights.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# Importing the fixture script sets up TensorFlow the same way (no oneDNN) and shares helpers.
from make_tf_models import export_keras, folder_size, randomize_keras_weights, seeded  # noqa: E402

import keras  # noqa: E402
import list_ops  # noqa: E402
import numpy as np  # noqa: E402

INPUT_SHAPE = (224, 224, 3)


def make_mobilenet_v3_small(root):
    rng = seeded(101)
    model = keras.applications.MobileNetV3Small(input_shape=INPUT_SHAPE, weights=None,
                                                classifier_activation=None)
    randomize_keras_weights(model, rng)
    image = rng.uniform(0.0, 255.0, (1,) + INPUT_SHAPE).astype(np.float32)
    export_keras(root, "mobilenet_v3_small", model, {input_key(model): image})


def make_resnet50(root):
    rng = seeded(102)
    model = keras.applications.ResNet50(input_shape=INPUT_SHAPE, weights=None,
                                        classifier_activation=None)
    randomize_keras_weights(model, rng)
    image = rng.standard_normal((1,) + INPUT_SHAPE).astype(np.float32)
    export_keras(root, "resnet50", model, {input_key(model): image})


def input_key(model):
    """The serving signature keys its input by the Keras Input layer's name."""
    return model.inputs[0].name


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "/tmp/kiln_tf_big")
    os.makedirs(root, exist_ok=True)
    for make in (make_mobilenet_v3_small, make_resnet50):
        make(root)
        name = make.__name__[5:]
        folder = os.path.join(root, name)
        expected = np.load(os.path.join(folder, "expected_0.npy"))
        print(f"{name}: {folder_size(folder) / 2**20:.1f} MiB, output {expected.shape} "
              f"max|y| {np.abs(expected).max():.3g}")
        print("  ops: " + ", ".join(list_ops.serving_ops(os.path.join(folder, "saved_model"))))


if __name__ == "__main__":
    main()
