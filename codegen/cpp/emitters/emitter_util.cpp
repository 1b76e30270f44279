#include "codegen/cpp/emitters/emitter_util.h"

#include <fmt/format.h>

#include "ir/ops/op_helpers.h"
#include "ir/ops/window.h"

namespace kiln::codegen::cpp {

Window2d window_2d(const ir::Node& node, const std::vector<int64_t>& spatial_in,
                   std::vector<int64_t> kernel) {
  ir::ResolvedWindow w = ir::resolve_window(node, spatial_in, std::move(kernel));
  bool one_d = spatial_in.size() == 1;
  // Index 0 is H, 1 is W; a 1-D window's only axis is W.
  auto at = [&](const std::vector<int64_t>& v, size_t i, int64_t lifted) {
    return one_d ? (i == 0 ? lifted : v[0]) : v[i];
  };
  return Window2d{at(spatial_in, 0, 1),   at(spatial_in, 1, 1),   at(w.kernel, 0, 1),
                  at(w.kernel, 1, 1),     at(w.out_dims, 0, 1),   at(w.out_dims, 1, 1),
                  at(w.strides, 0, 1),    at(w.strides, 1, 1),    at(w.pads_begin, 0, 0),
                  at(w.pads_begin, 1, 0), at(w.pads_end, 0, 0),   at(w.pads_end, 1, 0),
                  at(w.dilations, 0, 1),  at(w.dilations, 1, 1)};
}

std::string require_f32(const ir::Node& node) {
  for (const ir::Value* v : node.inputs())
    if (v && v->dtype() != ir::DType::F32)
      return fmt::format("input '{}' is {}; compiled {} supports f32 only", v->name(),
                         ir::dtype_name(v->dtype()), node.op());
  return "";
}

BroadcastArgs broadcast_args(EmitContext& ctx, const std::vector<int64_t>& out_dims,
                             const std::vector<const ir::Value*>& inputs) {
  std::vector<int64_t> dims = out_dims.empty() ? std::vector<int64_t>{1} : out_dims;
  BroadcastArgs args{static_cast<int>(dims.size()), ctx.array(dims), {}};
  for (const ir::Value* v : inputs) {
    std::vector<int64_t> in_dims = dims_of(v);
    std::vector<int64_t> strides = ir::broadcast_strides(in_dims, dims);
    args.strides.push_back(ctx.array(strides));
  }
  return args;
}

}  // namespace kiln::codegen::cpp
