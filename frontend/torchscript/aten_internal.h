// Inside the aten table (aten_ops.h): an op's arguments bound to its schema, and the helpers
// its lowering uses. The lowerings live in aten_*.cpp, one family a file, each file adding
// its entries through one function declared here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "frontend/torchscript/aten_ops.h"

namespace kiln::frontend::torchscript::aten {

// An op's arguments, in schema order, defaults filled.
class Args {
 public:
  Args(AtenBuilder& b, std::vector<std::string> names, std::vector<TValue> values)
      : b_(b), names_(std::move(names)), values_(std::move(values)) {}
  AtenBuilder& b() const { return b_; }
  size_t size() const { return values_.size(); }
  const TValue& operator[](size_t i) const { return values_[i]; }
  bool none(size_t i) const { return values_[i].is_none(); }
  bool is_tensor(size_t i) const { return values_[i].is_tensor(); }

  // A tensor argument (a number becomes a constant of its own dtype).
  ir::Value* tensor(size_t i) const;
  ir::Value* tensor_or_null(size_t i) const { return none(i) ? nullptr : tensor(i); }
  // Compile-time scalars; a constant 0-d tensor is read too, anything else fails naming the argument.
  int64_t integer(size_t i) const;
  double real(size_t i) const;
  bool boolean(size_t i) const;
  const std::string& string(size_t i) const;
  // An int list; a single int is repeated `n` times (stride=2 for a 2-d op).
  std::vector<int64_t> ints(size_t i, size_t n = 0) const;
  std::vector<TValue> list(size_t i) const;
  std::vector<ir::Value*> tensors(size_t i) const;
  std::optional<int64_t> opt_integer(size_t i) const {
    return none(i) ? std::nullopt : std::optional<int64_t>(integer(i));
  }
  [[noreturn]] void fail_arg(size_t i, const std::string& problem) const;

 private:
  AtenBuilder& b_;
  std::vector<std::string> names_;
  std::vector<TValue> values_;
};

using LowerFn = TValue (*)(Args& a);

struct OpEntry {
  const char* name;    // "conv2d"; several names may share one lowering
  const char* params;  // "input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1"
  LowerFn lower;
};

std::vector<OpEntry> nn_ops();         // aten_nn.cpp: convolution, linear algebra, norms, pools, activations
std::vector<OpEntry> tensor_ops();     // aten_tensor.cpp: elementwise, shape and layout, indexing, reductions
std::vector<OpEntry> creation_ops();   // aten_tensor.cpp: zeros, arange, full ... and casts
std::vector<OpEntry> scalar_ops();     // aten_scalar.cpp: int/float/bool/str/list arithmetic and builtins
std::vector<OpEntry> sequence_ops();   // aten_sequence.cpp: lstm, gru, fused transformer layers

// Helpers shared by the lowerings.
const ir::Shape& shape_of(AtenBuilder& b, const ir::Value* v);  // static shape, or fails
int64_t rank_of(const ir::Value* v);
int64_t norm_dim(AtenBuilder& b, int64_t dim, int64_t rank);
ir::DType promote(const TValue& a, const TValue& b);  // torch's result type for a binary op
ir::Value* cast_to(AtenBuilder& b, ir::Value* v, ir::DType dt);
// ScalarType numbers (c10/core/ScalarType.h) and IR dtypes.
std::optional<ir::DType> dtype_from_scalar_type(int64_t st);
int64_t scalar_type_of(ir::DType dt);
TValue tensor_result(ir::Value* v);
TValue tuple_of(const std::vector<ir::Value*>& vs);

}  // namespace kiln::frontend::torchscript::aten

namespace kiln::frontend::torchscript::aten {
// Arithmetic and comparison on values none of which is a tensor (ints, floats, bools, strings,
// lists, None): Python's and TorchScript's semantics. `op` is the aten name ("add", "eq",
// "floordiv", "remainder", "pow", "__and__"...). nullopt when the op does not apply to them.
std::optional<TValue> scalar_binary(const std::string& op, const TValue& a, const TValue& b);
// Python equality of two non-tensor values.
bool values_equal(const TValue& a, const TValue& b);
}  // namespace kiln::frontend::torchscript::aten

namespace kiln::frontend::torchscript::aten {
// Math functions on a Python number (floor, ceil, sqrt, exp, log, abs, neg...); nullopt when
// `v` is not a number or `op` is not one of them.
std::optional<TValue> scalar_unary(const std::string& op, const TValue& v);
// list[start:end:step] with Python's clamping.
TValue list_slice(const TValue& list, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step);
}  // namespace kiln::frontend::torchscript::aten
