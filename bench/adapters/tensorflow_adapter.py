"""kiln bench adapter: TensorFlow SavedModels, through the signature kiln compiled
(--signature, which kiln bench passes on; default "serving_default").
Inputs are matched to the signature's arguments in sorted name order and outputs are
returned in sorted name order, so the ONNX export must keep those names and orders."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kiln_bench_worker  # noqa: E402

# Read before the worker parses its arguments: load() takes only the model and the threads.
SIGNATURE = sys.argv[sys.argv.index("--signature") + 1] if "--signature" in sys.argv[:-1] else "serving_default"


def add_options(parser):
    parser.add_argument("--signature", default="serving_default")


def load(model, threads):
    import tensorflow as tf
    if model is None:
        return tf.__version__, None
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    signatures = tf.saved_model.load(model).signatures
    if SIGNATURE not in signatures:
        raise SystemExit(f"{model}: no signature '{SIGNATURE}' (it has: {', '.join(sorted(signatures))})")
    fn = signatures[SIGNATURE]
    names = sorted(fn.structured_input_signature[1].keys())

    def run(inputs):
        result = fn(**{n: tf.constant(x) for n, x in zip(names, inputs)})
        return [result[k].numpy() for k in sorted(result.keys())]

    return tf.__version__, run


if __name__ == "__main__":
    kiln_bench_worker.main("tensorflow", load, add_options)
