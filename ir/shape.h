// Tensor shapes whose dims are known integers, named symbols (a batch size or a sequence
// length left open by the model), or integer polynomials of symbols (seq*4 after a Reshape
// merges axes, seq+1 after a Concat). A symbolic dim with an empty name is simply unknown.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::ir {

// The values a symbol may take at run time (--dim seq=1..256@64): inclusive bounds and the
// point kernels are tuned for. A data-dependent symbol (the count NonZero finds) is set by
// the node that computes it while the model runs, not bound from the inputs; its max is the
// capacity planned for.
struct DimRange {
  int64_t min = 0, max = 0, opt = 0;
  bool data_dependent = false;
  // The dim takes min, min + step, ..., max (--dim H=32..960:32). passes::set_dim_ranges
  // rewrites a stepped dim H as step * "H/step", a fresh symbol of step 1, so that a
  // convolution's stride divides its polynomial exactly.
  int64_t step = 1;
  bool operator==(const DimRange&) const = default;
};
using DimRanges = std::map<std::string, DimRange>;

class Dim {
 public:
  // A product of symbols (sorted, repeated for powers); the empty one is the constant term.
  using Monomial = std::vector<std::string>;
  using Terms = std::map<Monomial, int64_t>;

  Dim() = default;
  Dim(int64_t value) : value_(value) {}  // NOLINT: a number is a dim
  static Dim symbol(std::string name);
  static Dim unknown() { return symbol(""); }

  bool is_static() const { return value_ >= 0; }
  int64_t value() const { return value_; }  // -1 when symbolic
  // The symbol's name or the expression's text ("seq*4+1"); empty when unknown.
  const std::string& name() const { return name_; }
  bool is_unknown() const { return value_ < 0 && name_.empty(); }
  // One symbol, not an expression of several.
  bool is_symbol() const;
  // The polynomial of a symbolic dim (empty when static or unknown).
  const Terms& terms() const { return terms_; }
  // The symbols it depends on.
  std::vector<std::string> symbols() const;

  // Arithmetic: static with static stays static; unknown with anything is unknown.
  friend Dim operator+(const Dim& a, const Dim& b);
  friend Dim operator-(const Dim& a, const Dim& b);
  friend Dim operator*(const Dim& a, const Dim& b);
  // a / b when the division is exact for every value of the symbols (b static, or b's single
  // term divides each of a's); nullopt otherwise.
  std::optional<Dim> exact_div(const Dim& b) const;
  // The value with `value_of` giving each symbol's (nullopt where one is missing).
  std::optional<int64_t> eval(const std::function<std::optional<int64_t>(const std::string&)>& value_of) const;
  // The largest value it takes within `ranges` (an upper bound: terms with positive
  // coefficients at the maxima, negative at the minima), or nullopt if a symbol has no range.
  std::optional<int64_t> max_value(const DimRanges& ranges) const;
  // The dim with the symbols in `values` replaced by their numbers.
  Dim bind(const std::map<std::string, int64_t>& values) const;
  // The dim with `symbol` replaced by the expression `by`.
  Dim substitute(const std::string& symbol, const Dim& by) const;
  // The dim as `step` times one symbol (a stepped input dim, passes::set_dim_ranges), with
  // that step; nullopt for any other dim.
  std::optional<std::pair<std::string, int64_t>> scaled_symbol() const;
  // C++ expression computing it, `symbol_expr` spelling each symbol.
  std::string cpp(const std::function<std::string(const std::string&)>& symbol_expr) const;

  bool operator==(const Dim&) const = default;

 private:
  static Dim from_terms(Terms terms);
  const Terms& poly_terms(Terms& scratch) const;

  int64_t value_ = -1;
  std::string name_;
  Terms terms_;
};

class Shape {
 public:
  Shape() = default;
  Shape(std::vector<Dim> dims) : dims_(std::move(dims)) {}  // NOLINT
  Shape(std::initializer_list<int64_t> dims);
  static Shape of(const std::vector<int64_t>& dims);

  size_t rank() const { return dims_.size(); }
  const Dim& operator[](size_t i) const { return dims_[i]; }
  Dim& operator[](size_t i) { return dims_[i]; }
  const std::vector<Dim>& dims() const { return dims_; }
  bool is_static() const;
  // No dim is unknown: each is a number or an expression of named symbols, so equal shapes
  // are equal at run time too.
  bool is_known() const;
  // Product of all dims as a dim (symbolic when some are).
  Dim product() const;
  // The largest element count within `ranges`, or nullopt when a symbol has no range.
  std::optional<int64_t> max_numel(const DimRanges& ranges) const;
  // Product of all dims; requires a static shape.
  int64_t numel() const;
  // The dims as integers; requires a static shape.
  std::vector<int64_t> values() const;
  bool operator==(const Shape&) const = default;

  // "[1,3,N,?]"-style text used by the IR printer and messages.
  std::string str() const;

 private:
  std::vector<Dim> dims_;
};

int64_t numel(const std::vector<int64_t>& dims);
std::string dims_str(const std::vector<int64_t>& dims);

// Normalizes a possibly negative axis against a rank, or returns nullopt if out of range.
std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank);

}  // namespace kiln::ir
