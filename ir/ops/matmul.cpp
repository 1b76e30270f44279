// Gemm (alpha * A' B' + beta * C) and MatMul (numpy matmul with batch broadcasting). f32 and
// f64 products run kiln::rt's GEMM kernels (f32: the one generated code calls), other dtypes a
// plain loop.
#include <type_traits>

#include "ir/ops/op_helpers.h"
#include "kiln/rt/gemm.h"
#include "kiln/rt/gemm_f64.h"

namespace kiln::ir {
namespace {

// The type dot products accumulate in: the compute type for floats; for integers uint64_t,
// whose wrap-around gives the two's-complement result without undefined overflow.
template <class S>
using acc_t = std::conditional_t<std::is_integral_v<compute_t<S>>, uint64_t, compute_t<S>>;

template <class S>
acc_t<S> widen(S v) {
  if constexpr (std::is_integral_v<compute_t<S>>)
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  else
    return static_cast<compute_t<S>>(v);
}

template <class S>
S narrow(acc_t<S> v) {
  if constexpr (std::is_integral_v<compute_t<S>>)
    return static_cast<S>(static_cast<int64_t>(v));
  else
    return S(v);
}

// Checks that two dims agree where both are known; returns the better known one.
Dim unify(const Node& node, const Dim& a, const Dim& b, const char* what, const Shape& sa,
          const Shape& sb) {
  if (a.is_static() && b.is_static() && a.value() != b.value())
    fail("{}: {} mismatch: {} vs {} (shapes {} and {})", node.describe(), what, a.value(),
         b.value(), sa.str(), sb.str());
  return a.is_static() ? a : b;
}

// ---- Gemm ----------------------------------------------------------------------------------

struct GemmDims {
  Dim m, k, n;
};

GemmDims gemm_dims(const Node& node, const Shape& a, const Shape& b, const Shape* c) {
  if (a.rank() != 2 || b.rank() != 2)
    fail("{}: A and B must be 2-D, got {} and {}", node.describe(), a.str(), b.str());
  const bool ta = node.i("transA") != 0, tb = node.i("transB") != 0;
  GemmDims d;
  d.m = ta ? a[1] : a[0];
  Dim ka = ta ? a[0] : a[1];
  Dim kb = tb ? b[1] : b[0];
  d.n = tb ? b[0] : b[1];
  d.k = unify(node, ka, kb, "inner dimension", a, b);
  if (c) {
    if (c->rank() > 2) fail("{}: C {} cannot be broadcast to [M, N]", node.describe(), c->str());
    const Dim* out[2] = {&d.m, &d.n};
    for (size_t i = 0; i < c->rank(); ++i) {
      const Dim& cd = (*c)[i];
      const Dim& od = *out[2 - c->rank() + i];
      if (cd.is_static() && cd.value() != 1 && od.is_static() && cd.value() != od.value())
        fail("{}: C {} cannot be broadcast to [M, N] = {}", node.describe(), c->str(),
             Shape(std::vector<Dim>{d.m, d.n}).str());
    }
  }
  return d;
}

void infer_gemm(Node& node) {
  require_float(node, 0);
  require_same_dtype(node, 0, 1);
  if (node.has_input(2)) require_same_dtype(node, 0, 2);
  const Shape* c = node.has_input(2) ? &node.input(2)->shape() : nullptr;
  GemmDims d = gemm_dims(node, node.input(0)->shape(), node.input(1)->shape(), c);
  node.output(0)->set_type(node.input(0)->dtype(), Shape(std::vector<Dim>{d.m, d.n}));
}

void eval_gemm(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor &a = *in[0], &b = *in[1];
  const Tensor* c = optional_input(in, 2);
  Shape c_shape = c ? c->shape() : Shape();
  GemmDims d = gemm_dims(node, a.shape(), b.shape(), c ? &c_shape : nullptr);
  const int64_t m = d.m.value(), k = d.k.value(), n = d.n.value();
  const bool ta = node.i("transA") != 0, tb = node.i("transB") != 0;
  const double alpha = node.f("alpha"), beta = node.f("beta");
  out[0] = Tensor(a.dtype(), {m, n});
  std::vector<int64_t> cs = c ? broadcast_strides(c->dims(), {m, n}) : std::vector<int64_t>{0, 0};
  visit_dtype(a.dtype(), [&]<class S>() {
    using C = compute_t<S>;
    if constexpr (std::is_same_v<S, float>) {
      float* py = out[0].mutable_data<float>();
      if (c)  // C broadcast into Y, which the kernel then scales by beta and adds to
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) py[i * n + j] = c->data<float>()[i * cs[0] + j * cs[1]];
      rt::gemm_f32(ta, tb, m, n, k, static_cast<float>(alpha), a.data<float>(), ta ? m : k, b.data<float>(),
                   tb ? k : n, c ? static_cast<float>(beta) : 0.0f, py, n, nullptr);
    } else if constexpr (std::is_floating_point_v<C>) {
      const S *pa = a.data<S>(), *pb = b.data<S>();
      const S* pc = c ? c->data<S>() : nullptr;
      S* py = out[0].mutable_data<S>();
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          C acc = 0;
          for (int64_t p = 0; p < k; ++p)
            acc += static_cast<C>(pa[ta ? p * m + i : i * k + p]) *
                   static_cast<C>(pb[tb ? j * k + p : p * n + j]);
          C y = static_cast<C>(alpha) * acc;
          if (pc) y += static_cast<C>(beta) * static_cast<C>(pc[i * cs[0] + j * cs[1]]);
          py[i * n + j] = S(y);
        }
    } else {
      fail("{} is not supported", dtype_name(a.dtype()));
    }
  });
}

