// Elementwise arithmetic and math (ir/ops/elementwise_ops.def), Clip, and the shared
// machinery of every elementwise list (ir/ops/elementwise_eval.h).
#include "ir/ops/elementwise.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/ops/elementwise_eval.h"

namespace kiln::ir {
namespace elementwise {

bool class_accepts(TypeClass c, DType t) {
  switch (c) {
    case TypeClass::FLOAT: return is_float(t);
    case TypeClass::NUMERIC: return is_float(t) || is_integer(t);
    case TypeClass::INTEGER: return is_integer(t);
    case TypeClass::UNSIGNED: return is_integer(t) && !is_signed(t);
    case TypeClass::BOOL: return t == DType::Bool;
    case TypeClass::ANY: return true;
  }
  return false;
}

std::string_view class_name(TypeClass c) {
  switch (c) {
    case TypeClass::FLOAT: return "float types";
    case TypeClass::NUMERIC: return "numeric types";
    case TypeClass::INTEGER: return "integer types";
    case TypeClass::UNSIGNED: return "unsigned integer types";
    case TypeClass::BOOL: return "bool";
    case TypeClass::ANY: return "numeric types and bool";
  }
  return "?";
}

void check_class(const Node& node, size_t input, TypeClass c) {
  DType t = node.input(input)->dtype();
  if (!class_accepts(c, t))
    fail("{}: input '{}' is {}, op supports {}", node.describe(), node.input(input)->name(),
         dtype_name(t), class_name(c));
}

void check_choice(const Node& node, std::string_view attr, std::string_view allowed) {
  const std::string& v = node.s(attr);
  for (size_t start = 0; start <= allowed.size();) {
    size_t end = std::min(allowed.find('|', start), allowed.size());
    if (allowed.substr(start, end - start) == v) return;
    start = end + 1;
  }
  std::string choices(allowed);
  std::replace(choices.begin(), choices.end(), '|', ' ');
  fail("{}: attribute '{}' is '{}', expected one of: {}", node.describe(), attr, v, choices);
}

std::optional<Attribute> string_default(std::nullopt_t) { return std::nullopt; }
std::optional<Attribute> string_default(const char* value) { return Attribute(value); }

void fail_dtype(DType t) { fail("dtype {} is not supported", dtype_name(t)); }

void infer_unary(Node& n, TypeClass c, Out out) {
  check_class(n, 0, c);
  n.output(0)->set_type(out == Out::SAME ? n.input(0)->dtype() : DType::Bool, n.input(0)->shape());
}

void infer_binary(Node& n, TypeClass c, BRule b, Out out) {
  check_class(n, 0, c);
  if (b == BRule::B_NUMERIC)
    check_class(n, 1, TypeClass::NUMERIC);
  else
    require_same_dtype(n, 0, 1);
  const Shape& sa = n.input(0)->shape();
  Shape shape = broadcast_shapes(sa, n.input(1)->shape());
  if (b == BRule::B_SLOPE && !(shape == sa))
    fail("{}: '{}' of shape {} does not broadcast to '{}' of shape {}", n.describe(),
         n.input(1)->name(), n.input(1)->shape().str(), n.input(0)->name(), sa.str());
  n.output(0)->set_type(out == Out::SAME ? n.input(0)->dtype() : DType::Bool, shape);
}

void infer_select(Node& n) {
  if (n.input(0)->dtype() != DType::Bool)
    fail("{}: condition '{}' is {}, expected bool", n.describe(), n.input(0)->name(),
         dtype_name(n.input(0)->dtype()));
  require_same_dtype(n, 1, 2);
  Shape shape = broadcast_shapes(broadcast_shapes(n.input(0)->shape(), n.input(1)->shape()),
                                 n.input(2)->shape());
  n.output(0)->set_type(n.input(1)->dtype(), shape);
}

void infer_variadic(Node& n, TypeClass c) {
  check_class(n, 0, c);
  Shape shape = n.input(0)->shape();
  for (size_t k = 1; k < n.num_inputs(); ++k) {
    require_same_dtype(n, 0, k);
    shape = broadcast_shapes(shape, n.input(k)->shape());
  }
  n.output(0)->set_type(n.input(0)->dtype(), shape);
}

Cost elementwise_cost(const Node& node) {
  Cost c;
  const Shape& out = node.output(0)->shape();
  if (!out.is_static()) return c;
  c.flops = static_cast<double>(out.numel()) * std::max<size_t>(1, node.num_inputs() - 1);
  c.bytes = io_bytes(node);
  return c;
}

}  // namespace elementwise

namespace {

// Clip's bounds default to the type's range; an absent bound does not clip.
template <class C>
C clip_bound(const Tensor* t, C fallback) {
  return t ? static_cast<C>(t->as_double(0)) : fallback;
}

void register_clip(Registry& r) {
  using namespace elementwise;
  r.add(OpDef{
      .name = "Clip",
      .summary = "clamps to [min, max] (to max where min > max); an absent bound does not clip",
      .inputs = {{"input"}, {"min", true}, {"max", true}},
      .outputs = {"output"},
      .infer =
          [](Node& n) {
            check_class(n, 0, TypeClass::NUMERIC);
            for (size_t i = 1; i < 3; ++i)
              if (n.has_input(i)) {
                require_same_dtype(n, 0, i);
                if (n.input(i)->shape().rank() != 0 &&
                    !(n.input(i)->shape().is_static() && n.input(i)->shape().numel() == 1))
                  fail("{}: bound '{}' must be a scalar", n.describe(), n.input(i)->name());
              }
            n.output(0)->set_type(n.input(0)->dtype(), n.input(0)->shape());
          },
      .eval =
          [](const Node& n, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
            out[0] = Tensor(in[0]->dtype(), in[0]->dims());
            const Tensor* lo = in.size() > 1 ? in[1] : nullptr;
            const Tensor* hi = in.size() > 2 ? in[2] : nullptr;
            visit_dtype(in[0]->dtype(), [&]<class S>() {
              using C = compute_t<S>;
              C min = clip_bound<C>(lo, std::numeric_limits<C>::lowest());
              C max = clip_bound<C>(hi, std::numeric_limits<C>::max());
              const S* x = in[0]->data<S>();
              S* y = out[0].mutable_data<S>();
              for (int64_t i = 0; i < in[0]->numel(); ++i) {
                C v = static_cast<C>(x[i]);
                y[i] = S(kiln::rt::clip(v, min, max));
              }
            });
          },
      .cost = elementwise_cost,
      .elementwise = true,
  });
}

}  // namespace

const VariadicExprs* variadic_exprs(std::string_view op) {
  static const std::pair<std::string_view, VariadicExprs> kOps[] = {
#define KILN_UNARY_OP(...)
#define KILN_BINARY_OP(...)
#define KILN_VARIADIC_OP(NAME, CLASS, COMBINE, FINISH) {#NAME, {#COMBINE, #FINISH}},
#include "ir/ops/elementwise_ops.def"
#undef KILN_UNARY_OP
#undef KILN_BINARY_OP
#undef KILN_VARIADIC_OP
  };
  for (const auto& [name, exprs] : kOps)
    if (name == op) return &exprs;
  return nullptr;
}

void register_elementwise_ops(Registry& r) {
  using namespace elementwise;
#define KILN_UNARY_OP KILN_EW_UNARY
#define KILN_BINARY_OP KILN_EW_BINARY
#define KILN_VARIADIC_OP KILN_EW_VARIADIC
#include "ir/ops/elementwise_ops.def"
#undef KILN_UNARY_OP
#undef KILN_BINARY_OP
#undef KILN_VARIADIC_OP
  register_clip(r);
}

}  // namespace kiln::ir
