// Comparing interpreter results before and after a pass: exact for integers and bools,
// within a tolerance relative to the result's scale for floats (folded and fused float math
// rounds differently).
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>

#include <fmt/format.h>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace kiln::test {

// Empty when `after` matches `before`, else what differs.
inline std::string compare_results(const ir::Tensor& before, const ir::Tensor& after, double rtol = 1e-5) {
  if (before.dtype() != after.dtype() || before.dims() != after.dims())
    return fmt::format("type changed: {}{} became {}{}", ir::dtype_name(before.dtype()),
                       ir::dims_str(before.dims()), ir::dtype_name(after.dtype()), ir::dims_str(after.dims()));
  if (!ir::is_float(before.dtype())) return before.same_as(after) ? "" : "integer results differ";
  double scale = 0, worst = 0;
  int64_t at = -1;
  for (int64_t i = 0; i < before.numel(); ++i) scale = std::max(scale, std::abs(before.as_double(i)));
  for (int64_t i = 0; i < before.numel(); ++i) {
    double b = before.as_double(i), a = after.as_double(i);
    if (std::isnan(b) && std::isnan(a)) continue;
    double err = std::abs(a - b);
    if (!(err <= worst)) {
      worst = err;
      at = i;
    }
  }
  if (worst <= rtol * std::max(scale, 1.0)) return "";
  return fmt::format("element {}: {} became {} (error {:.3g}, scale {:.3g})", at, before.as_double(at),
                     after.as_double(at), worst, scale);
}

// Seeded random values for every graph input (symbolic dims get the value 2).
inline std::map<std::string, ir::Tensor> random_inputs(const ir::Graph& g, unsigned seed = 42) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::map<std::string, ir::Tensor> inputs;
  for (const ir::Value* v : g.inputs()) {
    std::vector<int64_t> dims;
    for (const ir::Dim& d : v->shape().dims()) dims.push_back(d.is_static() ? d.value() : 2);
    ir::Tensor t(v->dtype(), dims);
    ir::visit_dtype(v->dtype(), [&]<class T>() {
      T* p = t.mutable_data<T>();
      for (int64_t i = 0; i < t.numel(); ++i) {
        if constexpr (std::is_same_v<T, bool>)
          p[i] = dist(rng) > 0;
        else if constexpr (std::is_floating_point_v<ir::compute_t<T>>)
          p[i] = T(dist(rng));
        else
          p[i] = static_cast<T>(static_cast<int>(dist(rng) * 2));
      }
    });
    inputs[v->name()] = t;
  }
  return inputs;
}

}  // namespace kiln::test