Cost gemm_cost(const Node& node) {
  Cost c;
  c.bytes = io_bytes(node);
  const Shape &a = node.input(0)->shape(), &y = node.output(0)->shape();
  if (!a.is_static() || !y.is_static()) return c;
  const double k = static_cast<double>(node.i("transA") ? a[0].value() : a[1].value());
  const double mn = static_cast<double>(y.numel());
  c.flops = 2.0 * mn * k + (node.has_input(2) ? 2.0 * mn : 0.0);
  return c;
}

// ---- MatMul --------------------------------------------------------------------------------

// numpy matmul: a 1-D A is [1, K] and a 1-D B is [K, 1], those dims removed from the result;
// the batch dims (all but the last two) broadcast.
Shape matmul_shape(const Node& node, const Shape& a, const Shape& b) {
  if (a.rank() < 1 || b.rank() < 1)
    fail("{}: operands must have rank >= 1, got {} and {}", node.describe(), a.str(), b.str());
  std::vector<Dim> ad = a.dims(), bd = b.dims();
  if (a.rank() == 1) ad.insert(ad.begin(), Dim(1));
  if (b.rank() == 1) bd.push_back(Dim(1));
  unify(node, ad.back(), bd[bd.size() - 2], "inner dimension", a, b);
  Shape batch = broadcast_shapes(std::vector<Dim>(ad.begin(), ad.end() - 2),
                                 std::vector<Dim>(bd.begin(), bd.end() - 2));
  std::vector<Dim> out = batch.dims();
  if (a.rank() > 1) out.push_back(ad[ad.size() - 2]);
  if (b.rank() > 1) out.push_back(bd.back());
  return Shape(std::move(out));
}

void infer_matmul(Node& node) {
  require_dtype(node, 0, {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64});
  require_same_dtype(node, 0, 1);
  node.output(0)->set_type(node.input(0)->dtype(),
                           matmul_shape(node, node.input(0)->shape(), node.input(1)->shape()));
}

void eval_matmul(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor &a = *in[0], &b = *in[1];
  out[0] = Tensor(a.dtype(), matmul_shape(node, a.shape(), b.shape()).values());
  std::vector<int64_t> ad = a.dims(), bd = b.dims();
  if (ad.size() == 1) ad.insert(ad.begin(), 1);
  if (bd.size() == 1) bd.push_back(1);
  const int64_t m = ad[ad.size() - 2], k = ad.back(), n = bd.back();
  std::vector<int64_t> a_batch(ad.begin(), ad.end() - 2), b_batch(bd.begin(), bd.end() - 2);
  std::vector<int64_t> batch = broadcast_dims(a_batch, b_batch);
  std::vector<int64_t> as = broadcast_strides(a_batch, batch),
                       bs = broadcast_strides(b_batch, batch);
  visit_dtype(a.dtype(), [&]<class S>() {
    if constexpr (!std::is_same_v<S, bool>) {
      const S *pa = a.data<S>(), *pb = b.data<S>();
      S* py = out[0].mutable_data<S>();
      for_each_broadcast(batch, as, bs, [&](int64_t o, int64_t ia, int64_t ib) {
        const S* xa = pa + ia * m * k;
        const S* xb = pb + ib * k * n;
        S* y = py + o * m * n;
        if constexpr (std::is_same_v<S, float>) {
          rt::gemm_f32(false, false, m, n, k, 1.0f, xa, k, xb, n, 0.0f, y, n, nullptr);
          return;
        }
        if constexpr (std::is_same_v<S, double>) {
          rt::gemm_f64(false, false, m, n, k, 1.0, xa, k, xb, n, 0.0, y, n, nullptr);
          return;
        }
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            acc_t<S> acc = 0;
            for (int64_t p = 0; p < k; ++p) acc += widen(xa[i * k + p]) * widen(xb[p * n + j]);
            y[i * n + j] = narrow<S>(acc);
          }
      });
    } else {
      fail("bool is not supported");
    }
  });
}

Cost matmul_cost(const Node& node) {
  Cost c;
  c.bytes = io_bytes(node);
  const Shape &a = node.input(0)->shape(), &y = node.output(0)->shape();
  if (!a.is_static() || !y.is_static()) return c;
  c.flops = 2.0 * static_cast<double>(y.numel()) * static_cast<double>(a[a.rank() - 1].value());
  return c;
}

}  // namespace

void register_matmul_ops(Registry& r) {
  r.add(OpDef{
      .name = "Gemm",
      .summary = "alpha * A' * B' + beta * C, A' and B' optionally transposed, C broadcast",
      .inputs = {{"A"}, {"B"}, {"C", true}},
      .outputs = {"Y"},
      .attrs = {{"alpha", AttrType::Float, Attribute(1.0f)},
                {"beta", AttrType::Float, Attribute(1.0f)},
                {"transA", AttrType::Int, Attribute(int64_t{0})},
                {"transB", AttrType::Int, Attribute(int64_t{0})}},
      .infer = infer_gemm,
      .eval = eval_gemm,
      .cost = gemm_cost,
  });
  r.add(OpDef{
      .name = "MatMul",
      .summary = "numpy matmul: 1-D operands promoted, batch dims broadcast",
      .inputs = {{"A"}, {"B"}},
      .outputs = {"Y"},
      .infer = infer_matmul,
      .eval = eval_matmul,
      .cost = matmul_cost,
  });
}

}  // namespace kiln::ir
