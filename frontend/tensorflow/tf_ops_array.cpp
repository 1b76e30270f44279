// TF shape, slicing, gathering, padding and concatenation ops onto IR ops.
#include <limits>

#include <fmt/format.h>

#include "frontend/tensorflow/tf_internal.h"

namespace kiln::frontend::tensorflow {
namespace {

using Values = std::vector<ir::Value*>;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// An axis in [-rank, rank) as its non-negative index.
int64_t axis_of(const TfLowering& L, int64_t axis, size_t rank, const std::string& what) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) L.fail_node(fmt::format("{} {} is out of range for rank {}", what, axis, rank));
  return axis < 0 ? axis + r : axis;
}

int64_t one_int(const TfLowering& L, const ir::Value* v, const std::string& what) {
  std::vector<int64_t> a = L.const_ints(v, what);
  if (a.size() != 1) L.fail_node(fmt::format("{} must be one integer", what));
  return a[0];
}

ir::Value* as_i64(TfLowering& L, ir::Value* v) { return L.cast(v, ir::DType::I64); }

Values reshape(TfLowering& L, const Values& in) {
  ir::AttributeMap attrs;
  if (const ir::Tensor* t = TfLowering::constant_of(in[1])) {
    // TF's 0 is an empty dim; the IR's (ONNX's) 0 copies the input's unless allowzero.
    for (int64_t d : t->to_int64_vector())
      if (d == 0) attrs["allowzero"] = int64_t{1};
  }
  return {L.node("Reshape", {in[0], as_i64(L, in[1])}, attrs)};
}

Values transpose(TfLowering& L, const Values& in) { return {L.transpose(in[0], L.const_ints(in[1], "the permutation"))}; }

Values concat(TfLowering& L, const Values& in) {
  // ConcatV2: values..., axis; Concat (v1): axis, values...
  const bool v1 = L.tf_node().op() == "Concat";
  Values values(in.begin() + (v1 ? 1 : 0), in.end() - (v1 ? 0 : 1));
  if (values.empty()) L.fail_node("nothing to concatenate");
  const int64_t axis = axis_of(L, one_int(L, v1 ? in.front() : in.back(), "the axis"), L.rank(values[0]), "axis");
  if (values.size() == 1) return {values[0]};
  return {L.node("Concat", values, {{"axis", axis}})};
}

Values pack(TfLowering& L, const Values& in) {
  if (in.empty()) L.fail_node("nothing to stack");
  const int64_t axis = axis_of(L, L.attr_int("axis", 0), L.rank(in[0]) + 1, "axis");
  Values parts;
  for (ir::Value* v : in) parts.push_back(L.node("Unsqueeze", {v, L.i64s({axis})}));
  return {parts.size() == 1 ? parts[0] : L.node("Concat", parts, {{"axis", axis}})};
}

Values split_into(TfLowering& L, ir::Value* x, int64_t axis, const std::vector<int64_t>& sizes) {
  if (sizes.size() == 1) return {x};
  return L.nodes("Split", {x, L.i64s(sizes)}, sizes.size(), {{"axis", axis}});
}

// Equal parts of `x` along `axis`: the dim must be known and divisible.
std::vector<int64_t> equal_parts(const TfLowering& L, const ir::Value* x, int64_t axis, int64_t n) {
  const ir::Dim& d = x->shape()[static_cast<size_t>(axis)];
  if (n <= 0) L.fail_node(fmt::format("{} parts", n));
  if (!d.is_static() || d.value() % n) L.fail_node(fmt::format("axis {} of {} does not split into {} equal parts", axis, x->shape().str(), n));
  return std::vector<int64_t>(static_cast<size_t>(n), d.value() / n);
}

Values unpack(TfLowering& L, const Values& in) {
  const int64_t axis = axis_of(L, L.attr_int("axis", 0), L.rank(in[0]), "axis");
  const int64_t n = L.attr_int("num");
  Values out;
  for (ir::Value* part : split_into(L, in[0], axis, equal_parts(L, in[0], axis, n)))
    out.push_back(L.node("Squeeze", {part, L.i64s({axis})}));
  return out;
}

