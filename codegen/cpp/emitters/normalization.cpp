// BatchNormalization (inference f32; training mode any float type) and Softmax / LogSoftmax, f32.
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"

namespace kiln::codegen::cpp {

namespace {

void emit_batchnorm(EmitContext& ctx, const ir::Node& node) {
  // N, C and the spatial size: numbers, or expressions of the symbolic dims.
  const ir::Shape& shape = node.input(0)->shape();
  const std::vector<std::string> x = {ctx.dim(shape[0]), shape.rank() > 1 ? ctx.dim(shape[1]) : "1"};
  const std::string spatial = ctx.dim(dims_product(shape, std::min<size_t>(2, shape.rank()), shape.rank()));
  if (node.i("training_mode") != 0) {  // batch statistics (kiln/rt/normalize.h)
    const ir::DType t = node.input(0)->dtype();
    const std::string none = "static_cast<" + cpp_type(t) + "*>(nullptr)";
    ctx.line(fmt::format("kiln::rt::batch_norm_training<{}, {}>({}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {});",
                         cpp_type(t), cpp_compute_type(t), x[0], x[1], spatial, ctx.in(node, 0), ctx.in(node, 1),
                         ctx.in(node, 2), ctx.in(node, 3), ctx.in(node, 4), float_literal(node.f("epsilon"), t),
                         float_literal(node.f("momentum"), t), ctx.out(node, 0),
                         node.num_outputs() > 1 ? ctx.out(node, 1) : none,
                         node.num_outputs() > 2 ? ctx.out(node, 2) : none));
    return;
  }
  ctx.line(fmt::format("kiln::rt::batchnorm_f32({}, {}, {}, {}, {}, {}, {}, {}, {}, {});", x[0], x[1], spatial, ctx.in(node, 0), ctx.in(node, 1),
                       ctx.in(node, 2), ctx.in(node, 3), ctx.in(node, 4),
                       float_literal(node.f("epsilon"), ir::DType::F32), ctx.out(node, 0)));
}

void emit_softmax(EmitContext& ctx, const ir::Node& node) {
  const ir::Shape& x = node.input(0)->shape();
  const size_t axis = static_cast<size_t>(*ir::normalize_axis(node.i("axis"), static_cast<int64_t>(x.rank())));
  ctx.line(fmt::format("kiln::rt::softmax_f32({}, {}, {}, {}, {}, {});", ctx.dim(dims_product(x, 0, axis)),
                       ctx.dim(x[axis]), ctx.dim(dims_product(x, axis + 1, x.rank())), ctx.in(node, 0),
                       ctx.out(node, 0),
                       node.op() == "LogSoftmax" ? "true" : "false"));
}

std::string unsupported_batchnorm(const ir::Node& node) {
  if (node.i("training_mode") == 0) return require_f32(node);
  if (has_symbols(node)) return "training mode with symbolic dims is not compiled";
  if (!ir::is_float(node.input(0)->dtype())) return "training mode needs a float type";
  return "";
}

std::string unsupported_softmax(const ir::Node& node) {
  if (std::string r = require_f32(node); !r.empty()) return r;
  if (node.input(0)->shape().rank() == 0) return "a scalar input is not supported";
  return "";
}

}  // namespace

void register_normalization_emitters(EmitterRegistry& r) {
  r.add("BatchNormalization", Emitter{.emit = emit_batchnorm,
                                      .unsupported = unsupported_batchnorm,
                                      .dynamic_shapes = true,
                                      .batch_items = every_item});
  r.add("Softmax", Emitter{.emit = emit_softmax, .unsupported = unsupported_softmax, .dynamic_shapes = true});
  r.add("LogSoftmax", Emitter{.emit = emit_softmax, .unsupported = unsupported_softmax, .dynamic_shapes = true});
}

}  // namespace kiln::codegen::cpp
