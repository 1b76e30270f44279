#!/usr/bin/env python3
"""Train the digits CNN: a small real model for kiln's precision and quantization tests.

    /usr/bin/python3 models/digits/train.py

Needs torch and scikit-learn (Debian: apt-get install python3-sklearn); the data set is
scikit-learn's bundled 8x8 handwritten digits (1797 images, no download). Writes, next to
this script:
    model.onnx       the CNN, input 'image' float32 [batch, 1, 8, 8] (pixels / 16), output
                     'logits' float32 [batch, 10]
    test_x.npy       the held-out test slice, float32 [N, 1, 8, 8]
    test_y.npy       its labels, int64 [N]
    calibration/     32 training images in kiln's --calibration layout:
                     calibration/sample_KK/image.npy, float32 [1, 1, 8, 8]
and prints the test accuracy. Fixed seeds: a rerun on the same machine writes the same model.
"""
from pathlib import Path

import numpy as np
import torch
from sklearn.datasets import load_digits
from torch import nn

HERE = Path(__file__).resolve().parent
SEED = 0
TEST_FRACTION = 0.2
CALIBRATION_SAMPLES = 32
EPOCHS = 40
BATCH = 64


class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(32 * 4 * 4, 32), nn.ReLU(), nn.Linear(32, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def main():
    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    digits = load_digits()
    x = (digits.images.astype(np.float32) / 16.0).reshape(-1, 1, 8, 8)
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(SEED).permutation(len(x))
    n_test = int(len(x) * TEST_FRACTION)
    test, train = order[:n_test], order[n_test:]
    x_train, y_train = torch.from_numpy(x[train]), torch.from_numpy(y[train])

    model = DigitsCNN()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(SEED)
    for _ in range(EPOCHS):
        model.train()
        perm = torch.randperm(len(x_train), generator=gen)
        for i in range(0, len(perm), BATCH):
            idx = perm[i:i + BATCH]
            opt.zero_grad()
            loss_fn(model(x_train[idx]), y_train[idx]).backward()
            opt.step()

    model.eval()
    with torch.no_grad():
        predicted = model(torch.from_numpy(x[test])).argmax(1).numpy()
    accuracy = float((predicted == y[test]).mean())

    torch.onnx.export(model, torch.zeros(1, 1, 8, 8), str(HERE / "model.onnx"), input_names=["image"],
                      output_names=["logits"], dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=13)
    np.save(HERE / "test_x.npy", x[test])
    np.save(HERE / "test_y.npy", y[test])
    calibration = HERE / "calibration"
    calibration.mkdir(exist_ok=True)
    for k, i in enumerate(train[:CALIBRATION_SAMPLES]):
        sample = calibration / f"sample_{k:02d}"
        sample.mkdir(exist_ok=True)
        np.save(sample / "image.npy", x[i:i + 1])
    print(f"digits CNN: {len(train)} training images, {n_test} test images, "
          f"test accuracy {accuracy * 100:.2f}% (PyTorch)")


if __name__ == "__main__":
    main()
