#include "ir/printer.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>

namespace kiln::ir {
namespace {

// Tensors with more elements than this are printed as hex bytes.
constexpr int64_t kMaxListedElements = 16;

bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9') || c == '.'; }

bool is_plain_ident(std::string_view s) {
  return !s.empty() && is_ident_start(s[0]) && std::all_of(s.begin(), s.end(), is_ident_char);
}

// Graph, node, attribute and dim names: bare when they are plain identifiers.
std::string name_text(std::string_view s) {
  return is_plain_ident(s) ? std::string(s) : quote_string(s);
}

// Op names: also quoted when they are the keyword that starts a constant.
std::string op_text(std::string_view s) {
  return is_plain_ident(s) && s != "constant" ? std::string(s) : quote_string(s);
}

std::string dim_text(const Dim& d) {
  if (d.is_static()) return std::to_string(d.value());
  if (d.name().empty()) return "?";
  return name_text(d.name());
}

// Shortest text that reads back as the same float, always with a '.', an exponent, or inf/nan
// so that it cannot be taken for an integer.
std::string float_attr_text(float f) {
  std::string s = fmt::format("{}", f);
  if (s.find_first_not_of("-0123456789") == std::string::npos) s += ".0";
  return s;
}

template <class F>
bool reads_back_as(const std::string& s, F expected) {
  F back{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), back);
  return ec == std::errc() && end == s.data() + s.size() &&
         std::memcmp(&back, &expected, sizeof(F)) == 0;
}

// The elements as "[a, b, ...]", or nullopt where some element would not read back exactly
// (a NaN payload, a bool byte other than 0 or 1) or a storage-only dtype; the caller then
// prints bytes.
std::optional<std::string> element_list(const Tensor& t) {
  if (is_storage_only(t.dtype())) return std::nullopt;  // float8, int4...: their bytes
  std::string out = "[";
  bool exact = true;
  visit_dtype(t.dtype(), [&]<class S>() {
    const auto* bytes = static_cast<const uint8_t*>(t.raw());
    for (int64_t i = 0; i < t.numel() && exact; ++i) {
      if (i) out += ", ";
      S x;
      std::memcpy(&x, bytes + i * sizeof(S), sizeof(S));
      if constexpr (std::is_same_v<S, bool>) {
        uint8_t b = bytes[i];
        exact = b <= 1;
        out += b ? "true" : "false";
      } else if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>) {
        std::string s = fmt::format("{}", x);
        exact = reads_back_as(s, x);
        out += s;
      } else if constexpr (std::is_same_v<S, f16> || std::is_same_v<S, bf16>) {
        std::string s = fmt::format("{}", static_cast<float>(x));
        float back = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), back);
        exact = ec == std::errc() && S(back).bits == x.bits;
        out += s;
      } else {
        if constexpr (std::is_same_v<S, uint64_t>) exact = x <= uint64_t{INT64_MAX};  // else bytes
        out += fmt::format("{}", static_cast<int64_t>(x));
      }
    }
  });
  if (!exact) return std::nullopt;
  return out + "]";
}

std::string hex_bytes(const Tensor& t) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const auto* bytes = static_cast<const uint8_t*>(t.raw());
  std::string out = "hex\"";
  out.reserve(t.nbytes() * 2 + 5);
  for (size_t i = 0; i < t.nbytes(); ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 15];
  }
  return out + "\"";
}

std::string tensor_text(const Tensor& t) {
  std::string out = print_type(t.dtype(), t.shape()) + " ";
  if (t.numel() <= kMaxListedElements)
    if (std::optional<std::string> list = element_list(t)) return out + *list;
  return out + hex_bytes(t);
}

template <class T, class F>
std::string list_text(const std::vector<T>& items, std::string_view empty, F item_text) {
  if (items.empty()) return std::string(empty);
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + item_text(items[i]);
  return out + "]";
}

class Printer {
 public:
  std::string out;

