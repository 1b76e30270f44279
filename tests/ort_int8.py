"""ONNX Runtime's int8 results as test references, and where they are exact.

On x86 CPUs without VNNI, MLAS (ORT's kernels) sums u8 x s8 products with vpmaddubsw, whose
int16 pair sums saturate (onnxruntime's quantization docs say so): its QLinearConv,
QLinearMatMul, MatMulInteger and fused QDQ convolutions there are not the models' exact
integers. kiln computes them exactly, so on such CPUs the tests compare against references
that are: ORT running a QDQ graph as written (graph optimizations off), or ONNX's own
reference evaluator for integer ops.
"""
import platform

import onnxruntime as ort


def ort_int8_exact():
    """Whether ORT's int8 kernels compute exact sums on this CPU: with VNNI (vpdpbusd sums u8 x
    s8 products in int32), or off x86."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return True
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    except OSError:
        return True
    return " avx512_vnni" in flags or " avx_vnni" in flags


def ort_session(path, optimize=True, threads=None):
    """A CPU session; optimize=False runs the graph as written (a QDQ model as its
    DequantizeLinear, float ops and QuantizeLinear, no int8 kernel of ORT's in between)."""
    so = ort.SessionOptions()
    if not optimize:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    if threads:
        so.intra_op_num_threads = threads
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def exact_integer_run(path, feeds):
    """The model's outputs with exact integer ops: ORT where its kernels are exact, else ONNX's
    reference evaluator. Returns (outputs as a dict, the engine's name)."""
    if ort_int8_exact():
        s = ort_session(path, optimize=False, threads=1)
        return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds))), "ONNX Runtime"
    from onnx.reference import ReferenceEvaluator
    ref = ReferenceEvaluator(path)
    return dict(zip(ref.output_names, ref.run(None, feeds))), "onnx.reference (ORT's int8 kernels saturate on this CPU)"
