// aten ops on Python values rather than tensors: int/float/bool/str arithmetic, lists, dicts
// and the builtins TorchScript prints as torch.* calls (len, append, __getitem__, __is__,
// format ...). They run at compile time: their results are known values, not graph nodes.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "frontend/torchscript/aten_internal.h"

namespace kiln::frontend::torchscript::aten {

bool values_equal(const TValue& a, const TValue& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind == TKind::Float || b.kind == TKind::Float) {
      double x = a.kind == TKind::Float ? a.f : static_cast<double>(a.kind == TKind::Int ? a.i : a.b);
      double y = b.kind == TKind::Float ? b.f : static_cast<double>(b.kind == TKind::Int ? b.i : b.b);
      return x == y;
    }
    return (a.kind == TKind::Int ? a.i : a.b) == (b.kind == TKind::Int ? b.i : b.b);
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case TKind::None: return true;
    case TKind::String:
    case TKind::Device: return a.s == b.s;
    case TKind::List:
    case TKind::Tuple:
      if (a.items->size() != b.items->size()) return false;
      for (size_t k = 0; k < a.items->size(); ++k)
        if (!values_equal((*a.items)[k], (*b.items)[k])) return false;
      return true;
    case TKind::Tensor: return a.tensor == b.tensor;
    case TKind::Object: return a.object == b.object;
    default: return false;
  }
}

