// The aten table: every op's schema parsed once, calls bound to it, and the shared helpers of
// the lowerings (aten_internal.h).
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

#include "frontend/torchscript/aten_internal.h"
#include "ir/error.h"

namespace kiln::frontend::torchscript {
namespace aten {
namespace {

struct Param {
  std::string name;
  std::optional<TValue> default_value;
  bool keyword_only = false;
};

struct Op {
  std::vector<Param> params;
  LowerFn lower = nullptr;
};

std::string trim(std::string s) {
  size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// A default written in a schema: None, True, False, 1, -1.5, 'mean', [1, 1], [].
TValue parse_default(const std::string& text) {
  if (text == "None") return TValue::none();
  if (text == "True" || text == "False") return TValue::boolean(text == "True");
  if (text.size() >= 2 && text.front() == '\'') return TValue::string(text.substr(1, text.size() - 2));
  if (text.front() == '[') {
    std::vector<TValue> items;
    std::string body = text.substr(1, text.size() - 2);
    size_t start = 0;
    while (start < body.size()) {
      size_t comma = body.find(',', start);
      std::string item = trim(body.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (!item.empty()) items.push_back(parse_default(item));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return TValue::list(std::move(items));
  }
  if (text.find_first_of(".e") != std::string::npos && text.find_first_not_of("-+0123456789.e") == std::string::npos)
    return TValue::real(std::strtod(text.c_str(), nullptr));
  return TValue::integer(std::strtoll(text.c_str(), nullptr, 10));
}

// Splits "a, b=[1, 2], *, c=None" at top-level commas.
std::vector<Param> parse_params(const char* spec) {
  std::vector<Param> out;
  std::string s(spec), cur;
  int depth = 0;
  bool keyword_only = false;
  auto flush = [&] {
    std::string p = trim(cur);
    cur.clear();
    if (p.empty()) return;
    if (p == "*") {
      keyword_only = true;
      return;
    }
    Param param;
    size_t eq = p.find('=');
    param.name = trim(p.substr(0, eq));
    if (eq != std::string::npos) param.default_value = parse_default(trim(p.substr(eq + 1)));
    param.keyword_only = keyword_only;
    out.push_back(std::move(param));
  };
  for (char c : s) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0)
      flush();
    else
      cur += c;
  }
  flush();
  return out;
}

const std::map<std::string, Op, std::less<>>& table() {
  static const auto* ops = [] {
    auto* m = new std::map<std::string, Op, std::less<>>();
    for (auto family : {nn_ops, tensor_ops, creation_ops, scalar_ops, sequence_ops})
      for (const OpEntry& e : family()) {
        if (m->count(e.name)) throw std::logic_error(std::string("aten table: duplicate op ") + e.name);
        (*m)[e.name] = Op{parse_params(e.params), e.lower};
      }
    return m;
  }();
  return *ops;
}

}  // namespace

// ---------------------------------------------------------------- Args

[[noreturn]] void Args::fail_arg(size_t i, const std::string& problem) const {
  b_.fail_op(fmt::format("argument '{}': {}", i < names_.size() ? names_[i] : std::to_string(i), problem));
}

ir::Value* Args::tensor(size_t i) const {
  const TValue& v = values_[i];
  if (v.is_tensor()) return v.tensor;
  if (v.is_number()) return b_.scalar_tensor(v);
  if (v.is_sequence()) {  // a list of numbers where a tensor is expected (torch.tensor-like)
    std::vector<int64_t> ints_;
    for (const TValue& x : *v.items) {
      if (x.kind != TKind::Int) fail_arg(i, fmt::format("expected a Tensor, found {}", describe(v)));
      ints_.push_back(x.i);
    }
    return b_.constant_i64s(ints_);
  }
  fail_arg(i, fmt::format("expected a Tensor, found {}", describe(v)));
}

namespace {
// A constant tensor of one element, read as a double (for scalars given as 0-d tensors).
std::optional<double> constant_scalar(const TValue& v) {
  if (!v.is_tensor() || !v.tensor->is_constant() || v.tensor->constant().numel() != 1) return std::nullopt;
  return v.tensor->constant().as_double(0);
}
}  // namespace

int64_t Args::integer(size_t i) const {
  const TValue& v = values_[i];
  if (v.kind == TKind::Int) return v.i;
  if (v.kind == TKind::Bool) return v.b;
  if (auto c = constant_scalar(v)) {
    if (!(*c >= -9.2e18 && *c <= 9.2e18)) fail_arg(i, fmt::format("{} does not fit an int", *c));
    return static_cast<int64_t>(*c);
  }
  if (v.is_tensor()) fail_arg(i, "an int computed from tensor data at run time is not supported here (it must be known at compile time)");
  fail_arg(i, fmt::format("expected an int, found {}", describe(v)));
}

double Args::real(size_t i) const {
  const TValue& v = values_[i];
  if (v.kind == TKind::Float) return v.f;
  if (v.kind == TKind::Int) return static_cast<double>(v.i);
  if (v.kind == TKind::Bool) return v.b;
  if (auto c = constant_scalar(v)) return *c;
  fail_arg(i, fmt::format("expected a float known at compile time, found {}", describe(v)));
}

bool Args::boolean(size_t i) const {
  const TValue& v = values_[i];
  if (v.kind == TKind::Bool) return v.b;
  if (v.kind == TKind::Int) return v.i != 0;
  if (auto c = constant_scalar(v)) return *c != 0;
  fail_arg(i, fmt::format("expected a bool known at compile time, found {}", describe(v)));
}

const std::string& Args::string(size_t i) const {
  if (values_[i].kind != TKind::String) fail_arg(i, fmt::format("expected a str, found {}", describe(values_[i])));
  return values_[i].s;
}

std::vector<int64_t> Args::ints(size_t i, size_t n) const {
  const TValue& v = values_[i];
  if (v.kind == TKind::Int) return std::vector<int64_t>(n ? n : 1, v.i);
  std::vector<int64_t> out;
  if (v.is_sequence()) {
    for (const TValue& x : *v.items) {
      if (x.kind == TKind::Int) {
        out.push_back(x.i);
      } else if (auto c = constant_scalar(x); c && *c >= -9.2e18 && *c <= 9.2e18) {
        out.push_back(static_cast<int64_t>(*c));
      } else {
        fail_arg(i, fmt::format("expected a list of ints known at compile time, found {}", describe(v)));
      }
    }
  } else if (v.is_tensor() && v.tensor->is_constant()) {
    out = v.tensor->constant().to_int64_vector();
  } else {
    fail_arg(i, fmt::format("expected a list of ints, found {}", describe(v)));
  }
  if (n && out.size() == 1 && n > 1) out.assign(n, out[0]);
  return out;
}

std::vector<TValue> Args::list(size_t i) const {
  const TValue& v = values_[i];
  if (!v.is_sequence()) fail_arg(i, fmt::format("expected a list, found {}", describe(v)));
  return *v.items;
}

std::vector<ir::Value*> Args::tensors(size_t i) const {
  std::vector<ir::Value*> out;
  for (const TValue& x : list(i)) {
    if (!x.is_tensor()) fail_arg(i, fmt::format("expected a list of Tensors, found {}", describe(x)));
    out.push_back(x.tensor);
  }
  return out;
}

// ---------------------------------------------------------------- shared helpers

const ir::Shape& shape_of(AtenBuilder& b, const ir::Value* v) {
  if (!v->has_type()) b.fail_op(fmt::format("the type of '{}' is unknown", v->name()));
  if (!v->shape().is_static())
    b.fail_op(fmt::format("'{}' has the shape {}: give every input a static shape (--input-shape)", v->name(),
                          v->shape().str()));
  return v->shape();
}

int64_t rank_of(const ir::Value* v) { return static_cast<int64_t>(v->shape().rank()); }

int64_t norm_dim(AtenBuilder& b, int64_t dim, int64_t rank) {
  auto d = ir::normalize_axis(dim, std::max<int64_t>(rank, 1));
  if (!d) b.fail_op(fmt::format("dim {} is out of range for a tensor of rank {}", dim, rank));
  return *d;
}

namespace {
int float_rank(ir::DType d) {
  switch (d) {
    case ir::DType::F64: return 4;
    case ir::DType::F32: return 3;
    case ir::DType::BF16: return 2;
    case ir::DType::F16: return 1;
    default: return 0;
  }
}
// 0: bool, 1: integer, 2: float (torch's type categories).
int category(ir::DType d) { return d == ir::DType::Bool ? 0 : ir::is_float(d) ? 2 : 1; }
int category(const TValue& v) {
  if (v.is_tensor()) return category(v.tensor->dtype());
  return v.kind == TKind::Float ? 2 : v.kind == TKind::Int ? 1 : 0;
}
bool is_dimensioned(const TValue& v) { return v.is_tensor() && v.tensor->shape().rank() > 0; }
}  // namespace

ir::DType promote(const TValue& a, const TValue& b) {
  auto dtype_alone = [](const TValue& v) {
    if (v.is_tensor()) return v.tensor->dtype();
    return v.kind == TKind::Float ? ir::DType::F32 : v.kind == TKind::Int ? ir::DType::I64 : ir::DType::Bool;
  };
  // torch.result_type: dimensioned tensors, then 0-d tensors, then Python scalars; a lower
  // group only counts if its category is higher.
  auto group = [](const TValue& v) { return is_dimensioned(v) ? 0 : v.is_tensor() ? 1 : 2; };
  const TValue* first = group(a) <= group(b) ? &a : &b;
  const TValue* second = first == &a ? &b : &a;
  ir::DType da = dtype_alone(*first), db = dtype_alone(*second);
  if (group(*first) == group(*second)) {
    if (da == db) return da;
    int ca = category(da), cb = category(db);
    if (ca != cb) return ca > cb ? da : db;
    if (ca == 2) return float_rank(da) >= float_rank(db) ? da : db;
    return ir::dtype_size(da) >= ir::dtype_size(db) ? da : db;
  }
  if (category(*second) > category(*first)) {
    // an int tensor with a float scalar: the default float type
    return second->is_tensor() ? db : ir::DType::F32;
  }
  return da;
}

ir::Value* cast_to(AtenBuilder& b, ir::Value* v, ir::DType dt) {
  if (v->dtype() == dt) return v;
  return b.node1("Cast", {v}, {{"to", static_cast<int64_t>(dt)}});
}

std::optional<ir::DType> dtype_from_scalar_type(int64_t st) {
  switch (st) {
    case 0: return ir::DType::U8;
    case 1: return ir::DType::I8;
    case 2: return ir::DType::I16;
    case 3: return ir::DType::I32;
    case 4: return ir::DType::I64;
    case 5: return ir::DType::F16;
    case 6: return ir::DType::F32;
    case 7: return ir::DType::F64;
    case 11: return ir::DType::Bool;
    case 15: return ir::DType::BF16;
    default: return std::nullopt;
  }
}

int64_t scalar_type_of(ir::DType dt) {
  switch (dt) {
    case ir::DType::U8: return 0;
    case ir::DType::I8: return 1;
    case ir::DType::I16: return 2;
    case ir::DType::I32: return 3;
    case ir::DType::I64: return 4;
    case ir::DType::F16: return 5;
    case ir::DType::F32: return 6;
    case ir::DType::F64: return 7;
    case ir::DType::Bool: return 11;
    case ir::DType::BF16: return 15;
    default: return -1;
  }
}

TValue tensor_result(ir::Value* v) { return TValue::of(v); }

TValue tuple_of(const std::vector<ir::Value*>& vs) {
  std::vector<TValue> items;
  for (ir::Value* v : vs) items.push_back(TValue::of(v));
  return TValue::tuple(std::move(items));
}

}  // namespace aten

// ---------------------------------------------------------------- the entry points

std::optional<TValue> lower_aten(AtenBuilder& b, const AtenCall& call) {
  const auto& ops = aten::table();
  auto it = ops.find(call.name);
  if (it == ops.end()) return std::nullopt;
  const aten::Op& op = it->second;
  std::vector<std::string> names;
  std::vector<std::optional<TValue>> bound(op.params.size());
  for (const auto& p : op.params) names.push_back(p.name);
  if (call.positional.size() > op.params.size())
    b.fail_op(fmt::format("aten::{} takes at most {} arguments, {} given", call.name, op.params.size(),
                          call.positional.size()));
  for (size_t k = 0; k < call.positional.size(); ++k) bound[k] = call.positional[k];
  for (const auto& [name, value] : call.keywords) {
    auto p = std::find(names.begin(), names.end(), name);
    if (p == names.end()) b.fail_op(fmt::format("aten::{} has no argument '{}'", call.name, name));
    size_t k = static_cast<size_t>(p - names.begin());
    if (bound[k]) b.fail_op(fmt::format("aten::{}: argument '{}' given twice", call.name, name));
    bound[k] = value;
  }
  std::vector<TValue> values;
  for (size_t k = 0; k < bound.size(); ++k) {
    if (!bound[k]) {
      if (!op.params[k].default_value)
        b.fail_op(fmt::format("aten::{}: missing argument '{}'", call.name, op.params[k].name));
      bound[k] = op.params[k].default_value;
    }
    values.push_back(std::move(*bound[k]));
  }
  aten::Args args(b, std::move(names), std::move(values));
  return op.lower(args);
}

bool has_aten_op(std::string_view name) { return aten::table().count(name) != 0; }

std::vector<std::string> aten_op_names() {
  std::vector<std::string> names;
  for (const auto& [name, op] : aten::table()) names.push_back(name);
  return names;
}

}  // namespace kiln::frontend::torchscript
