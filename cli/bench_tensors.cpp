#include "cli/bench_tensors.h"

#include <cmath>
#include <cstring>
#include <random>

#include <fmt/format.h>

#include "ir/error.h"
#include "kiln/rt/dtype.h"
#include "kiln/rt/lowp.h"
#include "kiln/rt/sanitize.h"

namespace kiln::cli {

namespace fs = std::filesystem;

namespace {

template <class T>
void store(rt::HostTensor& t, int64_t i, T v) {
  std::memcpy(t.data.data() + static_cast<size_t>(i) * sizeof(T), &v, sizeof(T));
}

// A tensor of `spec` filled from `rng` (see prepare_inputs).
rt::HostTensor generate(const TensorSpec& spec, std::mt19937_64& rng) {
  rt::HostTensor t;
  t.dtype = static_cast<kiln_dtype>(spec.dtype);
  t.shape = spec.dims;
  t.data.assign(static_cast<size_t>(t.numel()) * rt::dtype_size(t.dtype), 0);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> bit(0, 1);
  for (int64_t i = 0; i < t.numel(); ++i) {
    switch (spec.dtype) {
      case ir::DType::F32: store(t, i, static_cast<float>(real(rng))); break;
      case ir::DType::F64: store(t, i, real(rng)); break;
      case ir::DType::F16: store(t, i, rt::f32_to_f16_bits(static_cast<float>(real(rng)))); break;
      case ir::DType::BF16: store(t, i, rt::f32_to_bf16_bits(static_cast<float>(real(rng)))); break;
      case ir::DType::Bool:
      case ir::DType::I8:
      case ir::DType::U8: store(t, i, static_cast<uint8_t>(bit(rng))); break;
      case ir::DType::I16:
      case ir::DType::U16: store(t, i, static_cast<uint16_t>(bit(rng))); break;
      case ir::DType::I32:
      case ir::DType::U32: store(t, i, static_cast<uint32_t>(bit(rng))); break;
      case ir::DType::I64:
      case ir::DType::U64: store(t, i, static_cast<uint64_t>(bit(rng))); break;
      case ir::DType::F8E4M3FN:
      case ir::DType::F8E4M3FNUZ:
      case ir::DType::F8E5M2:
      case ir::DType::F8E5M2FNUZ:
      case ir::DType::F8E8M0:
      case ir::DType::F4E2M1:
      case ir::DType::I4:
      case ir::DType::U4:
      case ir::DType::I2:
      case ir::DType::U2: store(t, i, static_cast<uint8_t>(bit(rng))); break;  // storage-only: a bit pattern
    }
  }
  return t;
}

std::string shape_text(const std::vector<int64_t>& dims) { return fmt::format("[{}]", fmt::join(dims, ", ")); }

}  // namespace

std::vector<TensorSpec> tensor_specs(const std::vector<ir::Value*>& values) {
  std::vector<TensorSpec> specs;
  for (const ir::Value* v : values) {
    if (!v->has_type() || !v->shape().is_static())
      fail("'{}' has shape {}: give each symbolic dim a value with --dim NAME=VALUE (or --batch N)", v->name(),
           v->has_type() ? v->shape().str() : "unknown");
    specs.push_back({v->name(), v->dtype(), v->shape().values()});
  }
  return specs;
}

rt::HostTensor read_tensor(const fs::path& path) {
  rt::HostTensor t;
  std::string error;
  if (!rt::read_npy(path.string(), t, error)) fail("{}", error);
  return t;
}

std::vector<fs::path> prepare_inputs(const std::vector<TensorSpec>& inputs, const std::string& from_dir,
                                     uint64_t seed, const fs::path& dir) {
  fs::create_directories(dir);
  std::mt19937_64 rng(seed);
  std::vector<fs::path> paths;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const TensorSpec& spec = inputs[k];
    rt::HostTensor t;
    if (from_dir.empty()) {
      t = generate(spec, rng);
    } else {
      fs::path by_index = fs::path(from_dir) / fmt::format("input_{}.npy", k);
      fs::path by_name = fs::path(from_dir) / (rt::sanitize_file_name(spec.name) + ".npy");
      std::error_code ec;
      fs::path source = fs::exists(by_index, ec) ? by_index : by_name;
      if (!fs::exists(source, ec))
        fail("--inputs {}: no {} or {} for input '{}'", from_dir, by_index.filename().string(),
             by_name.filename().string(), spec.name);
      t = read_tensor(source);
      if (t.dtype != static_cast<kiln_dtype>(spec.dtype) || t.shape != spec.dims)
        fail("{}: {} {} does not match input '{}' ({} {})", source.string(), rt::dtype_name(t.dtype),
             shape_text(t.shape), spec.name, ir::dtype_name(spec.dtype), shape_text(spec.dims));
    }
    fs::path path = dir / fmt::format("input_{}.npy", k);
    std::string error;
    if (!rt::write_npy(path.string(), t, error)) fail("{}", error);
    paths.push_back(path);
  }
  return paths;
}

