// Ops that move elements without computing on them: Transpose, Concat, Gather. Every dtype is
// supported; the reference copies elements as bytes.
#include <algorithm>
#include <cstring>

#include "ir/ops/op_helpers.h"

namespace kiln::ir {
namespace {

// ---- Transpose -----------------------------------------------------------------------------

// The permutation: the attribute (validated) or the reversed dims.
std::vector<int64_t> transpose_perm(const Node& node, size_t rank) {
  std::vector<int64_t> perm;
  if (!node.has_attr("perm")) {
    for (size_t i = rank; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
    return perm;
  }
  perm = node.ints("perm");
  std::vector<bool> seen(rank, false);
  bool ok = perm.size() == rank;
  for (int64_t p : perm) {
    ok = ok && p >= 0 && p < static_cast<int64_t>(rank) && !seen[static_cast<size_t>(p)];
    if (ok) seen[static_cast<size_t>(p)] = true;
  }
  if (!ok)
    fail("{}: perm {} is not a permutation of the {} input dims", node.describe(), ints_str(perm),
         rank);
  return perm;
}

void infer_transpose(Node& node) {
  const Shape& in = node.input(0)->shape();
  std::vector<int64_t> perm = transpose_perm(node, in.rank());
  std::vector<Dim> out;
  for (int64_t p : perm) out.push_back(in[static_cast<size_t>(p)]);
  node.output(0)->set_type(node.input(0)->dtype(), Shape(std::move(out)));
}

void eval_transpose(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  std::vector<int64_t> perm = transpose_perm(node, x.dims().size());
  std::vector<int64_t> in_strides = contiguous_strides(x.dims());
  std::vector<int64_t> dims, strides;  // output dims, and the input stride of each
  for (int64_t p : perm) {
    dims.push_back(x.dims()[static_cast<size_t>(p)]);
    strides.push_back(in_strides[static_cast<size_t>(p)]);
  }
  out[0] = Tensor(x.dtype(), dims);
  if (x.numel() == 0) return;
  const size_t es = dtype_size(x.dtype());
  const auto* src = static_cast<const uint8_t*>(x.raw());
  auto* dst = static_cast<uint8_t*>(out[0].mutable_raw());
  std::vector<int64_t> idx(dims.size(), 0);
  int64_t o = 0;
  do {
    int64_t offset = 0;
    for (size_t k = 0; k < idx.size(); ++k) offset += idx[k] * strides[k];
    std::memcpy(dst + static_cast<size_t>(o++) * es, src + static_cast<size_t>(offset) * es, es);
  } while (next_index(idx, dims));
}

// ---- Concat --------------------------------------------------------------------------------

// Concat's output shape from its inputs' shapes: equal ranks, equal dims off the axis.
Shape concat_output(const Node& node, const std::vector<Shape>& ins) {
  const Shape& first = ins[0];
  if (first.rank() == 0) fail("{}: cannot concatenate scalars", node.describe());
  const int64_t axis = require_axis(node, node.i("axis"), static_cast<int64_t>(first.rank()));
  std::vector<Dim> out = first.dims();
  int64_t total = 0;
  bool total_known = true;
  for (size_t i = 0; i < ins.size(); ++i) {
    const Shape& s = ins[i];
    if (s.rank() != first.rank())
      fail("{}: input {} has shape {}, input 0 has {}: ranks differ", node.describe(), i, s.str(),
           first.str());
    for (size_t d = 0; d < s.rank(); ++d) {
      if (static_cast<int64_t>(d) == axis) continue;
      if (s[d].is_static() && out[d].is_static() && s[d].value() != out[d].value())
        fail("{}: input {} has shape {}, input 0 has {}: dim {} differs", node.describe(), i,
             s.str(), first.str(), d);
      if (!out[d].is_static() && s[d].is_static()) out[d] = s[d];
    }
    if (s[axis].is_static())
      total += s[axis].value();
    else
      total_known = false;
  }
  out[axis] = total_known ? Dim(total) : Dim::unknown();
  return Shape(std::move(out));
}

void infer_concat(Node& node) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    require_same_dtype(node, 0, i);
    shapes.push_back(node.input(i)->shape());
  }
  node.output(0)->set_type(node.input(0)->dtype(), concat_output(node, shapes));
}

void eval_concat(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  std::vector<Shape> shapes;
  for (const Tensor* t : in) {
    if (t->dtype() != in[0]->dtype())
      fail("{}: inputs have different dtypes ({} and {})", node.describe(),
           dtype_name(in[0]->dtype()), dtype_name(t->dtype()));
    shapes.push_back(t->shape());
  }
  std::vector<int64_t> dims = concat_output(node, shapes).values();
  const int64_t axis = require_axis(node, node.i("axis"), static_cast<int64_t>(dims.size()));
  out[0] = Tensor(in[0]->dtype(), dims);
  if (out[0].numel() == 0) return;
  const size_t es = dtype_size(in[0]->dtype());
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= dims[i];
  auto* dst = static_cast<uint8_t*>(out[0].mutable_raw());
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor* t : in) {
      // Each input contributes one contiguous block per outer index.
      const size_t block = static_cast<size_t>(t->numel() / outer) * es;
      std::memcpy(dst, static_cast<const uint8_t*>(t->raw()) + static_cast<size_t>(o) * block,
                  block);
      dst += block;
    }
}

