// Tensor shapes whose dims are either known integers or named symbols (a batch size or a
// sequence length left open by the model). A symbol with an empty name is simply unknown.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::ir {

class Dim {
 public:
  Dim() = default;
  Dim(int64_t value) : value_(value) {}  // NOLINT: a number is a dim
  static Dim symbol(std::string name);
  static Dim unknown() { return symbol(""); }

  bool is_static() const { return value_ >= 0; }
  int64_t value() const { return value_; }  // -1 when symbolic
  const std::string& name() const { return name_; }
  bool operator==(const Dim&) const = default;

 private:
  int64_t value_ = -1;
  std::string name_;
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
