#include "codegen/cpp/emitters/emitter_util.h"

#include <fmt/format.h>

#include "ir/ops/op_helpers.h"

namespace kiln::codegen::cpp {

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
