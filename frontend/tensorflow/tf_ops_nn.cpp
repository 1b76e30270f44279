// TF convolutions, pooling, batch normalization, matrix products and resizing onto IR ops.
// TF's NHWC ops become the IR's NCHW ops between two Transposes; the passes cancel the
// Transposes that meet (sink_transposes, fold_transposes), so a chain of NHWC layers runs in
// one layout.
#include <fmt/format.h>

#include "frontend/tensorflow/tf_internal.h"

namespace kiln::frontend::tensorflow {
namespace {

using Values = std::vector<ir::Value*>;

bool channels_last(const TfLowering& L) {
  const std::string format = L.attr_string("data_format", "NHWC");
  if (format != "NHWC" && format != "NCHW" && format != "NDHWC" && format != "NCDHW")
    L.fail_node(fmt::format("data_format '{}' is not supported", format));
  return format == "NHWC" || format == "NDHWC";
}

// The spatial entries of a per-dim TF list (strides, ksize, dilations) in the data format.
std::vector<int64_t> spatial(const TfLowering& L, const std::string& key, size_t rank, bool last, int64_t fallback) {
  std::vector<int64_t> v = L.attr_ints(key);
  if (v.empty()) return std::vector<int64_t>(rank - 2, fallback);
  if (v.size() != rank) L.fail_node(fmt::format("attribute '{}' has {} entries, the input has rank {}", key, v.size(), rank));
  std::vector<int64_t> out;
  for (size_t k = 0; k < rank - 2; ++k) out.push_back(v[last ? k + 1 : k + 2]);
  for (int64_t s : out)
    if (s <= 0) L.fail_node(fmt::format("attribute '{}' holds {}", key, s));
  return out;
}

// Padding of a convolution or pool over NCHW `x`: SAME (TF puts the odd one at the end),
// VALID, or EXPLICIT (explicit_paddings, per dim of the data format). Unknown spatial dims use
// the IR's auto_pad, which computes the same at run time.
void add_padding(TfLowering& L, ir::AttributeMap& attrs, const ir::Value* x, const std::vector<int64_t>& kernel,
                 const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations, bool last) {
  const std::string padding = L.attr_string("padding", "VALID");
  const size_t n = kernel.size();
  std::vector<int64_t> pads(2 * n, 0);
  if (padding == "VALID") {
  } else if (padding == "EXPLICIT") {
    std::vector<int64_t> e = L.attr_ints("explicit_paddings");
    if (e.size() != 2 * (n + 2)) L.fail_node(fmt::format("explicit_paddings has {} entries, expected {}", e.size(), 2 * (n + 2)));
    for (size_t k = 0; k < n; ++k) {
      const size_t d = last ? k + 1 : k + 2;
      pads[k] = e[2 * d];
      pads[n + k] = e[2 * d + 1];
    }
  } else if (padding == "SAME") {
    const ir::Shape& s = x->shape();
    for (size_t k = 0; k < n; ++k) {
      if (!s[k + 2].is_static()) {
        attrs["auto_pad"] = "SAME_UPPER";
        return;
      }
      const int64_t in = s[k + 2].value(), out = (in + strides[k] - 1) / strides[k];
      const int64_t total = std::max<int64_t>((out - 1) * strides[k] + (kernel[k] - 1) * dilations[k] + 1 - in, 0);
      pads[k] = total / 2;
      pads[n + k] = total - total / 2;
    }
  } else {
    L.fail_node(fmt::format("padding '{}' is not supported", padding));
  }
  attrs["pads"] = pads;
}

// Conv2D / Conv3D: filter [kh, kw, Cin/groups, Cout] (HWIO); groups from the channel counts.
Values conv(TfLowering& L, const Values& in) {
  const bool last = channels_last(L);
  const size_t rank = L.rank(in[0]);
  const std::vector<int64_t> f = L.dims(in[1]);
  if (f.size() != rank) L.fail_node(fmt::format("the filter has rank {}, the input {}", f.size(), rank));
  ir::Value* x = last ? L.to_channels_first(in[0]) : in[0];
  std::vector<int64_t> perm = {static_cast<int64_t>(rank) - 1, static_cast<int64_t>(rank) - 2};
  for (size_t k = 0; k + 2 < rank; ++k) perm.push_back(static_cast<int64_t>(k));
  ir::Value* w = L.transpose(in[1], perm);  // OIHW
  const std::vector<int64_t> kernel(f.begin(), f.end() - 2);
  const auto strides = spatial(L, "strides", rank, last, 1), dilations = spatial(L, "dilations", rank, last, 1);
  ir::AttributeMap attrs = {{"kernel_shape", kernel}, {"strides", strides}, {"dilations", dilations}};
  const ir::Dim& channels = x->shape()[1];
  if (channels.is_static()) {
    const int64_t cin = channels.value(), per_group = f[rank - 2];
    if (per_group <= 0 || cin % per_group) L.fail_node(fmt::format("{} input channels and a filter for {}", cin, per_group));
    attrs["group"] = cin / per_group;
  }
  add_padding(L, attrs, x, kernel, strides, dilations, last);
  ir::Value* y = L.node("Conv", {x, w}, attrs);
  return {last ? L.to_channels_last(y) : y};
}

// DepthwiseConv2dNative: filter [kh, kw, C, multiplier]; output channel c*multiplier + m.
Values depthwise_conv(TfLowering& L, const Values& in) {
  const bool last = channels_last(L);
  const std::vector<int64_t> f = L.dims(in[1]);
  if (f.size() != 4 || L.rank(in[0]) != 4) L.fail_node("expected a 4-D input and filter");
  ir::Value* x = last ? L.to_channels_first(in[0]) : in[0];
  ir::Value* w = L.transpose(L.reshape(in[1], {f[0], f[1], 1, f[2] * f[3]}), {3, 2, 0, 1});
  const std::vector<int64_t> kernel = {f[0], f[1]};
  const auto strides = spatial(L, "strides", 4, last, 1), dilations = spatial(L, "dilations", 4, last, 1);
  ir::AttributeMap attrs = {{"kernel_shape", kernel}, {"strides", strides}, {"dilations", dilations}, {"group", f[2]}};
  add_padding(L, attrs, x, kernel, strides, dilations, last);
  ir::Value* y = L.node("Conv", {x, w}, attrs);
  return {last ? L.to_channels_last(y) : y};
}

// Conv2DBackpropInput (a transposed convolution): input_sizes, filter [kh, kw, Cout, Cin],
// out_backprop. The output has exactly input_sizes: pads as the forward convolution of that
// size would have, and output_padding for what strides leave over.
Values conv_backprop_input(TfLowering& L, const Values& in) {
  const bool last = channels_last(L);
  const std::vector<int64_t> sizes = L.const_ints(in[0], "input_sizes");
  const std::vector<int64_t> f = L.dims(in[1]);
  const std::vector<int64_t> dy = L.dims(in[2]);
  if (sizes.size() != 4 || f.size() != 4 || dy.size() != 4) L.fail_node("expected 4-D sizes, filter and input");
  ir::Value* x = last ? L.to_channels_first(in[2]) : in[2];
  ir::Value* w = L.transpose(in[1], {3, 2, 0, 1});  // [Cin, Cout, kh, kw]
  const auto strides = spatial(L, "strides", 4, last, 1), dilations = spatial(L, "dilations", 4, last, 1);
  const std::string padding = L.attr_string("padding", "VALID");
  std::vector<int64_t> pads(4, 0), output_padding(2, 0);
  for (size_t k = 0; k < 2; ++k) {
    const int64_t out = sizes[last ? k + 1 : k + 2], din = dy[last ? k + 1 : k + 2];
    const int64_t k_eff = (f[k] - 1) * dilations[k] + 1;
    if (padding == "SAME") {
      const int64_t total = std::max<int64_t>((din - 1) * strides[k] + k_eff - out, 0);
      pads[k] = total / 2;
      pads[2 + k] = total - total / 2;
    } else if (padding == "EXPLICIT") {
      std::vector<int64_t> e = L.attr_ints("explicit_paddings");
      if (e.size() != 8) L.fail_node("explicit_paddings must have 8 entries");
      const size_t d = last ? k + 1 : k + 2;
      pads[k] = e[2 * d];
      pads[2 + k] = e[2 * d + 1];
    } else if (padding != "VALID") {
      L.fail_node(fmt::format("padding '{}' is not supported", padding));
    }
    const int64_t full = (din - 1) * strides[k] + k_eff - pads[k] - pads[2 + k];
    output_padding[k] = out - full;
    if (output_padding[k] < 0 || output_padding[k] >= std::max(strides[k], dilations[k]))
      L.fail_node(fmt::format("input_sizes {} cannot come from this input and filter", ir::dims_str(sizes)));
  }
  ir::Value* y = L.node("ConvTranspose", {x, w},
                        {{"kernel_shape", std::vector<int64_t>{f[0], f[1]}}, {"strides", strides}, {"dilations", dilations},
                         {"pads", pads}, {"output_padding", output_padding}});
  return {last ? L.to_channels_last(y) : y};
}

Values pool(TfLowering& L, const Values& in) {
  const bool last = channels_last(L);
  const size_t rank = L.rank(in[0]);
  const auto kernel = spatial(L, "ksize", rank, last, 1), strides = spatial(L, "strides", rank, last, 1);
  ir::Value* x = last ? L.to_channels_first(in[0]) : in[0];
  ir::AttributeMap attrs = {{"kernel_shape", kernel}, {"strides", strides}};
  add_padding(L, attrs, x, kernel, strides, std::vector<int64_t>(kernel.size(), 1), last);
  const bool max = L.tf_node().op().starts_with("MaxPool");
  if (!max) attrs["count_include_pad"] = int64_t{0};  // TF averages the elements inside only
  ir::Value* y = L.node(max ? "MaxPool" : "AveragePool", {x}, attrs);
  return {last ? L.to_channels_last(y) : y};
}

// FusedBatchNorm(V2, V3) at inference: the IR's BatchNormalization (NCHW). The statistics
// outputs are the inputs' (what TF gives when is_training is false).
Values fused_batch_norm(TfLowering& L, const Values& in) {
  if (L.attr_bool("is_training", true))  // TF's default
    L.fail_node("is_training is true: only inference batch normalization is supported");
  const bool last = channels_last(L);
  ir::Value* x = last ? L.to_channels_first(in[0]) : in[0];
  ir::Value* y = L.node("BatchNormalization", {x, in[1], in[2], in[3], in[4]}, {{"epsilon", L.attr_float("epsilon", 1e-4f)}});
  if (last) y = L.to_channels_last(y);
  Values out = {y, in[3], in[4], in[3], in[4]};
  if (L.tf_node().op() == "FusedBatchNormV3") out.push_back(in[3]);
  return out;
}

ir::Value* swap_last_two(TfLowering& L, ir::Value* v) {
  const int64_t r = static_cast<int64_t>(L.rank(v));
  if (r < 2) L.fail_node(fmt::format("'{}' has rank {}, a matrix needs 2", v->name(), r));
  std::vector<int64_t> perm;
  for (int64_t k = 0; k < r; ++k) perm.push_back(k);
  std::swap(perm[r - 1], perm[r - 2]);
  return L.transpose(v, perm);
}

Values mat_mul(TfLowering& L, const Values& in) {
  const bool batch = L.tf_node().op() != "MatMul";
  ir::Value* a = in[0];
  ir::Value* b = in[1];
  if (L.attr_bool(batch ? "adj_x" : "transpose_a", false)) a = swap_last_two(L, a);
  if (L.attr_bool(batch ? "adj_y" : "transpose_b", false)) b = swap_last_two(L, b);
  ir::Value* y = L.node("MatMul", {a, b});
  if (L.has_attr("Tout")) y = L.cast(y, L.attr_dtype("Tout"));
  return {y};
}

Values einsum(TfLowering& L, const Values& in) {
  return {L.node("Einsum", in, {{"equation", L.attr_string("equation", "")}})};
}

// ResizeBilinear / ResizeNearestNeighbor on NHWC images to `size` [h, w]: the IR's Resize on
// axes 1 and 2 with TF's coordinate rules.
Values resize(TfLowering& L, const Values& in) {
  const std::vector<int64_t> size = L.const_ints(in[1], "size");
  if (size.size() != 2 || L.rank(in[0]) != 4) L.fail_node("expected 4-D images and a size of 2");
  const bool nearest = L.tf_node().op() == "ResizeNearestNeighbor";
  const bool align = L.attr_bool("align_corners", false), half = L.attr_bool("half_pixel_centers", false);
  if (align && half) L.fail_node("align_corners and half_pixel_centers are both set");
  ir::AttributeMap attrs = {{"mode", nearest ? "nearest" : "linear"}, {"axes", std::vector<int64_t>{1, 2}}};
  if (align) attrs["coordinate_transformation_mode"] = "align_corners";
  else if (half) attrs["coordinate_transformation_mode"] = "half_pixel";
  else attrs["coordinate_transformation_mode"] = "asymmetric";
  // TF's nearest: floor of the source coordinate, rounded (half up) when corners align; with
  // half-pixel centers floor((x + 0.5) * scale), which is half_pixel rounded half up.
  if (nearest) attrs["nearest_mode"] = align || half ? "round_prefer_ceil" : "floor";
  ir::Value* x = in[0];
  ir::Value* empty = L.constant(ir::Tensor(ir::DType::F32, {0}));
  ir::Value* y = L.node("Resize", {x, empty, empty, L.i64s(size)}, attrs);
  return {y};
}

}  // namespace

void add_nn_lowerings(std::map<std::string, TfLowerFn>& t) {
  t["Conv2D"] = conv;
  t["Conv3D"] = conv;
  t["DepthwiseConv2dNative"] = depthwise_conv;
  t["Conv2DBackpropInput"] = conv_backprop_input;
  t["MaxPool"] = pool;
  t["AvgPool"] = pool;
  t["MaxPool3D"] = pool;
  t["AvgPool3D"] = pool;
  t["FusedBatchNorm"] = fused_batch_norm;
  t["FusedBatchNormV2"] = fused_batch_norm;
  t["FusedBatchNormV3"] = fused_batch_norm;
  t["MatMul"] = mat_mul;
  t["BatchMatMul"] = mat_mul;
  t["BatchMatMulV2"] = mat_mul;
  t["BatchMatMulV3"] = mat_mul;
  t["Einsum"] = einsum;
  t["ResizeBilinear"] = resize;
  t["ResizeNearestNeighbor"] = resize;
}

}  // namespace kiln::frontend::tensorflow