// ---- Gather --------------------------------------------------------------------------------

Shape gather_output(const Node& node, const Shape& data, const Shape& indices) {
  if (data.rank() == 0) fail("{}: data must have rank >= 1", node.describe());
  const size_t axis =
      static_cast<size_t>(require_axis(node, node.i("axis"), static_cast<int64_t>(data.rank())));
  std::vector<Dim> out(data.dims().begin(), data.dims().begin() + static_cast<ptrdiff_t>(axis));
  for (const Dim& d : indices.dims()) out.push_back(d);
  for (size_t i = axis + 1; i < data.rank(); ++i) out.push_back(data[i]);
  return Shape(std::move(out));
}

void infer_gather(Node& node) {
  require_dtype(node, 1, {DType::I32, DType::I64});
  node.output(0)->set_type(node.input(0)->dtype(),
                           gather_output(node, node.input(0)->shape(), node.input(1)->shape()));
}

void eval_gather(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor &data = *in[0], &indices = *in[1];
  if (indices.dtype() != DType::I32 && indices.dtype() != DType::I64)
    fail("{}: indices are {}, expected i32 or i64", node.describe(), dtype_name(indices.dtype()));
  out[0] = Tensor(data.dtype(), gather_output(node, data.shape(), indices.shape()).values());
  const int64_t axis = require_axis(node, node.i("axis"), data.rank());
  const int64_t dim = data.dims()[static_cast<size_t>(axis)];
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= data.dims()[static_cast<size_t>(i)];
  for (int64_t i = axis + 1; i < data.rank(); ++i) inner *= data.dims()[static_cast<size_t>(i)];
  const size_t block = static_cast<size_t>(inner) * dtype_size(data.dtype());
  std::vector<int64_t> idx = indices.to_int64_vector();
  for (int64_t& i : idx) {
    int64_t wrapped = i < 0 ? i + dim : i;
    if (wrapped < 0 || wrapped >= dim)
      fail("{}: index {} is out of range for axis {} of size {}", node.describe(), i, axis, dim);
    i = wrapped;
  }
  if (out[0].numel() == 0) return;
  const auto* src = static_cast<const uint8_t*>(data.raw());
  auto* dst = static_cast<uint8_t*>(out[0].mutable_raw());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : idx) {
      std::memcpy(dst, src + static_cast<size_t>(o * dim + i) * block, block);
      dst += block;
    }
}

}  // namespace

void register_data_movement_ops(Registry& r) {
  r.add(OpDef{
      .name = "Transpose",
      .summary = "permutes dims by perm (default: reversed)",
      .inputs = {{"data"}},
      .outputs = {"transposed"},
      .attrs = {{"perm", AttrType::Ints, std::nullopt, true}},
      .infer = infer_transpose,
      .eval = eval_transpose,
  });
  r.add(OpDef{
      .name = "Concat",
      .summary = "joins inputs along axis",
      .inputs = {{"inputs", false, true}},
      .outputs = {"concat_result"},
      .attrs = {{"axis", AttrType::Int}},
      .infer = infer_concat,
      .eval = eval_concat,
  });
  r.add(OpDef{
      .name = "Gather",
      .summary = "takes slices along axis at indices (negative indices count from the end)",
      .inputs = {{"data"}, {"indices"}},
      .outputs = {"output"},
      .attrs = {{"axis", AttrType::Int, Attribute(int64_t{0})}},
      .infer = infer_gather,
      .eval = eval_gather,
  });
}

}  // namespace kiln::ir