  // Writes "graph NAME(...) -> (...) {", the body indented by indent + 2, and "}" at indent.
  void graph(const Graph& g, int indent) {
    out += "graph " + name_text(g.name()) + "(";
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      const Value* v = g.inputs()[i];
      out += (i ? ", " : "") + print_value_ref(v);
      if (v && v->is_constant())
        out += " = constant " + tensor_text(v->constant());
      else if (v && v->has_type())
        out += ": " + print_type(v->dtype(), v->shape());
    }
    out += ") -> (";
    for (size_t i = 0; i < g.outputs().size(); ++i)
      out += (i ? ", " : "") + print_value_ref(g.outputs()[i]);
    out += ") {\n";
    std::string pad(indent + 2, ' ');
    for (const auto& v : g.values()) {
      if (!v->is_constant() || v->producer() ||
          std::find(g.inputs().begin(), g.inputs().end(), v.get()) != g.inputs().end())
        continue;
      out += pad + print_value_ref(v.get()) + " = constant " + tensor_text(v->constant()) + "\n";
    }
    for (const auto& n : g.nodes()) {
      out += pad;
      node(*n, indent + 2);
      out += "\n";
    }
    out += std::string(indent, ' ') + "}";
  }

  void node(const Node& n, int indent) {
    for (size_t i = 0; i < n.num_outputs(); ++i) {
      const Value* v = n.output(i);
      out += (i ? ", " : "") + print_value_ref(v);
      if (v && v->has_type()) out += ": " + print_type(v->dtype(), v->shape());
    }
    if (n.num_outputs()) out += " = ";
    out += op_text(n.op()) + "(";
    for (size_t i = 0; i < n.num_inputs(); ++i) out += (i ? ", " : "") + print_value_ref(n.input(i));
    out += ")";
    if (!n.attrs().empty()) {
      out += " {";
      bool first = true;
      for (const auto& [name, a] : n.attrs()) {
        out += (first ? "" : ", ") + name_text(name) + "=";
        first = false;
        attribute(a, indent);
      }
      out += "}";
    }
    out += " @" + name_text(n.name());
  }

  void attribute(const Attribute& a, int indent) {
    switch (a.type()) {
      case AttrType::Int: out += fmt::format("{}", a.i()); return;
      case AttrType::Float: out += float_attr_text(a.f()); return;
      case AttrType::String: out += quote_string(a.s()); return;
      case AttrType::Ints:
        out += list_text(a.ints(), "ints[]", [](int64_t v) { return fmt::format("{}", v); });
        return;
      case AttrType::Floats: out += list_text(a.floats(), "floats[]", float_attr_text); return;
      case AttrType::Strings:
        out += list_text(a.strings(), "strings[]", [](const std::string& s) { return quote_string(s); });
        return;
      case AttrType::Tensor: out += tensor_text(a.t()); return;
      case AttrType::Graph:
        if (a.g())
          graph(*a.g(), indent);
        else
          out += "graph <null>";  // not parseable; the verifier rejects it
        return;
    }
  }
};

}  // namespace

std::string quote_string(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f)
          out += fmt::format("\\x{:02x}", c);
        else
          out += ch;
    }
  }
  return out + "\"";
}

std::string print_value_ref(const Value* v) {
  if (!v) return "_";
  const std::string& s = v->name();
  bool plain = !s.empty() && std::all_of(s.begin(), s.end(), is_ident_char);
  return "%" + (plain ? s : quote_string(s));
}

std::string print_type(DType dtype, const Shape& shape) {
  std::string out = std::string(dtype_name(dtype)) + "[";
  for (size_t i = 0; i < shape.rank(); ++i) out += (i ? "," : "") + dim_text(shape[i]);
  return out + "]";
}

std::string print_node(const Node& node) {
  Printer p;
  p.node(node, 0);
  return std::move(p.out);
}

std::string print_graph(const Graph& graph) {
  Printer p;
  p.graph(graph, 0);
  p.out += "\n";
  return std::move(p.out);
}

}  // namespace kiln::ir
