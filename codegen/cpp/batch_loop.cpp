#include "codegen/cpp/batch_loop.h"

namespace kiln::codegen::cpp {

namespace {

// A value of the batch: leading dim `b`, the others numbers.
bool batched(const ir::Value* v, const ir::Dim& b) {
  if (!v->has_type() || v->shape().rank() == 0 || !(v->shape()[0] == b)) return false;
  for (size_t k = 1; k < v->shape().rank(); ++k)
    if (!v->shape()[k].is_static()) return false;
  return true;
}

}  // namespace

std::optional<ir::Dim> batch_dim(const ir::Node& node) {
  if (node.num_outputs() == 0 || !node.output(0)->has_type() || node.output(0)->shape().rank() == 0) return std::nullopt;
  const ir::Dim b = node.output(0)->shape()[0];
  if (b.is_static() || b.is_unknown()) return std::nullopt;
  for (const ir::Value* v : node.outputs())
    if (v && !batched(v, b)) return std::nullopt;
  bool any_input = false;
  for (const ir::Value* v : node.inputs()) {
    if (!v) continue;
    if (batched(v, b)) {
      any_input = true;
    } else if (!v->has_type() || !v->shape().is_static()) {
      return std::nullopt;
    }
  }
  if (!any_input) return std::nullopt;
  return b;
}

BatchOne::BatchOne(const ir::Node& node, const ir::Dim& batch) {
  auto one = [&](ir::Value* v) {
    if (!v || !batched(v, batch)) return;
    for (const auto& [seen, shape] : saved_)
      if (seen == v) return;
    saved_.emplace_back(v, v->shape());
    std::vector<ir::Dim> dims = v->shape().dims();
    dims[0] = ir::Dim(1);
    v->set_type(v->dtype(), ir::Shape(dims));
  };
  for (ir::Value* v : node.inputs()) one(v);
  for (ir::Value* v : node.outputs()) one(v);
}

BatchOne::~BatchOne() {
  for (auto& [v, shape] : saved_) v->set_type(v->dtype(), shape);
}

std::vector<const ir::Value*> BatchOne::items() const {
  std::vector<const ir::Value*> out;
  for (const auto& [v, shape] : saved_) out.push_back(v);
  return out;
}

}  // namespace kiln::codegen::cpp
