// The machinery behind the elementwise op lists (ir/ops/*_ops.def): type classes, the
// reference loops, and the macros that turn one line of a list into an OpDef. Included only
// by the family files that register those lists (elementwise, logic, activation).
//
// A list line names the op, the dtypes it takes, its output dtype, its scalar expression and
// its attributes:
//
//   KILN_UNARY_OP(name, class, out, expression in x, attributes...)
//   KILN_BINARY_OP(name, class, b rule, out, expression in a and b, attributes...)
//   KILN_SELECT_OP(name, expression in c, a and b)       condition c (bool), a and b of one dtype
//   KILN_VARIADIC_OP(name, class, expression in a and b, expression in x and n)
//
//   class: FLOAT (f32, f64, f16, bf16), NUMERIC (also the integers), INTEGER, UNSIGNED, BOOL,
//          ANY (numeric or bool)
//   out:   SAME (the input's dtype) or BOOL
//   b rule (B's dtype and shape): B_SAME (A's dtype, numpy broadcasting), B_SLOPE (A's dtype,
//          broadcasts to A's shape: PRelu's slope), B_NUMERIC (any numeric dtype: Pow)
//   attributes: (F, name, default) float, (I, name, default) int,
//          (S, name, default or std::nullopt if required, "allowed|values") string
//
// In an expression, `T` is the compute type of x and a (float for f16 and bf16), `U` that of
// b, and every attribute is a constant of its name: float, int64_t or std::string_view. A
// variadic op folds its inputs with the first expression and finishes with the second, `n`
// being the number of inputs. The expression text is the op's scalar_expr (variadic ops:
// ir/ops/elementwise.h), emitted verbatim by code generators.
#pragma once

#include <cmath>
#include <optional>
#include <string_view>
#include <type_traits>

#include "ir/ops/op_helpers.h"
#include "kiln/rt/erf.h"
#include "kiln/rt/scalar_ops.h"