Values split(TfLowering& L, const Values& in) {  // Split: axis, value
  const int64_t axis = axis_of(L, one_int(L, in[0], "the axis"), L.rank(in[1]), "axis");
  return split_into(L, in[1], axis, equal_parts(L, in[1], axis, L.attr_int("num_split")));
}

Values split_v(TfLowering& L, const Values& in) {  // SplitV: value, size_splits, axis
  const int64_t axis = axis_of(L, one_int(L, in[2], "the axis"), L.rank(in[0]), "axis");
  std::vector<int64_t> sizes = L.const_ints(in[1], "size_splits");
  int64_t known = 0, unknown = -1;
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (sizes[k] == -1 && unknown < 0) unknown = static_cast<int64_t>(k);
    else if (sizes[k] < 0) L.fail_node(fmt::format("size_splits holds {}", sizes[k]));
    else known += sizes[k];
  }
  if (unknown >= 0) {
    const ir::Dim& d = in[0]->shape()[static_cast<size_t>(axis)];
    if (!d.is_static() || d.value() < known) L.fail_node("size_splits' -1 needs a known dim");
    sizes[static_cast<size_t>(unknown)] = d.value() - known;
  }
  return split_into(L, in[0], axis, sizes);
}

Values squeeze(TfLowering& L, const Values& in) {
  std::vector<int64_t> axes = L.attr_ints("squeeze_dims");
  if (axes.empty()) return {L.node("Squeeze", {in[0]})};
  return {L.node("Squeeze", {in[0], L.i64s(axes)})};
}

Values expand_dims(TfLowering& L, const Values& in) {
  const int64_t axis = axis_of(L, one_int(L, in[1], "the axis"), L.rank(in[0]) + 1, "axis");
  return {L.node("Unsqueeze", {in[0], L.i64s({axis})})};
}

// StridedSlice with begin, end and strides known at compile time: the spec (with its
// ellipsis, new axes and shrunk axes) becomes Slice, then Squeeze, then Unsqueeze.
Values strided_slice(TfLowering& L, const Values& in) {
  const std::vector<int64_t> begin = L.const_ints(in[1], "begin"), end = L.const_ints(in[2], "end"),
                             stride = L.const_ints(in[3], "strides");
  if (begin.size() != end.size() || begin.size() != stride.size()) L.fail_node("begin, end and strides differ in length");
  const auto bit = [&](const char* key, size_t i) { return (L.attr_int(key, 0) >> i) & 1; };
  const size_t rank = L.rank(in[0]), m = begin.size();
  size_t real = 0;
  for (size_t i = 0; i < m; ++i) real += !bit("new_axis_mask", i) && !bit("ellipsis_mask", i);
  if (real > rank) L.fail_node(fmt::format("the slice has {} dims, the input {}", real, rank));
  std::vector<int64_t> starts, ends, axes, steps, shrink, new_axes;
  int64_t dim = 0, out_dim = 0;
  bool ellipsis = false;
  for (size_t i = 0; i < m; ++i) {
    if (bit("ellipsis_mask", i)) {
      if (ellipsis) L.fail_node("more than one ellipsis");
      ellipsis = true;
      const int64_t n = static_cast<int64_t>(rank - real);
      dim += n;
      out_dim += n;
      continue;
    }
    if (bit("new_axis_mask", i)) {
      new_axes.push_back(out_dim++);
      continue;
    }
    if (stride[i] == 0) L.fail_node("a stride is 0");
    if (bit("shrink_axis_mask", i)) {
      starts.push_back(begin[i]);
      ends.push_back(begin[i] == -1 ? kMax : begin[i] + 1);
      steps.push_back(1);
      axes.push_back(dim);
      shrink.push_back(dim++);
      continue;
    }
    const bool forward = stride[i] > 0;
    const int64_t b = bit("begin_mask", i) ? (forward ? 0 : kMax) : begin[i];
    const int64_t e = bit("end_mask", i) ? (forward ? kMax : kMin) : end[i];
    if (!(b == 0 && e == kMax && stride[i] == 1)) {  // leaves the axis whole
      starts.push_back(b);
      ends.push_back(e);
      steps.push_back(stride[i]);
      axes.push_back(dim);
    }
    ++dim;
    ++out_dim;
  }
  ir::Value* y = in[0];
  if (!axes.empty()) y = L.node("Slice", {y, L.i64s(starts), L.i64s(ends), L.i64s(axes), L.i64s(steps)});
  if (!shrink.empty()) y = L.node("Squeeze", {y, L.i64s(shrink)});
  if (!new_axes.empty()) y = L.node("Unsqueeze", {y, L.i64s(new_axes)});
  return {y};
}

