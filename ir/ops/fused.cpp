// Fused ops, made only by passes (passes/fuse_epilogue.cpp): kiln.FusedConv, kiln.FusedGemm
// and kiln.FusedMatMul compute y = act(op(inputs) [+ C] + Z), C a bias broadcast along the
// rows (kiln.FusedMatMul only; Conv and Gemm have their own) and Z an optional residual of y's
// shape; kiln.Elementwise (passes/fuse_elementwise.cpp) runs a chain of elementwise ops as one
// loop. Their attributes are the base op's plus `activation` and the activation op's own
// attributes, each prefixed `activation_`. Shape rule and reference are the base op's and the
// activation op's, composed through the registry; no math is written twice.
// kiln.FusedConvDepthwise (passes/fuse_expand_depthwise.cpp) and kiln.FusedDepthwiseConv
// (passes/fuse_depthwise_pointwise.cpp) are two kiln.FusedConvs, the second reading the first:
// an expand 1x1 and the depthwise 3x3 after it, or a depthwise 3x3 and the 1x1 after it.
#include "ir/ops/fused.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <sstream>

#include "ir/ops/op_helpers.h"
#include "ir/ops/window.h"

namespace kiln::ir {

bool is_fused_activation(std::string_view name) {
  return std::find(std::begin(kFusedActivations), std::end(kFusedActivations), name) !=
         std::end(kFusedActivations);
}

FusedActivation fused_activation(const Node& node, std::string_view prefix) {
  FusedActivation a;
  const std::string p(prefix);
  a.op = node.s(p);
  const OpDef* def = is_fused_activation(a.op) ? registry().find(a.op) : nullptr;
  if (a.op == "none") return a;
  if (!def) fail("{}: unknown activation '{}'", node.describe(), a.op);
  if (a.op == "Clip") {
    if (node.has_attr(p + "_alpha")) a.clip_min = node.f(p + "_alpha");
    if (node.has_attr(p + "_beta")) a.clip_max = node.f(p + "_beta");
    return a;
  }
  for (const AttrSpec& spec : def->attrs) {
    std::string name = p + "_" + spec.name;
    if (node.has_attr(name)) a.attrs[spec.name] = node.attr(name);
  }
  return a;
}

std::optional<rt::StoreActivation> store_activation(const FusedActivation& a) {
  if (a.op == "none") return rt::StoreActivation{};
  if (a.op == "Relu") return rt::StoreActivation{rt::StoreActivation::kRelu};
  if (a.op == "Clip" && a.clip_min <= a.clip_max)
    return rt::StoreActivation{rt::StoreActivation::kClamp, a.clip_min, a.clip_max};
  return std::nullopt;
}

int64_t depthwise3x3_stride(const Node& node, const std::vector<int64_t>& x, const std::vector<int64_t>& w) {
  if (x.size() != 4 || w.size() != 4 || w[0] != x[1] || w[1] != 1 || w[2] != 3 || w[3] != 3 ||
      node.i("group") != x[1])
    return 0;
  const ResolvedWindow win = resolve_window(node, {x[2], x[3]}, {3, 3});
  const int64_t s = win.strides[0];
  const std::vector<int64_t> ones{1, 1};
  if (win.strides[1] != s || (s != 1 && s != 2) || win.dilations != ones || win.pads_begin != ones ||
      win.pads_end != ones)
    return 0;
  return s;
}

AttributeMap fused_activation_attrs(const Node& activation, float clip_min, float clip_max) {
  AttributeMap attrs;
  attrs["activation"] = Attribute(activation.op());
  if (activation.op() == "Clip") {
    attrs["activation_alpha"] = Attribute(clip_min);
    attrs["activation_beta"] = Attribute(clip_max);
    return attrs;
  }
  for (const auto& [name, a] : activation.attrs()) attrs["activation_" + name] = a;
  return attrs;
}

namespace {

struct FusedInfo {
  const char* base;       // the op it extends
  size_t base_inputs;     // how many leading inputs are the base op's
  bool bias = false;      // then the row bias C, then Z
  size_t z() const { return base_inputs + (bias ? 1 : 0); }
};

FusedInfo info_of(std::string_view op) {
  if (op == "kiln.FusedConv") return {"Conv", 3};
  if (op == "kiln.FusedGemm") return {"Gemm", 3};
  return {"MatMul", 2, true};
}


// The node's attributes without the activation ones: the base op's attributes.
AttributeMap base_attrs(const Node& node) {
  AttributeMap attrs;
  for (const auto& [name, a] : node.attrs())
    if (name.rfind("activation", 0) != 0) attrs[name] = a;
  return attrs;
}

// A one-node graph running `op` on values typed like `types` (nullptr: omitted input).
struct OneNode {
  Graph graph;
  Node* node = nullptr;
  OneNode(const std::string& op, const std::vector<std::pair<DType, Shape>*>& types, AttributeMap attrs) {
    std::vector<Value*> inputs;
    for (size_t i = 0; i < types.size(); ++i)
      inputs.push_back(types[i] ? graph.add_value(fmt::format("in{}", i), types[i]->first, types[i]->second)
                                : nullptr);
    node = graph.add_node(op, inputs, {"out"}, std::move(attrs), "fused_part");
    infer_node(*node);
  }
};

}  // namespace

Tensor eval_op(const std::string& op, AttributeMap attrs, const std::vector<const Tensor*>& in) {
  std::vector<std::pair<DType, Shape>> storage;
  storage.reserve(in.size());
  std::vector<std::pair<DType, Shape>*> types;
  for (const Tensor* t : in) {
    if (t) {
      storage.emplace_back(t->dtype(), t->shape());
      types.push_back(&storage.back());
    } else {
      types.push_back(nullptr);
    }
  }
  OneNode one(op, types, std::move(attrs));
  return eval_node(*one.node, in)[0];
}

std::pair<DType, Shape> infer_op(const std::string& op, AttributeMap attrs,
                                 const std::vector<std::pair<DType, Shape>*>& in) {
  OneNode one(op, in, std::move(attrs));
  return {one.node->output(0)->dtype(), one.node->output(0)->shape()};
}

Cost cost_op(const std::string& op, AttributeMap attrs, const std::vector<std::pair<DType, Shape>*>& in) {
  OneNode one(op, in, std::move(attrs));
  return node_cost(*one.node);
}

namespace {

Tensor scalar(const Node& node, DType t, float v) {
  if (t != DType::F32) fail("{}: activation Clip is fused for f32 only, not {}", node.describe(), dtype_name(t));
  Tensor s(DType::F32, {});
  s.mutable_data<float>()[0] = v;
  return s;
}

void infer_fused(Node& node) {
  FusedInfo info = info_of(node.op());
  fused_activation(node);  // validates the activation and its attributes
  std::vector<std::pair<DType, Shape>> storage(info.base_inputs);
  std::vector<std::pair<DType, Shape>*> types;
  for (size_t i = 0; i < info.base_inputs; ++i) {
    const Value* v = node.input(i);
    if (v) storage[i] = {v->dtype(), v->shape()};
    types.push_back(v ? &storage[i] : nullptr);
  }
  OneNode one(info.base, types, base_attrs(node));
  const Value* y = one.node->output(0);
  if (const Value* c = info.bias ? node.input(info.base_inputs) : nullptr) {
    const Shape& s = c->shape();
    bool row = c->dtype() == y->dtype() && s.rank() >= 1 && s.rank() <= y->shape().rank() &&
               s[s.rank() - 1] == y->shape()[y->shape().rank() - 1];
    for (size_t i = 0; row && i + 1 < s.rank(); ++i) row = s[i].is_static() && s[i].value() == 1;
    if (!row)
      fail("{}: bias C is {}{}, expected a row of the result's last dim ({}{})", node.describe(),
           dtype_name(c->dtype()), s.str(), dtype_name(y->dtype()), y->shape().str());
  }
  if (const Value* z = node.input(info.z())) {
    if (z->dtype() != y->dtype() || !(z->shape() == y->shape()))
      fail("{}: residual Z is {}{}, expected the result's type {}{}", node.describe(),
           dtype_name(z->dtype()), z->shape().str(), dtype_name(y->dtype()), y->shape().str());
  }
  node.output(0)->set_type(y->dtype(), y->shape());
}

void eval_fused(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  FusedInfo info = info_of(node.op());
  std::vector<const Tensor*> base(in.begin(), in.begin() + static_cast<long>(std::min(info.base_inputs, in.size())));
  Tensor y = eval_op(info.base, base_attrs(node), base);
  if (const Tensor* c = info.bias ? optional_input(in, info.base_inputs) : nullptr) y = eval_op("Add", {}, {&y, c});
  if (const Tensor* z = optional_input(in, info.z())) y = eval_op("Add", {}, {&y, z});
  FusedActivation act = fused_activation(node);
  if (act.op == "Clip") {
    Tensor lo = scalar(node, y.dtype(), act.clip_min);
    Tensor hi = scalar(node, y.dtype(), act.clip_max);
    y = eval_op("Clip", {}, {&y, &lo, &hi});
  } else if (act.op != "none") {
    y = eval_op(act.op, act.attrs, {&y});
  }
  out[0] = std::move(y);
}

Cost fused_cost(const Node& node) {
  Cost c;
  c.bytes = io_bytes(node);
  const Shape& y = node.output(0)->shape();
  if (!y.is_static()) return c;
  // The base op's multiply-adds, plus one op per element for the residual and activation.
  FusedInfo info = info_of(node.op());
  std::vector<std::pair<DType, Shape>> storage(info.base_inputs);
  std::vector<std::pair<DType, Shape>*> types;
  for (size_t i = 0; i < info.base_inputs; ++i) {
    const Value* v = node.input(i);
    if (v) storage[i] = {v->dtype(), v->shape()};
    types.push_back(v ? &storage[i] : nullptr);
  }
  OneNode one(info.base, types, base_attrs(node));
  c.flops = node_cost(*one.node).flops + 2.0 * static_cast<double>(y.numel());
  return c;
}

// ---- kiln.Elementwise -----------------------------------------------------------------------
// A chain of elementwise ops run as one loop. Attribute `steps` lists them in order, each
// "Op ARG [ARG]" with ARG `iK` (input K) or `tK` (the result of step K); the last step's
// result is the output. Every op is one with a scalar expression, its attributes (if any)
// taking their defaults.

struct Step {
  std::string op;
  std::vector<std::pair<char, size_t>> args;  // ('i' | 't', index)
};

std::vector<Step> parse_steps(const Node& node) {
  std::vector<Step> steps;
  for (const std::string& text : node.attr("steps").strings()) {
    Step st;
    std::istringstream in(text);
    in >> st.op;
    std::string arg;
    while (in >> arg) {
      size_t k = 0;
      bool ok = arg.size() >= 2 && (arg[0] == 'i' || arg[0] == 't');
      for (size_t j = 1; ok && j < arg.size(); ++j) ok = std::isdigit(static_cast<unsigned char>(arg[j])) != 0;
      if (ok) k = std::stoul(arg.substr(1));
      if (!ok || (arg[0] == 'i' && k >= node.num_inputs()) || (arg[0] == 't' && k >= steps.size()))
        fail("{}: step '{}': argument '{}' is not an input iK or an earlier step tK", node.describe(), text, arg);
      st.args.emplace_back(arg[0], k);
    }
    const OpDef* def = registry().find(st.op);
    bool defaults = def != nullptr;
    for (size_t a = 0; defaults && a < def->attrs.size(); ++a) defaults = def->attrs[a].default_value.has_value();
    if (!defaults || def->scalar_expr.empty() || def->inputs.size() != st.args.size())
      fail("{}: step '{}' is not an elementwise op with {} argument(s) and defaults for its attributes",
           node.describe(), text, st.args.size());
    steps.push_back(std::move(st));
  }
  if (steps.empty()) fail("{}: no steps", node.describe());
  return steps;
}

void infer_elementwise_chain(Node& node) {
  std::vector<Step> steps = parse_steps(node);
  std::vector<std::pair<DType, Shape>> results;
  for (const Step& st : steps) {
    std::vector<std::pair<DType, Shape>> storage;
    storage.reserve(st.args.size());
    std::vector<std::pair<DType, Shape>*> types;
    for (const auto& [kind, k] : st.args) {
      const Value* v = kind == 'i' ? node.input(k) : nullptr;
      storage.push_back(kind == 'i' ? std::pair(v->dtype(), v->shape()) : results[k]);
      types.push_back(&storage.back());
    }
    OneNode one(st.op, types, {});
    results.emplace_back(one.node->output(0)->dtype(), one.node->output(0)->shape());
  }
  node.output(0)->set_type(results.back().first, results.back().second);
}

void eval_elementwise_chain(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  std::vector<Step> steps = parse_steps(node);
  std::vector<Tensor> results;
  for (const Step& st : steps) {
    std::vector<const Tensor*> args;
    for (const auto& [kind, k] : st.args) args.push_back(kind == 'i' ? in[k] : &results[k]);
    results.push_back(eval_op(st.op, {}, args));
  }
  out[0] = std::move(results.back());
}

// ---- kiln.FusedConvDepthwise, kiln.FusedDepthwiseConv ----------------------------------------
// Two kiln.FusedConvs, the second reading the first: inputs X, W, B (the first's), then the
// second's weights and bias. kiln.FusedConvDepthwise: an expand 1x1 then a depthwise 3x3; the
// node's attributes are the depthwise's (a kiln.FusedConv's), and the expand's activation as
// expand_activation, expand_activation_*. kiln.FusedDepthwiseConv: a depthwise 3x3 then a 1x1;
// the attributes are the depthwise's, and the 1x1's activation as project_activation,
// project_activation_*. The 1x1's other attributes are Conv's defaults.

// The 1x1's attribute prefix of either op.
std::string_view pointwise_prefix(const Node& node) {
  return node.op() == "kiln.FusedConvDepthwise" ? "expand_" : "project_";
}

AttributeMap pointwise_attrs(const Node& node) {
  const std::string_view prefix = pointwise_prefix(node);
  AttributeMap attrs;
  for (const auto& [name, a] : node.attrs())
    if (name.rfind(prefix, 0) == 0) attrs[name.substr(prefix.size())] = a;
  return attrs;
}

AttributeMap depthwise_attrs(const Node& node) {
  const std::string_view prefix = pointwise_prefix(node);
  AttributeMap attrs;
  for (const auto& [name, a] : node.attrs())
    if (name.rfind(prefix, 0) != 0) attrs[name] = a;
  return attrs;
}

// The two convolutions' attributes, in the order they run.
std::pair<AttributeMap, AttributeMap> chained_attrs(const Node& node) {
  if (node.op() == "kiln.FusedConvDepthwise") return {pointwise_attrs(node), depthwise_attrs(node)};
  return {depthwise_attrs(node), pointwise_attrs(node)};
}

// The two convolutions as one-node graphs on the node's input types.
struct ChainedConvs {
  std::vector<std::pair<DType, Shape>> storage;
  std::unique_ptr<OneNode> first, second;
  explicit ChainedConvs(const Node& node) : storage(5) {
    auto type = [&](size_t i) -> std::pair<DType, Shape>* {
      const Value* v = node.input(i);
      if (!v) return nullptr;
      storage[i] = {v->dtype(), v->shape()};
      return &storage[i];
    };
    auto [a1, a2] = chained_attrs(node);
    first = std::make_unique<OneNode>("kiln.FusedConv", std::vector{type(0), type(1), type(2)}, a1);
    const Value* e = first->node->output(0);
    std::pair<DType, Shape> between{e->dtype(), e->shape()};
    second = std::make_unique<OneNode>("kiln.FusedConv", std::vector{&between, type(3), type(4)}, a2);
  }
};

void infer_chained_convs(Node& node) {
  fused_activation(node, std::string(pointwise_prefix(node)) + "activation");  // validates it
  ChainedConvs parts(node);
  const Value* y = parts.second->node->output(0);
  node.output(0)->set_type(y->dtype(), y->shape());
}

void eval_chained_convs(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  auto [a1, a2] = chained_attrs(node);
  Tensor e = eval_op("kiln.FusedConv", a1, {in[0], in[1], optional_input(in, 2)});
  out[0] = eval_op("kiln.FusedConv", a2, {&e, in[3], optional_input(in, 4)});
}

Cost chained_convs_cost(const Node& node) {
  Cost c;
  c.bytes = io_bytes(node);
  if (!node.output(0)->shape().is_static()) return c;
  ChainedConvs parts(node);
  c.flops = node_cost(*parts.first->node).flops + node_cost(*parts.second->node).flops;
  return c;
}

// kiln.FusedConvDepthwise or kiln.FusedDepthwiseConv, its 1x1's activation attributes named
// with `prefix`.
void add_chained_convs(Registry& r, const char* name, const char* summary, std::vector<InputSpec> inputs,
                       const std::string& prefix) {
  OpDef def{
      .name = name,
      .summary = summary,
      .inputs = std::move(inputs),
      .outputs = {"Y"},
      .attrs = r.find("kiln.FusedConv")->attrs,
      .infer = infer_chained_convs,
      .eval = eval_chained_convs,
      .cost = chained_convs_cost,
  };
  def.attrs.push_back({prefix + "activation", AttrType::String, Attribute("none")});
  def.attrs.push_back({prefix + "activation_alpha", AttrType::Float, std::nullopt, true});
  def.attrs.push_back({prefix + "activation_beta", AttrType::Float, std::nullopt, true});
  def.attrs.push_back({prefix + "activation_approximate", AttrType::String, std::nullopt, true});
  r.add(std::move(def));
}

void add_fused(Registry& r, const std::string& name, const char* base, const char* summary) {
  const OpDef* def = r.find(base);
  if (!def) fail("op family 'fused' needs {} registered first", base);
  OpDef fused{
      .name = name,
      .summary = summary,
      .inputs = def->inputs,
      .outputs = {"Y"},
      .attrs = def->attrs,
      .infer = infer_fused,
      .eval = eval_fused,
      .cost = fused_cost,
  };
  if (info_of(name).bias) fused.inputs.push_back({"C", true});
  fused.inputs.push_back({"Z", true});
  fused.attrs.push_back({"activation", AttrType::String, Attribute("none")});
  fused.attrs.push_back({"activation_alpha", AttrType::Float, std::nullopt, true});
  fused.attrs.push_back({"activation_beta", AttrType::Float, std::nullopt, true});
  fused.attrs.push_back({"activation_approximate", AttrType::String, std::nullopt, true});
  r.add(std::move(fused));
}

}  // namespace

void register_fused_ops(Registry& r) {
  add_fused(r, "kiln.FusedConv", "Conv", "Conv, then a residual add and an activation: act(Conv(X, W, B) + Z)");
  add_fused(r, "kiln.FusedGemm", "Gemm", "Gemm, then a residual add and an activation: act(Gemm(A, B, C) + Z)");
  add_fused(r, "kiln.FusedMatMul", "MatMul",
            "MatMul, then a row bias, a residual add and an activation: act(A @ B + C + Z)");
  add_chained_convs(r, "kiln.FusedConvDepthwise",
                    "an expand 1x1 kiln.FusedConv and the depthwise 3x3 kiln.FusedConv reading it: "
                    "dw(act_e(Conv(X, W, B)), W_dw, B_dw)",
                    {{"X"}, {"W"}, {"B", true}, {"W_dw"}, {"B_dw", true}}, "expand_");
  add_chained_convs(r, "kiln.FusedDepthwiseConv",
                    "a depthwise 3x3 kiln.FusedConv and the 1x1 kiln.FusedConv reading it: "
                    "act_p(Conv(dw(X, W_dw, B_dw), W, B))",
                    {{"X"}, {"W_dw"}, {"B_dw", true}, {"W"}, {"B", true}}, "project_");
  r.add(OpDef{
      .name = "kiln.Elementwise",
      .summary = "a chain of elementwise ops in one loop (attribute steps: \"Op ARG [ARG]\", ARG iK or tK)",
      .inputs = {{"inputs", false, true}},
      .outputs = {"Y"},
      .attrs = {{"steps", AttrType::Strings, std::nullopt}},
      .infer = infer_elementwise_chain,
      .eval = eval_elementwise_chain,
  });
}

}  // namespace kiln::ir