namespace kiln::ir::elementwise {

enum class TypeClass { FLOAT, NUMERIC, INTEGER, UNSIGNED, BOOL, ANY };
enum class Out { SAME, BOOL };
enum class BRule { B_SAME, B_SLOPE, B_NUMERIC };

template <class S>
constexpr bool is_float_storage =
    std::is_floating_point_v<S> || std::is_same_v<S, f16> || std::is_same_v<S, bf16>;
template <class S>
constexpr bool is_integer_storage = std::is_integral_v<S> && !std::is_same_v<S, bool>;

template <TypeClass C, class S>
constexpr bool class_has() {
  switch (C) {
    case TypeClass::FLOAT: return is_float_storage<S>;
    case TypeClass::NUMERIC: return is_float_storage<S> || is_integer_storage<S>;
    case TypeClass::INTEGER: return is_integer_storage<S>;
    case TypeClass::UNSIGNED: return is_integer_storage<S> && std::is_unsigned_v<S>;
    case TypeClass::BOOL: return std::is_same_v<S, bool>;
    case TypeClass::ANY: return true;
  }
  return false;
}

bool class_accepts(TypeClass c, DType t);
std::string_view class_name(TypeClass c);
// Fails unless the node's input has a dtype of class c.
void check_class(const Node& node, size_t input, TypeClass c);
// Fails unless the string attribute's value is one of `allowed` ("A|B|C").
void check_choice(const Node& node, std::string_view attr, std::string_view allowed);
// A string attribute's default, or none when the attribute is required.
std::optional<Attribute> string_default(std::nullopt_t);
std::optional<Attribute> string_default(const char* value);

void infer_unary(Node& n, TypeClass c, Out out);
void infer_binary(Node& n, TypeClass c, BRule b, Out out);
void infer_select(Node& n);
void infer_variadic(Node& n, TypeClass c);
Cost elementwise_cost(const Node& node);

[[noreturn]] void fail_dtype(DType t);

// y = f(x) elementwise; f takes the compute type.
template <TypeClass C, Out O, class F>
void eval_unary(const Tensor& x, std::vector<Tensor>& out, F f) {
  out[0] = Tensor(O == Out::SAME ? x.dtype() : DType::Bool, x.dims());
  visit_dtype(x.dtype(), [&]<class S>() {
    if constexpr (class_has<C, S>()) {
      using T = compute_t<S>;
      using R = std::conditional_t<O == Out::SAME, S, bool>;
      using RC = std::conditional_t<O == Out::SAME, T, bool>;
      const S* in = x.data<S>();
      R* y = out[0].mutable_data<R>();
      for (int64_t i = 0; i < x.numel(); ++i) y[i] = static_cast<R>(static_cast<RC>(f(static_cast<T>(in[i]))));
    } else {
      fail_dtype(x.dtype());
    }
  });
}

// y = f(a, b) with broadcasting; the output has A's dtype (or bool).
template <TypeClass C, BRule B, Out O, class F>
void eval_binary(const Tensor& a, const Tensor& b, std::vector<Tensor>& out, F f) {
  std::vector<int64_t> dims = broadcast_dims(a.dims(), b.dims());
  std::vector<int64_t> as = broadcast_strides(a.dims(), dims), bs = broadcast_strides(b.dims(), dims);
  out[0] = Tensor(O == Out::SAME ? a.dtype() : DType::Bool, dims);
  visit_dtype(a.dtype(), [&]<class SA>() {
    if constexpr (class_has<C, SA>()) {
      auto with_b = [&]<class SB>() {
        if constexpr (B == BRule::B_NUMERIC ? class_has<TypeClass::NUMERIC, SB>() : std::is_same_v<SA, SB>) {
          using T = compute_t<SA>;
          using U = compute_t<SB>;
          using R = std::conditional_t<O == Out::SAME, SA, bool>;
          using RC = std::conditional_t<O == Out::SAME, T, bool>;
          const SA* pa = a.data<SA>();
          const SB* pb = b.data<SB>();
          R* y = out[0].mutable_data<R>();
          for_each_broadcast(dims, as, bs, [&](int64_t o, int64_t ia, int64_t ib) {
            y[o] = static_cast<R>(static_cast<RC>(f(static_cast<T>(pa[ia]), static_cast<U>(pb[ib]))));
          });
        } else {
          fail_dtype(b.dtype());
        }
      };
      if constexpr (B == BRule::B_NUMERIC)
        visit_dtype(b.dtype(), with_b);
      else
        with_b.template operator()<SA>();
    } else {
      fail_dtype(a.dtype());
    }
  });
}

// y = f(c, a, b) with broadcasting; c is bool, a and b share the output's dtype.
template <class F>
void eval_select(const Tensor& c, const Tensor& a, const Tensor& b, std::vector<Tensor>& out, F f) {
  std::vector<int64_t> dims = broadcast_dims(broadcast_dims(c.dims(), a.dims()), b.dims());
  std::vector<int64_t> cs = broadcast_strides(c.dims(), dims), as = broadcast_strides(a.dims(), dims),
                       bs = broadcast_strides(b.dims(), dims);
  out[0] = Tensor(a.dtype(), dims);
  visit_dtype(a.dtype(), [&]<class S>() {
    using T = compute_t<S>;
    const bool* pc = c.data<bool>();
    const S* pa = a.data<S>();
    const S* pb = b.data<S>();
    S* y = out[0].mutable_data<S>();
    std::vector<int64_t> idx(dims.size(), 0);
    int64_t o = 0;
    if (ir::numel(dims) == 0) return;
    do {
      int64_t ic = 0, ia = 0, ib = 0;
      for (size_t d = 0; d < dims.size(); ++d) ic += idx[d] * cs[d], ia += idx[d] * as[d], ib += idx[d] * bs[d];
      y[o++] = static_cast<S>(static_cast<T>(f(pc[ic], static_cast<T>(pa[ia]), static_cast<T>(pb[ib]))));
    } while (next_index(idx, dims));
  });
}

// y = finish(combine(...combine(x0, x1)..., xn-1), n) with broadcasting, in the compute type.
template <TypeClass C, class Combine, class Finish>
void eval_variadic(std::span<const Tensor* const> in, std::vector<Tensor>& out, Combine combine,
                   Finish finish) {
  std::vector<int64_t> dims = in[0]->dims();
  for (size_t k = 1; k < in.size(); ++k) dims = broadcast_dims(dims, in[k]->dims());
  std::vector<std::vector<int64_t>> strides;
  for (const Tensor* t : in) strides.push_back(broadcast_strides(t->dims(), dims));
  out[0] = Tensor(in[0]->dtype(), dims);
  visit_dtype(in[0]->dtype(), [&]<class S>() {
    if constexpr (class_has<C, S>()) {
      using T = compute_t<S>;
      S* y = out[0].mutable_data<S>();
      std::vector<int64_t> idx(dims.size(), 0);
      if (ir::numel(dims) == 0) return;
      int64_t o = 0;
      do {
        T acc{};
        for (size_t k = 0; k < in.size(); ++k) {
          int64_t off = 0;
          for (size_t d = 0; d < dims.size(); ++d) off += idx[d] * strides[k][d];
          T v = static_cast<T>(in[k]->data<S>()[off]);
          acc = k == 0 ? v : static_cast<T>(combine(acc, v));
        }
        y[o++] = static_cast<S>(static_cast<T>(finish(acc, static_cast<int64_t>(in.size()))));
      } while (next_index(idx, dims));
    } else {
      fail_dtype(in[0]->dtype());
    }
  });
}

}  // namespace kiln::ir::elementwise

