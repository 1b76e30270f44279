// Activation functions (ir/ops/activation_ops.def) and Hardmax.
#include "ir/ops/elementwise_eval.h"

namespace kiln::ir {

namespace {

void infer_hardmax(Node& n) {
  require_float(n, 0);
  const Shape& s = n.input(0)->shape();
  if (s.rank() == 0) fail("{}: input '{}' is a scalar, expected rank 1 or more", n.describe(), n.input(0)->name());
  require_axis(n, n.i("axis"), static_cast<int64_t>(s.rank()));
  n.output(0)->set_type(n.input(0)->dtype(), s);
}

// 1 at the first maximum along `axis`, 0 elsewhere.
void eval_hardmax(const Node& n, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const std::vector<int64_t>& dims = x.dims();
  int64_t axis = require_axis(n, n.i("axis"), x.rank());
  int64_t outer = 1, inner = 1, len = dims[axis];
  for (int64_t d = 0; d < axis; ++d) outer *= dims[d];
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= dims[d];
  out[0] = Tensor(x.dtype(), dims);
  visit_dtype(x.dtype(), [&]<class S>() {
    if constexpr (elementwise::is_float_storage<S>) {
      using T = compute_t<S>;
      const S* px = x.data<S>();
      S* py = out[0].mutable_data<S>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          auto at = [&](int64_t k) { return (o * len + k) * inner + i; };
          int64_t best = 0;
          for (int64_t k = 1; k < len; ++k)
            if (static_cast<T>(px[at(k)]) > static_cast<T>(px[at(best)])) best = k;
          for (int64_t k = 0; k < len; ++k) py[at(k)] = static_cast<S>(T(k == best ? 1 : 0));
        }
    } else {
      elementwise::fail_dtype(x.dtype());
    }
  });
}

}  // namespace

void register_activation_ops(Registry& r) {
  using namespace elementwise;
#define KILN_UNARY_OP KILN_EW_UNARY
#define KILN_BINARY_OP KILN_EW_BINARY
#include "ir/ops/activation_ops.def"
#undef KILN_UNARY_OP
#undef KILN_BINARY_OP

  r.add(OpDef{
      .name = "Hardmax",
      .summary = "1 at the first maximum along axis, 0 elsewhere",
      .inputs = {{"input"}},
      .outputs = {"output"},
      .attrs = {{"axis", AttrType::Int, Attribute(int64_t{-1})}},
      .infer = infer_hardmax,
      .eval = eval_hardmax,
  });
}

}  // namespace kiln::ir
