#include "ir/attribute.h"

namespace kiln::ir {

std::string_view attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::Int: return "int";
    case AttrType::Float: return "float";
    case AttrType::String: return "string";
    case AttrType::Ints: return "ints";
    case AttrType::Floats: return "floats";
    case AttrType::Strings: return "strings";
    case AttrType::Tensor: return "tensor";
    case AttrType::Graph: return "graph";
  }
  return "?";
}

namespace {

template <class T, class Variant, size_t I = 0>
constexpr size_t index_in_variant() {
  if constexpr (std::is_same_v<std::variant_alternative_t<I, Variant>, T>)
    return I;
  else
    return index_in_variant<T, Variant, I + 1>();
}

}  // namespace

template <class T>
const T& Attribute::get() const {
  if (const T* p = std::get_if<T>(&value_)) return *p;
  constexpr auto wanted = static_cast<AttrType>(index_in_variant<T, Value>());
  fail("attribute is {}, expected {}", attr_type_name(type()), attr_type_name(wanted));
}

template const int64_t& Attribute::get<int64_t>() const;
template const float& Attribute::get<float>() const;
template const std::string& Attribute::get<std::string>() const;
template const std::vector<int64_t>& Attribute::get<std::vector<int64_t>>() const;
template const std::vector<float>& Attribute::get<std::vector<float>>() const;
template const std::vector<std::string>& Attribute::get<std::vector<std::string>>() const;
template const Tensor& Attribute::get<Tensor>() const;
template const std::shared_ptr<Graph>& Attribute::get<std::shared_ptr<Graph>>() const;

}  // namespace kiln::ir
