"""kiln bench adapter: ONNX models on ONNX Runtime (CPUExecutionProvider).

Besides the common options (kiln_bench_worker.py) it has --dump-all DIR, used by
`kiln compile --verify-against onnxruntime --bisect`: every value a top-level node
produces is made a graph output of a copy of the model (needs the onnx package), the
model is run once with graph optimizations off, and DIR/value_K.npy is written for
the K-th name listed in DIR/values.txt.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kiln_bench_worker  # noqa: E402


def session(model, threads, optimize=True):
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def load(model, threads):
    import onnxruntime as ort
    if model is None:
        return ort.__version__, None
    sess = session(model, threads)
    names = [i.name for i in sess.get_inputs()]

    def run(inputs):
        if len(inputs) != len(names):
            raise ValueError(f"the model takes {len(names)} inputs, got {len(inputs)}")
        return sess.run(None, dict(zip(names, inputs)))

    return ort.__version__, run


def add_options(parser):
    parser.add_argument("--dump-all", metavar="DIR")


def dump_all(args, inputs):
    if not args.dump_all:
        return False
    import numpy as np
    import onnx
    model = onnx.load(args.model)
    existing = {o.name for o in model.graph.output}
    values = [o.name for o in model.graph.output]
    for node in model.graph.node:
        for name in node.output:
            if name and name not in existing:
                model.graph.output.append(onnx.ValueInfoProto(name=name))
                existing.add(name)
                values.append(name)
    sess = session(model.SerializeToString(), args.threads, optimize=False)
    feeds = dict(zip([i.name for i in sess.get_inputs()], inputs))
    results = sess.run(values, feeds)
    os.makedirs(args.dump_all, exist_ok=True)
    with open(os.path.join(args.dump_all, "values.txt"), "w", encoding="utf-8") as index:
        for k, (name, value) in enumerate(zip(values, results)):
            np.save(os.path.join(args.dump_all, f"value_{k}.npy"), np.ascontiguousarray(value))
            index.write(name.replace("\n", " ") + "\n")
    return True


if __name__ == "__main__":
    kiln_bench_worker.main("onnxruntime", load, add_options, dump_all)
