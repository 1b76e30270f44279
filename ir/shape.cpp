#include "ir/shape.h"

#include <fmt/format.h>

#include "ir/error.h"

namespace kiln::ir {

Dim Dim::symbol(std::string name) {
  Dim d;
  d.name_ = std::move(name);
  return d;
}

Shape::Shape(std::initializer_list<int64_t> dims) {
  for (int64_t d : dims) dims_.emplace_back(d);
}

Shape Shape::of(const std::vector<int64_t>& dims) {
  Shape s;
  for (int64_t d : dims) s.dims_.emplace_back(d);
  return s;
}

bool Shape::is_static() const {
  for (const Dim& d : dims_)
    if (!d.is_static()) return false;
  return true;
}

int64_t Shape::numel() const { return kiln::ir::numel(values()); }

std::vector<int64_t> Shape::values() const {
  std::vector<int64_t> out;
  out.reserve(dims_.size());
  for (const Dim& d : dims_) {
    if (!d.is_static()) fail("shape {} is not static", str());
    out.push_back(d.value());
  }
  return out;
}

std::string Shape::str() const {
  std::string s = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ",";
    const Dim& d = dims_[i];
    if (d.is_static())
      s += std::to_string(d.value());
    else
      s += d.name().empty() ? "?" : d.name();
  }
  return s + "]";
}

int64_t numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string dims_str(const std::vector<int64_t>& dims) { return Shape::of(dims).str(); }

std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

}  // namespace kiln::ir
