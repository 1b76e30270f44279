// NodeCode: device pointers, generated kernels and checked calls for the CUDA emitters.
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "codegen/cuda/cuda_emitter.h"
#include "ir/error.h"
#include "kiln/rt/dtype.h"

namespace kiln::codegen::cuda {

std::string NodeCode::ptr(const ir::Value* v, bool writable) const {
  const cpp::Location& loc = plan_.locations.at(v);
  const std::string type = (writable ? "" : "const ") + cpp::cpp_type(v->dtype()) + "*";
  switch (loc.kind) {
    case cpp::Location::Input:
      if (writable) fail("internal: graph input '{}' written", v->name());
      return fmt::format("static_cast<{}>(DI[{}])", type, loc.index);
    case cpp::Location::Output:
      return fmt::format("static_cast<{}>(DO[{}])", type, loc.index);
    case cpp::Location::Weight:
      if (writable) fail("internal: weight '{}' written", v->name());
      return fmt::format("reinterpret_cast<{}>(DW + {})", type, loc.offset);
    case cpp::Location::Arena:
      return fmt::format("reinterpret_cast<{}>(DA + {})", type, loc.offset);
    case cpp::Location::Widened:
      break;
  }
  fail("internal: value '{}' is a widened weight, which the CUDA backend does not use", v->name());
}

std::string NodeCode::scratch(const ir::Node& n, size_t offset) const {
  auto it = plan_.scratch.find(&n);
  if (it == plan_.scratch.end()) fail("internal: {} has no device scratch memory", n.describe());
  return fmt::format("(DA + {})", it->second + offset);
}

std::string NodeCode::half_weight(const ir::Value* v) {
  const ir::Tensor& t = v->constant();
  if (t.dtype() != ir::DType::F32) fail("internal: {} is not an f32 constant", v->name());
  const size_t n = static_cast<size_t>(t.numel());
  std::vector<uint16_t> bits(n);
  const float* f = t.data<float>();
  const bool bf16 = precision_ == passes::Precision::BF16;
  for (size_t i = 0; i < n; ++i) bits[i] = bf16 ? kiln::rt::f32_to_bf16_bits(f[i]) : kiln::rt::f32_to_f16_bits(f[i]);
  return weight_bytes(bits.data(), n * sizeof(uint16_t));
}

std::string NodeCode::weight_bytes(const void* data, size_t bytes) {
  const cpp::Location loc = weights_.add_bytes(data, bytes);
  return fmt::format("static_cast<const unsigned char*>(DW + {})", loc.offset);
}

std::string NodeCode::kernel(const std::string& code) {
  auto it = kernel_names_.find(code);
  if (it != kernel_names_.end()) return it->second;
  const std::string name = fmt::format("kiln_k{}", kernel_names_.size());
  std::string text = code;
  for (size_t at; (at = text.find("@NAME@")) != std::string::npos;) text.replace(at, 6, name);
  kernels_ += text + "\n";
  return kernel_names_.emplace(code, "kiln_dev::" + name).first->second;
}

void NodeCode::launch(const ir::Node& n, const std::string& kernel, const std::string& elements, const std::string& args) {
  launched_.insert(kernel);
  ctx_.line(fmt::format("{}<<<kiln_cuda::blocks_for({}), kiln_cuda::kThreads, 0, S>>>({});", kernel, elements, args));
  ctx_.line(fmt::format("KILN_CUDA_LAUNCHED({});", cpp::string_literal(n.describe() + ": " + kernel)));
}

void NodeCode::launch_grid(const ir::Node& n, const std::string& kernel, const std::string& grid, const std::string& block,
                           const std::string& args) {
  launched_.insert(kernel);
  ctx_.line(fmt::format("{}<<<{}, {}, 0, S>>>({});", kernel, grid, block, args));
  ctx_.line(fmt::format("KILN_CUDA_LAUNCHED({});", cpp::string_literal(n.describe() + ": " + kernel)));
}

void NodeCode::cublas(const ir::Node& n, const std::string& call, const std::string& what) {
  ctx_.line(fmt::format("KILN_CUBLAS({}, {});", call, cpp::string_literal(n.describe() + ": " + what)));
}

void NodeCode::cuda(const ir::Node& n, const std::string& call, const std::string& what) {
  ctx_.line(fmt::format("KILN_CUDA({}, {});", call, cpp::string_literal(n.describe() + ": " + what)));
}

int NodeCode::error_code(const ir::Node& n, const std::string& message) {
  const int code = static_cast<int>(messages_.size()) + 1;
  messages_[code] = n.describe() + ": " + message;
  return code;
}

}  // namespace kiln::codegen::cuda
