// ONNX's opset history, as rewrites into the IR's canonical (newest-opset) op forms.
#include "frontend/onnx/onnx_op_rules.h"

#include <algorithm>
#include <climits>

#include "ir/error.h"
#include "ir/op_registry.h"

namespace kiln::frontend::onnx_import {
namespace {

using ir::Attribute;
using ir::AttrType;
using ir::DType;
using ir::Tensor;

const onnx::AttributeProto* find_attr(const onnx::NodeProto& node, std::string_view name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

bool output_used(const NodeView& n, int index) {
  return index < n.proto.output_size() && !n.proto.output(index).empty() &&
         n.used.count(n.proto.output(index)) > 0;
}

// Removes attribute `name` from the node and returns it, if present.
std::optional<Attribute> take_attr(PendingNode& node, const std::string& name) {
  auto it = node.attrs.find(name);
  if (it == node.attrs.end()) return std::nullopt;
  Attribute a = std::move(it->second);
  node.attrs.erase(it);
  return a;
}

// Moves an INTS attribute into input `index` as a 1-D i64 constant (an absent attribute leaves
// the input omitted).
void ints_attr_to_input(NodeEmitter& e, PendingNode& node, const std::string& attr, size_t index) {
  std::optional<Attribute> a = take_attr(node, attr);
  if (!a) return;
  if (a->type() != AttrType::Ints) e.fail_node(node, fmt::format("attribute '{}' must be ints", attr));
  const std::vector<int64_t>& v = a->ints();
  Tensor t = Tensor::from_vector<int64_t>(DType::I64, {static_cast<int64_t>(v.size())}, v);
  if (node.inputs.size() <= index) node.inputs.resize(index + 1, nullptr);
  node.inputs[index] = e.constant(node.name + "_" + attr, std::move(t));
}

// --- Reshape-1..4, Squeeze/Unsqueeze-1..12: an attribute became an input ---------------------

std::string check_reshape(const NodeView& n) {
  if (n.opset < 5 && !find_attr(n.proto, "shape")) return "Reshape-1 without a 'shape' attribute";
  return "";
}

void convert_reshape(NodeEmitter& e, PendingNode& node, int) { ints_attr_to_input(e, node, "shape", 1); }

std::string check_unsqueeze(const NodeView& n) {
  if (n.opset < 13 && !find_attr(n.proto, "axes")) return "Unsqueeze without an 'axes' attribute";
  return "";
}

void convert_axes(NodeEmitter& e, PendingNode& node, int) { ints_attr_to_input(e, node, "axes", 1); }

// --- Clip-6..10: min and max attributes became optional inputs -------------------------------

void convert_clip(NodeEmitter& e, PendingNode& node, int) {
  // The bounds take the input's dtype; Clip-6 only takes float types, so f32 when unknown.
  DType dtype = node.inputs.empty() || !node.inputs[0]
                    ? DType::F32
                    : e.dtype_of(node.inputs[0]).value_or(DType::F32);
  node.inputs.resize(3, nullptr);
  size_t index = 1;
  for (const char* bound : {"min", "max"}) {
    if (std::optional<Attribute> a = take_attr(node, bound)) {
      if (a->type() != AttrType::Float)
        e.fail_node(node, fmt::format("attribute '{}' must be a float", bound));
      Tensor t = Tensor::from_vector<float>(dtype, {}, {a->f()});
      node.inputs[index] = e.constant(node.name + "_" + bound, std::move(t));
    }
    ++index;
  }
}

// --- Softmax, LogSoftmax, Hardmax before 13: flatten to 2-D at `axis` (default 1) ------------

void convert_softmax(NodeEmitter& e, PendingNode& node, int) {
  std::optional<Attribute> a = take_attr(node, "axis");
  int64_t axis = a ? a->i() : 1;
  if (node.inputs.empty() || node.inputs[0] == nullptr) return;  // emit() reports the missing input
  ir::Value* x = node.inputs[0];
  if (std::optional<ir::Shape> shape = e.shape_of(x)) {
    auto rank = static_cast<int64_t>(shape->rank());
    std::optional<int64_t> norm = ir::normalize_axis(axis, rank);
    if (!norm) e.fail_node(node, fmt::format("axis {} is out of range for rank {}", axis, rank));
    if (*norm == rank - 1 || rank == 0) {  // the flattened and the single-axis forms agree
      node.attrs["axis"] = Attribute(int64_t{-1});
      return;
    }
  }
  // Flatten(x, axis) -> op(axis=1) -> Reshape to Shape(x); constant folding removes the Shape
  // when the shape is static.
  ir::Value* flat = e.emit_helper({"Flatten", {x}, {""}, {{"axis", Attribute(axis)}}, node.name + "_flatten"})[0];
  ir::Value* shape = e.emit_helper({"Shape", {x}, {""}, {}, node.name + "_shape"})[0];
  PendingNode inner = node;
  inner.inputs = {flat};
  inner.outputs = {""};
  inner.attrs["axis"] = Attribute(int64_t{1});
  ir::Value* y2d = e.emit_helper(std::move(inner))[0];
  node.op = "Reshape";
  node.inputs = {y2d, shape};
  node.attrs.clear();
  node.name += "_reshape";
  const ir::OpDef* reshape = ir::registry().find("Reshape");
  for (const ir::AttrSpec& s : reshape->attrs)
    if (s.name == "allowzero") node.attrs["allowzero"] = Attribute(int64_t{1});
}

// --- Binary elementwise ops before 7: `broadcast` and `axis` attributes -----------------------

// B's dims align with A's from `axis` on; numpy broadcasting aligns trailing dims, so B gets
// trailing 1s when it stops short of A's last dim. Needs both ranks.
std::optional<int64_t> rank_hint(const NodeView& n, int input) {
  if (input >= n.proto.input_size()) return std::nullopt;
  const TypeHint* h = n.hints.find(n.proto.input(input));
  if (!h || !h->shape) return std::nullopt;
  return static_cast<int64_t>(h->shape->rank());
}

std::string check_legacy_broadcast(const NodeView& n) {
  const onnx::AttributeProto* axis = find_attr(n.proto, "axis");
  if (n.opset >= 7 || !axis) return "";
  std::optional<int64_t> ra = rank_hint(n, 0), rb = rank_hint(n, 1);
  if (!ra || !rb) return "legacy broadcasting with an axis needs the ranks of both inputs declared";
  int64_t a = axis->i() < 0 ? axis->i() + *ra : axis->i();
  if (a < 0 || a + *rb > *ra) return fmt::format("legacy broadcasting axis {} does not fit", axis->i());
  return "";
}

// Without `axis`, legacy broadcasting matched trailing dims, which numpy broadcasting includes.
void convert_legacy_broadcast(NodeEmitter& e, PendingNode& node, int) {
  take_attr(node, "broadcast");
  std::optional<Attribute> axis = take_attr(node, "axis");
  if (!axis || node.inputs.size() < 2) return;
  std::optional<ir::Shape> sa = e.shape_of(node.inputs[0]), sb = e.shape_of(node.inputs[1]);
  if (!sa || !sb) e.fail_node(node, "legacy broadcasting with an axis needs both ranks");
  auto ra = static_cast<int64_t>(sa->rank()), rb = static_cast<int64_t>(sb->rank());
  int64_t a = axis->i() < 0 ? axis->i() + ra : axis->i();
  int64_t trailing = ra - a - rb;
  if (a < 0 || trailing < 0) e.fail_node(node, fmt::format("legacy broadcasting axis {} does not fit", axis->i()));
  if (trailing == 0) return;
  std::vector<int64_t> axes;
  for (int64_t k = 0; k < trailing; ++k) axes.push_back(rb + k);
  ir::Value* axes_value = e.constant(node.name + "_axes", Tensor::from_vector<int64_t>(
                                                              DType::I64, {trailing}, axes));
  node.inputs[1] = e.emit_helper({"Unsqueeze", {node.inputs[1], axes_value}, {""}, {},
                                  node.name + "_unsqueeze"})[0];
}

// --- PRelu before 7: a slope of C values is per channel (dim 1) ----------------------------

// PRelu-6 and older apply a 1-D slope along the channel axis (PyTorch's PReLU with
// num_parameters = C exports so); numpy broadcasting from 7 on aligns trailing dims, so the
// slope gets X's rank - 2 trailing 1s. A one-value slope broadcasts either way.
void convert_legacy_prelu(NodeEmitter& e, PendingNode& node, int) {
  if (node.inputs.size() < 2) return;
  std::optional<ir::Shape> ss = e.shape_of(node.inputs[1]);
  if (ss && (ss->rank() != 1 || ((*ss)[0].is_static() && (*ss)[0].value() == 1))) return;
  std::optional<ir::Shape> sx = e.shape_of(node.inputs[0]);
  if (!sx || !ss) e.fail_node(node, "a per-channel slope (opset < 7) needs the ranks of both inputs");
  const auto rx = static_cast<int64_t>(sx->rank());
  if (rx < 3) return;
  std::vector<int64_t> axes;
  for (int64_t k = 1; k <= rx - 2; ++k) axes.push_back(k);
  ir::Value* axes_value = e.constant(node.name + "_axes", Tensor::from_vector<int64_t>(
                                                              DType::I64, {rx - 2}, axes));
  node.inputs[1] = e.emit_helper({"Unsqueeze", {node.inputs[1], axes_value}, {""}, {},
                                  node.name + "_unsqueeze"})[0];
}

// --- Concat before 4: `axis` defaults to 1 -------------------------------------------------

void convert_concat(NodeEmitter&, PendingNode& node, int) {
  if (!node.attrs.count("axis")) node.attrs["axis"] = Attribute(int64_t{1});
}

// --- Dropout: Identity at inference -------------------------------------------------------

// Whether training_mode is omitted or a constant false.
bool dropout_inference(const PendingNode& node) {
  if (node.inputs.size() <= 2 || !node.inputs[2]) return true;
  const ir::Value* t = node.inputs[2];
  return t->is_constant() && t->constant().dtype() == DType::Bool && t->constant().numel() == 1 &&
         t->constant().as_double(0) == 0;
}

// Identity when there is no mask output and training_mode is off; otherwise the IR's
// Dropout, which makes the mask (all true) and rejects training with a nonzero ratio.
void convert_dropout(NodeEmitter&, PendingNode& node, int opset) {
  take_attr(node, "ratio");    // Dropout-1..11: an attribute; the mask is all true at inference
  take_attr(node, "is_test");  // Dropout-1..6
  take_attr(node, "seed");
  if (opset < 12) node.inputs.resize(1);
  const bool mask = node.outputs.size() > 1 && !node.outputs[1].empty();
  if (!mask && dropout_inference(node)) {
    node.op = "Identity";
    node.inputs.resize(1);
    node.outputs.resize(1);
    node.attrs.clear();
  }
}

// --- BatchNormalization: legacy attributes; training outputs must be unused -------------------

// training_mode=1 (opset 14 on) normalizes by the batch's statistics and may output the
// updated running mean and variance; the IR op does that.
bool batch_norm_training(const NodeView& n) {
  const auto* a = find_attr(n.proto, "training_mode");
  return n.opset >= 14 && a && a->i() != 0;
}

std::string check_batch_norm(const NodeView& n) {
  if (const auto* a = find_attr(n.proto, "spatial"); a && a->i() == 0)
    return "spatial=0 is not supported";
  if (const auto* a = find_attr(n.proto, "is_test"); a && a->i() == 0)
    return "is_test=0 (training) is not supported";
  if (batch_norm_training(n)) return "";
  for (int i = 1; i < n.proto.output_size(); ++i)
    if (output_used(n, i)) return "its training outputs (running or saved statistics) are used";
  return "";
}

void convert_batch_norm(NodeEmitter&, PendingNode& node, int) {
  auto mode = node.attrs.find("training_mode");
  if (mode == node.attrs.end() || mode->second.i() == 0) node.outputs.resize(1);
}

// --- Constant: every form becomes the `value` tensor ----------------------------------------

std::string check_constant(const NodeView& n) {
  for (const char* name : {"value", "value_float", "value_floats", "value_int", "value_ints"})
    if (find_attr(n.proto, name)) return "";
  if (find_attr(n.proto, "sparse_value")) return "sparse constants are not supported";
  if (find_attr(n.proto, "value_string") || find_attr(n.proto, "value_strings"))
    return "string constants are not supported";
  return "no value attribute";
}

void convert_constant(NodeEmitter& e, PendingNode& node, int) {
  for (auto& [name, a] : node.attrs) {
    std::optional<Tensor> t;
    if (name == "value_float") {
      t = Tensor::from_vector<float>(DType::F32, {}, {a.f()});
    } else if (name == "value_floats") {
      t = Tensor::from_vector<float>(DType::F32, {static_cast<int64_t>(a.floats().size())}, a.floats());
    } else if (name == "value_int") {
      t = Tensor::scalar_i64(a.i());
    } else if (name == "value_ints") {
      t = Tensor::from_vector<int64_t>(DType::I64, {static_cast<int64_t>(a.ints().size())}, a.ints());
    } else if (name == "value") {
      t = a.t();
    }
    if (t) {
      node.attrs = {{"value", Attribute(std::move(*t))}};
      return;
    }
  }
  e.fail_node(node, "no value attribute");
}

// --- Slice-1, TopK-1, Pad-2, Split-2..12, Reduce*: attributes became inputs ---------------

std::string check_slice(const NodeView& n) {
  if (n.opset < 10 && (!find_attr(n.proto, "starts") || !find_attr(n.proto, "ends")))
    return "Slice-1 without 'starts' and 'ends' attributes";
  return "";
}

void convert_slice(NodeEmitter& e, PendingNode& node, int) {
  ints_attr_to_input(e, node, "starts", 1);
  ints_attr_to_input(e, node, "ends", 2);
  ints_attr_to_input(e, node, "axes", 3);
}

void convert_split(NodeEmitter& e, PendingNode& node, int) {
  if (node.inputs.size() > 1 && node.inputs[1]) take_attr(node, "split");  // Split-1: an input
  ints_attr_to_input(e, node, "split", 1);
}

std::string check_topk(const NodeView& n) {
  return n.opset >= 10 || find_attr(n.proto, "k") ? "" : "TopK-1 without a 'k' attribute";
}

void convert_topk(NodeEmitter& e, PendingNode& node, int) {
  std::optional<Attribute> k = take_attr(node, "k");
  if (!k || k->type() != AttrType::Int) e.fail_node(node, "attribute 'k' must be an int");
  node.inputs.resize(2, nullptr);
  node.inputs[1] = e.constant(node.name + "_k", Tensor::from_vector<int64_t>(DType::I64, {1}, {k->i()}));
}

void convert_pad(NodeEmitter& e, PendingNode& node, int) {
  std::optional<Attribute> pads = take_attr(node, "pads");
  if (!pads) pads = take_attr(node, "paddings");  // Pad-1
  if (!pads || pads->type() != AttrType::Ints) e.fail_node(node, "attribute 'pads' must be ints");
  node.attrs["pads"] = *pads;
  ints_attr_to_input(e, node, "pads", 1);
  if (std::optional<Attribute> value = take_attr(node, "value")) {
    if (value->type() != AttrType::Float) e.fail_node(node, "attribute 'value' must be a float");
    DType dtype = node.inputs.empty() || !node.inputs[0] ? DType::F32
                                                         : e.dtype_of(node.inputs[0]).value_or(DType::F32);
    node.inputs.resize(3, nullptr);
    node.inputs[2] = e.constant(node.name + "_value", Tensor::from_vector<float>(dtype, {}, {value->f()}));
  }
}

// Scatter (deprecated at opset 11) is ScatterElements without a reduction.
void convert_scatter(NodeEmitter&, PendingNode& node, int) { node.op = "ScatterElements"; }

// --- Upsample-7..10 and Resize-10: Resize with asymmetric coordinates ----------------------

std::string check_upsample(const NodeView& n) {
  if (n.proto.op_type() == "Upsample" && n.opset < 7)
    return "Upsample-1 (height_scale, width_scale) is not supported";
  return "";
}

// Upsample (and Resize-10, which means the same) is Resize with asymmetric coordinates and
// nearest rounding down; its scales are an attribute (Upsample-7) or input 1.
void convert_upsample(NodeEmitter& e, PendingNode& node, int) {
  std::string mode = "nearest";
  if (std::optional<Attribute> m = take_attr(node, "mode")) {
    if (m->type() != AttrType::String) e.fail_node(node, "attribute 'mode' must be a string");
    mode = m->s();
  }
  if (mode != "nearest" && mode != "linear")
    e.fail_node(node, fmt::format("mode '{}' is not one of nearest, linear", mode));
  ir::Value* scales = node.inputs.size() > 1 ? node.inputs[1] : nullptr;
  if (std::optional<Attribute> a = take_attr(node, "scales")) {
    if (a->type() != AttrType::Floats) e.fail_node(node, "attribute 'scales' must be floats");
    const std::vector<float>& v = a->floats();
    scales = e.constant(node.name + "_scales",
                        Tensor::from_vector<float>(DType::F32, {static_cast<int64_t>(v.size())}, v));
  }
  if (!scales) e.fail_node(node, "scales are missing (neither an attribute nor input 1)");
  node.op = "Resize";
  node.inputs = {node.inputs.empty() ? nullptr : node.inputs[0], nullptr, scales};
  node.attrs["mode"] = Attribute(mode);
  node.attrs["coordinate_transformation_mode"] = Attribute("asymmetric");
  node.attrs["nearest_mode"] = Attribute("floor");
}

// GridSample-16 spelled its modes bilinear and bicubic (linear and cubic since opset 20).
void convert_grid_sample(NodeEmitter& e, PendingNode& node, int) {
  auto it = node.attrs.find("mode");
  if (it == node.attrs.end()) {
    node.attrs["mode"] = Attribute("linear");  // GridSample-16's default, bilinear
    return;
  }
  if (it->second.type() != AttrType::String) e.fail_node(node, "attribute 'mode' must be a string");
  const std::string m = it->second.s();
  if (m == "bilinear") it->second = Attribute("linear");
  else if (m == "bicubic") it->second = Attribute("cubic");
}

// DFT-17/19: axis was an attribute (default 1); DFT-20 takes it as input 2 (default -2).
void convert_dft(NodeEmitter& e, PendingNode& node, int) {
  int64_t axis = 1;
  if (std::optional<Attribute> a = take_attr(node, "axis")) {
    if (a->type() != AttrType::Int) e.fail_node(node, "attribute 'axis' must be an int");
    axis = a->i();
  }
  node.inputs.resize(3, nullptr);
  node.inputs[2] = e.constant(node.name + "_axis", Tensor::scalar_i64(axis));
}

constexpr int kAlways = INT_MAX;

const std::vector<OpRule>& rules() {
  static const std::vector<OpRule> kRules = [] {
    std::vector<OpRule> rules = {
      {.op_type = "Reshape", .canonical_since = 5, .check = check_reshape, .convert = convert_reshape},
      {.op_type = "Squeeze", .canonical_since = 13, .convert = convert_axes},
      {.op_type = "Unsqueeze", .canonical_since = 13, .check = check_unsqueeze, .convert = convert_axes},
      {.op_type = "Clip", .canonical_since = 11, .convert = convert_clip},
      // Opset 8's Scan has a batch axis and sequence_lens; it was replaced in opset 9.
      {.op_type = "Scan", .canonical_since = 9},
      {.op_type = "Softmax", .canonical_since = 13,
       .emits = {"Softmax", "Flatten", "Shape", "Reshape"}, .convert = convert_softmax},
      {.op_type = "LogSoftmax", .canonical_since = 13,
       .emits = {"LogSoftmax", "Flatten", "Shape", "Reshape"}, .convert = convert_softmax},
      {.op_type = "Hardmax", .canonical_since = 13,
       .emits = {"Hardmax", "Flatten", "Shape", "Reshape"}, .convert = convert_softmax},
      {.op_type = "Dropout", .canonical_since = kAlways, .emits = {"Identity", "Dropout"},
       .convert = convert_dropout},
      {.op_type = "BatchNormalization", .canonical_since = kAlways,
       .noop_attrs = {"spatial", "is_test", "momentum", "training_mode"}, .check = check_batch_norm,
       .convert = convert_batch_norm},
      {.op_type = "Constant", .canonical_since = kAlways, .check = check_constant,
       .convert = convert_constant},
      {.op_type = "Concat", .canonical_since = 4, .convert = convert_concat},
      {.op_type = "PRelu", .canonical_since = 7, .emits = {"PRelu", "Unsqueeze"},
       .convert = convert_legacy_prelu},
      {.op_type = "Gemm", .noop_attrs = {"broadcast"}},
      {.op_type = "MaxPool", .noop_attrs = {"storage_order"}},
      {.op_type = "LayerNormalization", .noop_attrs = {"stash_type"}},
      // Old forms nobody rewrites yet (mostly attributes that later became inputs).
      {.op_type = "Cast", .canonical_since = 6, .noop_attrs = {"saturate"}},  // `to` was a string
      {.op_type = "Tile", .canonical_since = 6},  // inputs were (input, tiles, axis)
      {.op_type = "Slice", .canonical_since = 10, .check = check_slice, .convert = convert_slice},
      {.op_type = "TopK", .canonical_since = 10, .check = check_topk, .convert = convert_topk},
      {.op_type = "Pad", .canonical_since = 11, .convert = convert_pad},
      {.op_type = "Resize", .canonical_since = 11, .check = check_upsample, .convert = convert_upsample},
      {.op_type = "Upsample", .canonical_since = kAlways, .emits = {"Resize"}, .check = check_upsample,
       .convert = convert_upsample},
      {.op_type = "DFT", .canonical_since = 20, .convert = convert_dft},
      {.op_type = "GridSample", .canonical_since = 20, .convert = convert_grid_sample},
      {.op_type = "Split", .canonical_since = 13, .convert = convert_split},
      {.op_type = "ReduceSum", .canonical_since = 13, .convert = convert_axes},
      {.op_type = "Scatter", .canonical_since = kAlways, .emits = {"ScatterElements"},
       .convert = convert_scatter},
    };
    for (std::string_view op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                                "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
      rules.push_back({.op_type = op, .canonical_since = 18, .convert = convert_axes});
    for (std::string_view op : {"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal",
                                "Greater", "Less"})
      rules.push_back({.op_type = op, .canonical_since = 7, .emits = {op, "Unsqueeze"},
                       .check = check_legacy_broadcast,
                       .convert = convert_legacy_broadcast});
    return rules;
  }();
  return kRules;
}

bool declares_attr(const ir::OpDef& def, std::string_view name) {
  return std::any_of(def.attrs.begin(), def.attrs.end(),
                     [&](const ir::AttrSpec& s) { return s.name == name; });
}

}  // namespace

const OpRule* find_op_rule(std::string_view op_type) {
  for (const OpRule& r : rules())
    if (r.op_type == op_type) return &r;
  return nullptr;
}

bool is_noop_attr(std::string_view op_type, std::string_view attr) {
  if (attr == "consumed_inputs") return true;  // an opset-1 memory hint on many ops
  const OpRule* rule = find_op_rule(op_type);
  return rule && std::find(rule->noop_attrs.begin(), rule->noop_attrs.end(), attr) !=
                     rule->noop_attrs.end();
}

std::string unsupported_reason(const NodeView& n) {
  const std::string op = registry_op_name(n.proto);
  const OpRule* rule = find_op_rule(op);
  const bool converts = rule && n.opset < rule->canonical_since;
  if (!ir::registry().find(op) && !(converts && rule->convert && !rule->emits.empty()))
    return "not implemented";
  if (converts) {
    if (!rule->convert)
      return fmt::format("the opset {} form is not supported (opset {} and newer are)", n.opset,
                         rule->canonical_since);
    for (std::string_view target : rule->emits)
      if (!ir::registry().find(target)) return fmt::format("needs op {}, not implemented", target);
  }
  for (const auto& a : n.proto.attribute()) {
    if (!a.ref_attr_name().empty())
      return fmt::format("attribute '{}' refers to a function attribute", a.name());
    switch (a.type()) {
      case onnx::AttributeProto::TENSORS:
      case onnx::AttributeProto::GRAPHS:
      case onnx::AttributeProto::SPARSE_TENSOR:
      case onnx::AttributeProto::SPARSE_TENSORS:
      case onnx::AttributeProto::TYPE_PROTO:
      case onnx::AttributeProto::TYPE_PROTOS:
        return fmt::format("attribute '{}' of type {} is not supported", a.name(),
                           onnx::AttributeProto::AttributeType_Name(a.type()));
      default: break;
    }
  }
  if (rule && rule->check) {
    std::string reason = rule->check(n);
    if (!reason.empty()) return reason;
  }
  if (!converts) {  // the node keeps its ONNX form: each attribute must mean something to the IR
    const ir::OpDef* def = ir::registry().find(op);
    for (const auto& a : n.proto.attribute())
      if (!declares_attr(*def, a.name()) && !is_noop_attr(op, a.name()))
        return fmt::format("attribute '{}' is not supported", a.name());
  }
  return "";
}

}  // namespace kiln::frontend::onnx_import