Values slice(TfLowering& L, const Values& in) {  // Slice: input, begin, size (-1: to the end)
  const std::vector<int64_t> begin = L.const_ints(in[1], "begin"), size = L.const_ints(in[2], "size");
  if (begin.size() != size.size() || begin.size() != L.rank(in[0])) L.fail_node("begin and size must give every dim");
  std::vector<int64_t> ends, axes;
  for (size_t k = 0; k < begin.size(); ++k) {
    if (begin[k] < 0 || size[k] < -1) L.fail_node(fmt::format("begin {} and size {}", begin[k], size[k]));
    ends.push_back(size[k] == -1 ? kMax : begin[k] + size[k]);
    axes.push_back(static_cast<int64_t>(k));
  }
  return {L.node("Slice", {in[0], L.i64s(begin), L.i64s(ends), L.i64s(axes)})};
}

ir::DType out_type(const TfLowering& L) { return L.has_attr("out_type") ? L.attr_dtype("out_type") : ir::DType::I32; }

Values shape(TfLowering& L, const Values& in) { return {L.cast(L.node("Shape", in), out_type(L))}; }
Values size(TfLowering& L, const Values& in) { return {L.cast(L.node("Size", in), out_type(L))}; }
Values rank(TfLowering& L, const Values& in) {
  return {L.constant(ir::Tensor::from_vector<int32_t>(ir::DType::I32, {}, {static_cast<int32_t>(L.rank(in[0]))}))};
}

Values fill(TfLowering& L, const Values& in) { return {L.node("Expand", {in[1], as_i64(L, in[0])})}; }
Values broadcast_to(TfLowering& L, const Values& in) { return {L.node("Expand", {in[0], as_i64(L, in[1])})}; }
Values like(TfLowering& L, const Values& in) {
  const double v = L.tf_node().op() == "OnesLike" ? 1 : 0;
  return {L.node("Expand", {L.scalar(v, in[0]->dtype()), L.node("Shape", in)})};
}

Values range(TfLowering& L, const Values& in) { return {L.node("Range", in)}; }
Values tile(TfLowering& L, const Values& in) { return {L.node("Tile", {in[0], as_i64(L, in[1])})}; }

Values gather(TfLowering& L, const Values& in) {  // GatherV2: params, indices, axis; Gather: params, indices
  if (L.attr_int("batch_dims", 0) != 0) L.fail_node("batch_dims other than 0 is not supported");
  const int64_t axis = in.size() > 2 ? axis_of(L, one_int(L, in[2], "the axis"), L.rank(in[0]), "axis") : 0;
  return {L.node("Gather", {in[0], in[1]}, {{"axis", axis}})};
}

