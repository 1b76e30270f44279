#include "frontend/torchscript/torch_value.h"

#include <fmt/format.h>

namespace kiln::frontend::torchscript {

std::string tkind_name(TKind kind) {
  switch (kind) {
    case TKind::None: return "None";
    case TKind::Bool: return "bool";
    case TKind::Int: return "int";
    case TKind::Float: return "float";
    case TKind::String: return "str";
    case TKind::Tensor: return "Tensor";
    case TKind::List: return "List";
    case TKind::Tuple: return "Tuple";
    case TKind::Dict: return "Dict";
    case TKind::Device: return "Device";
    case TKind::Object: return "object";
    case TKind::Function: return "function";
    case TKind::Module: return "module";
  }
  return "?";
}

std::string describe(const TValue& v) {
  switch (v.kind) {
    case TKind::None: return "None";
    case TKind::Bool: return v.b ? "True" : "False";
    case TKind::Int: return std::to_string(v.i);
    case TKind::Float: return fmt::format("{}", v.f);
    case TKind::String: return fmt::format("'{}'", v.s);
    case TKind::Tensor: {
      const ir::Value* t = v.tensor;
      if (!t) return "Tensor";
      return t->has_type() ? fmt::format("Tensor {}{}", ir::dtype_name(t->dtype()), t->shape().str()) : "Tensor";
    }
    case TKind::List:
    case TKind::Tuple: {
      std::string s = v.kind == TKind::List ? "[" : "(";
      size_t n = v.items ? v.items->size() : 0;
      for (size_t k = 0; k < n && k < 8; ++k) s += (k ? ", " : "") + describe((*v.items)[k]);
      if (n > 8) s += ", ...";
      return s + (v.kind == TKind::List ? "]" : ")");
    }
    case TKind::Dict: return "Dict";
    case TKind::Device: return fmt::format("device('{}')", v.s);
    case TKind::Object: return "object";
    case TKind::Function: return "function";
    case TKind::Module: return v.s;
  }
  return "?";
}

}  // namespace kiln::frontend::torchscript
