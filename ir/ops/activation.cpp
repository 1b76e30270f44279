// Activation functions (ir/ops/activation_ops.def), Hardmax and Dropout (at inference).
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

// ---- Dropout -------------------------------------------------------------------------------

// Dropout's ratio (default 0.5) and training_mode (default false) from constant or given
// inputs; a missing value (not known yet) reads as the default.
void dropout_mode(const Node& n, const Tensor* ratio, const Tensor* training, double& r, bool& train) {
  r = ratio ? ratio->as_double(0) : 0.5;
  train = training && training->as_double(0) != 0;
  if (ratio && (ratio->numel() != 1 || r < 0 || r >= 1))
    fail("{}: ratio must be one value in [0, 1), got {}", n.describe(), ratio->shape().str());
  if (training && training->numel() != 1)
    fail("{}: training_mode must be one value, got {}", n.describe(), training->shape().str());
  if (train && r != 0)
    fail("{}: training_mode with ratio {} drops random elements; kiln runs Dropout at inference only",
         n.describe(), r);
}

const Tensor* constant_input(const Node& n, size_t i) {
  return n.has_input(i) && n.input(i)->is_constant() ? &n.input(i)->constant() : nullptr;
}

void infer_dropout(Node& n) {
  if (n.has_input(1)) require_float(n, 1);
  if (n.has_input(2)) require_dtype(n, 2, {DType::Bool});
  double r;
  bool train;
  dropout_mode(n, constant_input(n, 1), constant_input(n, 2), r, train);
  n.output(0)->set_type(n.input(0)->dtype(), n.input(0)->shape());
  if (n.num_outputs() > 1) n.output(1)->set_type(DType::Bool, n.input(0)->shape());
}

// At inference (or with ratio 0) the output is the input and the mask is all true.
void eval_dropout(const Node& n, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  double r;
  bool train;
  dropout_mode(n, optional_input(in, 1), optional_input(in, 2), r, train);
  out[0] = *in[0];
  if (out.size() > 1) {
    out[1] = Tensor(DType::Bool, in[0]->dims());
    bool* mask = out[1].mutable_data<bool>();
    for (int64_t i = 0; i < in[0]->numel(); ++i) mask[i] = true;
  }
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
      .name = "Dropout",
      .summary = "the input unchanged and an all-true mask (inference, or training with ratio 0)",
      .inputs = {{"data"}, {"ratio", true}, {"training_mode", true}},
      .outputs = {"output", "mask"},
      .min_outputs = 1,
      .infer = infer_dropout,
      .eval = eval_dropout,
  });
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
