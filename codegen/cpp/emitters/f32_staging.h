// Running an f32 runtime kernel on 16-bit float data: the node's f16/bf16 inputs are widened
// into scratch before the call and its f16/bf16 outputs narrowed from scratch after it, so the
// kernel (and its semantics) stays the one the interpreter runs.
#pragma once

#include <fmt/format.h>

#include <string>
#include <vector>

#include "codegen/cpp/emitters/emitter_util.h"

namespace kiln::codegen::cpp {

inline bool is_16bit_float(const ir::Value* v) {
  return v && (v->dtype() == ir::DType::F16 || v->dtype() == ir::DType::BF16);
}

// Bytes of scratch the staging of `node` takes (0 when all its float data is f32).
inline size_t f32_staging_bytes(const ir::Node& node) {
  size_t floats = 0;
  for (const ir::Value* v : node.inputs())
    if (is_16bit_float(v)) floats += static_cast<size_t>(numel_of(v));
  for (const ir::Value* v : node.outputs())
    if (is_16bit_float(v)) floats += static_cast<size_t>(numel_of(v));
  return floats * sizeof(float);
}

class F32Staging {
 public:
  // Scratch from byte `offset` on is the staging area (f32_staging_bytes(node) long).
  F32Staging(EmitContext& ctx, const ir::Node& node, size_t offset) : ctx_(ctx), node_(node) {
    size_t at = offset;
    auto place = [&](const ir::Value* v) {
      if (!is_16bit_float(v)) return std::string();
      std::string p = fmt::format("reinterpret_cast<float*>({} + {})", ctx.scratch(node), at);
      at += static_cast<size_t>(numel_of(v)) * sizeof(float);
      return p;
    };
    for (size_t i = 0; i < node.num_inputs(); ++i) {
      inputs_.push_back(place(node.input(i)));
      if (!inputs_.back().empty())
        ctx.line(fmt::format("for (int64_t i = 0; i < {}; ++i) {}[i] = static_cast<float>({}[i]);",
                             numel_of(node.input(i)), inputs_.back(), ctx.in(node, i)));
    }
    for (size_t i = 0; i < node.num_outputs(); ++i) outputs_.push_back(place(node.output(i)));
  }
  // f32 pointer expressions for input / output i.
  std::string in(size_t i) const { return inputs_[i].empty() ? ctx_.in(node_, i) : inputs_[i]; }
  std::string out(size_t i) const { return outputs_[i].empty() ? ctx_.out(node_, i) : outputs_[i]; }
  // Narrows the staged outputs into the node's outputs (call after the kernel).
  void finish() const {
    for (size_t i = 0; i < outputs_.size(); ++i)
      if (!outputs_[i].empty())
        ctx_.line(fmt::format("for (int64_t i = 0; i < {}; ++i) {}[i] = {}({}[i]);", numel_of(node_.output(i)),
                              ctx_.out(node_, i), cpp_type(node_.output(i)->dtype()), outputs_[i]));
  }

 private:
  EmitContext& ctx_;
  const ir::Node& node_;
  std::vector<std::string> inputs_, outputs_;
};

}  // namespace kiln::codegen::cpp