// --- attributes: (K, name, ...) tuples expanded per use ----------------------------------------

#define KILN_FE_1(m, x) m x
#define KILN_FE_2(m, x, ...) m x KILN_FE_1(m, __VA_ARGS__)
#define KILN_FE_3(m, x, ...) m x KILN_FE_2(m, __VA_ARGS__)
#define KILN_FE_4(m, x, ...) m x KILN_FE_3(m, __VA_ARGS__)
#define KILN_FE_PICK(_1, _2, _3, _4, NAME, ...) NAME
#define KILN_FOR_EACH(m, ...) \
  __VA_OPT__(KILN_FE_PICK(__VA_ARGS__, KILN_FE_4, KILN_FE_3, KILN_FE_2, KILN_FE_1, )(m, __VA_ARGS__))

// The OpDef's AttrSpec.
#define KILN_ATTR_SPEC(K, NAME, ...) KILN_ATTR_SPEC_##K(NAME, __VA_ARGS__)
#define KILN_ATTR_SPEC_F(NAME, DEF) ::kiln::ir::AttrSpec{#NAME, ::kiln::ir::AttrType::Float, ::kiln::ir::Attribute(float(DEF))},
#define KILN_ATTR_SPEC_I(NAME, DEF) ::kiln::ir::AttrSpec{#NAME, ::kiln::ir::AttrType::Int, ::kiln::ir::Attribute(int64_t(DEF))},
#define KILN_ATTR_SPEC_S(NAME, DEF, ALLOWED) \
  ::kiln::ir::AttrSpec{#NAME, ::kiln::ir::AttrType::String, ::kiln::ir::elementwise::string_default(DEF)},
// A local constant the expression reads, from node `n`.
#define KILN_ATTR_LOCAL(K, NAME, ...) KILN_ATTR_LOCAL_##K(NAME)
#define KILN_ATTR_LOCAL_F(NAME) [[maybe_unused]] const float NAME = n.f(#NAME);
#define KILN_ATTR_LOCAL_I(NAME) [[maybe_unused]] const int64_t NAME = n.i(#NAME);
#define KILN_ATTR_LOCAL_S(NAME) [[maybe_unused]] const std::string_view NAME = n.s(#NAME);
// Validation in the shape rule.
#define KILN_ATTR_CHECK(K, NAME, ...) KILN_ATTR_CHECK_##K(NAME, __VA_ARGS__)
#define KILN_ATTR_CHECK_F(NAME, DEF)
#define KILN_ATTR_CHECK_I(NAME, DEF)
#define KILN_ATTR_CHECK_S(NAME, DEF, ALLOWED) ::kiln::ir::elementwise::check_choice(n, #NAME, ALLOWED);

// --- list lines to OpDefs (inside a function with `Registry& r`) ------------------------------
// A family registers its list by including it with KILN_UNARY_OP defined as KILN_EW_UNARY,
// and so on (see register_elementwise_ops in ir/ops/elementwise.cpp).

#define KILN_EW_EVAL_ARGS \
  [[maybe_unused]] const ::kiln::ir::Node& n, std::span<const ::kiln::ir::Tensor* const> in, \
      std::vector<::kiln::ir::Tensor>& out

#define KILN_EW_UNARY(NAME, CLASS, OUT, EXPR, ...)                                                   \
  r.add(::kiln::ir::OpDef{                                                                          \
      .name = #NAME,                                                                                \
      .summary = "elementwise " #EXPR,                                                              \
      .inputs = {{"X"}},                                                                            \
      .outputs = {"Y"},                                                                             \
      .attrs = {KILN_FOR_EACH(KILN_ATTR_SPEC, __VA_ARGS__)},                                        \
      .infer =                                                                                      \
          [](::kiln::ir::Node& n) {                                                                 \
            KILN_FOR_EACH(KILN_ATTR_CHECK, __VA_ARGS__)                                             \
            infer_unary(n, TypeClass::CLASS, Out::OUT);                                             \
          },                                                                                        \
      .eval =                                                                                       \
          [](KILN_EW_EVAL_ARGS) {                                                                   \
            KILN_FOR_EACH(KILN_ATTR_LOCAL, __VA_ARGS__)                                             \
            eval_unary<TypeClass::CLASS, Out::OUT>(*in[0], out, [&]<class T>(T x) { return EXPR; }); \
          },                                                                                        \
      .cost = elementwise_cost,                                                                     \
      .scalar_expr = #EXPR,                                                                         \
  });

#define KILN_EW_BINARY(NAME, CLASS, BRULE, OUT, EXPR, ...)                                      \
  r.add(::kiln::ir::OpDef{                                                                      \
      .name = #NAME,                                                                            \
      .summary = "elementwise " #EXPR " with broadcasting",                                     \
      .inputs = {{"A"}, {"B"}},                                                                 \
      .outputs = {"C"},                                                                         \
      .attrs = {KILN_FOR_EACH(KILN_ATTR_SPEC, __VA_ARGS__)},                                    \
      .infer =                                                                                  \
          [](::kiln::ir::Node& n) {                                                             \
            KILN_FOR_EACH(KILN_ATTR_CHECK, __VA_ARGS__)                                         \
            infer_binary(n, TypeClass::CLASS, BRule::BRULE, Out::OUT);                          \
          },                                                                                    \
      .eval =                                                                                   \
          [](KILN_EW_EVAL_ARGS) {                                                               \
            KILN_FOR_EACH(KILN_ATTR_LOCAL, __VA_ARGS__)                                         \
            eval_binary<TypeClass::CLASS, BRule::BRULE, Out::OUT>(                              \
                *in[0], *in[1], out, [&]<class T, class U>(T a, U b) { return EXPR; });         \
          },                                                                                    \
      .cost = elementwise_cost,                                                                 \
      .scalar_expr = #EXPR,                                                                     \
  });

#define KILN_EW_SELECT(NAME, EXPR)                                                              \
  r.add(::kiln::ir::OpDef{                                                                      \
      .name = #NAME,                                                                            \
      .summary = "elementwise " #EXPR " with broadcasting",                                     \
      .inputs = {{"condition"}, {"X"}, {"Y"}},                                                  \
      .outputs = {"output"},                                                                    \
      .infer = infer_select,                                                                    \
      .eval =                                                                                   \
          [](KILN_EW_EVAL_ARGS) {                                                               \
            eval_select(*in[0], *in[1], *in[2], out, []<class T>(bool c, T a, T b) { return EXPR; }); \
          },                                                                                    \
      .cost = elementwise_cost,                                                                 \
      .scalar_expr = #EXPR,                                                                     \
  });

// Variadic ops keep scalar_expr empty (their two expressions are in ir/ops/elementwise.h),
// so that users of scalar_expr only ever see one-expression unary and binary ops.
#define KILN_EW_VARIADIC(NAME, CLASS, COMBINE, FINISH)                                          \
  r.add(::kiln::ir::OpDef{                                                                      \
      .name = #NAME,                                                                            \
      .summary = "elementwise " #COMBINE " over all inputs with broadcasting, then " #FINISH,   \
      .inputs = {{"data_0", false, true}},                                                      \
      .outputs = {"result"},                                                                    \
      .infer = [](::kiln::ir::Node& n) { infer_variadic(n, TypeClass::CLASS); },                \
      .eval =                                                                                   \
          [](KILN_EW_EVAL_ARGS) {                                                               \
            eval_variadic<TypeClass::CLASS>(                                                    \
                in, out, []<class T>(T a, T b) { return COMBINE; },                             \
                []<class T>(T x, [[maybe_unused]] int64_t n) { return FINISH; });               \
          },                                                                                    \
      .cost = elementwise_cost,                                                                 \
      .elementwise = true,                                                                      \
  });
