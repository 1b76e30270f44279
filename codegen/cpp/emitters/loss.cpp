// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss through the runtime's typed templates
// (kiln/rt/loss.h); f32, f64, f16 and bf16 with int32 or int64 targets. A target outside the
// classes (and not ignored) fails the run.
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "ir/ops/loss.h"

namespace kiln::codegen::cpp {

namespace {

bool softmax(const ir::Node& node) { return node.op() == "SoftmaxCrossEntropyLoss"; }

std::string reduction_name(const ir::Node& node) {
  switch (ir::loss_reduction(node)) {
    case rt::LossReduction::None: return "kiln::rt::LossReduction::None";
    case rt::LossReduction::Sum: return "kiln::rt::LossReduction::Sum";
    case rt::LossReduction::Mean: return "kiln::rt::LossReduction::Mean";
  }
  return "";
}

std::string unsupported_loss(const ir::Node& node) {
  if (!ir::is_float(node.input(0)->dtype()))
    return fmt::format("input '{}' is {}; {} needs a float type", node.input(0)->name(),
                       ir::dtype_name(node.input(0)->dtype()), node.op());
  return "";
}

// SoftmaxCrossEntropyLoss without its log_prob output keeps the log-probabilities here.
size_t loss_scratch(const ir::Node& node, const EmitOptions&) {
  if (!softmax(node) || node.num_outputs() > 1) return 0;
  return static_cast<size_t>(numel_of(node.input(0))) * ir::dtype_size(node.input(0)->dtype());
}

void emit_loss(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  const int64_t n = x[0], c = x[1];
  const int64_t d = n * c == 0 ? 0 : numel_of(node.input(0)) / (n * c);
  const ir::DType t = node.input(0)->dtype();
  const std::string targs = fmt::format("<{}, {}, {}>", cpp_type(t), cpp_type(node.input(1)->dtype()),
                                        cpp_compute_type(t));
  const bool has_ignore = node.has_attr("ignore_index");
  std::string args = fmt::format("{}, {}, {}, {}, {}, {}, {}, {}, {}, {}", n, c, d, ctx.in(node, 0), ctx.in(node, 1),
                                 ctx.in(node, 2), has_ignore, has_ignore ? node.i("ignore_index") : 0,
                                 reduction_name(node), ctx.out(node, 0));
  if (softmax(node)) {
    std::string log_prob = node.num_outputs() > 1
                               ? ctx.out(node, 1)
                               : fmt::format("reinterpret_cast<{}*>{}", cpp_type(t), ctx.scratch(node));
    ctx.line(fmt::format("const int64_t bad = kiln::rt::softmax_cross_entropy{}({}, {});", targs, args, log_prob));
  } else {
    ctx.line(fmt::format("const int64_t bad = kiln::rt::nll_loss{}({});", targs, args));
  }
  ctx.line(fmt::format("if (bad >= 0) {}",
                       ctx.fail_stmt(node, fmt::format("a target is outside the {} classes [0, {})", c, c))));
}

}  // namespace

void register_loss_emitters(EmitterRegistry& r) {
  for (const char* op : {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"})
    r.add(op, Emitter{.emit = emit_loss, .unsupported = unsupported_loss, .scratch_bytes = loss_scratch});
}

}  // namespace kiln::codegen::cpp
