// Statistics normalizations through the runtime's typed templates (kiln/rt/normalize.h):
// LayerNormalization, RMSNormalization, GroupNormalization, InstanceNormalization,
// MeanVarianceNormalization, LpNormalization, LRN; f32, f64, f16 and bf16.
#include <fmt/format.h>

#include <algorithm>

#include "codegen/cpp/emitters/emitter_util.h"
#include "ir/ops/normalize.h"
#include "ir/ops/op_helpers.h"

namespace kiln::codegen::cpp {

namespace {

// "<T, C>": the storage and compute types of the node's input 0.
std::string types(const ir::Node& node) {
  const ir::DType t = node.input(0)->dtype();
  return fmt::format("<{}, {}>", cpp_type(t), cpp_compute_type(t));
}

std::string literal(const ir::Node& node, const char* attr) {
  return float_literal(node.f(attr), node.input(0)->dtype());
}

std::string require_float_input(const ir::Node& node) {
  if (!ir::is_float(node.input(0)->dtype()))
    return fmt::format("input '{}' is {}; {} needs a float type", node.input(0)->name(),
                       ir::dtype_name(node.input(0)->dtype()), node.op());
  return "";
}

// LayerNormalization and RMSNormalization: the rows may be symbolic (--dim NAME=MIN..MAX),
// the normalized length is a number.
ir::Dim symbolic_rows(const ir::Node& node, int64_t& len) {
  const ir::Shape& x = node.input(0)->shape();
  const int64_t axis = ir::norm_axis(node, static_cast<int64_t>(x.rank()));
  ir::Dim rows(1);
  len = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(x.rank()); ++d) {
    if (d < axis) {
      rows = rows * x[d];
    } else {
      if (!x[d].is_static()) fail("{}: the normalized dims must be numbers, got {}", node.describe(), x.str());
      len *= x[d].value();
    }
  }
  return rows;
}

}  // namespace

std::string unsupported_layer_norm(const ir::Node& node) {
  if (std::string r = require_float_input(node); !r.empty()) return r;
  int64_t len;
  try {
    symbolic_rows(node, len);
  } catch (const Error& e) {
    return e.what();
  }
  for (size_t i = 1; i < node.num_inputs(); ++i)
    if (node.has_input(i) && numel_of(node.input(i)) != len)
      return fmt::format("input '{}' has {} values, not the normalized shape's {} (broadcasting it is not supported)",
                         node.input(i)->name(), numel_of(node.input(i)), len);
  return "";
}

namespace {

void emit_layer_norm(EmitContext& ctx, const ir::Node& node) {
  int64_t len;
  const std::string rows = ctx.dim(symbolic_rows(node, len));
  if (node.op() == "RMSNormalization") {
    ctx.line(fmt::format("kiln::rt::rms_norm{}({}, {}, {}, {}, {}, {});", types(node), rows, len, ctx.in(node, 0),
                         ctx.in(node, 1), literal(node, "epsilon"), ctx.out(node, 0)));
    return;
  }
  const ir::DType t = node.input(0)->dtype();
  const std::string u = cpp_type(ir::norm_stats_dtype(t));
  ctx.line(fmt::format("kiln::rt::layer_norm<{}, {}, {}>({}, {}, {}, {}, {}, {}, {}, {}, {});", cpp_type(t),
                       cpp_compute_type(t), u, rows, len, ctx.in(node, 0), ctx.in(node, 1), ctx.in(node, 2),
                       literal(node, "epsilon"), ctx.out(node, 0),
                       node.num_outputs() > 1 ? ctx.out(node, 1) : "static_cast<" + u + "*>(nullptr)",
                       node.num_outputs() > 2 ? ctx.out(node, 2) : "static_cast<" + u + "*>(nullptr)"));
}

void emit_group_norm(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  int64_t spatial = 1;
  for (size_t d = 2; d < x.size(); ++d) spatial *= x[d];
  const int64_t groups = node.op() == "InstanceNormalization" ? x[1] : node.i("num_groups");
  ctx.line(fmt::format("kiln::rt::group_norm{}({}, {}, {}, {}, {}, {}, {}, {}, {});", types(node), x[0], groups,
                       x[1] / groups, spatial, ctx.in(node, 0), ctx.in(node, 1), ctx.in(node, 2),
                       literal(node, "epsilon"), ctx.out(node, 0)));
}

void emit_mvn(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  std::vector<int64_t> axes = ir::mvn_axes(node, static_cast<int64_t>(x.size()));
  std::vector<int64_t> st = ir::contiguous_strides(x);
  std::vector<int64_t> od, os, rd, rs;
  for (size_t d = 0; d < x.size(); ++d) {
    const bool red = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
    (red ? rd : od).push_back(x[d]);
    (red ? rs : os).push_back(st[d]);
  }
  for (auto* v : {&od, &rd})
    if (v->empty()) v->push_back(1);
  for (auto* v : {&os, &rs})
    if (v->empty()) v->push_back(0);
  ctx.line(fmt::format("kiln::rt::mean_variance_norm{}({}, {}, {}, {}, {}, {}, {}, {});", types(node), od.size(),
                       ctx.array(od), ctx.array(os), rd.size(), ctx.array(rd), ctx.array(rs), ctx.in(node, 0),
                       ctx.out(node, 0)));
}

void emit_lp_norm(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  const int64_t axis = ir::norm_axis(node, static_cast<int64_t>(x.size()));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x[d];
  for (size_t d = axis + 1; d < x.size(); ++d) inner *= x[d];
  ctx.line(fmt::format("kiln::rt::lp_norm{}({}, {}, {}, {}, {}, {});", types(node), outer, x[axis], inner,
                       node.i("p"), ctx.in(node, 0), ctx.out(node, 0)));
}

void emit_lrn(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  int64_t spatial = 1;
  for (size_t d = 2; d < x.size(); ++d) spatial *= x[d];
  ctx.line(fmt::format("kiln::rt::lrn{}({}, {}, {}, {}, {}, {}, {}, {}, {});", types(node), x[0], x[1], spatial,
                       node.i("size"), literal(node, "alpha"), literal(node, "beta"), literal(node, "bias"),
                       ctx.in(node, 0), ctx.out(node, 0)));
}

}  // namespace

void register_normalize_emitters(EmitterRegistry& r) {
  r.add("LayerNormalization",
        Emitter{.emit = emit_layer_norm, .unsupported = unsupported_layer_norm, .dynamic_shapes = true});
  r.add("RMSNormalization",
        Emitter{.emit = emit_layer_norm, .unsupported = unsupported_layer_norm, .dynamic_shapes = true});
  r.add("GroupNormalization", Emitter{.emit = emit_group_norm, .unsupported = require_float_input});
  r.add("InstanceNormalization", Emitter{.emit = emit_group_norm, .unsupported = require_float_input});
  r.add("MeanVarianceNormalization", Emitter{.emit = emit_mvn, .unsupported = require_float_input});
  r.add("LpNormalization", Emitter{.emit = emit_lp_norm, .unsupported = require_float_input});
  r.add("LRN", Emitter{.emit = emit_lrn, .unsupported = require_float_input});
}

}  // namespace kiln::codegen::cpp
