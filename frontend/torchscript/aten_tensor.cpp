// aten ops on tensors as data: elementwise arithmetic and comparison (with Python scalars and
// broadcasting), shape and layout, slicing and indexing, reductions, creation and casts.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "frontend/torchscript/aten_internal.h"

namespace kiln::frontend::torchscript::aten {
namespace {

using ir::AttributeMap;
using ir::Value;

std::vector<int64_t> dims_of(AtenBuilder& b, const Value* v) { return shape_of(b, v).values(); }

// ---------------------------------------------------------------- elementwise

// A binary op where at least one side is a tensor: both cast to torch's result type.
Value* binary(Args& a, const char* op, const TValue& x, const TValue& y, std::optional<ir::DType> compute = {}) {
  AtenBuilder& b = a.b();
  ir::DType dt = compute ? *compute : promote(x, y);
  Value* l = x.is_tensor() ? cast_to(b, x.tensor, dt) : b.scalar_tensor(x, dt);
  Value* r = y.is_tensor() ? cast_to(b, y.tensor, dt) : b.scalar_tensor(y, dt);
  return b.node1(op, {l, r});
}

TValue scalar_or(Args& a, const char* aten_name, const char* op) {
  if (!a.is_tensor(0) && !a.is_tensor(1)) {
    if (auto r = scalar_binary(aten_name, a[0], a[1])) return *r;
    a.b().fail_op(fmt::format("{} of {} and {}", aten_name, describe(a[0]), describe(a[1])));
  }
  return tensor_result(binary(a, op, a[0], a[1]));
}

TValue with_alpha(Args& a, const TValue& other) {  // other * alpha for add/sub
  if (a.size() < 3 || a[2].is_none() || (a[2].kind == TKind::Int && a[2].i == 1)) return other;
  if (!other.is_tensor()) {
    if (auto r = scalar_binary("mul", other, a[2])) return *r;
  }
  return tensor_result(binary(a, "Mul", other, a[2]));
}

TValue lower_add(Args& a) {
  if (!a.is_tensor(0) && !a.is_tensor(1)) return scalar_or(a, "add", "Add");
  return tensor_result(binary(a, "Add", a[0], with_alpha(a, a[1])));
}
TValue lower_sub(Args& a) {
  if (!a.is_tensor(0) && !a.is_tensor(1)) return scalar_or(a, "sub", "Sub");
  return tensor_result(binary(a, "Sub", a[0], with_alpha(a, a[1])));
}
TValue lower_rsub(Args& a) { return tensor_result(binary(a, "Sub", a[1], with_alpha(a, a[0]))); }
TValue lower_mul(Args& a) { return scalar_or(a, "mul", "Mul"); }
TValue lower_div(Args& a) {  // div(self, other, rounding_mode=None): true division, in float
  if (!a.is_tensor(0) && !a.is_tensor(1)) return scalar_or(a, "div", "Div");
  ir::DType dt = promote(a[0], a[1]);
  if (!ir::is_float(dt)) dt = ir::DType::F32;
  Value* q = binary(a, "Div", a[0], a[1], dt);
  if (a.size() > 2 && !a.none(2)) {
    const std::string& mode = a.string(2);
    if (mode == "floor") q = a.b().node1("Floor", {q});
    else if (mode == "trunc") q = a.b().node1("Where", {a.b().node1("Less", {q, a.b().scalar_tensor(TValue::real(0), dt)}),
                                                        a.b().node1("Ceil", {q}), a.b().node1("Floor", {q})});
    else a.b().fail_op(fmt::format("rounding_mode '{}'", mode));
    ir::DType want = promote(a[0], a[1]);
    q = cast_to(a.b(), q, want);
  }
  return tensor_result(q);
}
TValue lower_floor_divide(Args& a) {
  if (!a.is_tensor(0) && !a.is_tensor(1)) return scalar_or(a, "floordiv", "Div");
  ir::DType want = promote(a[0], a[1]);
  Value* q = a.b().node1("Floor", {binary(a, "Div", a[0], a[1], ir::is_float(want) ? want : ir::DType::F64)});
  return tensor_result(cast_to(a.b(), q, want));
}
TValue lower_remainder(Args& a) {  // Python's modulo: the sign of the divisor
  if (!a.is_tensor(0) && !a.is_tensor(1)) return scalar_or(a, "remainder", "Mod");
  ir::DType dt = promote(a[0], a[1]);
  AtenBuilder& b = a.b();
  Value* l = a.is_tensor(0) ? cast_to(b, a[0].tensor, dt) : b.scalar_tensor(a[0], dt);
  Value* r = a.is_tensor(1) ? cast_to(b, a[1].tensor, dt) : b.scalar_tensor(a[1], dt);
  Value* m = b.node1("Mod", {l, r}, {{"fmod", int64_t{ir::is_float(dt) ? 1 : 0}}});
  if (!ir::is_float(dt)) return tensor_result(m);
  // fmod's sign follows the dividend: add the divisor where the signs differ and m != 0
  Value* zero = b.scalar_tensor(TValue::real(0), dt);
  Value* fix = b.node1("And", {b.node1("Not", {b.node1("Equal", {m, zero})}),
                               b.node1("Xor", {b.node1("Less", {m, zero}), b.node1("Less", {r, zero})})});
  return tensor_result(b.node1("Where", {fix, b.node1("Add", {m, r}), m}));
}
TValue lower_pow(Args& a) {
  if (!a.is_tensor(0) && !a.is_tensor(1)) return scalar_or(a, "pow", "Pow");
  if (a.is_tensor(0) && !a.is_tensor(1) && a[1].is_number()) {
    double e = a.real(1);
    Value* x = a.tensor(0);
    if (e == 2) return tensor_result(a.b().node1("Mul", {x, x}));
    if (e == 1) return tensor_result(x);
    if (e == 0.5) return tensor_result(a.b().node1("Sqrt", {x}));
  }
  return tensor_result(binary(a, "Pow", a[0], a[1]));
}
TValue lower_maximum(Args& a) { return tensor_result(binary(a, "Max", a[0], a[1])); }
TValue lower_minimum(Args& a) { return tensor_result(binary(a, "Min", a[0], a[1])); }

TValue compare(Args& a, const char* aten_name, const char* op, bool negate = false) {
  if (!a.is_tensor(0) && !a.is_tensor(1)) return scalar_or(a, aten_name, op);
  Value* r = binary(a, op, a[0], a[1]);
  if (negate) r = a.b().node1("Not", {r});
  return tensor_result(r);
}
TValue lower_eq(Args& a) { return compare(a, "eq", "Equal"); }
TValue lower_ne(Args& a) { return compare(a, "ne", "Equal", true); }
TValue lower_lt(Args& a) { return compare(a, "lt", "Less"); }
TValue lower_le(Args& a) { return compare(a, "le", "LessOrEqual"); }
TValue lower_gt(Args& a) { return compare(a, "gt", "Greater"); }
TValue lower_ge(Args& a) { return compare(a, "ge", "GreaterOrEqual"); }

Value* as_bool(AtenBuilder& b, Value* v) { return cast_to(b, v, ir::DType::Bool); }
TValue logical(Args& a, const char* aten_name, const char* op) {
  if (!a.is_tensor(0) && !a.is_tensor(1)) return scalar_or(a, aten_name, op);
  AtenBuilder& b = a.b();
  Value* l = as_bool(b, a.tensor(0));
  Value* r = as_bool(b, a.tensor(1));
  return tensor_result(b.node1(op, {l, r}));
}
TValue lower_logical_and(Args& a) { return logical(a, "__and__", "And"); }
TValue lower_logical_or(Args& a) { return logical(a, "__or__", "Or"); }
TValue lower_logical_xor(Args& a) { return logical(a, "__xor__", "Xor"); }
TValue lower_logical_not(Args& a) { return tensor_result(a.b().node1("Not", {as_bool(a.b(), a.tensor(0))})); }
TValue lower_bitwise_and(Args& a) {
  if (a.is_tensor(0) && a[0].tensor->dtype() == ir::DType::Bool) return lower_logical_and(a);
  if (!a.is_tensor(0) && !a.is_tensor(1)) return scalar_or(a, "__and__", "BitwiseAnd");
  return tensor_result(binary(a, "BitwiseAnd", a[0], a[1]));
}
TValue lower_bitwise_or(Args& a) {
  if (a.is_tensor(0) && a[0].tensor->dtype() == ir::DType::Bool) return lower_logical_or(a);
  if (!a.is_tensor(0) && !a.is_tensor(1)) return scalar_or(a, "__or__", "BitwiseOr");
  return tensor_result(binary(a, "BitwiseOr", a[0], a[1]));
}
TValue lower_bitwise_not(Args& a) {
  Value* x = a.tensor(0);
  return tensor_result(a.b().node1(x->dtype() == ir::DType::Bool ? "Not" : "BitwiseNot", {x}));
}

TValue lower_where(Args& a) {  // where(condition, self, other)
  AtenBuilder& b = a.b();
  ir::DType dt = promote(a[1], a[2]);
  Value* x = a.is_tensor(1) ? cast_to(b, a[1].tensor, dt) : b.scalar_tensor(a[1], dt);
  Value* y = a.is_tensor(2) ? cast_to(b, a[2].tensor, dt) : b.scalar_tensor(a[2], dt);
  return tensor_result(b.node1("Where", {as_bool(b, a.tensor(0)), x, y}));
}
TValue lower_masked_fill(Args& a) {  // masked_fill(self, mask, value)
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  Value* v = a.is_tensor(2) ? cast_to(b, a[2].tensor, x->dtype()) : b.scalar_tensor(a[2], x->dtype());
  return tensor_result(b.node1("Where", {as_bool(b, a.tensor(1)), v, x}));
}

TValue unary_float(Args& a, const char* op) {  // ops that compute in float on integer inputs too
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  if (!ir::is_float(x->dtype())) x = cast_to(b, x, ir::DType::F32);
  return tensor_result(b.node1(op, {x}));
}
#define KILN_UNARY(fn, op)                                                  \
  TValue fn(Args& a) {                                                       \
    if (auto r = scalar_unary(#fn + 6, a[0])) return *r;                     \
    return tensor_result(a.b().node1(op, {a.tensor(0)}));                    \
  }
#define KILN_UNARY_FLOAT(fn, op)                        \
  TValue fn(Args& a) {                                   \
    if (auto r = scalar_unary(#fn + 6, a[0])) return *r; \
    return unary_float(a, op);                           \
  }
KILN_UNARY(lower_abs, "Abs")
KILN_UNARY(lower_floor, "Floor")
KILN_UNARY(lower_ceil, "Ceil")
KILN_UNARY(lower_round, "Round")
KILN_UNARY(lower_sign, "Sign")
KILN_UNARY_FLOAT(lower_exp, "Exp")
KILN_UNARY_FLOAT(lower_log, "Log")
KILN_UNARY_FLOAT(lower_sqrt, "Sqrt")
KILN_UNARY_FLOAT(lower_sin, "Sin")
KILN_UNARY_FLOAT(lower_cos, "Cos")
KILN_UNARY_FLOAT(lower_erf, "Erf")
KILN_UNARY_FLOAT(lower_reciprocal, "Reciprocal")
#undef KILN_UNARY
#undef KILN_UNARY_FLOAT
TValue lower_neg(Args& a) {
  if (!a.is_tensor(0)) {
    if (auto r = scalar_binary("sub", TValue::integer(0), a[0])) return *r;
  }
  return tensor_result(a.b().node1("Neg", {a.tensor(0)}));
}
TValue lower_rsqrt(Args& a) {
  TValue s = unary_float(a, "Sqrt");
  return tensor_result(a.b().node1("Reciprocal", {s.tensor}));
}
TValue lower_square(Args& a) {
  Value* x = a.tensor(0);
  return tensor_result(a.b().node1("Mul", {x, x}));
}
TValue lower_log1p(Args& a) {
  TValue x = unary_float(a, "Identity");
  return tensor_result(a.b().node1("Log", {a.b().node1("Add", {x.tensor, a.b().scalar_tensor(TValue::real(1), x.tensor->dtype())})}));
}

// ---------------------------------------------------------------- shape and layout

TValue lower_size(Args& a) {  // size(self, dim=None)
  if (!a.is_tensor(0)) a.fail_arg(0, fmt::format("expected a Tensor, found {}", describe(a[0])));
  std::vector<int64_t> d = dims_of(a.b(), a.tensor(0));
  if (a.none(1)) {
    std::vector<TValue> items;
    for (int64_t v : d) items.push_back(TValue::integer(v));
    return TValue::list(std::move(items));
  }
  return TValue::integer(d[norm_dim(a.b(), a.integer(1), static_cast<int64_t>(d.size()))]);
}
TValue lower_dim(Args& a) { return TValue::integer(rank_of(a.tensor(0))); }
TValue lower_numel(Args& a) { return TValue::integer(shape_of(a.b(), a.tensor(0)).numel()); }

// The dims of a view: -1 resolved against the element count.
std::vector<int64_t> resolve_view(AtenBuilder& b, int64_t numel, std::vector<int64_t> dims) {
  int64_t known = 1, infer = -1;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] == -1) {
      if (infer >= 0) b.fail_op("a view may have only one -1 dim");
      infer = static_cast<int64_t>(k);
    } else if (dims[k] < 0) {
      b.fail_op(fmt::format("invalid view dim {}", dims[k]));
    } else {
      known *= dims[k];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel % known) b.fail_op(fmt::format("cannot view {} elements as {}", numel, ir::dims_str(dims)));
    dims[static_cast<size_t>(infer)] = numel / known;
  } else if (known != numel) {
    b.fail_op(fmt::format("cannot view {} elements as {}", numel, ir::dims_str(dims)));
  }
  return dims;
}
Value* reshape(AtenBuilder& b, Value* x, std::vector<int64_t> dims) {
  dims = resolve_view(b, shape_of(b, x).numel(), std::move(dims));
  if (dims == dims_of(b, x)) return x;
  bool zero = std::find(dims.begin(), dims.end(), 0) != dims.end();
  return b.node1("Reshape", {x, b.constant_i64s(dims)}, {{"allowzero", int64_t{zero}}});
}
TValue lower_view(Args& a) { return tensor_result(reshape(a.b(), a.tensor(0), a.ints(1))); }
TValue lower_view_as(Args& a) { return tensor_result(reshape(a.b(), a.tensor(0), dims_of(a.b(), a.tensor(1)))); }
TValue lower_flatten(Args& a) {  // flatten(self, start_dim=0, end_dim=-1)
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  std::vector<int64_t> d = dims_of(b, x);
  if (d.empty()) return tensor_result(reshape(b, x, {1}));
  int64_t r = static_cast<int64_t>(d.size());
  int64_t s = norm_dim(b, a.integer(1), r), e = norm_dim(b, a.integer(2), r);
  std::vector<int64_t> out(d.begin(), d.begin() + s);
  int64_t m = 1;
  for (int64_t k = s; k <= e; ++k) m *= d[k];
  out.push_back(m);
  out.insert(out.end(), d.begin() + e + 1, d.end());
  return tensor_result(reshape(b, x, out));
}
TValue lower_unflatten(Args& a) {  // unflatten(self, dim, sizes)
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  std::vector<int64_t> d = dims_of(b, x);
  int64_t dim = norm_dim(b, a.integer(1), static_cast<int64_t>(d.size()));
  std::vector<int64_t> sizes = resolve_view(b, d[dim], a.ints(2));
  std::vector<int64_t> out(d.begin(), d.begin() + dim);
  out.insert(out.end(), sizes.begin(), sizes.end());
  out.insert(out.end(), d.begin() + dim + 1, d.end());
  return tensor_result(reshape(b, x, out));
}
TValue lower_permute(Args& a) {
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  std::vector<int64_t> perm = a.ints(1);
  for (int64_t& p : perm) p = norm_dim(b, p, rank_of(x));
  return tensor_result(b.node1("Transpose", {x}, {{"perm", perm}}));
}
TValue lower_transpose(Args& a) {
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  int64_t r = rank_of(x);
  if (r < 2) return tensor_result(x);
  int64_t d0 = norm_dim(b, a.integer(1), r), d1 = norm_dim(b, a.integer(2), r);
  if (d0 == d1) return tensor_result(x);
  std::vector<int64_t> perm(static_cast<size_t>(r));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[d0], perm[d1]);
  return tensor_result(b.node1("Transpose", {x}, {{"perm", perm}}));
}
TValue lower_unsqueeze(Args& a) {
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  int64_t dim = norm_dim(b, a.integer(1), rank_of(x) + 1);
  return tensor_result(b.node1("Unsqueeze", {x, b.constant_i64s({dim})}));
}
TValue lower_squeeze(Args& a) {  // squeeze(self, dim=None); dim an int or a list
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  std::vector<int64_t> d = dims_of(b, x);
  std::vector<int64_t> axes;
  if (a.none(1)) {
    for (size_t k = 0; k < d.size(); ++k)
      if (d[k] == 1) axes.push_back(static_cast<int64_t>(k));
  } else {
    for (int64_t k : a.ints(1)) {
      int64_t n = norm_dim(b, k, static_cast<int64_t>(d.size()));
      if (!d.empty() && d[n] == 1) axes.push_back(n);  // squeezing a dim that is not 1 is a no-op in torch
    }
  }
  if (axes.empty()) return tensor_result(x);
  return tensor_result(b.node1("Squeeze", {x, b.constant_i64s(axes)}));
}
TValue lower_expand(Args& a) {  // expand(self, size, implicit): -1 keeps a dim
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  std::vector<int64_t> d = dims_of(b, x), size = a.ints(1);
  size_t off = size.size() - std::min(size.size(), d.size());
  for (size_t k = 0; k < size.size(); ++k)
    if (size[k] == -1) size[k] = k >= off ? d[k - off] : 1;
  if (size == d) return tensor_result(x);
  return tensor_result(b.node1("Expand", {x, b.constant_i64s(size)}));
}
TValue lower_expand_as(Args& a) {
  AtenBuilder& b = a.b();
  return tensor_result(b.node1("Expand", {a.tensor(0), b.constant_i64s(dims_of(b, a.tensor(1)))}));
}
TValue lower_repeat(Args& a) {
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  std::vector<int64_t> reps = a.ints(1);
  std::vector<int64_t> d = dims_of(b, x);
  if (reps.size() > d.size()) {  // leading new dims of size 1
    std::vector<int64_t> nd(reps.size() - d.size(), 1);
    nd.insert(nd.end(), d.begin(), d.end());
    x = reshape(b, x, nd);
  }
  return tensor_result(b.node1("Tile", {x, b.constant_i64s(reps)}));
}
TValue lower_cat(Args& a) {  // cat(tensors, dim)
  AtenBuilder& b = a.b();
  std::vector<Value*> ts;
  for (Value* t : a.tensors(0))  // torch skips 1-d empty tensors in cat
    if (!(rank_of(t) == 1 && shape_of(b, t)[0].value() == 0)) ts.push_back(t);
  if (ts.empty()) return tensor_result(a.tensors(0).at(0));
  TValue acc = TValue::of(ts[0]);
  for (Value* t : ts) {
    ir::DType dt = promote(acc, TValue::of(t));
    acc = TValue::of(dt == acc.tensor->dtype() ? acc.tensor : t);
  }
  for (Value*& t : ts) t = cast_to(b, t, acc.tensor->dtype());
  if (ts.size() == 1) return tensor_result(ts[0]);
  int64_t dim = norm_dim(b, a.integer(1), rank_of(ts[0]));
  return tensor_result(b.node1("Concat", ts, {{"axis", dim}}));
}
TValue lower_stack(Args& a) {
  AtenBuilder& b = a.b();
  std::vector<Value*> ts = a.tensors(0);
  if (ts.empty()) b.fail_op("stack of no tensors");
  int64_t dim = norm_dim(b, a.integer(1), rank_of(ts[0]) + 1);
  std::vector<Value*> us;
  for (Value* t : ts) us.push_back(b.node1("Unsqueeze", {t, b.constant_i64s({dim})}));
  if (us.size() == 1) return tensor_result(us[0]);
  return tensor_result(b.node1("Concat", us, {{"axis", dim}}));
}

TValue split_sizes(Args& a, Value* x, int64_t dim, const std::vector<int64_t>& sizes) {
  AtenBuilder& b = a.b();
  std::vector<TValue> parts;
  if (sizes.size() == 1) return TValue::list({TValue::of(x)});
  std::vector<Value*> outs = b.node("Split", {x, b.constant_i64s(sizes)}, {{"axis", dim}}, sizes.size());
  for (Value* o : outs) parts.push_back(TValue::of(o));
  return TValue::list(std::move(parts));
}
TValue lower_split(Args& a) {  // split(self, split_size, dim): an int size or a list of sizes
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  std::vector<int64_t> d = dims_of(b, x);
  int64_t dim = norm_dim(b, a.integer(2), static_cast<int64_t>(d.size()));
  std::vector<int64_t> sizes;
  if (a[1].kind == TKind::Int) {
    int64_t s = a.integer(1);
    if (s <= 0) a.fail_arg(1, "split size must be positive");
    for (int64_t at = 0; at < d[dim]; at += s) sizes.push_back(std::min(s, d[dim] - at));
    if (sizes.empty()) sizes.push_back(0);
  } else {
    sizes = a.ints(1);
  }
  return split_sizes(a, x, dim, sizes);
}
TValue lower_chunk(Args& a) {  // chunk(self, chunks, dim)
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  std::vector<int64_t> d = dims_of(b, x);
  int64_t dim = norm_dim(b, a.integer(2), static_cast<int64_t>(d.size()));
  int64_t chunks = a.integer(1);
  if (chunks <= 0) a.fail_arg(1, "chunks must be positive");
  int64_t each = (d[dim] + chunks - 1) / chunks;
  std::vector<int64_t> sizes;
  for (int64_t at = 0; at < d[dim]; at += std::max<int64_t>(each, 1)) sizes.push_back(std::min(each, d[dim] - at));
  return split_sizes(a, x, dim, sizes);
}
TValue lower_unbind(Args& a) {  // unbind(self, dim)
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  std::vector<int64_t> d = dims_of(b, x);
  int64_t dim = norm_dim(b, a.integer(1), static_cast<int64_t>(d.size()));
  std::vector<TValue> parts;
  for (int64_t i = 0; i < d[dim]; ++i) {
    Value* g = b.node1("Gather", {x, b.constant(ir::Tensor::scalar_i64(i))}, {{"axis", dim}});
    parts.push_back(TValue::of(g));
  }
  return TValue::list(std::move(parts));
}

// slice(self, dim, start, end, step): bounds clamped as Python's.
Value* slice(AtenBuilder& b, Value* x, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
             int64_t step) {
  std::vector<int64_t> d = dims_of(b, x);
  dim = norm_dim(b, dim, static_cast<int64_t>(d.size()));
  int64_t n = d[dim];
  if (step <= 0) b.fail_op("slice step must be positive");
  auto clampi = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t i = *v < 0 ? *v + n : *v;
    return std::clamp<int64_t>(i, 0, n);
  };
  int64_t s = clampi(start, 0), e = clampi(end, n);
  if (s == 0 && e == n && step == 1) return x;
  e = std::max(e, s);
  return b.node1("Slice", {x, b.constant_i64s({s}), b.constant_i64s({e}), b.constant_i64s({dim}), b.constant_i64s({step})});
}
TValue lower_slice(Args& a) {
  if (a[0].is_sequence())  // slice.t(l, start, end, step): positions shifted against the tensor form
    return list_slice(a[0], a.opt_integer(1), a.opt_integer(2), a.none(3) ? 1 : a.integer(3));
  return tensor_result(slice(a.b(), a.tensor(0), a.integer(1), a.opt_integer(2), a.opt_integer(3), a.integer(4)));
}
TValue lower_narrow(Args& a) {  // narrow(self, dim, start, length)
  int64_t s = a.integer(2);
  return tensor_result(slice(a.b(), a.tensor(0), a.integer(1), s, s + a.integer(3), 1));
}
TValue lower_select(Args& a) {  // select(self, dim, index): drops the dim
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  std::vector<int64_t> d = dims_of(b, x);
  int64_t dim = norm_dim(b, a.integer(1), static_cast<int64_t>(d.size()));
  int64_t i = a.integer(2);
  if (i < -d[dim] || i >= d[dim]) b.fail_op(fmt::format("index {} is out of range for dim {} of size {}", i, dim, d[dim]));
  if (i < 0) i += d[dim];
  return tensor_result(b.node1("Gather", {x, b.constant(ir::Tensor::scalar_i64(i))}, {{"axis", dim}}));
}
TValue lower_index_select(Args& a) {  // index_select(self, dim, index)
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  int64_t dim = norm_dim(b, a.integer(1), rank_of(x));
  return tensor_result(b.node1("Gather", {x, cast_to(b, a.tensor(2), ir::DType::I64)}, {{"axis", dim}}));
}
TValue lower_index(Args& a) {  // index(self, indices): x[idx] with one tensor index (others None)
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  std::vector<TValue> idx = a.list(1);
  int64_t axis = -1;
  for (size_t k = 0; k < idx.size(); ++k) {
    if (idx[k].is_none()) continue;
    if (axis >= 0) b.fail_op("indexing with more than one index tensor is not supported");
    axis = static_cast<int64_t>(k);
  }
  if (axis < 0) return tensor_result(x);
  Value* i = idx[static_cast<size_t>(axis)].tensor;
  if (i->dtype() == ir::DType::Bool) b.fail_op("indexing with a boolean mask (a data-dependent shape) is not supported");
  return tensor_result(b.node1("Gather", {x, cast_to(b, i, ir::DType::I64)}, {{"axis", axis}}));
}
TValue lower_gather(Args& a) {  // gather(self, dim, index)
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  int64_t dim = norm_dim(b, a.integer(1), rank_of(x));
  return tensor_result(b.node1("GatherElements", {x, cast_to(b, a.tensor(2), ir::DType::I64)}, {{"axis", dim}}));
}
TValue lower_embedding(Args& a) {  // embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse)
  AtenBuilder& b = a.b();
  return tensor_result(b.node1("Gather", {a.tensor(0), cast_to(b, a.tensor(1), ir::DType::I64)}, {{"axis", int64_t{0}}}));
}
TValue lower_trilu(Args& a, bool upper) {
  AtenBuilder& b = a.b();
  return tensor_result(b.node1("Trilu", {a.tensor(0), b.constant(ir::Tensor::scalar_i64(a.integer(1)))},
                               {{"upper", int64_t{upper}}}));
}
TValue lower_tril(Args& a) { return lower_trilu(a, false); }
TValue lower_triu(Args& a) { return lower_trilu(a, true); }
TValue lower_pad(Args& a) {  // pad(self, pad, mode='constant', value=None): pad pairs from the last dim backwards
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  std::vector<int64_t> p = a.ints(1);
  const int64_t r = rank_of(x);
  if (p.size() % 2 || static_cast<int64_t>(p.size()) > 2 * r) a.fail_arg(1, "pad needs pairs, at most two per dim");
  std::vector<int64_t> pads(2 * static_cast<size_t>(r), 0);
  for (size_t k = 0; k < p.size() / 2; ++k) {
    int64_t dim = r - 1 - static_cast<int64_t>(k);
    pads[dim] = p[2 * k];
    pads[r + dim] = p[2 * k + 1];
  }
  const bool nd = a[2].kind != TKind::String;  // constant_pad_nd(self, pad, value)
  std::string mode = nd ? "constant" : a.string(2);
  const size_t vi = nd ? 2 : 3;
  if (mode == "replicate") mode = "edge";
  if (mode == "circular") mode = "wrap";
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") a.fail_arg(2, fmt::format("pad mode '{}'", mode));
  Value* value = a.none(vi) ? nullptr : b.scalar_tensor(a[vi], x->dtype());
  return tensor_result(b.node1("Pad", {x, b.constant_i64s(pads), value}, {{"mode", mode}}));
}
TValue lower_cumsum(Args& a) {  // cumsum(self, dim, dtype)
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  if (!a.none(2)) {
    if (auto dt = dtype_from_scalar_type(a.integer(2))) x = cast_to(b, x, *dt);
  } else if (!ir::is_float(x->dtype())) {
    x = cast_to(b, x, ir::DType::I64);
  }
  int64_t dim = norm_dim(b, a.integer(1), rank_of(x));
  return tensor_result(b.node1("CumSum", {x, b.constant(ir::Tensor::scalar_i64(dim))}));
}
TValue lower_flip(Args& a) {
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  for (int64_t dim : a.ints(1)) {
    dim = norm_dim(b, dim, rank_of(x));
    int64_t n = dims_of(b, x)[dim];
    x = b.node1("Slice", {x, b.constant_i64s({n - 1}), b.constant_i64s({std::numeric_limits<int64_t>::min()}),
                          b.constant_i64s({dim}), b.constant_i64s({-1})});
  }
  return tensor_result(x);
}

// ---------------------------------------------------------------- reductions

std::vector<int64_t> reduce_axes(Args& a, Value* x, size_t i) {
  std::vector<int64_t> axes;
  if (a.none(i)) return axes;
  for (int64_t d : a.ints(i)) axes.push_back(norm_dim(a.b(), d, rank_of(x)));
  return axes;
}
TValue reduce(Args& a, const char* op, size_t dim_arg, size_t keep_arg, std::optional<size_t> dtype_arg) {
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  if (dtype_arg && !a.none(*dtype_arg)) {
    if (auto dt = dtype_from_scalar_type(a.integer(*dtype_arg))) x = cast_to(b, x, *dt);
  }
  if (std::string(op) == "ReduceSum" && !ir::is_float(x->dtype())) x = cast_to(b, x, ir::DType::I64);
  std::vector<int64_t> axes = dim_arg < a.size() ? reduce_axes(a, x, dim_arg) : std::vector<int64_t>{};
  bool keep = keep_arg < a.size() && a.boolean(keep_arg);
  if (axes.empty()) {
    for (int64_t k = 0; k < rank_of(x); ++k) axes.push_back(k);
  }
  if (axes.empty()) return tensor_result(x);
  return tensor_result(b.node1(op, {x, b.constant_i64s(axes)}, {{"keepdims", int64_t{keep}}}));
}
TValue lower_mean(Args& a) { return reduce(a, "ReduceMean", 1, 2, 3); }
TValue lower_sum(Args& a) { return reduce(a, "ReduceSum", 1, 2, 3); }
TValue lower_prod(Args& a) { return reduce(a, "ReduceProd", 1, 2, 3); }
TValue lower_amax(Args& a) { return reduce(a, "ReduceMax", 1, 2, std::nullopt); }
TValue lower_amin(Args& a) { return reduce(a, "ReduceMin", 1, 2, std::nullopt); }
TValue arg_reduce(Args& a, const char* op) {  // argmax(self, dim=None, keepdim=False)
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  if (a.none(1)) {
    x = reshape(b, x, {-1});
    return tensor_result(b.node1(op, {x}, {{"axis", int64_t{0}}, {"keepdims", int64_t{0}}}));
  }
  int64_t dim = norm_dim(b, a.integer(1), rank_of(x));
  return tensor_result(b.node1(op, {x}, {{"axis", dim}, {"keepdims", int64_t{a.boolean(2)}}}));
}
TValue lower_argmax(Args& a) { return arg_reduce(a, "ArgMax"); }
TValue lower_argmin(Args& a) { return arg_reduce(a, "ArgMin"); }
// max(self) / max(self, dim, keepdim) -> (values, indices) / max(self, other); and Python's max of numbers
TValue max_min(Args& a, bool is_max) {
  const char* red = is_max ? "ReduceMax" : "ReduceMin";
  if (!a.is_tensor(0)) {
    if (a.none(1)) {  // max(list of numbers)
      std::vector<TValue> xs = a.list(0);
      if (xs.empty()) a.fail_arg(0, "max/min of an empty list");
      TValue best = xs[0];
      for (const TValue& v : xs)
        if (scalar_binary(is_max ? "gt" : "lt", v, best)->b) best = v;
      return best;
    }
    if (!a.is_tensor(1)) {
      bool first = scalar_binary(is_max ? "ge" : "le", a[0], a[1])->b;
      return first ? a[0] : a[1];
    }
  }
  if (a.none(1)) return reduce(a, red, 99, 99, std::nullopt);
  if (a.is_tensor(1)) return tensor_result(binary(a, is_max ? "Max" : "Min", a[0], a[1]));
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  int64_t dim = norm_dim(b, a.integer(1), rank_of(x));
  int64_t keep = a.boolean(2);
  Value* values = b.node1(red, {x, b.constant_i64s({dim})}, {{"keepdims", keep}});
  Value* indices = b.node1(is_max ? "ArgMax" : "ArgMin", {x}, {{"axis", dim}, {"keepdims", keep}, {"select_last_index", int64_t{0}}});
  return TValue::tuple({TValue::of(values), TValue::of(indices)});
}
TValue lower_max(Args& a) { return max_min(a, true); }
TValue lower_min(Args& a) { return max_min(a, false); }
TValue lower_var_std(Args& a, bool is_std) {  // var(self, dim, unbiased=True, keepdim=False)
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  std::vector<int64_t> axes = reduce_axes(a, x, 1);
  if (axes.empty())
    for (int64_t k = 0; k < rank_of(x); ++k) axes.push_back(k);
  int64_t count = 1;
  std::vector<int64_t> d = dims_of(b, x);
  for (int64_t ax : axes) count *= d[ax];
  Value* mean = b.node1("ReduceMean", {x, b.constant_i64s(axes)}, {{"keepdims", int64_t{1}}});
  Value* dev = b.node1("Sub", {x, mean});
  Value* ss = b.node1("ReduceSum", {b.node1("Mul", {dev, dev}), b.constant_i64s(axes)}, {{"keepdims", int64_t{a.boolean(3)}}});
  int64_t denom = a.boolean(2) ? count - 1 : count;
  Value* var = b.node1("Div", {ss, b.scalar_tensor(TValue::real(static_cast<double>(denom)), x->dtype())});
  return tensor_result(is_std ? b.node1("Sqrt", {var}) : var);
}
TValue lower_var(Args& a) { return lower_var_std(a, false); }
TValue lower_std(Args& a) { return lower_var_std(a, true); }

// ---------------------------------------------------------------- creation and casts

std::optional<ir::DType> dtype_arg(Args& a, size_t i) {
  if (a.none(i)) return std::nullopt;
  auto dt = dtype_from_scalar_type(a.integer(i));
  if (!dt) a.fail_arg(i, fmt::format("scalar type {} is not supported", a.integer(i)));
  return dt;
}
Value* full(AtenBuilder& b, std::vector<int64_t> dims, const TValue& value, ir::DType dt) {
  Value* scalar = b.scalar_tensor(value, dt);
  if (dims.empty()) return scalar;
  return b.node1("Expand", {scalar, b.constant_i64s(dims)});
}
ir::DType default_dtype(const TValue& fill) {
  return fill.kind == TKind::Float ? ir::DType::F32 : fill.kind == TKind::Bool ? ir::DType::Bool : ir::DType::I64;
}
TValue lower_zeros(Args& a) {  // zeros(size, dtype, layout, device, pin_memory)
  return tensor_result(full(a.b(), a.ints(0), TValue::integer(0), dtype_arg(a, 1).value_or(ir::DType::F32)));
}
TValue lower_ones(Args& a) {
  return tensor_result(full(a.b(), a.ints(0), TValue::integer(1), dtype_arg(a, 1).value_or(ir::DType::F32)));
}
TValue lower_full(Args& a) {  // full(size, fill_value, dtype, ...)
  return tensor_result(full(a.b(), a.ints(0), a[1], dtype_arg(a, 2).value_or(default_dtype(a[1]))));
}
TValue lower_zeros_like(Args& a) {  // zeros_like(self, dtype, ...)
  Value* x = a.tensor(0);
  return tensor_result(full(a.b(), dims_of(a.b(), x), TValue::integer(0), dtype_arg(a, 1).value_or(x->dtype())));
}
TValue lower_ones_like(Args& a) {
  Value* x = a.tensor(0);
  return tensor_result(full(a.b(), dims_of(a.b(), x), TValue::integer(1), dtype_arg(a, 1).value_or(x->dtype())));
}
TValue lower_full_like(Args& a) {  // full_like(self, fill_value, dtype, ...)
  Value* x = a.tensor(0);
  return tensor_result(full(a.b(), dims_of(a.b(), x), a[1], dtype_arg(a, 2).value_or(x->dtype())));
}
TValue lower_arange(Args& a) {  // arange(end) / arange(start, end) / arange(start, end, step), dtype by keyword
  AtenBuilder& b = a.b();
  std::vector<TValue> nums;
  for (size_t k = 0; k < 3; ++k)
    if (!a.none(k)) nums.push_back(a[k]);
  if (nums.empty()) b.fail_op("arange needs an end");
  TValue start = nums.size() >= 2 ? nums[0] : TValue::integer(0);
  TValue end = nums.size() >= 2 ? nums[1] : nums[0];
  TValue step = nums.size() == 3 ? nums[2] : TValue::integer(1);
  bool any_float = start.kind == TKind::Float || end.kind == TKind::Float || step.kind == TKind::Float;
  ir::DType dt = dtype_arg(a, 3).value_or(any_float ? ir::DType::F32 : ir::DType::I64);
  return tensor_result(b.node1("Range", {b.scalar_tensor(start, dt), b.scalar_tensor(end, dt), b.scalar_tensor(step, dt)}));
}
TValue lower_tensor(Args& a) {  // tensor(data, dtype, device, requires_grad): a constant
  AtenBuilder& b = a.b();
  const TValue& d = a[0];
  if (d.is_number()) return tensor_result(b.scalar_tensor(d, dtype_arg(a, 1).value_or(default_dtype(d))));
  std::vector<double> values;
  bool any_float = false;
  for (const TValue& v : a.list(0)) {
    if (!v.is_number()) b.fail_op("torch.tensor of nested or non-number lists is not supported");
    any_float = any_float || v.kind == TKind::Float;
    values.push_back(v.kind == TKind::Float ? v.f : static_cast<double>(v.kind == TKind::Bool ? v.b : v.i));
  }
  ir::DType dt = dtype_arg(a, 1).value_or(any_float ? ir::DType::F32 : ir::DType::I64);
  return tensor_result(b.constant(ir::Tensor::from_vector<double>(dt, {static_cast<int64_t>(values.size())}, values)));
}
TValue lower_scalar_tensor(Args& a) {
  return tensor_result(a.b().scalar_tensor(a[0], dtype_arg(a, 1).value_or(default_dtype(a[0]) == ir::DType::I64 ? ir::DType::F32 : default_dtype(a[0]))));
}
// to(self, dtype) / to(self, device, dtype) / to(self, other) / to(self, device=, dtype=): only the dtype matters.
TValue lower_to(Args& a) {
  AtenBuilder& b = a.b();
  Value* x = a.tensor(0);
  std::optional<ir::DType> dt;
  for (size_t k = 1; k <= 2 && !dt; ++k) {
    if (a[k].kind == TKind::Int) dt = dtype_arg(a, k);
    else if (a[k].is_tensor()) dt = a[k].tensor->dtype();
  }
  if (!dt && !a.none(6)) dt = dtype_arg(a, 6);
  return tensor_result(dt ? cast_to(b, x, *dt) : x);
}
TValue lower_to_copy(Args& a) {  // _to_copy(self, *, dtype, layout, device, ...)
  auto dt = dtype_arg(a, 1);
  return tensor_result(dt ? cast_to(a.b(), a.tensor(0), *dt) : a.tensor(0));
}
TValue lower_type_as(Args& a) { return tensor_result(cast_to(a.b(), a.tensor(0), a.tensor(1)->dtype())); }
TValue cast_fixed(Args& a, ir::DType dt) { return tensor_result(cast_to(a.b(), a.tensor(0), dt)); }
TValue lower_float(Args& a) { return cast_fixed(a, ir::DType::F32); }
TValue lower_long(Args& a) { return cast_fixed(a, ir::DType::I64); }
TValue lower_half(Args& a) { return cast_fixed(a, ir::DType::F16); }
TValue lower_bool(Args& a) { return cast_fixed(a, ir::DType::Bool); }
TValue lower_same(Args& a) { return tensor_result(a.tensor(0)); }

}  // namespace