double element_at(const rt::HostTensor& t, int64_t i) {
  const unsigned char* p = t.data.data() + static_cast<size_t>(i) * rt::dtype_size(t.dtype);
  auto load = [p](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t.dtype) {
    case KILN_F32: return load(float{});
    case KILN_F64: return load(double{});
    case KILN_F16: return rt::f16_bits_to_f32(load(uint16_t{}));
    case KILN_BF16: return rt::bf16_bits_to_f32(load(uint16_t{}));
    case KILN_I8: return load(int8_t{});
    case KILN_U8: return load(uint8_t{});
    case KILN_BOOL: return load(uint8_t{}) != 0;
    case KILN_I16: return load(int16_t{});
    case KILN_U16: return load(uint16_t{});
    case KILN_I32: return load(int32_t{});
    case KILN_U32: return load(uint32_t{});
    case KILN_I64: return static_cast<double>(load(int64_t{}));
    case KILN_U64: return static_cast<double>(load(uint64_t{}));
    case KILN_F8E4M3FN:
    case KILN_F8E4M3FNUZ:
    case KILN_F8E5M2:
    case KILN_F8E5M2FNUZ:
    case KILN_F8E8M0:
    case KILN_F4E2M1: return rt::storage_float_to_f32(t.dtype, load(uint8_t{}));
    case KILN_I4:
    case KILN_I2: return load(int8_t{});
    case KILN_U4:
    case KILN_U2: return load(uint8_t{});
  }
  return 0;
}

Agreement compare_tensors(const std::string& name, const rt::HostTensor& value, const rt::HostTensor& reference) {
  Agreement a;
  a.output = name;
  a.elements = reference.numel();
  if (value.shape != reference.shape) {
    a.problem = fmt::format("shape {} differs from the baseline's {}", shape_text(value.shape), shape_text(reference.shape));
    return a;
  }
  double largest = 0;
  for (int64_t i = 0; i < a.elements; ++i) {
    const double v = element_at(value, i), r = element_at(reference, i);
    if (std::isnan(v) && std::isnan(r)) continue;
    const double err = std::isnan(v) || std::isnan(r) ? INFINITY : std::fabs(v - r);
    if (err > a.max_abs_error || (i == 0 && err > 0)) {
      a.max_abs_error = err;
      a.worst_index = i;
      a.value = v;
      a.reference = r;
    }
    if (std::isfinite(r)) largest = std::max(largest, std::fabs(r));
  }
  a.max_rel_error = largest > 0 ? a.max_abs_error / largest : a.max_abs_error;
  const bool classifier = reference.shape.size() == 2 && reference.shape[1] >= 2 &&
                          (reference.dtype == KILN_F32 || reference.dtype == KILN_F64 ||
                           reference.dtype == KILN_F16 || reference.dtype == KILN_BF16);
  if (classifier && reference.shape[0] > 0) {
    const int64_t rows = reference.shape[0], cols = reference.shape[1];
    int64_t same = 0;
    for (int64_t r = 0; r < rows; ++r) {
      int64_t best_v = 0, best_r = 0;
      for (int64_t c = 1; c < cols; ++c) {
        if (element_at(value, r * cols + c) > element_at(value, r * cols + best_v)) best_v = c;
        if (element_at(reference, r * cols + c) > element_at(reference, r * cols + best_r)) best_r = c;
      }
      same += best_v == best_r;
    }
    a.top1_agreement = static_cast<double>(same) / static_cast<double>(rows);
  }
  return a;
}

bool within_tolerance(const rt::HostTensor& value, const rt::HostTensor& reference, double rtol, double atol,
                      int64_t& bad) {
  for (int64_t i = 0; i < reference.numel(); ++i) {
    const double v = element_at(value, i), r = element_at(reference, i);
    if (std::isnan(v) && std::isnan(r)) continue;
    if (v == r) continue;  // equal infinities
    if (!(std::fabs(v - r) <= atol + rtol * std::fabs(r))) {
      bad = i;
      return false;
    }
  }
  return true;
}

}  // namespace kiln::cli
