// Copies that reverse, select or overwrite parts of a tensor: ReverseSequence, Compress,
// TensorScatter. The kernels are the runtime's (kiln/rt/rearrange.h), shared with the
// generated code.
#include "ir/ops/rearrange.h"

#include "ir/ops/op_helpers.h"
#include "kiln/rt/rearrange.h"

namespace kiln::ir {

// ---- ReverseSequence -----------------------------------------------------------------------

bool reverse_sequence_batch_major(const Node& node, int64_t rank) {
  const int64_t b = node.i("batch_axis"), t = node.i("time_axis");
  if (rank < 2) fail("{}: input must have rank >= 2, got rank {}", node.describe(), rank);
  if (!((b == 0 && t == 1) || (b == 1 && t == 0)))
    fail("{}: batch_axis {} and time_axis {} must be 0 and 1 in some order", node.describe(), b, t);
  return b == 0;
}

namespace {

void infer_reverse_sequence(Node& node) {
  require_dtype(node, 1, {DType::I32, DType::I64});
  const Shape& x = node.input(0)->shape();
  const bool batch_major = reverse_sequence_batch_major(node, static_cast<int64_t>(x.rank()));
  const Shape& lens = node.input(1)->shape();
  const Dim& batch = x[batch_major ? 0 : 1];
  if (lens.rank() != 1 || (lens[0].is_static() && batch.is_static() && lens[0].value() != batch.value()))
    fail("{}: sequence_lens {} must be 1-D with one length per batch item of input {}", node.describe(), lens.str(),
         x.str());
  node.output(0)->set_type(node.input(0)->dtype(), x);
}

void eval_reverse_sequence(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const bool batch_major = reverse_sequence_batch_major(node, x.rank());
  const int64_t batch = x.dims()[batch_major ? 0 : 1], time = x.dims()[batch_major ? 1 : 0];
  if (in[1]->rank() != 1 || in[1]->dims()[0] != batch)
    fail("{}: sequence_lens {} must be 1-D with one length per batch item of input {}", node.describe(),
         in[1]->shape().str(), x.shape().str());
  const int64_t inner = batch * time == 0 ? 0 : x.numel() / (batch * time);
  out[0] = Tensor(x.dtype(), x.dims());
  int64_t bad = -1;
  visit_dtype(x.dtype(), [&]<class S>() {
    if (in[1]->dtype() == DType::I32)
      bad = rt::reverse_sequence<S, int32_t>(batch, time, inner, batch_major, in[1]->data<int32_t>(), x.data<S>(),
                                             out[0].mutable_data<S>());
    else
      bad = rt::reverse_sequence<S, int64_t>(batch, time, inner, batch_major, in[1]->data<int64_t>(), x.data<S>(),
                                             out[0].mutable_data<S>());
  });
  if (bad >= 0)
    fail("{}: sequence length {} of batch item {} is outside [0, {}]", node.describe(),
         static_cast<int64_t>(in[1]->as_double(bad)), bad, time);
}

// ---- Compress ------------------------------------------------------------------------------

// Outer, axis length and inner of Compress's input (flattened when there is no axis).
void compress_split(const Node& node, const std::vector<int64_t>& dims, int64_t& outer, int64_t& len,
                    int64_t& inner) {
  outer = inner = 1;
  len = numel(dims);
  if (!node.has_attr("axis")) return;
  const int64_t axis = require_axis(node, node.i("axis"), static_cast<int64_t>(dims.size()));
  len = dims[axis];
  for (int64_t d = 0; d < axis; ++d) outer *= dims[d];
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
}

// The number of slices kept; fails if the condition keeps one past the axis' end.
int64_t compress_count(const Node& node, const Tensor& cond, int64_t len) {
  if (cond.rank() != 1) fail("{}: condition must be 1-D, got {}", node.describe(), cond.shape().str());
  int64_t count = 0;
  for (int64_t k = 0; k < cond.numel(); ++k)
    if (cond.as_double(k) != 0) {
      if (k >= len) fail("{}: condition selects index {} of an axis of length {}", node.describe(), k, len);
      ++count;
    }
  return count;
}

void infer_compress(Node& node) {
  require_dtype(node, 1, {DType::Bool});
  const Shape& x = node.input(0)->shape();
  if (node.input(1)->shape().rank() != 1)
    fail("{}: condition must be 1-D, got {}", node.describe(), node.input(1)->shape().str());
  Dim kept = Dim::unknown();
  const bool has_axis = node.has_attr("axis");
  const int64_t axis = has_axis ? require_axis(node, node.i("axis"), static_cast<int64_t>(x.rank())) : 0;
  const bool len_known = has_axis ? x[axis].is_static() : x.is_static();
  if (node.input(1)->is_constant() && len_known)
    kept = compress_count(node, node.input(1)->constant(), has_axis ? x[axis].value() : x.numel());
  // A condition known only at run time: a compile gives the count a symbol of its own
  // (passes::bound_data_dependent_dims), which later inference keeps.
  const Value* y = node.output(0);
  if (kept.is_unknown() && y->has_type() && y->shape().rank() == (has_axis ? x.rank() : 1) &&
      y->shape()[axis].is_symbol())
    kept = y->shape()[axis];
  std::vector<Dim> dims = has_axis ? x.dims() : std::vector<Dim>{Dim()};
  dims[axis] = kept;
  node.output(0)->set_type(node.input(0)->dtype(), Shape(dims));
}

void eval_compress(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const Tensor& cond = *in[1];
  int64_t outer, len, inner;
  compress_split(node, x.dims(), outer, len, inner);
  const int64_t count = compress_count(node, cond, len);
  std::vector<int64_t> dims = node.has_attr("axis") ? x.dims() : std::vector<int64_t>{0};
  dims[node.has_attr("axis") ? require_axis(node, node.i("axis"), x.rank()) : 0] = count;
  out[0] = Tensor(x.dtype(), dims);
  visit_dtype(x.dtype(), [&]<class S>() {
    rt::compress<S>(outer, len, inner, cond.data<bool>(), cond.numel(), x.data<S>(), out[0].mutable_data<S>());
  });
}

// ---- TensorScatter -------------------------------------------------------------------------

void check_tensor_scatter(const Node& node, const Shape& past, const Shape& update, const Shape* indices) {
  const int64_t rank = static_cast<int64_t>(past.rank());
  const int64_t axis = require_axis(node, node.i("axis"), rank);
  if (axis == 0) fail("{}: axis must not be the batch dim 0", node.describe());
  const std::string& mode = node.s("mode");
  if (mode != "linear" && mode != "circular")
    fail("{}: mode '{}' is not one of linear, circular", node.describe(), mode);
  bool ok = update.rank() == past.rank();
  for (int64_t d = 0; ok && d < rank; ++d) {
    const Dim &p = past[d], &u = update[d];
    if (p.is_static() && u.is_static() && (d == axis ? u.value() > p.value() : u.value() != p.value())) ok = false;
  }
  if (!ok)
    fail("{}: update {} must have past_cache's shape {} with at most as many entries along axis {}", node.describe(),
         update.str(), past.str(), axis);
  if (indices && (indices->rank() != 1 || ((*indices)[0].is_static() && past[0].is_static() &&
                                           (*indices)[0].value() != past[0].value())))
    fail("{}: write_indices {} must be 1-D with one index per batch item of past_cache {}", node.describe(),
         indices->str(), past.str());
}

void infer_tensor_scatter(Node& node) {
  require_same_dtype(node, 0, 1);
  if (node.has_input(2)) require_dtype(node, 2, {DType::I64, DType::I32});
  check_tensor_scatter(node, node.input(0)->shape(), node.input(1)->shape(),
                       node.has_input(2) ? &node.input(2)->shape() : nullptr);
  node.output(0)->set_type(node.input(0)->dtype(), node.input(0)->shape());
}

void eval_tensor_scatter(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor &past = *in[0], &update = *in[1];
  const Tensor* indices = optional_input(in, 2);
  const Shape index_shape = indices ? indices->shape() : Shape();
  check_tensor_scatter(node, past.shape(), update.shape(), indices ? &index_shape : nullptr);
  const TensorScatterGeometry g = tensor_scatter_geometry(node, past.dims(), update.dims());
  out[0] = Tensor(past.dtype(), past.dims());
  int64_t bad = -1;
  visit_dtype(past.dtype(), [&]<class S>() {
    const S* p = past.data<S>();
    const S* u = update.data<S>();
    S* y = out[0].mutable_data<S>();
    if (indices && indices->dtype() == DType::I32)
      bad = rt::tensor_scatter<S, int32_t>(g.batch, g.per_batch, g.max_len, g.upd_len, g.inner, g.circular, p, u,
                                           indices->data<int32_t>(), y);
    else
      bad = rt::tensor_scatter<S, int64_t>(g.batch, g.per_batch, g.max_len, g.upd_len, g.inner, g.circular, p, u,
                                           indices ? indices->data<int64_t>() : nullptr, y);
  });
  if (bad >= 0)
    fail("{}: write index {} of batch item {} puts {} entries outside the {} of axis {}", node.describe(),
         static_cast<int64_t>(indices ? indices->as_double(bad) : 0), bad, g.upd_len, g.max_len, node.i("axis"));
}

}  // namespace

TensorScatterGeometry tensor_scatter_geometry(const Node& node, const std::vector<int64_t>& past,
                                              const std::vector<int64_t>& update) {
  const int64_t axis = require_axis(node, node.i("axis"), static_cast<int64_t>(past.size()));
  TensorScatterGeometry g{past[0], 1, past[axis], update[axis], 1, node.s("mode") == "circular"};
  for (int64_t d = 1; d < axis; ++d) g.per_batch *= past[d];
  for (size_t d = axis + 1; d < past.size(); ++d) g.inner *= past[d];
  return g;
}

void register_rearrange_ops(Registry& r) {
  r.add(OpDef{
      .name = "ReverseSequence",
      .summary = "reverses the first sequence_lens[b] time steps of each batch item",
      .inputs = {{"input"}, {"sequence_lens"}},
      .outputs = {"Y"},
      .attrs = {{"batch_axis", AttrType::Int, Attribute(int64_t{1})},
                {"time_axis", AttrType::Int, Attribute(int64_t{0})}},
      .infer = infer_reverse_sequence,
      .eval = eval_reverse_sequence,
  });
  r.add(OpDef{
      .name = "Compress",
      .summary = "the slices along axis (or elements of the flattened input) where condition is true",
      .inputs = {{"input"}, {"condition"}},
      .outputs = {"output"},
      .attrs = {{"axis", AttrType::Int, std::nullopt, true}},
      .infer = infer_compress,
      .eval = eval_compress,
  });
  r.add(OpDef{
      .name = "TensorScatter",
      .summary = "past_cache with update written at each batch item's write index along axis (KV-cache update)",
      .inputs = {{"past_cache"}, {"update"}, {"write_indices", true}},
      .outputs = {"present_cache"},
      .attrs = {{"axis", AttrType::Int, Attribute(int64_t{-2})}, {"mode", AttrType::String, Attribute("linear")}},
      .infer = infer_tensor_scatter,
      .eval = eval_tensor_scatter,
  });
}

}  // namespace kiln::ir