std::vector<OpEntry> tensor_ops() {
  const char* bin_alpha = "self, other, alpha=1";
  const char* bin = "self, other";
  return {
      {"add", bin_alpha, lower_add},
      {"add_", bin_alpha, lower_add},
      {"sub", bin_alpha, lower_sub},
      {"sub_", bin_alpha, lower_sub},
      {"rsub", bin_alpha, lower_rsub},
      {"mul", bin, lower_mul},
      {"mul_", bin, lower_mul},
      {"div", "self, other, *, rounding_mode=None", lower_div},
      {"div_", "self, other, *, rounding_mode=None", lower_div},
      {"true_divide", bin, lower_div},
      {"floor_divide", bin, lower_floor_divide},
      {"remainder", bin, lower_remainder},
      {"pow", "self, exponent", lower_pow},
      {"maximum", bin, lower_maximum},
      {"minimum", bin, lower_minimum},
      {"eq", bin, lower_eq},
      {"ne", bin, lower_ne},
      {"lt", bin, lower_lt},
      {"le", bin, lower_le},
      {"gt", bin, lower_gt},
      {"ge", bin, lower_ge},
      {"logical_and", bin, lower_logical_and},
      {"logical_or", bin, lower_logical_or},
      {"logical_xor", bin, lower_logical_xor},
      {"logical_not", "self", lower_logical_not},
      {"bitwise_and", bin, lower_bitwise_and},
      {"bitwise_or", bin, lower_bitwise_or},
      {"bitwise_not", "self", lower_bitwise_not},
      {"__and__", bin, lower_bitwise_and},
      {"__or__", bin, lower_bitwise_or},
      {"where", "condition, self, other", lower_where},
      {"masked_fill", "self, mask, value", lower_masked_fill},
      {"masked_fill_", "self, mask, value", lower_masked_fill},
      {"abs", "self", lower_abs},
      {"neg", "self", lower_neg},
      {"exp", "self", lower_exp},
      {"log", "self", lower_log},
      {"log1p", "self", lower_log1p},
      {"sqrt", "self", lower_sqrt},
      {"rsqrt", "self", lower_rsqrt},
      {"square", "self", lower_square},
      {"sin", "self", lower_sin},
      {"cos", "self", lower_cos},
      {"erf", "self", lower_erf},
      {"reciprocal", "self", lower_reciprocal},
      {"floor", "self", lower_floor},
      {"ceil", "self", lower_ceil},
      {"round", "self", lower_round},
      {"sign", "self", lower_sign},
      {"size", "self, dim=None", lower_size},
      {"dim", "self", lower_dim},
      {"numel", "self", lower_numel},
      {"view", "self, size", lower_view},
      {"reshape", "self, shape", lower_view},
      {"_reshape_alias", "self, size, stride", lower_view},
      {"view_as", "self, other", lower_view_as},
      {"reshape_as", "self, other", lower_view_as},
      {"flatten", "self, start_dim=0, end_dim=-1", lower_flatten},
      {"unflatten", "self, dim, sizes", lower_unflatten},
      {"permute", "self, dims", lower_permute},
      {"transpose", "self, dim0, dim1", lower_transpose},
      {"swapaxes", "self, dim0, dim1", lower_transpose},
      {"unsqueeze", "self, dim", lower_unsqueeze},
      {"squeeze", "self, dim=None", lower_squeeze},
      {"expand", "self, size, *, implicit=False", lower_expand},
      {"expand_as", "self, other", lower_expand_as},
      {"repeat", "self, repeats", lower_repeat},
      {"cat", "tensors, dim=0", lower_cat},
      {"concat", "tensors, dim=0", lower_cat},
      {"stack", "tensors, dim=0", lower_stack},
      {"split", "self, split_size, dim=0", lower_split},
      {"split_with_sizes", "self, split_sizes, dim=0", lower_split},
      {"chunk", "self, chunks, dim=0", lower_chunk},
      {"unbind", "self, dim=0", lower_unbind},
      {"slice", "self, dim=0, start=None, end=None, step=1", lower_slice},
      {"narrow", "self, dim, start, length", lower_narrow},
      {"select", "self, dim, index", lower_select},
      {"index_select", "self, dim, index", lower_index_select},
      {"index", "self, indices", lower_index},
      {"gather", "self, dim, index, *, sparse_grad=False", lower_gather},
      {"embedding", "weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False", lower_embedding},
      {"tril", "self, diagonal=0", lower_tril},
      {"triu", "self, diagonal=0", lower_triu},
      {"cumsum", "self, dim, *, dtype=None", lower_cumsum},
      {"pad", "self, pad, mode='constant', value=None", lower_pad},
      {"constant_pad_nd", "self, pad, value=0", lower_pad},
      {"flip", "self, dims", lower_flip},
      {"mean", "self, dim=None, keepdim=False, *, dtype=None", lower_mean},
      {"sum", "self, dim=None, keepdim=False, *, dtype=None", lower_sum},
      {"prod", "self, dim=None, keepdim=False, *, dtype=None", lower_prod},
      {"amax", "self, dim=[], keepdim=False", lower_amax},
      {"amin", "self, dim=[], keepdim=False", lower_amin},
      {"argmax", "self, dim=None, keepdim=False", lower_argmax},
      {"argmin", "self, dim=None, keepdim=False", lower_argmin},
      {"max", "self, dim=None, keepdim=False", lower_max},
      {"min", "self, dim=None, keepdim=False", lower_min},
      {"var", "self, dim=None, unbiased=True, keepdim=False", lower_var},
      {"std", "self, dim=None, unbiased=True, keepdim=False", lower_std},
  };
}

