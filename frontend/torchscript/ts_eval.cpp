// The evaluator's expressions.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "frontend/torchscript/aten_internal.h"
#include "frontend/torchscript/ts_lowering.h"
#include "ir/error.h"

namespace kiln::frontend::torchscript {
namespace {

TValue module_value(std::string path) {
  TValue v;
  v.kind = TKind::Module;
  v.s = std::move(path);
  return v;
}

TValue function_value(FunctionRef f) {
  TValue v;
  v.kind = TKind::Function;
  v.function = std::make_shared<FunctionRef>(std::move(f));
  return v;
}

// Names the code may use without defining them: namespaces, Python builtins and type names.
bool is_global_name(const std::string& n) {
  static const char* const names[] = {
      "torch", "ops", "__torch__", "math", "int", "float", "bool", "str", "len", "range", "list", "tuple", "min",
      "max", "abs", "enumerate", "zip", "getattr", "hasattr", "print", "annotate", "unchecked_cast", "uninitialized",
      "Tensor", "List", "Tuple", "Optional", "Dict", "Union", "Any", "NoneType", "Future", "Device", "number",
      "Module", "Enum", "NamedTuple", "device", "Final", "Callable"};
  for (const char* x : names)
    if (n == x) return true;
  return false;
}

const char* aten_name_of(Op op) {
  switch (op) {
    case Op::Add: return "add";
    case Op::Sub: return "sub";
    case Op::Mul: return "mul";
    case Op::Div: return "div";
    case Op::FloorDiv: return "floordiv";
    case Op::Mod: return "remainder";
    case Op::Pow: return "pow";
    case Op::MatMul: return "matmul";
    case Op::BitAnd: return "__and__";
    case Op::BitOr: return "__or__";
    case Op::BitXor: return "__xor__";
    case Op::Eq: return "eq";
    case Op::Ne: return "ne";
    case Op::Lt: return "lt";
    case Op::Le: return "le";
    case Op::Gt: return "gt";
    case Op::Ge: return "ge";
    default: return nullptr;
  }
}

}  // namespace


std::optional<bool> Lowering::truth(const TValue& v) {
  switch (v.kind) {
    case TKind::None: return false;
    case TKind::Bool: return v.b;
    case TKind::Int: return v.i != 0;
    case TKind::Float: return v.f != 0;
    case TKind::String: return !v.s.empty();
    case TKind::List:
    case TKind::Tuple: return !v.items->empty();
    case TKind::Dict: return !v.dict->empty();
    case TKind::Tensor:
      if (v.tensor->is_constant() && v.tensor->constant().numel() == 1) return v.tensor->constant().as_double(0) != 0;
      return std::nullopt;
    default: return true;
  }
}

TValue Lowering::eval(const Expr& e) {
  step();
  LocGuard guard(*this, e.loc);
  switch (e.kind) {
    case ExprKind::Name: return eval_name(e);
    case ExprKind::Int: return TValue::integer(e.int_value);
    case ExprKind::Float: return TValue::real(e.float_value);
    case ExprKind::String: return TValue::string(e.name);
    case ExprKind::None: return TValue::none();
    case ExprKind::Bool: return TValue::boolean(e.int_value != 0);
    case ExprKind::Attribute: return eval_attribute(e);
    case ExprKind::Call: return eval_call(e);
    case ExprKind::Subscript: return eval_subscript(e);
    case ExprKind::Slice: fail_op("a slice outside a subscript");
    case ExprKind::Tuple:
    case ExprKind::List: {
      std::vector<TValue> items;
      for (const ExprPtr& x : e.args) items.push_back(eval(*x));
      return e.kind == ExprKind::List ? TValue::list(std::move(items)) : TValue::tuple(std::move(items));
    }
    case ExprKind::Dict: {
      TValue d;
      d.kind = TKind::Dict;
      d.dict = std::make_shared<std::vector<std::pair<TValue, TValue>>>();
      for (size_t k = 0; k + 1 < e.args.size(); k += 2) d.dict->push_back({eval(*e.args[k]), eval(*e.args[k + 1])});
      return d;
    }
    case ExprKind::Unary: {
      TValue v = eval(*e.args.at(0));
      switch (e.op) {
        case Op::Neg: return call_aten("neg", {v}, {});
        case Op::Pos: return v;
        case Op::Not: {
          if (auto t = truth(v)) return TValue::boolean(!*t);
          return call_aten("logical_not", {v}, {});
        }
        case Op::Invert:
          if (v.kind == TKind::Int) return TValue::integer(~v.i);
          return call_aten("bitwise_not", {v}, {});
        default: fail_op("unknown unary operator");
      }
    }
    case ExprKind::Binary: return eval_binary(e.op, eval(*e.args.at(0)), eval(*e.args.at(1)), e);
    case ExprKind::Compare: return eval_compare(e);
    case ExprKind::BoolOp: {
      TValue l = eval(*e.args.at(0));
      auto lt = truth(l);
      if (lt) {
        if (e.op == Op::And && !*lt) return l;
        if (e.op == Op::Or && *lt) return l;
        return eval(*e.args.at(1));
      }
      TValue r = eval(*e.args.at(1));
      return call_aten(e.op == Op::And ? "logical_and" : "logical_or", {l, r}, {});
    }
    case ExprKind::IfExp: {
      TValue c = eval(*e.args.at(1));
      if (auto t = truth(c)) return eval(*e.args.at(*t ? 0 : 2));
      TValue a = eval(*e.args.at(0)), b = eval(*e.args.at(2));
      return merge(call_aten("Bool", {c}, {}).tensor, a, b, "conditional expression");
    }
  }
  fail_op("unknown expression");
}

TValue Lowering::eval_name(const Expr& e) {
  const std::string& n = e.name;
  auto it = frame()->locals.find(n);
  if (it != frame()->locals.end()) return it->second;
  if (n == "CONSTANTS") return module_value("CONSTANTS");
  if (n == "inf") return TValue::real(std::numeric_limits<double>::infinity());
  if (n == "nan") return TValue::real(std::numeric_limits<double>::quiet_NaN());
  if (is_global_name(n)) return module_value(n);
  fail_op(fmt::format("name '{}' is not defined", n));
}

TValue Lowering::eval_attribute(const Expr& e) {
  TValue v = eval(*e.args.at(0));
  const std::string& attr = e.name;
  switch (v.kind) {
    case TKind::Object: return get_attr(v.object, attr);
    case TKind::Module: {
      if (v.s == "CONSTANTS") {  // CONSTANTS.c3
        if (attr.size() < 2 || attr[0] != 'c') fail_op(fmt::format("unknown constant '{}'", attr));
        size_t idx = std::stoul(attr.substr(1));
        if (!constants_.is_sequence() || idx >= constants_.items->size())
          fail_op(fmt::format("constant {} is not in constants.pkl", attr));
        return (*constants_.items)[idx];
      }
      std::string path = v.s + "." + attr;
      if (path == "math.inf") return TValue::real(std::numeric_limits<double>::infinity());
      if (path == "math.pi") return TValue::real(M_PI);
      if (path == "math.e") return TValue::real(M_E);
      if (v.s.rfind("__torch__", 0) == 0) {
        if (const FunctionDef* f = program_.find_function(path)) {
          FunctionRef r;
          r.kind = FunctionRef::Kind::Function;
          r.def = f;
          r.name = path;
          return function_value(std::move(r));
        }
        if (program_.find_class(path)) {
          FunctionRef r;
          r.kind = FunctionRef::Kind::Class;
          r.name = path;
          return function_value(std::move(r));
        }
      }
      return module_value(path);
    }
    case TKind::Tensor: {
      if (attr == "shape") return call_aten("size", {v}, {});
      if (attr == "dtype") return TValue::integer(aten::scalar_type_of(v.tensor->dtype()));
      if (attr == "device") return TValue::device("cpu");
      if (attr == "is_cuda" || attr == "is_quantized" || attr == "requires_grad") return TValue::boolean(false);
      if (attr == "ndim") return call_aten("dim", {v}, {});
      if (attr == "T") return call_aten("t", {v}, {});
      FunctionRef r;  // x.view(...): the aten op with x as self
      r.name = "torch." + attr;
      r.bound_self = v;
      return function_value(std::move(r));
    }
    case TKind::List:
    case TKind::Dict:
    case TKind::String: {
      FunctionRef r;  // l.append(x), d.keys()
      r.name = "torch." + attr;
      r.bound_self = v;
      return function_value(std::move(r));
    }
    default: fail_op(fmt::format("{} has no attribute '{}'", describe(v), attr));
  }
}

bool Lowering::isinstance(const TValue& v, const Expr& type) {
  std::string t;
  if (type.kind == ExprKind::Name) t = type.name;
  else if (type.kind == ExprKind::Subscript && type.args.at(0)->kind == ExprKind::Name) t = type.args[0]->name;
  else if (type.kind == ExprKind::Tuple) {
    for (const ExprPtr& x : type.args)
      if (isinstance(v, *x)) return true;
    return false;
  } else if (type.kind == ExprKind::Attribute) {
    return v.kind == TKind::Object;  // a class: objects are checked by class name elsewhere
  }
  if (t == "Tensor") return v.is_tensor();
  if (t == "int") return v.kind == TKind::Int;
  if (t == "float") return v.kind == TKind::Float;
  if (t == "bool") return v.kind == TKind::Bool;
  if (t == "str") return v.kind == TKind::String;
  if (t == "List") return v.kind == TKind::List;
  if (t == "Tuple") return v.kind == TKind::Tuple;
  if (t == "Dict") return v.kind == TKind::Dict;
  if (t == "NoneType") return v.is_none();
  if (t == "Optional") return true;
  fail_op(fmt::format("isinstance with type '{}' is not supported", t));
}

TValue Lowering::eval_call(const Expr& e) {
  const Expr& fe = *e.args.at(0);
  if (fe.kind == ExprKind::Name && fe.name == "isinstance" && !frame()->locals.count("isinstance")) {
    if (e.args.size() != 3) fail_op("isinstance() takes two arguments");
    return TValue::boolean(isinstance(eval(*e.args[1]), *e.args[2]));
  }
  TValue fn = eval(fe);
  std::vector<TValue> args;
  for (size_t k = 1; k < e.args.size(); ++k) args.push_back(eval(*e.args[k]));
  std::vector<std::pair<std::string, TValue>> kwargs;
  for (const Keyword& k : e.keywords) kwargs.push_back({k.name, eval(*k.value)});
  LocGuard guard(*this, e.loc);
  return call(fn, std::move(args), std::move(kwargs));
}

TValue Lowering::eval_subscript(const Expr& e) {
  TValue v = eval(*e.args.at(0));
  if (v.kind == TKind::Module) return v;  // a type: List[int]
  const Expr& idx = *e.args.at(1);
  if (idx.kind == ExprKind::Slice) {
    auto opt = [&](size_t k) -> std::optional<int64_t> {
      if (!idx.args[k]) return std::nullopt;
      TValue x = eval(*idx.args[k]);
      if (x.is_none()) return std::nullopt;
      if (x.kind != TKind::Int) fail_op(fmt::format("slice bound {} is not an int", describe(x)));
      return x.i;
    };
    std::optional<int64_t> lo = opt(0), hi = opt(1), st = opt(2);
    if (v.is_sequence()) return aten::list_slice(v, lo, hi, st.value_or(1));
    if (v.is_tensor()) {
      return call_aten("slice", {v, TValue::integer(0), lo ? TValue::integer(*lo) : TValue::none(),
                                 hi ? TValue::integer(*hi) : TValue::none(), TValue::integer(st.value_or(1))}, {});
    }
    fail_op(fmt::format("slicing {}", describe(v)));
  }
  TValue key = eval(idx);
  if (v.is_tensor()) {
    if (key.kind == TKind::Int) return call_aten("select", {v, TValue::integer(0), key}, {});
    if (key.is_tensor()) return call_aten("index", {v, TValue::list({key})}, {});
    fail_op(fmt::format("indexing a tensor with {}", describe(key)));
  }
  return call_aten("__getitem__", {v, key}, {});
}

TValue Lowering::eval_binary(Op op, const TValue& l, const TValue& r, const Expr& at) {
  const char* name = aten_name_of(op);
  if (!name) fail_op("unknown binary operator");
  if (!l.is_tensor() && !r.is_tensor()) {
    if (auto v = aten::scalar_binary(name, l, r)) return *v;
    fail_op(fmt::format("unsupported operands for {}: {} and {}", name, describe(l), describe(r)));
  }
  std::string aten = name;
  if (aten == "floordiv") aten = "floor_divide";
  if (aten == "__xor__") aten = "logical_xor";
  return call_aten(aten, {l, r}, {});
}

TValue Lowering::eval_compare(const Expr& e) {
  TValue l = eval(*e.args.at(0)), r = eval(*e.args.at(1));
  switch (e.op) {
    case Op::Is: return call_aten("__is__", {l, r}, {});
    case Op::IsNot: return call_aten("__isnot__", {l, r}, {});
    case Op::In: return call_aten("__contains__", {r, l}, {});
    case Op::NotIn: return TValue::boolean(!call_aten("__contains__", {r, l}, {}).b);
    default: return eval_binary(e.op, l, r, e);
  }
}

}  // namespace kiln::frontend::torchscript
