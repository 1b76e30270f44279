// Helpers shared by op families: broadcasting, attribute checks, output allocation.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/op_registry.h"

namespace kiln::ir {

// Multidirectional (numpy) broadcasting of two shapes; fails naming both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b);
std::vector<int64_t> broadcast_dims(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
// Element strides of a tensor of `in_dims` read as the broadcast `out_dims`: right-aligned,
// zero on broadcast (size-1 or missing) dims.
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in_dims,
                                       const std::vector<int64_t>& out_dims);
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& dims);

// Fails unless the input's dtype is one of `allowed`.
void require_dtype(const Node& node, size_t input, std::initializer_list<DType> allowed);
void require_float(const Node& node, size_t input);
// Fails unless inputs a and b have the same dtype.
void require_same_dtype(const Node& node, size_t a, size_t b);
// The input's constant value, or a failure saying the op needs it known at compile time.
const Tensor& require_constant(const Node& node, size_t input);
// The axis normalized into [0, rank), or a failure naming the node, the axis and the rank.
int64_t require_axis(const Node& node, int64_t axis, int64_t rank);

// The node's `axes` attribute normalized into [0, rank), all axes in order when it is absent;
// fails naming the node on an out-of-range or repeated axis.
std::vector<int64_t> axes_attr_or_all(const Node& node, int64_t rank);

// Calls fn.template operator()<S>() with S the storage type of the float dtype `dtype`;
// fails naming the node for any other dtype.
template <class Fn>
void visit_float(const Node& node, DType dtype, Fn&& fn) {
  visit_dtype(dtype, [&]<class S>() {
    if constexpr (std::is_floating_point_v<compute_t<S>>) fn.template operator()<S>();
    else fail("{}: {} is not supported", node.describe(), dtype_name(dtype));
  });
}

// The values of a float tensor as f32, the type of the runtime's float kernels that eval shares
// with generated code; empty for an omitted input (nullptr).
std::vector<float> values_f32(const Tensor* t);
// A tensor of the float dtype `dtype` holding `v`, rounded to the dtype; fails for other dtypes.
Tensor tensor_from_f32(DType dtype, std::vector<int64_t> dims, const std::vector<float>& v);
// v.data(), or nullptr for an empty vector (an omitted optional input).
inline const float* data_or_null(const std::vector<float>& v) { return v.empty() ? nullptr : v.data(); }

// An eval input that may be omitted (absent or trailing): nullptr when so.
inline const Tensor* optional_input(std::span<const Tensor* const> inputs, size_t i) {
  return i < inputs.size() ? inputs[i] : nullptr;
}

// "[0,-1,2]": a list of integers (attribute or shape-input values) for messages. Unlike
// dims_str, a negative value prints as itself.
std::string ints_str(const std::vector<int64_t>& v);

// Bytes read plus written by the node, counting only static shapes.
double io_bytes(const Node& node);

// Advances a row-major multi-index over `dims`; false after the last one.
inline bool next_index(std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  for (size_t k = dims.size(); k-- > 0;) {
    if (++idx[k] < dims[k]) return true;
    idx[k] = 0;
  }
  return false;
}

// Calls fn(out_index, a_index, b_index) over a broadcast iteration space.
template <class Fn>
void for_each_broadcast(const std::vector<int64_t>& out_dims, const std::vector<int64_t>& a_strides,
                        const std::vector<int64_t>& b_strides, Fn&& fn) {
  const size_t rank = out_dims.size();
  int64_t total = 1;
  for (int64_t d : out_dims) total *= d;
  if (total == 0) return;
  std::vector<int64_t> idx(rank, 0);
  int64_t ia = 0, ib = 0;
  for (int64_t o = 0; o < total; ++o) {
    fn(o, ia, ib);
    for (size_t k = rank; k-- > 0;) {
      ++idx[k];
      ia += a_strides[k];
      ib += b_strides[k];
      if (idx[k] < out_dims[k]) break;
      ia -= a_strides[k] * out_dims[k];
      ib -= b_strides[k] * out_dims[k];
      idx[k] = 0;
    }
  }
}

// "base_0" .. "base_{count-1}": the names of a variadic op's inputs or outputs in its schema.
std::vector<std::string> numbered_names(const std::string& base, int count);

}  // namespace kiln::ir