std::vector<OpEntry> creation_ops() {
  const char* opts = "dtype=None, layout=None, device=None, pin_memory=None";
  static const std::string zeros = std::string("size, ") + opts, full_ = std::string("size, fill_value, ") + opts,
                           like = std::string("self, ") + opts + ", memory_format=None",
                           full_like = std::string("self, fill_value, ") + opts + ", memory_format=None",
                           arange = std::string("a, b=None, c=None, ") + opts,
                           to = "self, a=None, b=None, c=None, d=None, e=None, dtype=None, layout=None, device=None, "
                                "pin_memory=None, non_blocking=False, copy=False, memory_format=None";
  return {
      {"zeros", zeros.c_str(), lower_zeros},
      {"empty", zeros.c_str(), lower_zeros},
      {"ones", zeros.c_str(), lower_ones},
      {"full", full_.c_str(), lower_full},
      {"zeros_like", like.c_str(), lower_zeros_like},
      {"empty_like", like.c_str(), lower_zeros_like},
      {"ones_like", like.c_str(), lower_ones_like},
      {"full_like", full_like.c_str(), lower_full_like},
      {"arange", arange.c_str(), lower_arange},
      {"tensor", "data, *, dtype=None, device=None, requires_grad=False", lower_tensor},
      {"scalar_tensor", "s, *, dtype=None, layout=None, device=None, pin_memory=None", lower_scalar_tensor},
      {"to", to.c_str(), lower_to},
      {"type_as", "self, other", lower_type_as},
      {"float", "self", lower_float},
      {"long", "self", lower_long},
      {"half", "self", lower_half},
      {"bool", "self", lower_bool},
      {"contiguous", "self, memory_format=0", lower_same},
      {"clone", "self, *, memory_format=None", lower_same},
      {"alias", "self", lower_same},
      {"lift_fresh", "self", lower_same},
      {"lift_fresh_copy", "self", lower_same},
      {"_to_copy", "self, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None",
       lower_to_copy},
  };
}

}  // namespace kiln::frontend::torchscript::aten