// MirrorPad SYMMETRIC (the edge repeated, unlike the IR's reflect): each padded axis becomes
// the concatenation of its first `before` elements reversed, itself, and its last `after`
// elements reversed.
ir::Value* symmetric_pad(TfLowering& L, ir::Value* x, const std::vector<int64_t>& p) {
  for (size_t k = 0; k < p.size() / 2; ++k) {
    const int64_t before = p[2 * k], after = p[2 * k + 1], axis = static_cast<int64_t>(k);
    if (before < 0 || after < 0) L.fail_node("negative paddings");
    if (before == 0 && after == 0) continue;
    Values parts;
    if (before > 0) parts.push_back(L.node("Slice", {x, L.i64s({before - 1}), L.i64s({kMin}), L.i64s({axis}), L.i64s({-1})}));
    parts.push_back(x);
    if (after > 0) parts.push_back(L.node("Slice", {x, L.i64s({-1}), L.i64s({-1 - after}), L.i64s({axis}), L.i64s({-1})}));
    x = L.node("Concat", parts, {{"axis", axis}});
  }
  return x;
}

// Pad, PadV2 (a constant value), MirrorPad (REFLECT): paddings [rank, 2] known at compile time.
Values pad(TfLowering& L, const Values& in) {
  const std::vector<int64_t> p = L.const_ints(in[1], "paddings");
  const size_t rank = L.rank(in[0]);
  if (p.size() != 2 * rank) L.fail_node(fmt::format("paddings has {} values for rank {}", p.size(), rank));
  std::vector<int64_t> pads(2 * rank);
  for (size_t k = 0; k < rank; ++k) {
    pads[k] = p[2 * k];
    pads[rank + k] = p[2 * k + 1];
  }
  std::string mode = "constant";
  if (L.tf_node().op() == "MirrorPad") {
    const std::string m = L.attr_string("mode", "");
    if (m == "SYMMETRIC") return {symmetric_pad(L, in[0], p)};
    if (m != "REFLECT") L.fail_node(fmt::format("mode '{}' is not supported (REFLECT and SYMMETRIC are)", m));
    mode = "reflect";
  }
  Values args = {in[0], L.i64s(pads)};
  if (L.tf_node().op() == "PadV2") args.push_back(in[2]);
  return {L.node("Pad", args, {{"mode", mode}})};
}

Values top_k(TfLowering& L, const Values& in) {
  const int64_t k = one_int(L, in[1], "k");
  Values out = L.nodes("TopK", {in[0], L.i64s({k})}, 2, {{"axis", int64_t{-1}}, {"largest", int64_t{1}}, {"sorted", int64_t{1}}});
  const ir::DType index = L.has_attr("index_type") ? L.attr_dtype("index_type") : ir::DType::I32;
  return {out[0], L.cast(out[1], index)};
}

Values clip_by_value(TfLowering& L, const Values& in) { return {L.node("Max", {L.node("Min", {in[0], in[2]}), in[1]})}; }

}  // namespace

void add_array_lowerings(std::map<std::string, TfLowerFn>& t) {
  t["Reshape"] = reshape;
  t["Transpose"] = transpose;
  t["ConcatV2"] = concat;
  t["Concat"] = concat;
  t["Pack"] = pack;
  t["Unpack"] = unpack;
  t["Split"] = split;
  t["SplitV"] = split_v;
  t["Squeeze"] = squeeze;
  t["ExpandDims"] = expand_dims;
  t["StridedSlice"] = strided_slice;
  t["Slice"] = slice;
  t["Shape"] = shape;
  t["Size"] = size;
  t["Rank"] = rank;
  t["Fill"] = fill;
  t["BroadcastTo"] = broadcast_to;
  t["ZerosLike"] = like;
  t["OnesLike"] = like;
  t["Range"] = range;
  t["Tile"] = tile;
  t["GatherV2"] = gather;
  t["Gather"] = gather;
  t["Pad"] = pad;
  t["PadV2"] = pad;
  t["MirrorPad"] = pad;
  t["TopKV2"] = top_k;
  t["ClipByValue"] = clip_by_value;
}

const std::map<std::string, TfLowerFn>& lowering_table() {
  static const std::map<std::string, TfLowerFn> table = [] {
    std::map<std::string, TfLowerFn> t;
    add_math_lowerings(t);
    add_nn_lowerings(t);
    add_array_lowerings(t);
    add_xla_lowerings(t);
    return t;
  }();
  return table;
}

}  // namespace kiln::frontend::tensorflow