namespace {

bool is_float(const TValue& v) { return v.kind == TKind::Float; }
double as_double(const TValue& v) {
  return v.kind == TKind::Float ? v.f : static_cast<double>(v.kind == TKind::Int ? v.i : v.b);
}
int64_t as_int(const TValue& v) { return v.kind == TKind::Int ? v.i : v.b; }

int64_t floordiv(int64_t a, int64_t b) {
  if (a == INT64_MIN && b == -1) fail("integer overflow in {} // {}", a, b);
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

std::optional<TValue> scalar_binary(const std::string& op, const TValue& a, const TValue& b) {
  if (op == "eq") return TValue::boolean(values_equal(a, b));
  if (op == "ne") return TValue::boolean(!values_equal(a, b));
  if (a.kind == TKind::String && b.kind == TKind::String) {
    if (op == "add") return TValue::string(a.s + b.s);
    if (op == "lt") return TValue::boolean(a.s < b.s);
    if (op == "gt") return TValue::boolean(a.s > b.s);
    return std::nullopt;
  }
  if (a.is_sequence() && b.is_sequence() && op == "add" && a.kind == b.kind) {
    std::vector<TValue> items(*a.items);
    items.insert(items.end(), b.items->begin(), b.items->end());
    return a.kind == TKind::List ? TValue::list(std::move(items)) : TValue::tuple(std::move(items));
  }
  if (a.is_sequence() && b.kind == TKind::Int && op == "mul") {
    std::vector<TValue> items;
    for (int64_t k = 0; k < b.i; ++k) items.insert(items.end(), a.items->begin(), a.items->end());
    return a.kind == TKind::List ? TValue::list(std::move(items)) : TValue::tuple(std::move(items));
  }
  if (!a.is_number() || !b.is_number()) return std::nullopt;
  const bool floats = is_float(a) || is_float(b);
  const double x = as_double(a), y = as_double(b);
  const int64_t i = as_int(a), j = as_int(b);
  if (op == "lt") return TValue::boolean(floats ? x < y : i < j);
  if (op == "le") return TValue::boolean(floats ? x <= y : i <= j);
  if (op == "gt") return TValue::boolean(floats ? x > y : i > j);
  if (op == "ge") return TValue::boolean(floats ? x >= y : i >= j);
  if (op == "__and__" && a.kind == TKind::Bool && b.kind == TKind::Bool) return TValue::boolean(a.b && b.b);
  if (op == "__or__" && a.kind == TKind::Bool && b.kind == TKind::Bool) return TValue::boolean(a.b || b.b);
  if (op == "__xor__" && a.kind == TKind::Bool && b.kind == TKind::Bool) return TValue::boolean(a.b != b.b);
  if (op == "__and__" && !floats) return TValue::integer(i & j);
  if (op == "__or__" && !floats) return TValue::integer(i | j);
  if (op == "__xor__" && !floats) return TValue::integer(i ^ j);
  int64_t r = 0;  // ints overflow as an error, never as undefined behaviour (the code is untrusted)
  if (op == "add") {
    if (!floats && __builtin_add_overflow(i, j, &r)) fail("integer overflow in {} + {}", i, j);
    return floats ? TValue::real(x + y) : TValue::integer(r);
  }
  if (op == "sub") {
    if (!floats && __builtin_sub_overflow(i, j, &r)) fail("integer overflow in {} - {}", i, j);
    return floats ? TValue::real(x - y) : TValue::integer(r);
  }
  if (op == "mul") {
    if (!floats && __builtin_mul_overflow(i, j, &r)) fail("integer overflow in {} * {}", i, j);
    return floats ? TValue::real(x * y) : TValue::integer(r);
  }
  if (op == "div") {
    if (y == 0) fail("division by zero");
    return TValue::real(x / y);
  }
  if (op == "floordiv") {
    if (y == 0) fail("integer division by zero");
    return floats ? TValue::real(std::floor(x / y)) : TValue::integer(floordiv(i, j));
  }
  if (op == "remainder") {
    if (y == 0) fail("modulo by zero");
    if (floats) {
      double m = std::fmod(x, y);
      if (m != 0 && ((m < 0) != (y < 0))) m += y;
      return TValue::real(m);
    }
    return TValue::integer(i - floordiv(i, j) * j);
  }
  if (op == "pow") {
    if (!floats && j >= 0) {
      int64_t p = 1;
      for (int64_t k = 0; k < j; ++k)
        if (__builtin_mul_overflow(p, i, &p)) fail("integer overflow in {} ** {}", i, j);
      return TValue::integer(p);
    }
    return TValue::real(std::pow(x, y));
  }
  return std::nullopt;
}

std::optional<TValue> scalar_unary(const std::string& op, const TValue& v) {
  if (!v.is_number()) return std::nullopt;
  const double x = as_double(v);
  auto to_int = [](double d) {
    if (!(d >= -9.2e18 && d <= 9.2e18)) fail("{} does not fit an int", d);
    return TValue::integer(static_cast<int64_t>(d));
  };
  if (op == "floor") return is_float(v) ? to_int(std::floor(x)) : v;
  if (op == "ceil") return is_float(v) ? to_int(std::ceil(x)) : v;
  if (op == "round") return is_float(v) ? TValue::real(std::nearbyint(x)) : v;
  if (op == "abs") return is_float(v) ? TValue::real(std::fabs(x)) : TValue::integer(std::llabs(as_int(v)));
  if (op == "neg") return is_float(v) ? TValue::real(-x) : TValue::integer(-as_int(v));
  if (op == "sqrt") return TValue::real(std::sqrt(x));
  if (op == "exp") return TValue::real(std::exp(x));
  if (op == "log") return TValue::real(std::log(x));
  if (op == "sin") return TValue::real(std::sin(x));
  if (op == "cos") return TValue::real(std::cos(x));
  if (op == "erf") return TValue::real(std::erf(x));
  return std::nullopt;
}

TValue list_slice(const TValue& list, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  const auto& items = *list.items;
  const int64_t n = static_cast<int64_t>(items.size());
  if (step <= 0) fail("list slice step must be positive");
  auto clampi = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t i = *v < 0 ? *v + n : *v;
    return std::clamp<int64_t>(i, 0, n);
  };
  std::vector<TValue> out;
  for (int64_t k = clampi(start, 0); k < clampi(end, n); k += step) out.push_back(items[static_cast<size_t>(k)]);
  return list.kind == TKind::List ? TValue::list(std::move(out)) : TValue::tuple(std::move(out));
}

namespace {

size_t index_of(Args& a, size_t arg, int64_t n) {
  int64_t i = a.integer(arg);
  if (i < -n || i >= n) a.fail_arg(arg, fmt::format("index {} is out of range for a length of {}", i, n));
  return static_cast<size_t>(i < 0 ? i + n : i);
}

TValue lower_len(Args& a) {
  const TValue& v = a[0];
  if (v.is_sequence()) return TValue::integer(static_cast<int64_t>(v.items->size()));
  if (v.kind == TKind::Dict) return TValue::integer(static_cast<int64_t>(v.dict->size()));
  if (v.kind == TKind::String) return TValue::integer(static_cast<int64_t>(v.s.size()));
  if (v.is_tensor()) {
    const ir::Shape& s = shape_of(a.b(), v.tensor);
    if (s.rank() == 0) a.fail_arg(0, "len() of a 0-d tensor");
    return TValue::integer(s[0].value());
  }
  a.fail_arg(0, fmt::format("len() of {}", describe(v)));
}

TValue lower_getitem(Args& a) {  // __getitem__(container, key)
  const TValue& c = a[0];
  if (c.is_sequence()) return (*c.items)[index_of(a, 1, static_cast<int64_t>(c.items->size()))];
  if (c.kind == TKind::Dict) {
    for (const auto& [k, v] : *c.dict)
      if (values_equal(k, a[1])) return v;
    a.fail_arg(1, fmt::format("key {} is not in the dict", describe(a[1])));
  }
  if (c.kind == TKind::String) {
    size_t i = index_of(a, 1, static_cast<int64_t>(c.s.size()));
    return TValue::string(c.s.substr(i, 1));
  }
  a.fail_arg(0, fmt::format("{} cannot be indexed", describe(c)));
}

TValue lower_setitem(Args& a) {  // _set_item(container, key, value)
  const TValue& c = a[0];
  if (c.kind == TKind::List) {
    (*c.items)[index_of(a, 1, static_cast<int64_t>(c.items->size()))] = a[2];
    return c;
  }
  if (c.kind == TKind::Dict) {
    for (auto& [k, v] : *c.dict)
      if (values_equal(k, a[1])) {
        v = a[2];
        return c;
      }
    c.dict->push_back({a[1], a[2]});
    return c;
  }
  a.fail_arg(0, fmt::format("{} does not support item assignment", describe(c)));
}

TValue lower_append(Args& a) {
  if (a[0].kind != TKind::List) a.fail_arg(0, fmt::format("append to {}", describe(a[0])));
  a[0].items->push_back(a[1]);
  return a[0];
}
TValue lower_extend(Args& a) {
  if (a[0].kind != TKind::List || !a[1].is_sequence()) a.fail_arg(0, "extend needs two lists");
  std::vector<TValue> more(*a[1].items);
  a[0].items->insert(a[0].items->end(), more.begin(), more.end());
  return a[0];
}
TValue lower_insert(Args& a) {  // insert(self, idx, el)
  if (a[0].kind != TKind::List) a.fail_arg(0, "insert into a non-list");
  auto& items = *a[0].items;
  int64_t n = static_cast<int64_t>(items.size()), i = a.integer(1);
  i = std::clamp<int64_t>(i < 0 ? i + n : i, 0, n);
  items.insert(items.begin() + i, a[2]);
  return a[0];
}
TValue lower_pop(Args& a) {  // pop(self, idx=-1)
  if (a[0].kind != TKind::List || a[0].items->empty()) a.fail_arg(0, "pop from an empty or non-list value");
  auto& items = *a[0].items;
  size_t i = index_of(a, 1, static_cast<int64_t>(items.size()));
  TValue v = items[i];
  items.erase(items.begin() + static_cast<int64_t>(i));
  return v;
}
TValue lower_list(Args& a) {  // list(l): a copy
  if (!a[0].is_sequence()) a.fail_arg(0, fmt::format("list() of {}", describe(a[0])));
  return TValue::list(*a[0].items);
}
TValue lower_is(Args& a) {
  if (a[0].is_none() || a[1].is_none()) return TValue::boolean(a[0].is_none() && a[1].is_none());
  if (a[0].is_tensor() && a[1].is_tensor()) return TValue::boolean(a[0].tensor == a[1].tensor);
  return TValue::boolean(values_equal(a[0], a[1]));
}
TValue lower_isnot(Args& a) { return TValue::boolean(!lower_is(a).b); }
TValue lower_not(Args& a) { return TValue::boolean(!a.boolean(0)); }
TValue lower_contains(Args& a) {  // __contains__(container, key)
  const TValue& c = a[0];
  if (c.is_sequence()) {
    for (const TValue& v : *c.items)
      if (values_equal(v, a[1])) return TValue::boolean(true);
    return TValue::boolean(false);
  }
  if (c.kind == TKind::Dict) {
    for (const auto& [k, v] : *c.dict)
      if (values_equal(k, a[1])) return TValue::boolean(true);
    return TValue::boolean(false);
  }
  if (c.kind == TKind::String) return TValue::boolean(c.s.find(a.string(1)) != std::string::npos);
  a.fail_arg(0, fmt::format("'in' on {}", describe(c)));
}
TValue dict_part(Args& a, int part) {
  if (a[0].kind != TKind::Dict) a.fail_arg(0, fmt::format("expected a dict, found {}", describe(a[0])));
  std::vector<TValue> out;
  for (const auto& [k, v] : *a[0].dict)
    out.push_back(part == 0 ? k : part == 1 ? v : TValue::tuple({k, v}));
  return TValue::list(std::move(out));
}
TValue lower_keys(Args& a) { return dict_part(a, 0); }
TValue lower_values(Args& a) { return dict_part(a, 1); }
TValue lower_items(Args& a) { return dict_part(a, 2); }

// Python's str() of a value, for format() and messages.
std::string str_of(const TValue& v) {
  switch (v.kind) {
    case TKind::String: return v.s;
    case TKind::Float: return fmt::format("{}", v.f);
    default: return describe(v);
  }
}
TValue lower_format(Args& a) {  // format(fmt, *args): "{}" placeholders in order
  std::string f = a.string(0), out;
  std::vector<TValue> args = a.list(1);
  size_t next = 0;
  for (size_t k = 0; k < f.size(); ++k) {
    if (f[k] == '{' && k + 1 < f.size() && f[k + 1] == '}') {
      out += next < args.size() ? str_of(args[next++]) : "{}";
      ++k;
    } else {
      out += f[k];
    }
  }
  return TValue::string(out);
}
TValue lower_str(Args& a) { return TValue::string(str_of(a[0])); }
TValue lower_warn(Args& a) { return TValue::none(); }
TValue lower_floordiv(Args& a) {
  if (auto r = scalar_binary("floordiv", a[0], a[1])) return *r;
  a.fail_arg(0, "floordiv of non-numbers");
}
// Int(x), Float(x), Bool(x), ScalarImplicit(x): a number from a number or a constant tensor.
// A non-constant tensor stays a tensor: a scalar known only at run time (`if bool(x.sum() > 0)`).
TValue lower_int(Args& a) {
  if (a[0].is_tensor() && !a[0].tensor->is_constant()) return TValue::of(cast_to(a.b(), a[0].tensor, ir::DType::I64));
  if (a[0].kind == TKind::String) return TValue::integer(std::stoll(a[0].s));
  if (a[0].kind == TKind::Float) {
    if (!(a[0].f >= -9.2e18 && a[0].f <= 9.2e18)) a.fail_arg(0, fmt::format("{} does not fit an int", a[0].f));
    return TValue::integer(static_cast<int64_t>(a[0].f));
  }
  return TValue::integer(a.integer(0));
}
TValue lower_float(Args& a) {
  if (a[0].is_tensor() && !a[0].tensor->is_constant()) return TValue::of(cast_to(a.b(), a[0].tensor, ir::DType::F32));
  if (a[0].kind == TKind::String) return TValue::real(std::strtod(a[0].s.c_str(), nullptr));
  return TValue::real(a.real(0));
}
TValue lower_bool(Args& a) {
  if (a[0].is_tensor() && !a[0].tensor->is_constant()) return TValue::of(cast_to(a.b(), a[0].tensor, ir::DType::Bool));
  return TValue::boolean(a.boolean(0));
}
TValue lower_scalar_implicit(Args& a) {
  const TValue& v = a[0];
  if (v.is_tensor() && v.tensor->is_constant() && v.tensor->constant().numel() == 1)
    return ir::is_float(v.tensor->dtype()) ? TValue::real(a.real(0)) : TValue::integer(a.integer(0));
  return v;
}
// for-loops over lists print as range(__range_length(lo, hi, step)) with __derive_index(i, lo, step).
TValue lower_range_length(Args& a) {
  int64_t lo = a.integer(0), hi = a.integer(1), step = a.integer(2);
  if (step == 0) a.fail_arg(2, "range step must not be zero");
  if (step > 0 && lo < hi) return TValue::integer((hi - lo + step - 1) / step);
  if (step < 0 && lo > hi) return TValue::integer((lo - hi - step - 1) / -step);
  return TValue::integer(0);
}
TValue lower_derive_index(Args& a) { return TValue::integer(a.integer(1) + a.integer(0) * a.integer(2)); }
// Questions about the running process: answered as PyTorch answers them when it runs a saved
// model for inference with gradients left on (the default), so that fast paths guarded by
// them are not taken and the plain, decomposed code is lowered.
TValue lower_true(Args&) { return TValue::boolean(true); }
TValue any_all(Args& a, bool any) {
  if (a[0].is_sequence()) {
    for (const TValue& v : *a[0].items) {
      TValue one = v;
      bool t = one.kind == TKind::Bool ? one.b : one.kind == TKind::Int ? one.i != 0 : true;
      if (t == any) return TValue::boolean(any);
    }
    return TValue::boolean(!any);
  }
  AtenBuilder& b = a.b();  // a tensor: every element (or any) nonzero, as a bool tensor
  ir::Value* x = cast_to(b, a.tensor(0), ir::DType::I64);
  ir::Value* nz = cast_to(b, b.node1("Not", {b.node1("Equal", {x, b.scalar_tensor(TValue::integer(0), ir::DType::I64)})}), ir::DType::I64);
  std::vector<int64_t> axes;
  for (int64_t k = 0; k < rank_of(x); ++k) axes.push_back(k);
  ir::Value* r = axes.empty() ? nz : b.node1(any ? "ReduceMax" : "ReduceMin", {nz, b.constant_i64s(axes)}, {{"keepdims", int64_t{0}}});
  return TValue::of(cast_to(b, r, ir::DType::Bool));
}
TValue lower_any(Args& a) { return any_all(a, true); }
TValue lower_all(Args& a) { return any_all(a, false); }
TValue lower_find(Args& a) {  // str.find(substr, start=0, end=-1)
  size_t at = a.string(0).find(a.string(1));
  return TValue::integer(at == std::string::npos ? -1 : static_cast<int64_t>(at));
}
TValue lower_is_floating_point(Args& a) { return TValue::boolean(ir::is_float(a.tensor(0)->dtype())); }
TValue lower_device(Args& a) { return TValue::device(a[0].kind == TKind::String ? a[0].s : "cpu"); }
TValue lower_false(Args&) { return TValue::boolean(false); }

}  // namespace

std::vector<OpEntry> scalar_ops() {
  return {
      {"len", "a", lower_len},
      {"__getitem__", "a, key", lower_getitem},
      {"_set_item", "a, key, value", lower_setitem},
      {"__setitem__", "a, key, value", lower_setitem},
      {"append", "self, el", lower_append},
      {"extend", "self, other", lower_extend},
      {"insert", "self, idx, el", lower_insert},
      {"pop", "self, idx=-1", lower_pop},
      {"list", "l", lower_list},
      {"copy", "l", lower_list},
      {"__is__", "self, obj", lower_is},
      {"__isnot__", "self, obj", lower_isnot},
      {"__not__", "self", lower_not},
      {"__contains__", "self, key", lower_contains},
      {"keys", "self", lower_keys},
      {"values", "self", lower_values},
      {"items", "self", lower_items},
      {"format", "self, args=[]", lower_format},
      {"str", "elem", lower_str},
      {"warn", "message, stacklevel=2", lower_warn},
      {"floordiv", "a, b", lower_floordiv},
      {"Int", "a", lower_int},
      {"Float", "a", lower_float},
      {"Bool", "a", lower_bool},
      {"ScalarImplicit", "a", lower_scalar_implicit},
      {"__range_length", "lo, hi, step", lower_range_length},
      {"__derive_index", "index, start, step", lower_derive_index},
      {"is_grad_enabled", "", lower_true},
      {"is_autocast_enabled", "", lower_false},
      {"is_autocast_cpu_enabled", "", lower_false},
      {"_has_torch_function", "args=[]", lower_false},
      {"has_torch_function", "args=[]", lower_false},
      {"is_scripting", "", lower_true},
      {"any", "self", lower_any},
      {"all", "self", lower_all},
      {"find", "self, substr, start=0, end=-1", lower_find},
      {"is_floating_point", "self", lower_is_floating_point},
      {"device", "type, index=None", lower_device},
  };
}

}  // namespace kiln::frontend::torchscript::aten
