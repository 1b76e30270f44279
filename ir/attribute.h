// Node attributes: the typed, compile-time parameters of an op (axes, strides, a tensor
// value, a subgraph body).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ir/tensor.h"

namespace kiln::ir {

class Graph;

enum class AttrType { Int, Float, String, Ints, Floats, Strings, Tensor, Graph };

std::string_view attr_type_name(AttrType);

class Attribute {
 public:
  using Value = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>,
                             std::vector<std::string>, Tensor, std::shared_ptr<Graph>>;

  Attribute() = default;
  Attribute(int64_t v) : value_(v) {}                          // NOLINT
  Attribute(int v) : value_(static_cast<int64_t>(v)) {}        // NOLINT
  Attribute(float v) : value_(v) {}                            // NOLINT
  Attribute(std::string v) : value_(std::move(v)) {}          // NOLINT
  Attribute(const char* v) : value_(std::string(v)) {}         // NOLINT
  Attribute(std::vector<int64_t> v) : value_(std::move(v)) {}  // NOLINT
  Attribute(std::vector<float> v) : value_(std::move(v)) {}    // NOLINT
  Attribute(std::vector<std::string> v) : value_(std::move(v)) {}  // NOLINT
  Attribute(Tensor v) : value_(std::move(v)) {}                // NOLINT
  Attribute(std::shared_ptr<Graph> v) : value_(std::move(v)) {}  // NOLINT

  AttrType type() const { return static_cast<AttrType>(value_.index()); }
  const Value& value() const { return value_; }

  int64_t i() const { return get<int64_t>(); }
  float f() const { return get<float>(); }
  const std::string& s() const { return get<std::string>(); }
  const std::vector<int64_t>& ints() const { return get<std::vector<int64_t>>(); }
  const std::vector<float>& floats() const { return get<std::vector<float>>(); }
  const std::vector<std::string>& strings() const { return get<std::vector<std::string>>(); }
  const Tensor& t() const { return get<Tensor>(); }
  const std::shared_ptr<Graph>& g() const { return get<std::shared_ptr<Graph>>(); }

 private:
  template <class T>
  const T& get() const;
  Value value_;
};

// Sorted by name, so printing and iteration never depend on insertion order.
using AttributeMap = std::map<std::string, Attribute, std::less<>>;

}  // namespace kiln::ir
