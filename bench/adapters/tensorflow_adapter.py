"""kiln bench adapter: TensorFlow SavedModels (the "serving_default" signature).
Inputs are matched to the signature's arguments in sorted name order and outputs are
returned in sorted name order, so the ONNX export must keep those names and orders."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kiln_bench_worker  # noqa: E402


def load(model, threads):
    import tensorflow as tf
    if model is None:
        return tf.__version__, None
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    fn = tf.saved_model.load(model).signatures["serving_default"]
    names = sorted(fn.structured_input_signature[1].keys())

    def run(inputs):
        result = fn(**{n: tf.constant(x) for n, x in zip(names, inputs)})
        return [result[k].numpy() for k in sorted(result.keys())]

    return tf.__version__, run


if __name__ == "__main__":
    kiln_bench_worker.main("tensorflow", load)
