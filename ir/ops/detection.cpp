// Object-detection ops: NonMaxSuppression (its output's length depends on the data: compiled,
// a data-dependent dim) and RoiAlign. Kernels: kiln/rt/detection.h.
#include "ir/ops/detection.h"

#include "ir/ops/op_helpers.h"

namespace kiln::ir {
namespace {

void infer_nms(Node& node) {
  require_dtype(node, 0, {DType::F32});
  require_dtype(node, 1, {DType::F32});
  if (node.has_input(2)) require_dtype(node, 2, {DType::I64});
  if (node.has_input(3)) require_dtype(node, 3, {DType::F32});
  if (node.has_input(4)) require_dtype(node, 4, {DType::F32});
  const Shape& b = node.input(0)->shape();
  const Shape& s = node.input(1)->shape();
  if (b.rank() != 3 || (b[2].is_static() && b[2].value() != 4))
    fail("{}: boxes must be [batches, boxes, 4], got {}", node.describe(), b.str());
  if (s.rank() != 3) fail("{}: scores must be [batches, classes, boxes], got {}", node.describe(), s.str());
  const int64_t cpb = node.i("center_point_box");
  if (cpb != 0 && cpb != 1) fail("{}: center_point_box must be 0 or 1, got {}", node.describe(), cpb);
  // The count is known when the node runs; a compile gives it a symbol of its own
  // (passes::bound_data_dependent_dims), which later inference keeps.
  const Value* y = node.output(0);
  const bool counted = y->has_type() && y->shape().rank() == 2 && y->shape()[0].is_symbol();
  node.output(0)->set_type(DType::I64, Shape({counted ? y->shape()[0] : Dim::unknown(), Dim(3)}));
}

// A scalar (or one-element) input's value, or `fallback` when omitted or empty.
double scalar_or(std::span<const Tensor* const> in, size_t i, double fallback) {
  const Tensor* t = optional_input(in, i);
  return t && t->numel() > 0 ? t->as_double(0) : fallback;
}

void eval_nms(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& boxes = *in[0];
  const Tensor& scores = *in[1];
  const std::vector<int64_t>& bd = boxes.dims();
  const std::vector<int64_t>& sd = scores.dims();
  if (bd.size() != 3 || bd[2] != 4 || sd.size() != 3 || sd[0] != bd[0] || sd[2] != bd[1])
    fail("{}: boxes {} and scores {} must be [batches, boxes, 4] and [batches, classes, boxes]", node.describe(),
         dims_str(bd), dims_str(sd));
  const Tensor* score_threshold = optional_input(in, 4);
  rt::NmsParams p{bd[0],
                  sd[1],
                  bd[1],
                  static_cast<int64_t>(scalar_or(in, 2, 0)),
                  scalar_or(in, 3, 0),
                  score_threshold && score_threshold->numel() > 0,
                  scalar_or(in, 4, 0),
                  node.i("center_point_box") != 0};
  std::vector<int64_t> selected(static_cast<size_t>(3 * rt::nms_capacity(p)));
  std::vector<int64_t> order(static_cast<size_t>(bd[1])), kept(static_cast<size_t>(bd[1]));
  const int64_t n = rt::nms_f32(p, boxes.data<float>(), scores.data<float>(), selected.data(), order.data(),
                                kept.data());
  selected.resize(static_cast<size_t>(3 * n));
  out[0] = Tensor::from_vector<int64_t>(DType::I64, {n, 3}, selected);
}

void infer_roi_align(Node& node) {
  require_float(node, 0);
  require_same_dtype(node, 0, 1);
  require_dtype(node, 2, {DType::I64});
  const Shape& x = node.input(0)->shape();
  const Shape& rois = node.input(1)->shape();
  const Shape& bi = node.input(2)->shape();
  roi_align_check(node);
  if (x.rank() != 4) fail("{}: X must be 4-D (N, C, H, W), got {}", node.describe(), x.str());
  if (rois.rank() != 2 || (rois[1].is_static() && rois[1].value() != 4))
    fail("{}: rois must be [num_rois, 4], got {}", node.describe(), rois.str());
  if (bi.rank() != 1) fail("{}: batch_indices must be 1-D, got {}", node.describe(), bi.str());
  node.output(0)->set_type(node.input(0)->dtype(),
                           Shape({rois[0], x[1], Dim(node.i("output_height")), Dim(node.i("output_width"))}));
}

void eval_roi_align(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const Tensor& rois = *in[1];
  const Tensor& bi = *in[2];
  if (x.rank() != 4 || rois.rank() != 2 || rois.dims()[1] != 4 || bi.rank() != 1 || bi.dims()[0] != rois.dims()[0])
    fail("{}: X {}, rois {} and batch_indices {} must be [N,C,H,W], [R,4] and [R]", node.describe(),
         dims_str(x.dims()), dims_str(rois.dims()), dims_str(bi.dims()));
  const rt::RoiAlignParams p = roi_align_params(node, x.dims(), rois.dims()[0]);
  out[0] = Tensor(x.dtype(), {p.rois, p.C, p.out_h, p.out_w});
  visit_dtype(x.dtype(), [&]<class S>() {
    if constexpr (std::is_floating_point_v<compute_t<S>>) {
      if (!rt::roi_align<S, int64_t>(p, x.data<S>(), rois.data<S>(), bi.data<int64_t>(), out[0].mutable_data<S>()))
        fail("{}: a batch index is outside [0, {})", node.describe(), p.N);
    } else {
      fail("{}: {} is not supported", node.describe(), dtype_name(x.dtype()));
    }
  });
}

}  // namespace

void roi_align_check(const Node& node) {
  const std::string& mode = node.s("mode");
  if (mode != "avg" && mode != "max") fail("{}: mode '{}' is not one of avg, max", node.describe(), mode);
  const std::string& ctm = node.s("coordinate_transformation_mode");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    fail("{}: coordinate_transformation_mode '{}' is not one of half_pixel, output_half_pixel", node.describe(),
         ctm);
  for (const char* a : {"output_height", "output_width"})
    if (node.i(a) < 1 || node.i(a) > (int64_t{1} << 20))
      fail("{}: {} must be positive, got {}", node.describe(), a, node.i(a));
  if (node.i("sampling_ratio") < 0 || node.i("sampling_ratio") > (int64_t{1} << 20))
    fail("{}: sampling_ratio must be >= 0, got {}", node.describe(), node.i("sampling_ratio"));
}

rt::RoiAlignParams roi_align_params(const Node& node, const std::vector<int64_t>& x, int64_t rois) {
  roi_align_check(node);
  return rt::RoiAlignParams{x[0],
                            x[1],
                            x[2],
                            x[3],
                            rois,
                            node.i("output_height"),
                            node.i("output_width"),
                            node.i("sampling_ratio"),
                            static_cast<double>(node.f("spatial_scale")),
                            node.s("coordinate_transformation_mode") == "half_pixel",
                            node.s("mode") == "max"};
}

void register_detection_ops(Registry& r) {
  r.add(OpDef{
      .name = "NonMaxSuppression",
      .summary = "greedy per-class box selection by score and IoU; (batch, class, box) rows",
      .inputs = {{"boxes"},
                 {"scores"},
                 {"max_output_boxes_per_class", true},
                 {"iou_threshold", true},
                 {"score_threshold", true}},
      .outputs = {"selected_indices"},
      .attrs = {{"center_point_box", AttrType::Int, Attribute(int64_t{0})}},
      .infer = infer_nms,
      .eval = eval_nms,
  });
  r.add(OpDef{
      .name = "RoiAlign",
      .summary = "average or max of bilinear samples over each region of interest",
      .inputs = {{"X"}, {"rois"}, {"batch_indices"}},
      .outputs = {"Y"},
      .attrs = {{"coordinate_transformation_mode", AttrType::String, Attribute("half_pixel")},
                {"mode", AttrType::String, Attribute("avg")},
                {"output_height", AttrType::Int, Attribute(int64_t{1})},
                {"output_width", AttrType::Int, Attribute(int64_t{1})},
                {"sampling_ratio", AttrType::Int, Attribute(int64_t{0})},
                {"spatial_scale", AttrType::Float, Attribute(1.0f)}},
      .infer = infer_roi_align,
      .eval = eval_roi_align,
  });
}

}  // namespace kiln::ir
