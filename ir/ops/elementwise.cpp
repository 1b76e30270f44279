// Unary and binary elementwise ops (ir/ops/elementwise_ops.def) and Clip.
#include <cmath>
#include <limits>

#include "ir/ops/op_helpers.h"

namespace kiln::ir {
namespace {

enum class TypeClass { FLOAT, NUMERIC };

bool accepts(TypeClass c, DType t) {
  return c == TypeClass::FLOAT ? is_float(t) : (is_float(t) || is_integer(t));
}

void check_class(const Node& node, size_t input, TypeClass c) {
  DType t = node.input(input)->dtype();
  if (!accepts(c, t))
    fail("{}: input '{}' is {}, op supports {} types", node.describe(), node.input(input)->name(),
         dtype_name(t), c == TypeClass::FLOAT ? "float" : "numeric");
}

// Applies f elementwise, computing 16-bit floats in float.
template <class F>
void eval_unary(const Tensor& x, Tensor& y, F f) {
  visit_dtype(x.dtype(), [&]<class S>() {
    if constexpr (!std::is_same_v<S, bool>) {
      const S* in = x.data<S>();
      S* out = y.mutable_data<S>();
      for (int64_t i = 0; i < x.numel(); ++i)
        out[i] = S(f.template operator()<compute_t<S>>(static_cast<compute_t<S>>(in[i])));
    } else {
      fail("bool is not supported");
    }
  });
}

template <class F>
void eval_binary(const Tensor& a, const Tensor& b, Tensor& y, F f) {
  std::vector<int64_t> as = broadcast_strides(a.dims(), y.dims());
  std::vector<int64_t> bs = broadcast_strides(b.dims(), y.dims());
  visit_dtype(a.dtype(), [&]<class S>() {
    if constexpr (!std::is_same_v<S, bool>) {
      using C = compute_t<S>;
      const S* pa = a.data<S>();
      const S* pb = b.data<S>();
      S* out = y.mutable_data<S>();
      for_each_broadcast(y.dims(), as, bs, [&](int64_t o, int64_t ia, int64_t ib) {
        out[o] = S(f.template operator()<C>(static_cast<C>(pa[ia]), static_cast<C>(pb[ib])));
      });
    } else {
      fail("bool is not supported");
    }
  });
}

Cost elementwise_cost(const Node& node) {
  Cost c;
  const Shape& out = node.output(0)->shape();
  if (!out.is_static()) return c;
  double n = static_cast<double>(out.numel());
  c.flops = n;
  for (const Value* v : node.inputs())
    if (v && v->shape().is_static()) c.bytes += v->shape().numel() * dtype_size(v->dtype());
  c.bytes += n * dtype_size(node.output(0)->dtype());
  return c;
}

// Clip's bounds default to the type's range; an absent bound does not clip.
template <class C>
C clip_bound(const Tensor* t, C fallback) {
  return t ? static_cast<C>(t->as_double(0)) : fallback;
}

}  // namespace

void register_elementwise_ops(Registry& r) {
#define KILN_UNARY_OP(NAME, CLASS, EXPR)                                                  \
  r.add(OpDef{                                                                            \
      .name = #NAME,                                                                      \
      .summary = "elementwise " #EXPR,                                                    \
      .inputs = {{"X"}},                                                                  \
      .outputs = {"Y"},                                                                   \
      .infer = [](Node& n) {                                                              \
        check_class(n, 0, TypeClass::CLASS);                                              \
        n.output(0)->set_type(n.input(0)->dtype(), n.input(0)->shape());                  \
      },                                                                                  \
      .eval = [](const Node& n, std::span<const Tensor* const> in, std::vector<Tensor>& out) { \
        out[0] = Tensor(in[0]->dtype(), in[0]->dims());                                   \
        eval_unary(*in[0], out[0], []<class T>(T x) -> T { return EXPR; });               \
      },                                                                                  \
      .cost = elementwise_cost,                                                           \
      .scalar_expr = #EXPR,                                                               \
  });
#define KILN_BINARY_OP(NAME, CLASS, EXPR)                                                 \
  r.add(OpDef{                                                                            \
      .name = #NAME,                                                                      \
      .summary = "elementwise " #EXPR " with broadcasting",                               \
      .inputs = {{"A"}, {"B"}},                                                           \
      .outputs = {"C"},                                                                   \
      .infer = [](Node& n) {                                                              \
        check_class(n, 0, TypeClass::CLASS);                                              \
        require_same_dtype(n, 0, 1);                                                      \
        n.output(0)->set_type(n.input(0)->dtype(),                                        \
                              broadcast_shapes(n.input(0)->shape(), n.input(1)->shape())); \
      },                                                                                  \
      .eval = [](const Node& n, std::span<const Tensor* const> in, std::vector<Tensor>& out) { \
        out[0] = Tensor(in[0]->dtype(), broadcast_dims(in[0]->dims(), in[1]->dims()));   \
        eval_binary(*in[0], *in[1], out[0], []<class T>(T a, T b) -> T { return EXPR; }); \
      },                                                                                  \
      .cost = elementwise_cost,                                                           \
      .scalar_expr = #EXPR,                                                               \
  });
#include "ir/ops/elementwise_ops.def"
#undef KILN_UNARY_OP
#undef KILN_BINARY_OP

  r.add(OpDef{
      .name = "Clip",
      .summary = "clamps to [min, max]; an absent bound does not clip",
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
                y[i] = S(v < min ? min : (v > max ? max : v));
              }
            });
          },
      .cost = elementwise_cost,
  });
}

}  // namespace kiln::ir
